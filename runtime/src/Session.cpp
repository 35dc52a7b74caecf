//===- Session.cpp - Sessions: options, the thread pool and kiln_session_run -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// A session is immutable after creation except for its thread pool, its
// arena pool and its heap cache, which are safe to share; that is what makes concurrent
// kiln_session_run calls safe. Each run keeps its plan, buffers, outputs and
// kiln_abi_host on its own stack and heap, and leases its own arena.
//
//===----------------------------------------------------------------------===//

#include "Arena.h"
#include "HeapCache.h"
#include "Model.h"
#include "RunGuard.h"
#include "SessionRun.h"
#include "Status.h"
#include "Tensor.h"
#include "ThreadPool.h"
#include "Trace.h"
#include "Validation.h"
#include "cuda/Device.h"

#include <cstring>
#include <memory>
#include <optional>
#include <sched.h>
#include <thread>
#include <unistd.h>

struct kiln_session {
  kiln_model *model = nullptr; // holds a reference
  kiln_session_options options{};
  std::unique_ptr<kiln::rt::ThreadPool> pool;
  std::unique_ptr<kiln::rt::ArenaPool> arenas;
  kiln::rt::HeapCache heapCache; // intermediates allocated at run time (CPU)
  kiln_abi_host host{}; // each run copies it and sets its own arena and trace
  std::unique_ptr<kiln::rt::cuda::Device> cuda; // CUDA sessions only

  ~kiln_session() {
    pool.reset(); // join the workers before the model can be unloaded
    cuda.reset();
    if (model)
      model->release();
  }
};

namespace kiln::rt {
namespace {

constexpr int32_t kMaxThreads = 4096;

int32_t availableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
  unsigned cores = std::thread::hardware_concurrency();
  return cores ? static_cast<int32_t>(cores) : 1;
}

uint64_t physicalMemory() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return UINT64_MAX;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
}

// Generated code is C: nothing may be thrown back into it. If the pool
// cannot take the job, running the range on this thread is still correct.
void parallelForThunk(void *context, int64_t begin, int64_t end,
                      void (*body)(void *ctx, int64_t i), void *ctx) {
  RunGuard::enterParallel(); // bodies must not unwind
  try {
    static_cast<ThreadPool *>(context)->parallelFor(begin, end, body, ctx);
  } catch (...) {
    for (int64_t i = begin; i < end; ++i)
      body(ctx, i);
  }
  RunGuard::leaveParallel();
}

/// The status of a run that a failed check or allocation stopped.
kiln_status *guardStatus(const RunGuard &guard) {
  if (!guard.failureMessage().empty())
    return makeStatus(guard.failureCode(), guard.failureMessage());
  return makeStatus(guard.failureCode(), "the run failed and ran out of memory describing why");
}

kiln_status *resolveOptions(const kiln_session_options *given,
                            kiln_session_options &resolved) {
  kiln_session_options_init(&resolved);
  if (given)
    resolved = *given;
  if (resolved.device != KILN_DEVICE_CPU && resolved.device != KILN_DEVICE_CUDA)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      cat("unknown device ", resolved.device));
  if (resolved.num_threads < 0 || resolved.num_threads > kMaxThreads)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      cat("num_threads is ", resolved.num_threads,
                          ", accepted range is [0, ", kMaxThreads, "]"));
  if (resolved.num_threads == 0)
    resolved.num_threads = availableCores();
  if (resolved.max_bytes == 0)
    resolved.max_bytes = physicalMemory();
  return nullptr;
}

/// A CUDA session opens the device; each device runs only its own artifacts.
kiln_status *openDevice(const kiln_model &model, kiln_session &session) {
  bool cudaModel = !model.cudaChip.empty();
  if (session.options.device == KILN_DEVICE_CPU && cudaModel)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      cat("model '", model.path, "' was compiled for CUDA (",
                          model.cudaChip, "); create the session with device cuda"));
  if (session.options.device == KILN_DEVICE_CUDA && !cudaModel)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      cat("model '", model.path, "' was compiled for the CPU; compile it "
                          "with kilnc --target=cuda for a CUDA session"));
  if (session.options.device == KILN_DEVICE_CUDA)
    return cuda::Device::open(model, session.cuda);
  return nullptr;
}

