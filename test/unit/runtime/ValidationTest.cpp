//===- ValidationTest.cpp - Every check of kiln_session_run has a negative test -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Inputs in these tests often point at memory that must never be read
// (kBadData): validation happens before data is touched, so a wrong order
// of checks would crash the test rather than pass it.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

#include "kiln/Target/Host/DimFormula.h"

#include <optional>
#include <string_view>

namespace kiln::test {
namespace {

void *const kBadData = reinterpret_cast<void *>(0x10);

class Validation : public ::testing::Test {
protected:
  void SetUp() override {
    addOne = loadModel("add_one");
    maskedSum = loadModel("masked_sum");
    ASSERT_TRUE(addOne && maskedSum);
    addOneSession = createSession(addOne.get());
    maskedSumSession = createSession(maskedSum.get());
  }

  /// Runs add_one with one input tensor x and returns the error.
  std::string runAddOne(kiln_tensor x) {
    std::string error;
    run(addOneSession.get(), {x}, 1, error);
    return error;
  }

  std::string runMaskedSum(const std::vector<kiln_tensor> &inputs) {
    std::string error;
    run(maskedSumSession.get(), inputs, 2, error);
    return error;
  }

  static kiln_tensor tensor(const char *name, int32_t dtype,
                            const std::vector<int64_t> &dims, size_t bytes,
                            void *data = kBadData) {
    return {name, dtype, static_cast<int32_t>(dims.size()), dims.data(), data, bytes};
  }

