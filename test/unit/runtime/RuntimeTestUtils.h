//===- RuntimeTestUtils.h - RAII handles and helpers for runtime tests -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_RUNTIME_TESTUTILS_H
#define KILN_TEST_RUNTIME_TESTUTILS_H

#include "kiln-c/runtime.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace kiln::test {

struct StatusDeleter {
  void operator()(kiln_status *s) const { kiln_status_destroy(s); }
};
struct ModelDeleter {
  void operator()(kiln_model *m) const { kiln_model_destroy(m); }
};
struct SessionDeleter {
  void operator()(kiln_session *s) const { kiln_session_destroy(s); }
};
struct TensorDeleter {
  void operator()(kiln_tensor *t) const { kiln_tensor_destroy(t); }
};
using StatusPtr = std::unique_ptr<kiln_status, StatusDeleter>;
using ModelPtr = std::unique_ptr<kiln_model, ModelDeleter>;
using SessionPtr = std::unique_ptr<kiln_session, SessionDeleter>;
using TensorPtr = std::unique_ptr<kiln_tensor, TensorDeleter>;

inline std::string modelPath(const std::string &name) {
  return std::string(KILN_TEST_MODELS_DIR) + "/" + name + ".so";
}

/// The message of `status` ("" for success), destroying it.
inline std::string messageOf(kiln_status *status) {
  StatusPtr owned(status);
  return status ? kiln_status_message(status) : "";
}

inline ModelPtr loadModel(const std::string &name) {
  kiln_model *model = nullptr;
  std::string message = messageOf(kiln_model_load(modelPath(name).c_str(), &model));
  EXPECT_EQ(message, "");
  return ModelPtr(model);
}

inline SessionPtr createSession(kiln_model *model, int32_t threads = 2,
                                uint64_t maxBytes = 0) {
  kiln_session_options options;
  kiln_session_options_init(&options);
  options.num_threads = threads;
  options.max_bytes = maxBytes;
  kiln_session *session = nullptr;
  EXPECT_EQ(messageOf(kiln_session_create(model, &options, &session)), "");
  return SessionPtr(session);
}

/// An input tensor whose dims and data this object owns.
struct InputTensor {
  std::string name;
  int32_t dtype;
  std::vector<int64_t> dims;
  std::vector<unsigned char> bytes;

  kiln_tensor view() {
    return {name.c_str(), dtype,        static_cast<int32_t>(dims.size()),
            dims.data(),  bytes.data(), bytes.size()};
  }
};

template <typename T>
InputTensor makeInput(const std::string &name, int32_t dtype,
                      std::vector<int64_t> dims, const std::vector<T> &values) {
  InputTensor tensor{name, dtype, std::move(dims), {}};
  tensor.bytes.resize(values.size() * sizeof(T));
  if (!values.empty())
    std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
  return tensor;
}

/// Runs `session` and returns the outputs, or the error message in `error`.
inline std::vector<TensorPtr> run(kiln_session *session,
                                  const std::vector<kiln_tensor> &inputs,
                                  size_t numOutputs, std::string &error) {
  std::vector<kiln_tensor *> raw(numOutputs, nullptr);
  error = messageOf(kiln_session_run(session, inputs.data(), inputs.size(),
                                     raw.data(), raw.size()));
  std::vector<TensorPtr> outputs;
  for (kiln_tensor *tensor : raw)
    outputs.emplace_back(tensor);
  return outputs;
}

} // namespace kiln::test

#endif // KILN_TEST_RUNTIME_TESTUTILS_H
