//===- Device.cpp - Running CUDA artifacts on device 0 ---------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "cuda/Device.h"

#include "Status.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace kiln::rt::cuda {
namespace {

/// One run's state behind kiln_abi_cuda::context: the device, the first
/// failure, and the last kernel launched (to name asynchronous faults).
struct RunState {
  Device *device;
  CUstream stream; // the session's, or the graph capture's
  std::string error;
  std::string lastKernel;
  std::vector<CUdeviceptr> allocations; // freed at the end if the model did not
  // Device memory of the model's own allocations, counted against what the
  // session's byte limit leaves after the arena and the outputs.
  uint64_t limit = UINT64_MAX, used = 0, planned = 0, sessionLimit = 0;
  std::map<CUdeviceptr, uint64_t> sizes; // requested bytes of each allocation
  kiln_status_code code = KILN_STATUS_INTERNAL; // of the first failure

  /// Whether the run is on the session's stream (not a graph capture's):
  /// only then may it reuse cached blocks and upload in stream order.
  bool onSessionStream() const { return stream == device->stream; }

  bool failed() const { return !error.empty(); }
  /// Back to a fresh run after a capture that was not kept: its device
  /// allocations were captured, never made, so they are only forgotten.
  void reset() {
    error.clear();
    lastKernel.clear();
    allocations.clear();
    sizes.clear();
    used = 0;
    code = KILN_STATUS_INTERNAL;
  }
  void fail(std::string message) {
    if (error.empty())
      error = std::move(message);
  }
  bool check(CUresult result, const char *what, const std::string &kernel = "") {
    if (result == kSuccess)
      return true;
    fail(cat(what, kernel.empty() ? "" : " of kernel '", kernel, kernel.empty() ? "" : "'",
             " failed: ", describe(device->driver, result)));
    return false;
  }
};

// The kiln_abi_cuda services. Generated code is C: nothing may throw.
void *getFunctionThunk(void *context, const void *image, const char *name) noexcept {
  auto *state = static_cast<RunState *>(context);
  if (state->failed())
    return nullptr;
  try {
    std::string error;
    CUfunction function = state->device->getFunction(image, name, error);
    if (!function)
      state->fail(error);
    return function;
  } catch (...) {
    state->fail(cat("cannot load kernel '", name, "': out of host memory"));
    return nullptr;
  }
}

void launchThunk(void *context, void *function, int64_t gx, int64_t gy, int64_t gz,
                 int64_t bx, int64_t by, int64_t bz, int32_t sharedBytes,
                 void **params) noexcept {
  auto *state = static_cast<RunState *>(context);
  if (state->failed() || !function)
    return;
  Device &device = *state->device;
  const std::string &kernel = device.functionName(static_cast<CUfunction>(function));
  for (int64_t dim : {gx, gy, gz, bx, by, bz}) {
    if (dim == 0)
      return; // an empty iteration space: nothing to launch
    if (dim < 0 || dim > INT32_MAX) {
      state->fail(cat("kernel '", kernel, "': launch dimension ", dim, " out of range"));
      return;
    }
  }
  if (sharedBytes < 0) {
    state->fail(cat("kernel '", kernel, "': negative dynamic shared memory size ", sharedBytes));
    return;
  }
  if (static_cast<unsigned>(sharedBytes) > kStaticSharedLimit) {
    std::string error;
    try {
      if (!device.reserveSharedMemory(static_cast<CUfunction>(function),
                                      static_cast<unsigned>(sharedBytes), error)) {
        state->fail(cat("kernel '", kernel, "': ", error));
        return;
      }
    } catch (...) {
      state->fail(cat("kernel '", kernel, "': out of host memory"));
      return;
    }
  }
  state->lastKernel = kernel;
  auto u = [](int64_t v) { return static_cast<unsigned>(v); };
  if (!state->check(device.driver.launchKernel(static_cast<CUfunction>(function), u(gx),
                                               u(gy), u(gz), u(bx), u(by), u(bz),
                                               static_cast<unsigned>(sharedBytes),
                                               state->stream, params, nullptr),
                    "launch", kernel))
    return;
  if (device.syncEachLaunch)
    state->check(device.driver.streamSynchronize(state->stream), "execution", kernel);
}

/// The size class of a cached block: 256-byte multiples up to 4 KiB, then
/// 8 classes per power of two (at most 12.5% over), so that a decoder's
/// buffers, which grow by one position a step, keep hitting the cache.
uint64_t roundedAllocation(uint64_t bytes) {
  if (bytes <= 4096)
    return std::max<uint64_t>((bytes + 255) / 256 * 256, 256);
  uint64_t step = uint64_t{1} << (63 - __builtin_clzll(bytes) - 3);
  return (bytes + step - 1) / step * step;
}

void *allocThunk(void *context, uint64_t bytes) noexcept {
  auto *state = static_cast<RunState *>(context);
  if (state->failed())
    return nullptr;
  if (bytes > state->limit - state->used) {
    if (!state->failed())
      state->code = KILN_STATUS_RESOURCE_EXHAUSTED;
    state->fail(cat("an intermediate buffer of ", bytes,
                    " bytes of device memory is over the session's byte limit of ",
                    state->sessionLimit, " bytes (", state->planned + state->used,
                    " bytes in use by the arena, the outputs and other intermediates)"));
    return nullptr;
  }
  Device &device = *state->device;
  bool reuse = state->onSessionStream();
  uint64_t rounded = reuse ? roundedAllocation(bytes) : std::max<uint64_t>(bytes, 1);
  CUdeviceptr ptr = reuse ? device.takeCached(rounded) : 0;
  if (!ptr) {
    CUresult r = device.driver.memAllocAsync(&ptr, rounded, state->stream);
    if (r != kSuccess && reuse) {
      // The pool may be short only of what the cache holds.
      device.flushCached(state->stream);
      r = device.driver.memAllocAsync(&ptr, rounded, state->stream);
    }
    if (!state->check(r, cat("allocating ", bytes, " bytes of device memory").c_str()))
      return nullptr;
  }
  try {
    state->allocations.push_back(ptr);
    state->sizes[ptr] = bytes;
    state->used += bytes;
  } catch (...) {
  }
  return reinterpret_cast<void *>(ptr);
}

/// Frees `ptr`, an allocation of `bytes` (requested), in the run's stream
/// order: on the session's stream back to the device's cache (allocThunk
/// made it roundedAllocation(bytes) long), else to the driver.
void releaseAllocation(RunState &state, CUdeviceptr ptr, std::optional<uint64_t> bytes) {
  if (bytes && state.onSessionStream()) {
    try {
      state.device->keepCached(ptr, roundedAllocation(*bytes));
      return;
    } catch (...) {
    }
  }
  state.check(state.device->driver.memFreeAsync(ptr, state.stream), "freeing device memory");
}

void freeThunk(void *context, void *ptr) noexcept {
  auto *state = static_cast<RunState *>(context);
  auto device = reinterpret_cast<CUdeviceptr>(ptr);
  if (!ptr)
    return;
  for (CUdeviceptr &owned : state->allocations)
    if (owned == device)
      owned = 0;
  std::optional<uint64_t> bytes;
  if (auto it = state->sizes.find(device); it != state->sizes.end()) {
    bytes = it->second;
    state->used -= it->second;
    state->sizes.erase(it);
  }
  releaseAllocation(*state, device, bytes);
}

void *constantThunk(void *context, const void *hostData, uint64_t bytes) noexcept {
  auto *state = static_cast<RunState *>(context);
  if (state->failed())
    return nullptr;
  try {
    std::string error;
    CUdeviceptr ptr = state->device->constant(hostData, bytes, error);
    if (!ptr)
      state->fail(error);
    return reinterpret_cast<void *>(ptr);
  } catch (...) {
    state->fail("uploading a constant: out of host memory");
    return nullptr;
  }
}

/// mgpuTensorMapEncodeTiledMemref: a tensor map of the ranked memref
/// descriptor `memref` (sizes and strides outermost first; the driver wants
/// them innermost first, strides in bytes and without the innermost one).
void *tensorMapThunk(void *context, int64_t rank, const void *memref, int64_t dtype,
                     int64_t interleave, int64_t swizzle, int64_t l2Promotion,
                     int64_t oobFill, const int64_t *boxDims) noexcept {
  auto *state = static_cast<RunState *>(context);
  if (state->failed())
    return nullptr;
  static constexpr int64_t kElementBytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  if (rank < 1 || rank > 5 || dtype < 0 || dtype > 12 || !memref || !boxDims) {
    state->fail(cat("a TMA tensor map of rank ", rank, " and data type ", dtype,
                    " is not supported"));
    return nullptr;
  }
  struct Header {
    char *allocated, *aligned;
    int64_t offset;
  };
  const auto *header = static_cast<const Header *>(memref);
  const auto *sizes = reinterpret_cast<const int64_t *>(header + 1);
  const int64_t *strides = sizes + rank;
  int64_t element = kElementBytes[dtype];
  uint64_t globalDim[5] = {1, 1, 1, 1, 1}, globalStrides[5] = {0};
  uint32_t boxDim[5] = {1, 1, 1, 1, 1}, elementStrides[5] = {1, 1, 1, 1, 1};
  for (int64_t i = 0; i < rank; ++i) {
    globalDim[i] = static_cast<uint64_t>(sizes[rank - 1 - i]);
    boxDim[i] = static_cast<uint32_t>(boxDims[rank - 1 - i]);
  }
  for (int64_t i = 0; i + 1 < rank; ++i)
    globalStrides[i] = static_cast<uint64_t>(strides[rank - 2 - i] * element);
  CUtensorMap map{};
  Device &device = *state->device;
  if (!state->check(device.driver.tensorMapEncodeTiled(
                        &map, static_cast<int>(dtype), static_cast<uint32_t>(rank),
                        header->aligned + header->offset * element, globalDim, globalStrides,
                        boxDim, elementStrides, static_cast<int>(interleave),
                        static_cast<int>(swizzle), static_cast<int>(l2Promotion),
                        static_cast<int>(oobFill)),
                    "cuTensorMapEncodeTiled"))
    return nullptr;
  try {
    std::string error;
    CUdeviceptr ptr =
        device.tensorMap(map, state->onSessionStream() ? state->stream : nullptr, error);
    if (!ptr)
      state->fail(error);
    return reinterpret_cast<void *>(ptr);
  } catch (...) {
    state->fail("uploading a tensor map: out of host memory");
    return nullptr;
  }
}

/// sm_90a -> 90; 0 if malformed.
int chipVersion(const std::string &chip) {
  if (chip.rfind("sm_", 0) != 0)
    return 0;
  return std::atoi(chip.c_str() + 3);
}

} // namespace

