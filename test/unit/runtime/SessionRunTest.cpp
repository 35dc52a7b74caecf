//===- SessionRunTest.cpp - kiln_session_run results, lifetimes, concurrency -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

#include <atomic>
#include <thread>

namespace kiln::test {
namespace {

std::vector<float> iota(size_t count, float start) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i)
    values[i] = start + static_cast<float>(i);
  return values;
}

/// Runs add_one on `batch` rows starting at `start`; returns "" if y = x + 1.
std::string checkAddOne(kiln_session *session, int64_t batch, float start) {
  std::vector<float> x = iota(static_cast<size_t>(batch) * 12, start);
  InputTensor input = makeInput("x", KILN_DTYPE_F32, {batch, 3, 4}, x);
  std::string error;
  std::vector<TensorPtr> outputs = run(session, {input.view()}, 1, error);
  if (!error.empty())
    return error;
  const kiln_tensor &y = *outputs[0];
  if (std::string(y.name) != "y" || y.dtype != KILN_DTYPE_F32 || y.rank != 3 ||
      y.dims[0] != batch || y.dims[1] != 3 || y.dims[2] != 4 ||
      y.byte_size != x.size() * 4)
    return "wrong output descriptor";
  const float *values = static_cast<const float *>(y.data);
  for (size_t i = 0; i < x.size(); ++i)
    if (values[i] != x[i] + 1.0f)
      return "wrong value at " + std::to_string(i);
  return "";
}

TEST(SessionRun, AddOne) {
  ModelPtr model = loadModel("add_one");
  for (int32_t threads : {1, 2, 4}) {
    SessionPtr session = createSession(model.get(), threads);
    for (int64_t batch : {0, 1, 5, 33})
      EXPECT_EQ(checkAddOne(session.get(), batch, 0.5f), "")
          << threads << " threads, batch " << batch;
  }
}

TEST(SessionRun, EmptyOutputHasData) {
  ModelPtr model = loadModel("add_one");
  SessionPtr session = createSession(model.get());
  std::vector<int64_t> dims = {0, 3, 4};
  kiln_tensor x = {"x", KILN_DTYPE_F32, 3, dims.data(), nullptr, 0};
  std::string error;
  std::vector<TensorPtr> outputs = run(session.get(), {x}, 1, error);
  ASSERT_EQ(error, "");
  EXPECT_EQ(outputs[0]->byte_size, 0u);
  EXPECT_NE(outputs[0]->data, nullptr);
}

TEST(SessionRun, MaskedSumWithInputsInAnyOrder) {
  ModelPtr model = loadModel("masked_sum");
  SessionPtr session = createSession(model.get());
  InputTensor ids = makeInput<int64_t>("ids", KILN_DTYPE_I64, {2, 3},
                                       {1, 2, 3, 10, 20, 30});
  InputTensor mask = makeInput<uint8_t>("mask", KILN_DTYPE_BOOL, {2, 3},
                                        {1, 0, 1, 0, 1, 1});
  std::string error;
  std::vector<TensorPtr> outputs =
      run(session.get(), {mask.view(), ids.view()}, 2, error);
  ASSERT_EQ(error, "");
  EXPECT_STREQ(outputs[0]->name, "sum");
  EXPECT_STREQ(outputs[1]->name, "valid:count");
  ASSERT_EQ(outputs[0]->rank, 1);
  EXPECT_EQ(outputs[0]->dims[0], 2);
  const int64_t *sum = static_cast<const int64_t *>(outputs[0]->data);
  const int32_t *count = static_cast<const int32_t *>(outputs[1]->data);
  EXPECT_EQ(sum[0], 4);
  EXPECT_EQ(sum[1], 50);
  EXPECT_EQ(count[0], 2);
  EXPECT_EQ(count[1], 2);
}

TEST(SessionRun, EveryDtypeIsPassedThrough) {
  ModelPtr model = loadModel("copy_all");
  SessionPtr session = createSession(model.get());
  kiln_model_info info;
  ASSERT_EQ(messageOf(kiln_model_get_info(model.get(), &info)), "");
  std::vector<InputTensor> inputs;
  for (size_t i = 0; i < info.num_inputs; ++i) {
    kiln_tensor_info desc;
    ASSERT_EQ(messageOf(kiln_model_input_info(model.get(), i, &desc)), "");
    std::vector<int64_t> dims(desc.dims, desc.dims + desc.rank);
    dims.back() = 3; // n
    std::vector<uint8_t> bytes(kiln_dtype_size(desc.dtype) * (desc.rank == 2 ? 6 : 3));
    for (size_t b = 0; b < bytes.size(); ++b)
      bytes[b] = static_cast<uint8_t>(desc.dtype == KILN_DTYPE_BOOL ? b % 2 : 17 * i + b);
    inputs.push_back(makeInput(desc.name, desc.dtype, dims, bytes));
  }
  std::vector<kiln_tensor> views;
  for (InputTensor &input : inputs)
    views.push_back(input.view());
  std::string error;
  std::vector<TensorPtr> outputs = run(session.get(), views, info.num_outputs, error);
  ASSERT_EQ(error, "");
  for (size_t i = 0; i < outputs.size(); ++i) {
    EXPECT_EQ(outputs[i]->dtype, inputs[i].dtype);
    ASSERT_EQ(outputs[i]->byte_size, inputs[i].bytes.size());
    EXPECT_EQ(std::memcmp(outputs[i]->data, inputs[i].bytes.data(),
                          inputs[i].bytes.size()),
              0)
        << outputs[i]->name;
  }
}