  ModelPtr addOne, maskedSum;
  SessionPtr addOneSession, maskedSumSession;
  std::vector<int64_t> x234 = {2, 3, 4};
  std::vector<int64_t> b2s9 = {2, 9};
};

TEST_F(Validation, InputCount) {
  std::string error;
  run(addOneSession.get(), {}, 1, error);
  EXPECT_EQ(error, "input count: got 0, expected 1 ('x')");
  kiln_tensor ids = tensor("ids", KILN_DTYPE_I64, b2s9, 144);
  EXPECT_EQ(runMaskedSum({ids}), "input count: got 1, expected 2 ('ids', 'mask')");
}

TEST_F(Validation, UnknownName) {
  kiln_tensor ids = tensor("ids", KILN_DTYPE_I64, b2s9, 144);
  kiln_tensor mask = tensor("maks", KILN_DTYPE_BOOL, b2s9, 18);
  EXPECT_EQ(runMaskedSum({ids, mask}),
            "unknown input 'maks' (inputs[1]); the model's inputs are 'ids', 'mask'");
}

TEST_F(Validation, MissingName) {
  kiln_tensor ids = tensor(nullptr, KILN_DTYPE_I64, b2s9, 144);
  kiln_tensor mask = tensor("mask", KILN_DTYPE_BOOL, b2s9, 18);
  EXPECT_EQ(runMaskedSum({mask, ids}), "inputs[1] has no name");
}

TEST_F(Validation, DuplicateName) {
  kiln_tensor ids = tensor("ids", KILN_DTYPE_I64, b2s9, 144);
  EXPECT_EQ(runMaskedSum({ids, ids}),
            "input 'ids' is given twice (inputs[0] and inputs[1])");
}

TEST_F(Validation, Dtype) {
  EXPECT_EQ(runAddOne(tensor("x", KILN_DTYPE_I32, x234, 96)),
            "input 'x' dtype: got i32, expected f32");
  EXPECT_EQ(runAddOne(tensor("x", 42, x234, 96)),
            "input 'x' dtype: got 42 (not a kiln_dtype), expected f32");
}

TEST_F(Validation, Rank) {
  std::vector<int64_t> dims = {2, 12};
  EXPECT_EQ(runAddOne(tensor("x", KILN_DTYPE_F32, dims, 96)),
            "input 'x' rank: got 2, expected 3");
  kiln_tensor noDims = tensor("x", KILN_DTYPE_F32, x234, 96);
  noDims.dims = nullptr;
  EXPECT_EQ(runAddOne(noDims), "input 'x': dims is NULL");
}

TEST_F(Validation, StaticDim) {
  std::vector<int64_t> dims = {2, 3, 100};
  EXPECT_EQ(runAddOne(tensor("x", KILN_DTYPE_F32, dims, 2400)),
            "input 'x' dim 2: got 100, expected 4");
}

TEST_F(Validation, NegativeDim) {
  std::vector<int64_t> dims = {-2, 3, 4};
  EXPECT_EQ(runAddOne(tensor("x", KILN_DTYPE_F32, dims, 96)),
            "input 'x' dim 0 ('batch'): got -2, expected a size >= 0");
}

TEST_F(Validation, SymbolicDimInconsistentAcrossInputs) {
  std::vector<int64_t> b2s7 = {2, 7};
  kiln_tensor ids = tensor("ids", KILN_DTYPE_I64, b2s9, 144);
  kiln_tensor mask = tensor("mask", KILN_DTYPE_BOOL, b2s7, 14);
  std::string expected =
      "input 'mask' dim 1 ('seq'): got 7, but 'seq' is 9 from input 'ids'";
  EXPECT_EQ(runMaskedSum({ids, mask}), expected);
  // Symbols bind in the model's input order, whatever the caller's order.
  EXPECT_EQ(runMaskedSum({mask, ids}), expected);
}

TEST_F(Validation, ByteSizeOverflow) {
  std::vector<int64_t> dims = {int64_t(1) << 62, 3, 4};
  EXPECT_EQ(runAddOne(tensor("x", KILN_DTYPE_F32, dims, 96)),
            "input 'x': byte size of [4611686018427387904, 3, 4] f32 overflows 64 bits");
}

TEST_F(Validation, OutputByteSizeOverflow) {
  // seq = 0 keeps the inputs empty while batch makes the i64 output huge.
  std::vector<int64_t> dims = {int64_t(1) << 62, 0};
  kiln_tensor ids = tensor("ids", KILN_DTYPE_I64, dims, 0, nullptr);
  kiln_tensor mask = tensor("mask", KILN_DTYPE_BOOL, dims, 0, nullptr);
  EXPECT_EQ(runMaskedSum({ids, mask}),
            "output 'sum': byte size of [4611686018427387904] i64 overflows 64 bits");
}

TEST_F(Validation, ByteSizeMismatch) {
  EXPECT_EQ(runAddOne(tensor("x", KILN_DTYPE_F32, x234, 100)),
            "input 'x' byte_size: got 100, expected 96 for [2, 3, 4] f32");
}

TEST_F(Validation, NullData) {
  EXPECT_EQ(runAddOne(tensor("x", KILN_DTYPE_F32, x234, 96, nullptr)),
            "input 'x': data is NULL");
}

TEST_F(Validation, NullInputArray) {
  std::vector<kiln_tensor *> outputs(1);
  EXPECT_EQ(messageOf(kiln_session_run(addOneSession.get(), nullptr, 1,
                                       outputs.data(), 1)),
            "inputs is NULL but num_inputs is 1");
}

TEST_F(Validation, OutputCount) {
  std::string error;
  std::vector<float> data(24);
  kiln_tensor x = tensor("x", KILN_DTYPE_F32, x234, 96, data.data());
  run(addOneSession.get(), {x}, 2, error);
  EXPECT_EQ(error, "output count: got 2, expected 1 ('y')");
  EXPECT_EQ(messageOf(kiln_session_run(addOneSession.get(), &x, 1, nullptr, 1)),
            "out_outputs is NULL but num_outputs is 1");
}

TEST_F(Validation, ByteLimitPerOutput) {
  SessionPtr limited = createSession(addOne.get(), 1, 100);
  std::vector<int64_t> dims = {3, 3, 4};
  std::vector<float> data(36);
  std::string error;
  std::vector<TensorPtr> outputs = run(
      limited.get(), {tensor("x", KILN_DTYPE_F32, dims, 144, data.data())}, 1, error);
  EXPECT_EQ(error, "output 'y' needs 144 bytes ([3, 3, 4] f32), over the "
                   "session's byte limit of 100 bytes");
  EXPECT_EQ(outputs[0], nullptr);
  std::vector<int64_t> small = {2, 3, 4};
  run(limited.get(), {tensor("x", KILN_DTYPE_F32, small, 96, data.data())}, 1, error);
  EXPECT_EQ(error, "");
}

TEST_F(Validation, ByteLimitForAllOutputs) {
  // sum needs 80 bytes and valid:count 40: each fits in 100, together not.
  SessionPtr limited = createSession(maskedSum.get(), 1, 100);
  std::vector<int64_t> dims = {10, 1};
  std::vector<int64_t> ids(10);
  std::vector<unsigned char> mask(10);
  std::string error;
  run(limited.get(),
      {tensor("ids", KILN_DTYPE_I64, dims, 80, ids.data()),
       tensor("mask", KILN_DTYPE_BOOL, dims, 10, mask.data())},
      2, error);
  EXPECT_EQ(error, "the outputs need 120 bytes or more, over the session's "
                   "byte limit of 100 bytes");
}

TEST_F(Validation, FailsBeforeTheModelRuns) {
  // run_fails returns 7 whenever it runs, so only validation may answer.
  ModelPtr model = loadModel("run_fails");
  SessionPtr session = createSession(model.get());
  std::string error;
  run(session.get(), {tensor("x", KILN_DTYPE_F64, x234, 192)}, 1, error);
  EXPECT_EQ(error, "input 'x' dtype: got f64, expected f32");
}

TEST_F(Validation, CodesOfValidationErrors) {
  std::vector<kiln_tensor *> outputs(1);
  kiln_tensor x = tensor("x", KILN_DTYPE_I32, x234, 96);
  StatusPtr status(kiln_session_run(addOneSession.get(), &x, 1, outputs.data(), 1));
  EXPECT_EQ(kiln_status_get_code(status.get()), KILN_STATUS_INVALID_ARGUMENT);
  SessionPtr limited = createSession(addOne.get(), 1, 10);
  std::vector<float> data(24);
  x = tensor("x", KILN_DTYPE_F32, x234, 96, data.data());
  status.reset(kiln_session_run(limited.get(), &x, 1, outputs.data(), 1));
  EXPECT_EQ(kiln_status_get_code(status.get()), KILN_STATUS_RESOURCE_EXHAUSTED);
}

TEST(SessionCreate, OptionErrors) {
  ModelPtr model = loadModel("add_one");
  kiln_session_options options;
  kiln_session_options_init(&options);
  kiln_session *session = nullptr;
  options.device = KILN_DEVICE_CUDA;
  StatusPtr status(kiln_session_create(model.get(), &options, &session));
  // A CUDA session runs only CUDA artifacts (kilnc --target=cuda).
  EXPECT_EQ(kiln_status_get_code(status.get()), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kiln_status_message(status.get()))
                .find("was compiled for the CPU; compile it with kilnc --target=cuda"),
            std::string::npos);
  EXPECT_EQ(session, nullptr);
  options.device = 5;
  EXPECT_EQ(messageOf(kiln_session_create(model.get(), &options, &session)),
            "unknown device 5");
  kiln_session_options_init(&options);
  options.num_threads = -1;
  EXPECT_EQ(messageOf(kiln_session_create(model.get(), &options, &session)),
            "num_threads is -1, accepted range is [0, 4096]");
  EXPECT_EQ(messageOf(kiln_session_create(nullptr, nullptr, &session)),
            "model is NULL");
  EXPECT_EQ(messageOf(kiln_session_create(model.get(), nullptr, nullptr)),
            "out_session is NULL");
}

TEST(SessionCreate, UnboundOutputSymbol) {
  ModelPtr model = loadModel("unbound_output");
  kiln_session *session = nullptr;
  StatusPtr status(kiln_session_create(model.get(), nullptr, &session));
  EXPECT_EQ(kiln_status_get_code(status.get()), KILN_STATUS_UNIMPLEMENTED);
  EXPECT_EQ(std::string(kiln_status_message(status.get())),
            "model '" + modelPath("unbound_output") +
                "': output 'y' dim 0 ('rows') is not bound by any input; output "
                "shape functions are not supported yet");
  EXPECT_EQ(session, nullptr);
}

// Output dims that are formulas of input dims (a KV cache's `p + s`).
TEST(DimFormula, Evaluates) {
  auto lookup = [](std::string_view name) -> std::optional<int64_t> {
    if (name == "p")
      return 3;
    if (name == "seq_len")
      return 5;
    return std::nullopt;
  };
  using kiln::dim_formula::evaluate;
  EXPECT_EQ(evaluate("p + seq_len", lookup), 8);
  EXPECT_EQ(evaluate("2*seq_len - 1", lookup), 9);
  EXPECT_EQ(evaluate("-p + 10", lookup), 7);
  EXPECT_EQ(evaluate("p*seq_len + p", lookup), 18);
  EXPECT_EQ(evaluate("12", lookup), 12);
  EXPECT_EQ(evaluate("p + q", lookup), std::nullopt);        // q is unbound
  EXPECT_EQ(evaluate("p +", lookup), std::nullopt);          // no term
  EXPECT_EQ(evaluate("", lookup), std::nullopt);
  EXPECT_EQ(evaluate("p  + seq_len", lookup), std::nullopt); // not the printed form
  EXPECT_EQ(evaluate("99999999999*99999999999", lookup), std::nullopt); // overflow
  EXPECT_FALSE(kiln::dim_formula::isPlainName("past seq"));
  EXPECT_FALSE(kiln::dim_formula::isPlainName("42"));
  EXPECT_TRUE(kiln::dim_formula::isPlainName("past_sequence_length"));
}

} // namespace
} // namespace kiln::test