kiln_status *Device::open(const kiln_model &model, std::unique_ptr<Device> &out) {
  const std::string &chip = model.cudaChip;
  std::string error;
  const Driver *driver = loadDriver(error);
  if (!driver)
    return makeStatus(KILN_STATUS_UNIMPLEMENTED, cat("cannot create a CUDA session: ", error));
  auto fail = [&](const char *what, CUresult result) {
    return makeStatus(KILN_STATUS_UNIMPLEMENTED, cat("cannot create a CUDA session: ", what,
                                                   " failed: ", describe(*driver, result)));
  };
  int count = 0;
  if (CUresult r = driver->deviceGetCount(&count); r != kSuccess)
    return fail("cuDeviceGetCount", r);
  if (count == 0)
    return makeStatus(KILN_STATUS_UNIMPLEMENTED,
                      "cannot create a CUDA session: the driver sees no CUDA device");
  std::unique_ptr<Device> device(new Device(*driver));
  if (CUresult r = driver->deviceGet(&device->device, 0); r != kSuccess)
    return fail("cuDeviceGet", r);
  char name[256] = {0};
  if (CUresult r = driver->deviceGetName(name, sizeof(name) - 1, device->device);
      r != kSuccess)
    return fail("cuDeviceGetName", r);
  device->deviceName = name;
  int major = 0, minor = 0;
  if (CUresult r = driver->deviceGetAttribute(&major, kAttrComputeCapabilityMajor,
                                              device->device);
      r != kSuccess)
    return fail("cuDeviceGetAttribute (compute capability)", r);
  if (CUresult r = driver->deviceGetAttribute(&minor, kAttrComputeCapabilityMinor,
                                              device->device);
      r != kSuccess)
    return fail("cuDeviceGetAttribute (compute capability)", r);
  int needed = chipVersion(chip);
  bool archSpecific = !chip.empty() && chip.back() == 'a';
  if (major * 10 + minor < needed || (archSpecific && major * 10 + minor != needed))
    return makeStatus(KILN_STATUS_UNIMPLEMENTED,
                      cat("cannot create a CUDA session: the model's kernels are for ", chip,
                          ", but device 0 (", name, ") is sm_", major * 10 + minor));
  if (CUresult r = driver->primaryCtxRetain(&device->context, device->device); r != kSuccess)
    return fail("cuDevicePrimaryCtxRetain", r);
  if (CUresult r = driver->ctxSetCurrent(device->context); r != kSuccess)
    return fail("cuCtxSetCurrent", r);
  if (CUresult r = driver->streamCreate(&device->stream, /*CU_STREAM_NON_BLOCKING*/ 1);
      r != kSuccess)
    return fail("cuStreamCreate", r);
  // Only a speed-up for dynamic-size buffers: if the pool keeps its default
  // threshold, memory freed by a run goes back to the driver, nothing fails.
  CUmemoryPool pool = nullptr;
  if (driver->deviceGetDefaultMemPool(&pool, device->device) == kSuccess) {
    uint64_t keepAll = UINT64_MAX;
    driver->memPoolSetAttribute(pool, kMemPoolAttrReleaseThreshold, &keepAll);
  }
  device->arenas = std::make_unique<DeviceArenaPool>(*driver, model.abi->arena_bytes);
  device->events = std::make_unique<EventPool>(*driver);
  const char *graphs = std::getenv("KILN_CUDA_GRAPHS");
  device->graphs = std::make_unique<GraphCache>(
      *driver, driver->hasGraphs() && !(graphs && std::strcmp(graphs, "0") == 0));
  // External or generated weights: one upload for the session's runs.
  if (model.weights && model.abi->weights_bytes) {
    uint64_t bytes = model.abi->weights_bytes;
    if (CUresult r = driver->memAlloc(&device->weights, bytes); r != kSuccess) {
      device->weights = 0;
      return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                        cat("cannot create a CUDA session: allocating ", bytes,
                            " bytes of device memory for the weights of model '", model.path,
                            "' failed: ", describe(*driver, r)));
    }
    if (CUresult r = driver->memcpyHtoD(device->weights, model.weights, bytes); r != kSuccess)
      return fail("uploading the weights (cuMemcpyHtoD)", r);
  }
  const char *sync = std::getenv("KILN_CUDA_SYNC");
  device->syncEachLaunch = sync && std::strcmp(sync, "0") != 0;
  const char *poison = std::getenv("KILN_CUDA_POISON_OUTPUTS");
  device->poisonOutputs = poison && std::strcmp(poison, "0") != 0;
  out = std::move(device);
  return nullptr;
}