TEST(SessionRun, OutputsOutliveSessionAndModel) {
  ModelPtr model = loadModel("add_one");
  SessionPtr session = createSession(model.get());
  InputTensor x = makeInput("x", KILN_DTYPE_F32, {1, 3, 4}, iota(12, 0));
  std::string error;
  std::vector<TensorPtr> outputs = run(session.get(), {x.view()}, 1, error);
  ASSERT_EQ(error, "");
  session.reset();
  model.reset();
  EXPECT_STREQ(outputs[0]->name, "y");
  EXPECT_EQ(outputs[0]->dims[2], 4);
  EXPECT_EQ(static_cast<const float *>(outputs[0]->data)[11], 12.0f);
}

TEST(SessionRun, SessionKeepsItsModelLoaded) {
  ModelPtr model = loadModel("add_one");
  SessionPtr session = createSession(model.get());
  model.reset(); // the session still holds the library
  EXPECT_EQ(checkAddOne(session.get(), 2, 1.0f), "");
}

TEST(SessionRun, ModelFailureIsAStatus) {
  ModelPtr model = loadModel("run_fails");
  SessionPtr session = createSession(model.get());
  InputTensor x = makeInput("x", KILN_DTYPE_F32, {1, 3, 4}, iota(12, 0));
  kiln_tensor view = x.view();
  kiln_tensor *output = reinterpret_cast<kiln_tensor *>(0x1);
  StatusPtr status(kiln_session_run(session.get(), &view, 1, &output, 1));
  EXPECT_EQ(kiln_status_get_code(status.get()), KILN_STATUS_INTERNAL);
  EXPECT_EQ(std::string(kiln_status_message(status.get())),
            "model '" + modelPath("run_fails") +
                "' failed: its run function returned 7");
  EXPECT_EQ(output, nullptr);
}

TEST(SessionRun, AllocationFailureIsAStatus) {
  // No byte limit, and outputs of 2^60 bytes: more than any address space.
  ModelPtr model = loadModel("masked_sum");
  SessionPtr session = createSession(model.get(), 1, UINT64_MAX);
  std::vector<int64_t> dims = {int64_t(1) << 57, 0};
  kiln_tensor ids = {"ids", KILN_DTYPE_I64, 2, dims.data(), nullptr, 0};
  kiln_tensor mask = {"mask", KILN_DTYPE_BOOL, 2, dims.data(), nullptr, 0};
  kiln_tensor inputs[] = {ids, mask};
  kiln_tensor *outputs[2] = {nullptr, nullptr};
  StatusPtr status(kiln_session_run(session.get(), inputs, 2, outputs, 2));
  EXPECT_EQ(kiln_status_get_code(status.get()), KILN_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_STREQ(kiln_status_message(status.get()),
               "cannot allocate 1152921504606846976 bytes for output 'sum'");
  EXPECT_EQ(outputs[0], nullptr);
  EXPECT_EQ(outputs[1], nullptr);
}

TEST(SessionRun, NullSession) {
  kiln_tensor *output = nullptr;
  EXPECT_EQ(messageOf(kiln_session_run(nullptr, nullptr, 0, &output, 1)),
            "session is NULL");
}

TEST(SessionRun, OptionsResolveDefaults) {
  ModelPtr model = loadModel("add_one");
  kiln_session *raw = nullptr;
  ASSERT_EQ(messageOf(kiln_session_create(model.get(), nullptr, &raw)), "");
  SessionPtr session(raw);
  kiln_session_options options;
  ASSERT_EQ(messageOf(kiln_session_get_options(session.get(), &options)), "");
  EXPECT_EQ(options.device, KILN_DEVICE_CPU);
  EXPECT_GE(options.num_threads, 1);
  EXPECT_GT(options.max_bytes, uint64_t(1) << 20);
  SessionPtr three = createSession(model.get(), 3, 1000);
  ASSERT_EQ(messageOf(kiln_session_get_options(three.get(), &options)), "");
  EXPECT_EQ(options.num_threads, 3);
  EXPECT_EQ(options.max_bytes, 1000u);
}

// Many threads share one session (and so its pool, with nested
// parallel_for calls in the model), each with its own shapes and values.
TEST(SessionRun, ConcurrentRunsOnOneSession) {
  ModelPtr model = loadModel("add_one");
  SessionPtr session = createSession(model.get(), 4);
  constexpr int kThreads = 8, kRuns = 40;
  std::atomic<int> failures{0};
  std::vector<std::string> firstError(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        std::string error =
            checkAddOne(session.get(), 1 + (t * 7 + r) % 13, 100.0f * t + r);
        if (!error.empty() && failures.fetch_add(1) == 0)
          firstError[t] = error;
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(failures.load(), 0);
  for (const std::string &error : firstError)
    EXPECT_EQ(error, "");
}

} // namespace
} // namespace kiln::test