kiln_status *createSession(kiln_model *model, const kiln_session_options *options,
                           kiln_session **out_session) {
  if (!out_session)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "out_session is NULL");
  *out_session = nullptr;
  if (!model)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "model is NULL");
  auto session = std::make_unique<kiln_session>();
  if (kiln_status *status = resolveOptions(options, session->options))
    return status;
  if (kiln_status *status = checkOutputsSizable(*model))
    return status;
  if (kiln_status *status = openDevice(*model, *session))
    return status;
  try {
    session->pool = std::make_unique<ThreadPool>(session->options.num_threads);
  } catch (const std::system_error &e) {
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                      cat("cannot start ", session->options.num_threads,
                          " threads: ", e.what()));
  }
  session->arenas = std::make_unique<ArenaPool>(model->abi->arena_bytes);
  session->host.context = session->pool.get();
  session->host.parallel_for = &parallelForThunk;
  session->host.num_threads = session->options.num_threads;
  session->host.weights = model->weights;
  model->retain();
  session->model = model;
  *out_session = session.release();
  return nullptr;
}

/// Owns the outputs of a run until they are handed to the caller.
class OutputList {
public:
  ~OutputList() {
    for (kiln_tensor *tensor : tensors)
      kiln_tensor_destroy(tensor);
  }
  std::vector<kiln_tensor *> tensors;
};

kiln_status *allocateOutputs(const kiln_model &model, const RunPlan &plan,
                             OutputList &outputs) {
  size_t dim = plan.firstOutputDim;
  for (size_t i = 0; i < model.outputs.size(); ++i) {
    const TensorDesc &desc = model.outputs[i];
    outputs.tensors.push_back(nullptr);
    outputs.tensors.back() = allocateTensor(desc.name, desc.dtype, desc.rank(),
                                            plan.dims.data() + dim,
                                            plan.outputBytes[i]);
    if (!outputs.tensors.back())
      return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                        cat("cannot allocate ", plan.outputBytes[i],
                            " bytes for output '", desc.name, "'"));
    dim += static_cast<size_t>(desc.rank());
  }
  return nullptr;
}

kiln_status *runSession(kiln_session *session, const kiln_tensor *inputs,
                        size_t numInputs, kiln_tensor **out_outputs,
                        size_t numOutputs, kiln_trace *trace) {
  if (numOutputs && !out_outputs)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      cat("out_outputs is NULL but num_outputs is ", numOutputs));
  for (size_t i = 0; i < numOutputs; ++i)
    out_outputs[i] = nullptr;
  if (!session)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "session is NULL");
  const kiln_model &model = *session->model;
  RunPlan plan;
  if (kiln_status *status = planRun(model, session->options.max_bytes, inputs,
                                    numInputs, numOutputs, plan))
    return status;
  OutputList outputs;
  if (kiln_status *status = allocateOutputs(model, plan, outputs))
    return status;
  std::vector<void *> outputData;
  for (kiln_tensor *output : outputs.tensors)
    outputData.push_back(output->data);
  if (kiln_status *status = runPlanned(*session, plan, outputData.data(), trace))
    return status;
  for (size_t i = 0; i < numOutputs; ++i)
    out_outputs[i] = outputs.tensors[i];
  outputs.tensors.clear();
  return nullptr;
}

} // namespace

const kiln_model &sessionModel(const kiln_session &session) { return *session.model; }

uint64_t sessionMaxBytes(const kiln_session &session) {
  return session.options.max_bytes;
}

bool sessionOnDevice(const kiln_session &session) { return session.cuda != nullptr; }

void *sessionDeviceAlloc(kiln_session &session, uint64_t bytes, std::string &error) {
  if (!session.cuda) {
    error = "not a CUDA session";
    return nullptr;
  }
  return reinterpret_cast<void *>(session.cuda->allocate(bytes, error));
}

void sessionDeviceFree(kiln_session &session, void *ptr) {
  if (session.cuda)
    session.cuda->release(reinterpret_cast<cuda::CUdeviceptr>(ptr));
}

bool sessionDeviceCopyToHost(const kiln_session &session, void *dst, const void *src,
                             uint64_t bytes, std::string &error) {
  if (!session.cuda) {
    error = "not a CUDA session";
    return false;
  }
  return session.cuda->copyToHost(dst, reinterpret_cast<cuda::CUdeviceptr>(src), bytes, error);
}

bool sessionDeviceCopyToDevice(kiln_session &session, void *dst, const void *src,
                               uint64_t bytes, std::string &error) {
  if (!session.cuda) {
    error = "not a CUDA session";
    return false;
  }
  return session.cuda->copyToDevice(reinterpret_cast<cuda::CUdeviceptr>(dst), src, bytes,
                                    error);
}