Device::~Device() {
  if (!context)
    return;
  driver.ctxSetCurrent(context);
  if (stream)
    driver.streamSynchronize(stream);
  if (stream) {
    flushCached(stream);
    driver.streamSynchronize(stream);
  }
  graphs.reset(); // its executables and capture stream, while the context lives
  arenas.reset();
  events.reset();
  if (weights)
    driver.memFree(weights);
  for (auto &[host, ptr] : constants)
    driver.memFree(ptr);
  for (auto &[bytes, ptr] : tensorMaps)
    driver.memFree(ptr);
  for (auto &[image, module] : modules)
    driver.moduleUnload(module);
  if (stream)
    driver.streamDestroy(stream);
  driver.primaryCtxRelease(device);
}

CUfunction Device::getFunction(const void *image, const char *name, std::string &error) {
  std::lock_guard<std::mutex> lock(mutex);
  CUmodule &module = modules[image];
  if (!module) {
    if (CUresult r = driver.moduleLoadData(&module, image); r != kSuccess) {
      module = nullptr;
      error = cat("loading the kernel module of '", name, "' failed: ", describe(driver, r));
      return nullptr;
    }
  }
  CUfunction &function = functions[{module, name}];
  if (!function) {
    if (CUresult r = driver.moduleGetFunction(&function, module, name); r != kSuccess) {
      function = nullptr;
      error = cat("finding kernel '", name, "' failed: ", describe(driver, r));
      return nullptr;
    }
    names[function] = name;
  }
  return function;
}

