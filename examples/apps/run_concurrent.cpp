//===- run_concurrent.cpp - Example: one session, several threads (C++) ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
//   run_concurrent MODEL.so [THREADS] [RUNS]
//
// The C API from C++ with RAII handles: one session shared by THREADS
// threads, each running RUNS times with its own inputs (f32 inputs, symbolic
// dims 1) and checking that its outputs equal a single-threaded reference
// run on the same inputs, bit for bit. Exits 1 on any difference.
//
//===----------------------------------------------------------------------===//

#include <kiln-c/runtime.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

void check(kiln_status *status) {
  if (!status)
    return;
  std::string message = kiln_status_message(status);
  kiln_status_destroy(status);
  throw std::runtime_error(message);
}

struct ModelDeleter { void operator()(kiln_model *m) const { kiln_model_destroy(m); } };
struct SessionDeleter { void operator()(kiln_session *s) const { kiln_session_destroy(s); } };
struct TensorDeleter { void operator()(kiln_tensor *t) const { kiln_tensor_destroy(t); } };
using Tensor = std::unique_ptr<kiln_tensor, TensorDeleter>;

/// The f32 inputs of one run, variant `seed`.
struct Inputs {
  std::vector<std::vector<int64_t>> dims;
  std::vector<std::vector<float>> data;
  std::vector<kiln_tensor> views;

  Inputs(kiln_model *model, size_t count, unsigned seed) {
    for (size_t i = 0; i < count; ++i) {
      kiln_tensor_info info;
      check(kiln_model_input_info(model, i, &info));
      if (info.dtype != KILN_DTYPE_F32)
        throw std::runtime_error(std::string("input '") + info.name + "' is not f32");
      dims.emplace_back();
      size_t elements = 1;
      for (int32_t d = 0; d < info.rank; ++d) {
        dims.back().push_back(info.dims[d] < 0 ? 1 : info.dims[d]);
        elements *= static_cast<size_t>(dims.back().back());
      }
      data.emplace_back(elements);
      for (size_t j = 0; j < elements; ++j)
        data.back()[j] = static_cast<float>((j * 7 + seed * 13) % 23) / 11.0f - 1.0f;
      views.push_back({info.name, info.dtype, info.rank, dims.back().data(),
                       data.back().data(), elements * sizeof(float)});
    }
  }
};

std::vector<Tensor> run(kiln_session *session, Inputs &inputs, size_t numOutputs) {
  std::vector<kiln_tensor *> raw(numOutputs, nullptr);
  check(kiln_session_run(session, inputs.views.data(), inputs.views.size(), raw.data(),
                         raw.size()));
  std::vector<Tensor> outputs;
  for (kiln_tensor *tensor : raw)
    outputs.emplace_back(tensor);
  return outputs;
}

bool same(const std::vector<Tensor> &a, const std::vector<Tensor> &b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i]->byte_size != b[i]->byte_size ||
        std::memcmp(a[i]->data, b[i]->data, a[i]->byte_size) != 0)
      return false;
  return true;
}

} // namespace

int main(int argc, char **argv) try {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.so [THREADS] [RUNS] [cpu|cuda]\n", argv[0]);
    return 2;
  }
  int threads = argc > 2 ? std::atoi(argv[2]) : 4;
  int runs = argc > 3 ? std::atoi(argv[3]) : 50;
  bool cuda = argc > 4 && std::strcmp(argv[4], "cuda") == 0;
  kiln_model *rawModel = nullptr;
  check(kiln_model_load(argv[1], &rawModel));
  std::unique_ptr<kiln_model, ModelDeleter> model(rawModel);
  kiln_model_info info;
  check(kiln_model_get_info(model.get(), &info));
  kiln_session *rawSession = nullptr;
  kiln_session_options options;
  kiln_session_options_init(&options);
  options.device = cuda ? KILN_DEVICE_CUDA : KILN_DEVICE_CPU;
  if (kiln_status *status = kiln_session_create(model.get(), &options, &rawSession)) {
    // Exit code 77: ctest reports the test as skipped on machines without a GPU.
    bool noDevice = cuda && kiln_status_get_code(status) == KILN_STATUS_UNIMPLEMENTED;
    std::fprintf(stderr, "%s: %s\n", noDevice ? "skipped" : "error", kiln_status_message(status));
    kiln_status_destroy(status);
    return noDevice ? 77 : 1;
  }
  std::unique_ptr<kiln_session, SessionDeleter> session(rawSession);

  // One reference per thread's inputs, computed before any concurrency.
  std::vector<Inputs> inputs;
  std::vector<std::vector<Tensor>> references;
  for (int t = 0; t < threads; ++t) {
    inputs.emplace_back(model.get(), info.num_inputs, static_cast<unsigned>(t));
    references.push_back(run(session.get(), inputs.back(), info.num_outputs));
  }
  std::atomic<int> mismatches{0}, errors{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      for (int r = 0; r < runs; ++r) {
        try {
          if (!same(run(session.get(), inputs[t], info.num_outputs), references[t]))
            ++mismatches;
        } catch (const std::exception &e) {
          if (errors++ == 0)
            std::fprintf(stderr, "error: %s\n", e.what());
        }
      }
    });
  for (std::thread &worker : workers)
    worker.join();
  std::printf("%d threads x %d runs on one session: %d mismatches, %d errors\n", threads, runs,
              mismatches.load(), errors.load());
  return mismatches || errors ? 1 : 0;
} catch (const std::exception &e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
