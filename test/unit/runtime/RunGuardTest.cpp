//===- RunGuardTest.cpp - Check failures and heap memory of generated code -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The fake artifact guarded.c uses kiln_abi_host::fail, alloc and free (ABI
// v3) the way kilnc's code does; its first input element picks the case.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

#include <cstdio>
#include <thread>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define KILN_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_TEST_ASAN 1
#endif
#endif

namespace kiln::test {
namespace {

struct Result {
  kiln_status_code code;
  std::string message;
  std::vector<float> y;
};

/// Runs guarded on x = [mode, 1, 2, ..., n - 1].
Result runGuarded(kiln_session *session, float mode, int64_t n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    x[i] = i == 0 ? mode : static_cast<float>(i);
  InputTensor input = makeInput("x", KILN_DTYPE_F32, {n}, x);
  kiln_tensor view = input.view();
  kiln_tensor *output = nullptr;
  StatusPtr status(kiln_session_run(session, &view, 1, &output, 1));
  TensorPtr owned(output);
  Result result{kiln_status_get_code(status.get()), messageOf(status.release()), {}};
  if (output) {
    const float *y = static_cast<const float *>(output->data);
    result.y.assign(y, y + n);
  }
  return result;
}

/// Resident pages of this process (/proc/self/statm), -1 if unknown.
long residentPages() {
  long size = -1, resident = -1;
  if (FILE *file = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(file, "%ld %ld", &size, &resident) != 2)
      resident = -1;
    std::fclose(file);
  }
  return resident;
}

bool addsOne(const Result &result, float mode) {
  for (size_t i = 0; i < result.y.size(); ++i)
    if (result.y[i] != (i == 0 ? mode : static_cast<float>(i)) + 1.0f)
      return false;
  return !result.y.empty();
}

TEST(RunGuard, HeapBufferRoundTrip) {
  ModelPtr model = loadModel("guarded");
  SessionPtr session = createSession(model.get());
  Result result = runGuarded(session.get(), 0, 100);
  EXPECT_EQ(result.code, KILN_STATUS_OK) << result.message;
  EXPECT_TRUE(addsOne(result, 0));
}

TEST(RunGuard, FailedCheckStopsTheRun) {
  ModelPtr model = loadModel("guarded");
  SessionPtr session = createSession(model.get());
  Result result = runGuarded(session.get(), 1, 40);
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(result.message, "dim mismatch in add 'fake' (dim 0): 40 vs 32");
  EXPECT_TRUE(result.y.empty()); // no output handed out
  // The session is still usable, on this thread and others.
  Result again = runGuarded(session.get(), 0, 8);
  EXPECT_EQ(again.code, KILN_STATUS_OK) << again.message;
  EXPECT_TRUE(addsOne(again, 0));
  std::thread other([&] {
    Result fromThread = runGuarded(session.get(), 1, 7);
    EXPECT_EQ(fromThread.message, "dim mismatch in add 'fake' (dim 0): 7 vs 32");
  });
  other.join();
}

TEST(RunGuard, AllocationOverTheLimitIsRefused) {
  ModelPtr model = loadModel("guarded");
  // 64 KiB: the output (4 * 10 bytes) fits, 10 MiB of scratch does not.
  SessionPtr session = createSession(model.get(), 2, 65536);
  Result result = runGuarded(session.get(), 2, 10);
  EXPECT_EQ(result.code, KILN_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_EQ(result.message,
            "an intermediate buffer of 10485760 bytes is over the session's byte limit of "
            "65536 bytes (40 bytes in use by the arena, the outputs and other intermediates)");
  // A buffer that fits is counted and given back.
  Result fits = runGuarded(session.get(), 0, 1000);
  EXPECT_EQ(fits.code, KILN_STATUS_OK) << fits.message;
  Result tooBig = runGuarded(session.get(), 0, 10000); // 40000 output + 40000 scratch
  EXPECT_EQ(tooBig.code, KILN_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_EQ(tooBig.message,
            "an intermediate buffer of 40000 bytes is over the session's byte limit of "
            "65536 bytes (40000 bytes in use by the arena, the outputs and other "
            "intermediates)");
}

TEST(RunGuard, AllocationFailureIsAStatus) {
  // No byte limit: the allocation itself fails (2^60 bytes).
  ModelPtr model = loadModel("guarded");
  SessionPtr session = createSession(model.get(), 1, UINT64_MAX);
  Result result = runGuarded(session.get(), 6, 4);
  EXPECT_EQ(result.code, KILN_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_EQ(result.message, "cannot allocate an intermediate buffer of 1152921504606846976 bytes")
      << result.message;
}

TEST(RunGuard, LeftoverBuffersAreFreed) {
  ModelPtr model = loadModel("guarded");
  SessionPtr session = createSession(model.get(), 2, 4 << 20);
  // Each run leaves 1 MiB allocated and written: kept, 400 runs would hold
  // 400 MiB of resident memory.
  long before = residentPages();
  for (int i = 0; i < 400; ++i) {
    Result result = runGuarded(session.get(), 3, 16);
    ASSERT_EQ(result.code, KILN_STATUS_OK) << i << ": " << result.message;
  }
  long grown = (residentPages() - before) * sysconf(_SC_PAGESIZE);
#ifdef KILN_TEST_ASAN
  // ASan keeps freed memory in quarantine (resident); LeakSanitizer checks
  // at exit instead.
  (void)grown;
#else
  EXPECT_LT(grown, 64l << 20);
#endif
}

TEST(RunGuard, FailureInsideParallelBodyFailsTheRun) {
  ModelPtr model = loadModel("guarded");
  for (int32_t threads : {1, 4}) {
    SessionPtr session = createSession(model.get(), threads);
    Result result = runGuarded(session.get(), 4, 16);
    EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(result.message, "index 9 out of range [-4, 4) in a body");
    EXPECT_TRUE(result.y.empty());
  }
}

TEST(RunGuard, AllocationsInsideParallelBodies) {
  ModelPtr model = loadModel("guarded");
  SessionPtr session = createSession(model.get(), 4, 1 << 20);
  for (int i = 0; i < 20; ++i) {
    Result result = runGuarded(session.get(), 5, 64);
    ASSERT_EQ(result.code, KILN_STATUS_OK) << result.message;
    EXPECT_TRUE(addsOne(result, 5));
  }
}

} // namespace
} // namespace kiln::test