const std::string &Device::functionName(CUfunction function) {
  std::lock_guard<std::mutex> lock(mutex);
  return names[function];
}

CUdeviceptr Device::constant(const void *hostData, uint64_t bytes, std::string &error) {
  std::lock_guard<std::mutex> lock(mutex);
  CUdeviceptr &ptr = constants[hostData];
  if (ptr)
    return ptr;
  if (CUresult r = driver.memAlloc(&ptr, bytes ? bytes : 1); r != kSuccess) {
    ptr = 0;
    error = cat("allocating ", bytes, " bytes for a constant failed: ", describe(driver, r));
    return 0;
  }
  if (CUresult r = driver.memcpyHtoD(ptr, hostData, bytes); r != kSuccess) {
    driver.memFree(ptr);
    ptr = 0;
    error = cat("uploading a constant of ", bytes, " bytes failed: ", describe(driver, r));
    return 0;
  }
  return ptr;
}

bool Device::reserveSharedMemory(CUfunction function, unsigned bytes, std::string &error) {
  std::lock_guard<std::mutex> lock(mutex);
  unsigned &reserved = sharedBytes[function];
  if (reserved >= bytes)
    return true;
  if (CUresult r = driver.funcSetAttribute(function, kFuncAttrMaxDynamicSharedBytes,
                                           static_cast<int>(bytes));
      r != kSuccess) {
    error = cat("allowing ", bytes, " bytes of dynamic shared memory "
                "(cuFuncSetAttribute) failed: ", describe(driver, r));
    return false;
  }
  reserved = bytes;
  return true;
}