kiln_status *runPlanned(kiln_session &session, const RunPlan &plan,
                        void *const *outputData, kiln_trace *trace,
                        const std::vector<const void *> &onDevice) {
  const kiln_model &model = *session.model;
  // What the byte limit leaves for intermediates allocated at run time
  // (planRun checked that the arena and the outputs fit).
  uint64_t planned = model.abi->arena_bytes;
  for (size_t bytes : plan.outputBytes)
    planned += bytes;
  uint64_t limit = session.options.max_bytes;
  RunGuard guard(limit > planned ? limit - planned : 0, planned, limit);
  kiln_abi_host host = session.host;
  guard.attach(host);
  size_t numOutputs = model.outputs.size();
  if (session.cuda) {
    std::vector<void *> hostOutputs(outputData, outputData + numOutputs);
    // Dispatch spans are timed on the device (CUDA events); the "run" event
    // is host time, copies included.
    std::optional<RunRecorder> recorder;
    if (trace)
      recorder.emplace(*trace, model.dispatchNames);
    if (kiln_status *status = session.cuda->run(model, plan, hostOutputs, host, guard,
                                                 recorder ? &*recorder : nullptr, onDevice))
      return status;
    if (recorder)
      recorder->finish();
    return nullptr;
  }
  std::vector<void *> buffers;
  for (const kiln_tensor *input : plan.inputs)
    buffers.push_back(input->data);
  buffers.insert(buffers.end(), outputData, outputData + numOutputs);
  // An output that is an input updated in place starts as that input (the
  // run function reads the input from the output's buffer).
  for (size_t o = 0; o < numOutputs; ++o)
    if (int32_t i = model.outputs[o].aliasedInput; i >= 0 && outputData[o] &&
                                                 outputData[o] != plan.inputs[i]->data)
      std::memcpy(outputData[o], plan.inputs[i]->data, plan.inputs[i]->byte_size);
  ArenaLease arena(*session.arenas);
  if (model.abi->arena_bytes && !arena.get())
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                      cat("cannot allocate the ", model.abi->arena_bytes,
                          "-byte scratch arena of model '", model.path, "'"));
  host.arena = arena.get();
  guard.useCache(session.heapCache);
  std::optional<RunRecorder> recorder;
  if (trace) {
    recorder.emplace(*trace, model.dispatchNames);
    recorder->attach(host);
  }
  int32_t code = guard.call(model.abi->run, buffers.data(), plan.dims.data(), &host);
  if (guard.failed())
    return guardStatus(guard); // the trace keeps no event of this run
  if (recorder)
    recorder->finish();
  if (code != 0)
    return makeStatus(KILN_STATUS_INTERNAL,
                      cat("model '", model.path, "' failed: its run function "
                          "returned ", code));
  return nullptr;
}

} // namespace kiln::rt

extern "C" {

void kiln_session_options_init(kiln_session_options *options) {
  if (!options)
    return;
  options->device = KILN_DEVICE_CPU;
  options->num_threads = 0;
  options->max_bytes = 0;
}

kiln_status *kiln_session_create(kiln_model *model,
                                 const kiln_session_options *options,
                                 kiln_session **out_session) {
  return kiln::rt::guard(
      [&] { return kiln::rt::createSession(model, options, out_session); });
}

void kiln_session_destroy(kiln_session *session) { delete session; }

kiln_status *kiln_session_get_options(const kiln_session *session,
                                      kiln_session_options *out_options) {
  if (!session || !out_options)
    return kiln::rt::guard([&] {
      return kiln::rt::makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                                  !session ? "session is NULL"
                                           : "out_options is NULL");
    });
  *out_options = session->options;
  return nullptr;
}

kiln_status *kiln_session_get_device_ms(const kiln_session *session,
                                        double *out_ms) {
  return kiln::rt::guard([&]() -> kiln_status * {
    using kiln::rt::makeStatus;
    if (!session || !out_ms)
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                        !session ? "session is NULL" : "out_ms is NULL");
    if (!session->cuda)
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                        "device time is measured in CUDA sessions only");
    double ms = session->cuda->lastDeviceMs();
    if (ms < 0)
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "the session has no completed run yet");
    *out_ms = ms;
    return nullptr;
  });
}

kiln_status *kiln_session_run(kiln_session *session, const kiln_tensor *inputs,
                              size_t num_inputs, kiln_tensor **out_outputs,
                              size_t num_outputs) {
  return kiln::rt::guard([&] {
    return kiln::rt::runSession(session, inputs, num_inputs, out_outputs,
                                num_outputs, nullptr);
  });
}

kiln_status *kiln_session_run_traced(kiln_session *session, const kiln_tensor *inputs,
                                     size_t num_inputs, kiln_tensor **out_outputs,
                                     size_t num_outputs, kiln_trace *trace) {
  return kiln::rt::guard([&] {
    return kiln::rt::runSession(session, inputs, num_inputs, out_outputs,
                                num_outputs, trace);
  });
}

} // extern "C"
