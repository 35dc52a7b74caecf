//===- CudaSessionTest.cpp - The runtime's CUDA path on a fake driver ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// ctest runs this binary with LD_LIBRARY_PATH pointing at the fake
// libcuda.so.1 (Inputs/fake_cuda.c), which runs kernels of fake images on
// the host. The `cuda_scale*` fake artifacts (Inputs/cuda_scale.c) call
// kiln_abi_cuda as kilnc's CUDA artifacts do. What is checked: device
// scratch (arena + I/O) per run and reused, weights uploaded once per
// session, dispatch spans from CUDA events, dynamic shared memory opt-in,
// kernel names in errors, concurrent runs on one session, and runs replayed
// as CUDA graphs (and the runs that must not be).
//
//===----------------------------------------------------------------------===//

#include "Inputs/FakeCuda.h"
#include "RuntimeTestUtils.h"

#include <dlfcn.h>
#include <cstdlib>
#include <thread>
#include <utility>

namespace kiln::test {
namespace {

SessionPtr createCudaSession(kiln_model *model, std::string &error, uint64_t maxBytes = 0) {
  kiln_session_options options;
  kiln_session_options_init(&options);
  options.device = KILN_DEVICE_CUDA;
  options.max_bytes = maxBytes;
  kiln_session *session = nullptr;
  error = messageOf(kiln_session_create(model, &options, &session));
  return SessionPtr(session);
}

/// The fake driver's counters (it is loaded by the first CUDA session).
const fake_cuda_counters &counters() {
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(library, nullptr) << "the fake libcuda.so.1 is not loaded";
  using Get = fake_cuda_counters *(*)();
  auto get = library ? reinterpret_cast<Get>(dlsym(library, "fake_cuda_get_counters")) : nullptr;
  EXPECT_NE(get, nullptr) << "libcuda.so.1 is not the fake driver";
  static fake_cuda_counters none{};
  return get ? *get() : none;
}
long load(const long &counter) { return __atomic_load_n(&counter, __ATOMIC_SEQ_CST); }

struct Outputs {
  std::vector<float> y, w;
};

Outputs runScale(kiln_session *session, float offset, std::string &error,
                 kiln_trace *trace = nullptr) {
  std::vector<float> x(64);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = offset + static_cast<float>(i);
  InputTensor input = makeInput("x", KILN_DTYPE_F32, {64}, x);
  kiln_tensor view = input.view();
  kiln_tensor *raw[2] = {nullptr, nullptr};
  error = messageOf(kiln_session_run_traced(session, &view, 1, raw, 2, trace));
  TensorPtr y(raw[0]), w(raw[1]);
  Outputs out;
  if (y && w) {
    out.y.assign(static_cast<float *>(y->data), static_cast<float *>(y->data) + 64);
    out.w.assign(static_cast<float *>(w->data), static_cast<float *>(w->data) + 64);
  }
  return out;
}

void expectScaled(const Outputs &out, float offset) {
  ASSERT_EQ(out.y.size(), 64u);
  for (size_t i = 0; i < 64; ++i)
    EXPECT_EQ(out.y[i], (offset + static_cast<float>(i)) * out.w[i] + 1) << i;
}

TEST(CudaSession, EmbeddedWeightsArenaAndNoAllocationsInSteadyState) {
  ModelPtr model = loadModel("cuda_scale");
  ASSERT_TRUE(model);
  std::string error;
  SessionPtr session = createCudaSession(model.get(), error);
  ASSERT_EQ(error, "");
  Outputs first = runScale(session.get(), 0, error);
  ASSERT_EQ(error, "");
  for (size_t i = 0; i < 64; ++i)
    EXPECT_EQ(first.w[i], static_cast<float>(i) / 2) << i; // the embedded values
  expectScaled(first, 0);
  long allocations = load(counters().allocations), uploads = load(counters().uploads);
  for (int run = 1; run <= 10; ++run) {
    Outputs out = runScale(session.get(), static_cast<float>(run), error);
    ASSERT_EQ(error, "");
    expectScaled(out, static_cast<float>(run));
  }
  EXPECT_EQ(load(counters().allocations), allocations) << "device memory allocated per run";
  EXPECT_EQ(load(counters().uploads), uploads) << "weights uploaded again";
}

TEST(CudaSession, GeneratedWeightsUploadedOncePerSession) {
  ModelPtr model = loadModel("cuda_scale_none");
  ASSERT_TRUE(model);
  std::string error;
  SessionPtr probe = createCudaSession(model.get(), error); // loads the driver
  ASSERT_EQ(error, "");
  long uploads = load(counters().uploads);
  SessionPtr session = createCudaSession(model.get(), error);
  ASSERT_EQ(error, "");
  EXPECT_EQ(load(counters().uploads), uploads + 1);
  Outputs out = runScale(session.get(), 1, error);
  ASSERT_EQ(error, "");
  expectScaled(out, 1);
  bool nonZero = false;
  for (float w : out.w) {
    EXPECT_GE(w, -0.125f);
    EXPECT_LT(w, 0.125f);
    nonZero |= w != 0;
  }
  EXPECT_TRUE(nonZero);
  runScale(session.get(), 2, error);
  EXPECT_EQ(load(counters().uploads), uploads + 1);
  // The generated blob is the same in every session (fixed seed).
  EXPECT_EQ(runScale(probe.get(), 1, error).w, out.w);
}

TEST(CudaSession, TracedRunHasOneSpanPerDispatchInsideTheRun) {
  ModelPtr model = loadModel("cuda_scale");
  std::string error;
  SessionPtr session = createCudaSession(model.get(), error);
  ASSERT_EQ(error, "");
  kiln_trace *raw = nullptr;
  ASSERT_EQ(messageOf(kiln_trace_create(&raw)), "");
  std::unique_ptr<kiln_trace, void (*)(kiln_trace *)> trace(raw, &kiln_trace_destroy);
  for (int run = 0; run < 3; ++run) {
    runScale(session.get(), 0, error, trace.get());
    ASSERT_EQ(error, "");
  }
  ASSERT_EQ(kiln_trace_event_count(trace.get()), 9u);
  kiln_trace_event run{};
  for (size_t i = 0; i < 9; ++i) {
    kiln_trace_event event;
    ASSERT_EQ(messageOf(kiln_trace_get_event(trace.get(), i, &event)), "");
    if (i % 3 == 2) { // the run comes last
      EXPECT_STREQ(event.name, "run");
      run = event;
      continue;
    }
    EXPECT_STREQ(event.name, i % 3 == 0 ? "scale /mul" : "add /add");
    EXPECT_EQ(event.dispatch, static_cast<int32_t>(i % 3));
    EXPECT_LE(event.begin_ns, event.end_ns);
  }
  // Spans of the last run lie inside it.
  for (size_t i = 6; i < 8; ++i) {
    kiln_trace_event event;
    ASSERT_EQ(messageOf(kiln_trace_get_event(trace.get(), i, &event)), "");
    EXPECT_GE(event.begin_ns, run.begin_ns);
    EXPECT_LE(event.end_ns, run.end_ns);
  }
}

TEST(CudaSession, MissingKernelIsNamed) {
  ModelPtr model = loadModel("cuda_missing_kernel");
  std::string error;
  SessionPtr session = createCudaSession(model.get(), error);
  ASSERT_EQ(error, "");
  runScale(session.get(), 0, error);
  EXPECT_NE(error.find("failed on Fake GPU: finding kernel 'no_such_kernel' failed: "
                       "CUDA_ERROR_NOT_FOUND (500: named symbol not found)"),
            std::string::npos)
      << error;
}

TEST(CudaSession, FailedLaunchNamesTheKernel) {
  ModelPtr model = loadModel("cuda_scale");
  std::string error;
  SessionPtr session = createCudaSession(model.get(), error);
  ASSERT_EQ(error, "");
  setenv("FAKE_CUDA_FAIL_LAUNCH", "add_kernel", 1);
  runScale(session.get(), 0, error);
  unsetenv("FAKE_CUDA_FAIL_LAUNCH");
  EXPECT_NE(error.find("launch of kernel 'add_kernel' failed: CUDA_ERROR_LAUNCH_FAILED (719: "
                       "unspecified launch failure)"),
            std::string::npos)
      << error;
  // The session stays usable.
  expectScaled(runScale(session.get(), 0, error), 0);
  EXPECT_EQ(error, "");
}

TEST(CudaSession, OutOfDeviceMemoryForTheArena) {
  ModelPtr model = loadModel("cuda_scale");
  std::string error;
  SessionPtr session = createCudaSession(model.get(), error);
  ASSERT_EQ(error, "");
  setenv("FAKE_CUDA_MAX_ALLOC", "128", 1); // the arena has 256 bytes
  runScale(session.get(), 0, error);
  unsetenv("FAKE_CUDA_MAX_ALLOC");
  EXPECT_NE(error.find("allocating the 256-byte device arena failed: "
                       "CUDA_ERROR_OUT_OF_MEMORY (2: out of memory)"),
            std::string::npos)
      << error;
}

TEST(CudaSession, DeviceAllocationsCountAgainstTheByteLimit) {
  ModelPtr model = loadModel("cuda_device_alloc");
  std::string error;
  {
    SessionPtr session = createCudaSession(model.get(), error);
    ASSERT_EQ(error, "");
    expectScaled(runScale(session.get(), 0, error), 0);
    EXPECT_EQ(error, "");
  }
  // 64 KiB: the arena (256 bytes) and the outputs (512) fit, 1 MiB does not.
  SessionPtr session = createCudaSession(model.get(), error, 65536);
  ASSERT_EQ(error, "");
  runScale(session.get(), 0, error); // the session's scratch and weights
  // Refused before the driver sees it: a steady-state run allocates nothing.
  long allocations = load(counters().allocations);
  Outputs out = runScale(session.get(), 0, error);
  EXPECT_EQ(load(counters().allocations), allocations);
  EXPECT_TRUE(out.y.empty());
  EXPECT_NE(error.find("failed on Fake GPU: an intermediate buffer of 1048576 bytes of device "
                       "memory is over the session's byte limit of 65536 bytes (768 bytes in "
                       "use by the arena, the outputs and other intermediates)"),
            std::string::npos)
      << error;
}

TEST(CudaSession, FailedCheckIsAStatus) {
  ModelPtr model = loadModel("cuda_check_fails");
  std::string error;
  SessionPtr session = createCudaSession(model.get(), error);
  ASSERT_EQ(error, "");
  Outputs out = runScale(session.get(), 0, error);
  EXPECT_TRUE(out.y.empty());
  EXPECT_EQ(error, "dim mismatch in add '/add' (dim 0 of operand 1): 65 vs 64");
}

// A run that shared another run's arena would read that run's staged
// values: every output is checked against its own input.
TEST(CudaSession, ConcurrentRunsOnOneSession) {
  ModelPtr model = loadModel("cuda_scale");
  std::string error;
  SessionPtr session = createCudaSession(model.get(), error);
  ASSERT_EQ(error, "");
  runScale(session.get(), 0, error);
  long allocations = load(counters().allocations);
  constexpr int kThreads = 8, kRuns = 100;
  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        std::string message;
        float offset = static_cast<float>(t * 1000 + r);
        Outputs out = runScale(session.get(), offset, message);
        if (!message.empty()) {
          ++failed;
          continue;
        }
        for (size_t i = 0; i < 64; ++i)
          if (out.y[i] != (offset + static_cast<float>(i)) * out.w[i] + 1) {
            ++wrong;
            break;
          }
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  // At most one more scratch (arena + I/O block) per thread.
  EXPECT_LE(load(counters().allocations), allocations + 2 * kThreads);
}

/// Runs `session` `runs` times with a new input each time, checking every
/// output; returns how many graph launches and captured kernels the runs
/// made.
std::pair<long, long> runAndCountGraphs(kiln_session *session, int runs) {
  long graphs = load(counters().graph_launches), captured = load(counters().captured);
  for (int run = 0; run < runs; ++run) {
    std::string error;
    Outputs out = runScale(session, static_cast<float>(7 * run), error);
    EXPECT_EQ(error, "") << "run " << run;
    expectScaled(out, static_cast<float>(7 * run));
  }
  return {load(counters().graph_launches) - graphs, load(counters().captured) - captured};
}

TEST(CudaSession, RepeatedRunsReplayOneCapturedGraph) {
  ModelPtr model = loadModel("cuda_scale");
  std::string error;
  SessionPtr session = createCudaSession(model.get(), error);
  ASSERT_EQ(error, "");
  // Run 1 launches its kernels (and loads them); run 2 is captured (its two
  // kernels) and replayed; runs 3-6 replay the same graph, with new inputs.
  auto [graphs, captured] = runAndCountGraphs(session.get(), 6);
  EXPECT_EQ(graphs, 5);
  EXPECT_EQ(captured, 2);
  // A traced run launches the kernels itself: one span per dispatch.
  kiln_trace *trace = nullptr;
  ASSERT_EQ(messageOf(kiln_trace_create(&trace)), "");
  long before = load(counters().graph_launches);
  expectScaled(runScale(session.get(), 3, error, trace), 3);
  EXPECT_EQ(error, "");
  EXPECT_EQ(load(counters().graph_launches), before) << "a traced run was replayed";
  kiln_trace_destroy(trace);
}

TEST(CudaSession, GraphsOffWithTheEnvironmentVariable) {
  setenv("KILN_CUDA_GRAPHS", "0", 1);
  ModelPtr model = loadModel("cuda_scale");
  std::string error;
  SessionPtr session = createCudaSession(model.get(), error);
  unsetenv("KILN_CUDA_GRAPHS");
  ASSERT_EQ(error, "");
  auto [graphs, captured] = runAndCountGraphs(session.get(), 4);
  EXPECT_EQ(graphs, 0);
  EXPECT_EQ(captured, 0);
}

TEST(CudaSession, UncapturableKernelsRunNormally) {
  // The driver refuses the capture: that run is made again normally, and
  // the model is not captured again.
  ModelPtr model = loadModel("cuda_uncapturable");
  std::string error;
  SessionPtr session = createCudaSession(model.get(), error);
  ASSERT_EQ(error, "");
  auto [graphs, captured] = runAndCountGraphs(session.get(), 5);
  EXPECT_EQ(graphs, 0);
  EXPECT_EQ(captured, 0);
}

TEST(CudaSession, RunsThatAllocateDeviceMemoryAreNotReplayed) {
  ModelPtr model = loadModel("cuda_device_alloc");
  std::string error;
  SessionPtr session = createCudaSession(model.get(), error);
  ASSERT_EQ(error, "");
  runAndCountGraphs(session.get(), 1);
  long live = load(counters().live);
  auto [graphs, captured] = runAndCountGraphs(session.get(), 4);
  EXPECT_EQ(graphs, 0);
  EXPECT_EQ(captured, 2) << "the capture of run 2, dropped since it allocated";
  EXPECT_EQ(load(counters().live), live) << "device memory leaked";
}

// A run's dynamic allocation (the model's 1 MiB buffer that the plan could
// not place) comes from the driver once; later runs reuse the freed block
// (kept by the session, by size) instead of allocating again, and the
// outputs stay right.
TEST(CudaSession, DynamicAllocationsAreReusedByLaterRuns) {
  setenv("KILN_CUDA_GRAPHS", "0", 1); // every run launches its kernels
  ModelPtr model = loadModel("cuda_device_alloc");
  std::string error;
  SessionPtr session = createCudaSession(model.get(), error);
  unsetenv("KILN_CUDA_GRAPHS");
  ASSERT_EQ(error, "");
  long before = load(counters().allocations);
  runAndCountGraphs(session.get(), 1);
  long first = load(counters().allocations) - before;
  EXPECT_GE(first, 1) << "the first run allocates its buffer";
  long live = load(counters().live);
  runAndCountGraphs(session.get(), 4);
  EXPECT_EQ(load(counters().allocations) - before, first) << "a later run allocated again";
  EXPECT_EQ(load(counters().live), live);
  session.reset();
  EXPECT_LT(load(counters().live), live) << "the kept block outlived the session";
}

} // namespace
} // namespace kiln::test