CUdeviceptr Device::tensorMap(const CUtensorMap &map, CUstream stream, std::string &error) {
  std::lock_guard<std::mutex> lock(mutex);
  CUdeviceptr &ptr = tensorMaps[std::string(reinterpret_cast<const char *>(&map), sizeof map)];
  if (ptr)
    return ptr;
  if (CUresult r = driver.memAlloc(&ptr, sizeof map); r != kSuccess) {
    ptr = 0;
    error = cat("allocating a tensor map failed: ", describe(driver, r));
    return 0;
  }
  // From pageable memory the asynchronous copy is staged before it returns.
  CUresult r = stream ? driver.memcpyHtoDAsync(ptr, &map, sizeof map, stream)
                      : driver.memcpyHtoD(ptr, &map, sizeof map);
  if (r != kSuccess) {
    driver.memFree(ptr);
    ptr = 0;
    error = cat("uploading a tensor map failed: ", describe(driver, r));
    return 0;
  }
  return ptr;
}

CUdeviceptr Device::takeCached(uint64_t rounded) {
  std::lock_guard<std::mutex> lock(cacheMutex);
  auto it = cached.find(rounded);
  if (it == cached.end() || it->second.empty())
    return 0;
  CUdeviceptr ptr = it->second.back();
  it->second.pop_back();
  return ptr;
}

void Device::keepCached(CUdeviceptr ptr, uint64_t rounded) {
  std::lock_guard<std::mutex> lock(cacheMutex);
  cached[rounded].push_back(ptr);
}

void Device::flushCached(CUstream on) {
  std::lock_guard<std::mutex> lock(cacheMutex);
  for (auto &[rounded, blocks] : cached)
    for (CUdeviceptr ptr : blocks)
      driver.memFreeAsync(ptr, on);
  cached.clear();
}

int32_t Device::callOrReplay(const kiln_model &model, const RunPlan &plan,
                             std::vector<void *> &buffers, kiln_abi_host &deviceHost,
                             RunGuard &guard, void *runState, const DeviceScratch &scratch,
                             bool replayable) {
  auto &state = *static_cast<RunState *>(runState);
  auto call = [&] {
    return guard.call(model.abi->run, buffers.data(), plan.dims.data(), &deviceHost);
  };
  replayable = replayable && !syncEachLaunch && !poisonOutputs;
  GraphCache::Key key{scratch.arena, scratch.io, plan.dims, {}};
  for (void *buffer : buffers)
    key.buffers.push_back(reinterpret_cast<CUdeviceptr>(buffer));
  CUgraphExec exec = replayable ? graphs->find(key) : nullptr;
  CUstream capture = replayable && !exec ? graphs->beginCapture(key) : nullptr;
  int32_t code = 0;
  if (capture) {
    state.stream = capture;
    code = call();
    state.stream = stream;
    bool usable = code == 0 && !state.failed() && !guard.failed() && state.allocations.empty();
    exec = graphs->endCapture(key, usable);
    if (exec)
      state.lastKernel.clear();
    else if (!guard.failed()) {
      // Not kept (it allocated, failed, or the driver refused part of the
      // capture): its kernels never ran, so the run is made normally.
      state.reset();
      code = call();
    }
  } else if (!exec) {
    code = call();
  }
  if (exec && !state.failed() && code == 0)
    state.check(driver.graphLaunch(exec, stream), "launching the run's CUDA graph");
  return code;
}

CUdeviceptr Device::allocate(uint64_t bytes, std::string &error) {
  if (CUresult r = driver.ctxSetCurrent(context); r != kSuccess) {
    error = cat("cuCtxSetCurrent failed: ", describe(driver, r));
    return 0;
  }
  CUdeviceptr ptr = 0;
  if (CUresult r = driver.memAlloc(&ptr, std::max<uint64_t>(bytes, 1)); r != kSuccess) {
    error = cat("cannot allocate ", bytes, " bytes on ", deviceName, ": ", describe(driver, r));
    return 0;
  }
  return ptr;
}

void Device::release(CUdeviceptr ptr) {
  if (ptr && driver.ctxSetCurrent(context) == kSuccess)
    driver.memFree(ptr);
}

bool Device::copySync(bool toDevice, void *host, CUdeviceptr device, uint64_t bytes,
                      std::string &error) {
  CUresult r = driver.ctxSetCurrent(context);
  if (r == kSuccess)
    r = toDevice ? driver.memcpyHtoDAsync(device, host, bytes, stream)
                 : driver.memcpyDtoHAsync(host, device, bytes, stream);
  if (r == kSuccess)
    r = driver.streamSynchronize(stream);
  if (r != kSuccess)
    error = cat("copying ", bytes, " bytes ", toDevice ? "to " : "from ", deviceName,
                " failed: ", describe(driver, r));
  return r == kSuccess;
}

bool Device::copyToHost(void *dst, CUdeviceptr src, uint64_t bytes, std::string &error) {
  return copySync(/*toDevice=*/false, dst, src, bytes, error);
}

bool Device::copyToDevice(CUdeviceptr dst, const void *src, uint64_t bytes,
                          std::string &error) {
  return copySync(/*toDevice=*/true, const_cast<void *>(src), dst, bytes, error);
}

kiln_status *Device::run(const kiln_model &model, const RunPlan &plan,
                         const std::vector<void *> &outputs, const kiln_abi_host &host,
                         RunGuard &guard, RunRecorder *recorder,
                         const std::vector<const void *> &onDevice) {
  if (CUresult r = driver.ctxSetCurrent(context); r != kSuccess)
    return makeStatus(KILN_STATUS_INTERNAL,
                      cat("cuCtxSetCurrent failed: ", describe(driver, r)));
  auto failed = [&](kiln_status_code code, const std::string &error) {
    return makeStatus(code, cat("model '", model.path, "' failed on ", deviceName, ": ", error));
  };
  // This run's device memory: the planned arena and its inputs and outputs,
  // each 256-byte aligned in one block.
  std::string error;
  DeviceScratchLease lease(*arenas, error);
  if (!lease.get())
    return failed(KILN_STATUS_RESOURCE_EXHAUSTED, error);
  std::vector<uint64_t> offsets;
  uint64_t ioBytes = 0;
  auto place = [&](uint64_t bytes) {
    offsets.push_back(ioBytes);
    ioBytes += (bytes + 255) / 256 * 256;
  };
  // The inputs' then the outputs' pointers, and which of them are device
  // memory used in place.
  std::vector<const void *> given;
  for (const kiln_tensor *input : plan.inputs)
    given.push_back(input->data);
  given.insert(given.end(), outputs.begin(), outputs.end());
  // An output that is an input updated in place (ABI v6) starts as that
  // input: the run function reads the input from the output's buffer, so
  // the input's own slot stays empty.
  std::vector<int64_t> aliasedBy(plan.inputs.size(), -1);
  for (size_t o = 0; o < model.outputs.size(); ++o)
    if (int32_t i = model.outputs[o].aliasedInput; i >= 0)
      aliasedBy[i] = static_cast<int64_t>(o);
  std::vector<bool> resident(given.size());
  for (size_t i = 0; i < given.size(); ++i) {
    resident[i] =
        given[i] && std::find(onDevice.begin(), onDevice.end(), given[i]) != onDevice.end();
    bool aliased = i < plan.inputs.size() && aliasedBy[i] >= 0;
    if (aliased && resident[i] && given[i] != given[plan.inputs.size() + aliasedBy[i]])
      return failed(KILN_STATUS_INVALID_ARGUMENT,
                    cat("output '", model.outputs[aliasedBy[i]].name, "' is input '",
                        plan.inputs[i]->name,
                        "' updated in place: a device input must be the output's buffer"));
    place(resident[i] || aliased ? 0
          : i < plan.inputs.size() ? plan.inputs[i]->byte_size
                                   : plan.outputBytes[i - plan.inputs.size()]);
  }
  if (!arenas->reserveIO(*lease.get(), ioBytes, error))
    return failed(KILN_STATUS_RESOURCE_EXHAUSTED, error);
  std::vector<void *> buffers;
  for (size_t i = 0; i < offsets.size(); ++i)
    buffers.push_back(resident[i] ? const_cast<void *>(given[i])
                                  : reinterpret_cast<void *>(lease.get()->io + offsets[i]));

  RunState state{this, stream, {}, {}, {}};
  state.limit = guard.heapLimit();
  state.planned = guard.plannedBytes();
  state.sessionLimit = guard.byteLimit();
  kiln_abi_cuda services = {&state,      &getFunctionThunk, &launchThunk,   &allocThunk,
                            &freeThunk, &constantThunk,    &tensorMapThunk};
  kiln_abi_host deviceHost = host;
  deviceHost.cuda = &services;
  deviceHost.arena = reinterpret_cast<void *>(lease.get()->arena);
  deviceHost.weights = reinterpret_cast<const void *>(weights);
  deviceHost.trace = nullptr;

  for (size_t i = 0; i < plan.inputs.size(); ++i)
    if (plan.inputs[i]->byte_size && !resident[i])
      state.check(driver.memcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(
                                             aliasedBy[i] >= 0
                                                 ? buffers[plan.inputs.size() + aliasedBy[i]]
                                                 : buffers[i]),
                                         plan.inputs[i]->data, plan.inputs[i]->byte_size,
                                         stream),
                  cat("copying input '", plan.inputs[i]->name, "' to the device").c_str());
  // KILN_CUDA_POISON_OUTPUTS=1 (tests): outputs and the arena (the
  // intermediates) start as NaN (0x7fc00000 words), so an element no
  // kernel writes shows.
  std::vector<uint32_t> poison;
  if (poisonOutputs) {
    size_t largest = arenas->arenaSize();
    for (size_t bytes : plan.outputBytes)
      largest = std::max(largest, bytes);
    poison.assign((largest + 3) / 4, 0x7fc00000u);
    if (lease.get()->arena && arenas->arenaSize())
      state.check(driver.memcpyHtoDAsync(lease.get()->arena, poison.data(),
                                         arenas->arenaSize(), stream),
                  "poisoning the arena");
    for (size_t i = 0; i < plan.outputBytes.size(); ++i)
      if (void *ptr = buffers[plan.inputs.size() + i];
          ptr && plan.outputBytes[i] && model.outputs[i].aliasedInput < 0)
        state.check(driver.memcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(ptr), poison.data(),
                                           plan.outputBytes[i], stream),
                    "poisoning an output");
  }

  // The model's time: from inputs on the device to its last kernel done
  // (launch overhead included), by the host clock around a synchronize.
  state.check(driver.streamSynchronize(stream), "copying the inputs to the device");
  std::optional<DeviceTraceRecorder> trace;
  if (recorder) {
    trace.emplace(driver, stream, *events, *recorder);
    trace->start(deviceHost);
  }
  auto start = std::chrono::steady_clock::now();
  int32_t code = 0;
  if (!state.failed())
    code = callOrReplay(model, plan, buffers, deviceHost, guard, &state, *lease.get(),
                        !recorder);
  if (guard.failed() && !state.failed())
    state.fail(guard.failureMessage());
  bool timed = !state.failed() && driver.streamSynchronize(stream) == kSuccess;
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count();
  if (code == KILN_ABI_CUDA_NO_DEVICE)
    state.fail("the model's run function found no CUDA services (a CPU build of kiln_run?)");
  else if (code != 0)
    state.fail(cat("its run function returned ", code));
  for (size_t i = 0; i < outputs.size() && !state.failed(); ++i)
    if (plan.outputBytes[i] && !resident[plan.inputs.size() + i])
      state.check(driver.memcpyDtoHAsync(outputs[i],
                                         reinterpret_cast<CUdeviceptr>(
                                             buffers[plan.inputs.size() + i]),
                                         plan.outputBytes[i], stream),
                  cat("copying output '", model.outputs[i].name, "' to the host").c_str());
  if (CUresult r = driver.streamSynchronize(stream); r != kSuccess)
    state.fail(cat("running the kernels failed: ", describe(driver, r),
                   state.lastKernel.empty() ? "" : "; the last kernel launched was '",
                   state.lastKernel, state.lastKernel.empty() ? "" : "'",
                   " (KILN_CUDA_SYNC=1 names the failing kernel exactly)"));
  if (trace && !state.failed() && !trace->finish(error))
    state.fail(error);
  if (timed && !state.failed()) {
    lastMs.store(ms);
    graphs->noteRunCompleted();
  }
  for (CUdeviceptr ptr : state.allocations) {
    if (!ptr)
      continue;
    auto size = state.sizes.find(ptr);
    releaseAllocation(state, ptr,
                      size != state.sizes.end() ? std::optional<uint64_t>(size->second)
                                                : std::nullopt);
  }
  if (guard.failed())
    return makeStatus(guard.failureCode(), guard.failureMessage());
  if (state.failed())
    return failed(state.code, state.error);
  return nullptr;
}

} // namespace kiln::rt::cuda
