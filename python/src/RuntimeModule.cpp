//===- RuntimeModule.cpp - kiln._runtime: libkiln_runtime's C API in Python ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The thin, fast half of the package: a loaded model with one session, run
// on arrays the caller owns (no copy for row-major inputs) with the GIL
// released. The Python layer (kiln/_model.py) adds keyword inputs, dtype
// views and the profile table. No LLVM here: this module is all a machine
// needs to run compiled models.
//
//===----------------------------------------------------------------------===//

#include "Arrays.h"
#include "Bench.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace kiln::python {
namespace {

/// Raises the Python exception for a failed status: the runtime's message,
/// as TypeError for a wrong dtype or input count, ValueError for other bad
/// arguments and models, FileNotFoundError, MemoryError or RuntimeError.
[[noreturn]] void raise(kiln_status *status) {
  std::string message = kiln_status_message(status);
  kiln_status_code code = kiln_status_get_code(status);
  kiln_status_destroy(status);
  PyObject *type = PyExc_RuntimeError;
  switch (code) {
  case KILN_STATUS_INVALID_ARGUMENT:
    type = message.find("' dtype: got") != std::string::npos ||
                   message.rfind("input count:", 0) == 0
               ? PyExc_TypeError
               : PyExc_ValueError;
    break;
  case KILN_STATUS_NOT_FOUND: type = PyExc_FileNotFoundError; break;
  case KILN_STATUS_INVALID_MODEL:
  case KILN_STATUS_VERSION_MISMATCH: type = PyExc_ValueError; break;
  case KILN_STATUS_RESOURCE_EXHAUSTED: type = PyExc_MemoryError; break;
  case KILN_STATUS_UNIMPLEMENTED: type = PyExc_NotImplementedError; break;
  default: break;
  }
  PyErr_SetString(type, message.c_str());
  throw nb::python_error();
}

void check(kiln_status *status) {
  if (status)
    raise(status);
}

/// A kiln_trace shared by the runs it is passed to.
class Trace {
public:
  Trace() { check(kiln_trace_create(&trace)); }
  ~Trace() { kiln_trace_destroy(trace); }
  Trace(const Trace &) = delete;
  Trace &operator=(const Trace &) = delete;

  /// (name, dispatch, thread, begin_ns, end_ns) per event; dispatch -1 is a run.
  nb::list events() const {
    nb::list list;
    for (size_t i = 0, n = kiln_trace_event_count(trace); i < n; ++i) {
      kiln_trace_event event;
      check(kiln_trace_get_event(trace, i, &event));
      list.append(nb::make_tuple(event.name, event.dispatch, event.thread, event.begin_ns,
                                 event.end_ns));
    }
    return list;
  }

  void writeJSON(const std::string &path) const {
    check(kiln_trace_write_json(trace, path.c_str()));
  }

  kiln_trace *trace = nullptr;
};

/// (name, dtype, shape) with symbolic dims as their names.
nb::tuple describe(const kiln_tensor_info &info) {
  nb::list shape;
  for (int32_t d = 0; d < info.rank; ++d)
    if (info.dims[d] < 0)
      shape.append(nb::str(info.dim_names[d] ? info.dim_names[d] : "?"));
    else
      shape.append(info.dims[d]);
  return nb::make_tuple(info.name, kiln_dtype_name(info.dtype), nb::tuple(shape));
}

/// Inputs of one run: the views the C API reads and the arrays behind them.
struct RunInputs {
  std::vector<InputArray> arrays;
  std::vector<kiln_tensor> tensors;
};

/// A compiled model and the one session that runs it.
class LoadedModel {
public:
  LoadedModel(const std::string &path, int32_t device, int32_t threads, uint64_t maxBytes) {
    check(kiln_model_load(path.c_str(), &model));
    kiln_session_options options;
    kiln_session_options_init(&options);
    options.device = device;
    options.num_threads = threads;
    options.max_bytes = maxBytes;
    if (kiln_status *status = kiln_session_create(model, &options, &session)) {
      kiln_model_destroy(model);
      raise(status);
    }
    kiln_model_info info;
    check(kiln_model_get_info(model, &info));
    inputInfo.resize(info.num_inputs);
    outputInfo.resize(info.num_outputs);
    for (size_t i = 0; i < info.num_inputs; ++i)
      check(kiln_model_input_info(model, i, &inputInfo[i]));
    for (size_t i = 0; i < info.num_outputs; ++i)
      check(kiln_model_output_info(model, i, &outputInfo[i]));
  }
  ~LoadedModel() {
    kiln_session_destroy(session);
    kiln_model_destroy(model);
  }
  LoadedModel(const LoadedModel &) = delete;
  LoadedModel &operator=(const LoadedModel &) = delete;

  nb::dict info() const {
    kiln_model_info info;
    check(kiln_model_get_info(model, &info));
    kiln_session_options options;
    check(kiln_session_get_options(session, &options));
    nb::dict dict;
    dict["path"] = info.path;
    dict["producer"] = info.producer;
    dict["file_bytes"] = info.file_bytes;
    dict["weights_bytes"] = info.weights_bytes;
    dict["abi_version"] = info.abi_version;
    dict["arena_bytes"] = info.arena_bytes;
    dict["weights_path"] = info.weights_path;
    dict["num_dispatches"] = info.num_dispatches;
    dict["threads"] = options.num_threads;
    dict["max_bytes"] = options.max_bytes;
    dict["device"] = options.device == KILN_DEVICE_CUDA ? "cuda" : "cpu";
    return dict;
  }

  nb::list inputs() const { return describeAll(inputInfo); }
  nb::list outputs() const { return describeAll(outputInfo); }

  /// The C API's views of `args` (the model's inputs in order); no copies for
  /// row-major host arrays.
  RunInputs views(nb::handle args) const {
    RunInputs run;
    size_t count = nb::len(args);
    run.arrays.resize(count);
    run.tensors.resize(count);
    for (size_t i = 0; i < count; ++i) {
      nb::handle arg = args[i];
      const char *name = i < inputInfo.size() ? inputInfo[i].name : "?";
      if (!nb::try_cast(arg, run.arrays[i]))
        throw nb::type_error(("input '" + std::string(name) +
                              "': expected a NumPy array or a __dlpack__ tensor, got " +
                              nb::type_name(arg.type()).c_str())
                                 .c_str());
      const InputArray &array = run.arrays[i];
      if (array.device_type() != nb::device::cpu::value)
        throw nb::value_error(("input '" + std::string(name) +
                               "' is in device memory; the runtime reads inputs from "
                               "host memory (copy it to the host first)")
                                  .c_str());
      kiln_tensor &tensor = run.tensors[i];
      tensor.name = name;
      int32_t expected = i < inputInfo.size() ? inputInfo[i].dtype : 0;
      tensor.dtype = kilnDtypeOf(array, expected);
      tensor.rank = static_cast<int32_t>(array.ndim());
      tensor.dims = array.shape_ptr();
      // The runtime never writes inputs.
      tensor.data = const_cast<void *>(array.data());
      tensor.byte_size = array.nbytes();
    }
    return run;
  }

  /// Addresses the C API would read each input from (for the zero-copy test).
  std::vector<uintptr_t> inputAddresses(nb::handle args) const {
    RunInputs run = views(args);
    std::vector<uintptr_t> addresses;
    for (const kiln_tensor &tensor : run.tensors)
      addresses.push_back(reinterpret_cast<uintptr_t>(tensor.data));
    return addresses;
  }

  nb::object run(nb::handle args, Trace *trace) {
    RunInputs inputs = views(args);
    kiln_tensor *outputs[64];
    std::vector<kiln_tensor *> manyOutputs;
    kiln_tensor **out = outputs;
    if (outputInfo.size() > 64) {
      manyOutputs.resize(outputInfo.size());
      out = manyOutputs.data();
    }
    kiln_status *status;
    {
      nb::gil_scoped_release release;
      status = kiln_session_run_traced(session, inputs.tensors.data(), inputs.tensors.size(),
                                       out, outputInfo.size(), trace ? trace->trace : nullptr);
    }
    check(status);
    if (outputInfo.size() == 1)
      return toNumPy(out[0]);
    nb::list results;
    for (size_t i = 0; i < outputInfo.size(); ++i)
      results.append(toNumPy(out[i]));
    return nb::tuple(results);
  }

  /// kiln-run --warmup/--bench: `warmup` untimed runs, then `runs` timed ones
  /// of the C API alone (the GIL released throughout), summarized by
  /// kiln-run's own statistics.
  nb::dict benchmark(nb::handle args, int warmup, int runs) {
    if (runs < 1)
      throw nb::value_error(("runs=" + std::to_string(runs) + ": expected >= 1").c_str());
    RunInputs inputs = views(args);
    std::vector<double> samples, deviceSamples;
    kiln_status *status = nullptr;
    double seconds = 0;
    {
      nb::gil_scoped_release release;
      std::vector<kiln_tensor *> outputs(outputInfo.size());
      using Clock = std::chrono::steady_clock;
      Clock::time_point begin = Clock::now();
      for (int i = -warmup; i < runs && !status; ++i) {
        if (i == 0)
          begin = Clock::now();
        Clock::time_point start = Clock::now();
        status = kiln_session_run(session, inputs.tensors.data(), inputs.tensors.size(),
                                  outputs.data(), outputs.size());
        for (kiln_tensor *output : outputs)
          kiln_tensor_destroy(output);
        double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
        double deviceMs = 0;
        if (i >= 0 && !status) {
          samples.push_back(ms);
          if (kiln_session_get_device_ms(session, &deviceMs) == nullptr)
            deviceSamples.push_back(deviceMs);
        }
      }
      seconds = std::chrono::duration<double>(Clock::now() - begin).count();
    }
    check(status);
    nb::dict result = statistics(samples);
    result["runs"] = runs;
    result["throughput"] = seconds > 0 ? runs / seconds : 0.0;
    if (!deviceSamples.empty())
      result["device_ms"] = statistics(deviceSamples);
    return result;
  }

private:
  static nb::list describeAll(const std::vector<kiln_tensor_info> &infos) {
    nb::list list;
    for (const kiln_tensor_info &info : infos)
      list.append(describe(info));
    return list;
  }

  static nb::dict statistics(std::vector<double> samples) {
    kilnrun::LatencyStats stats = kilnrun::summarize(std::move(samples));
    nb::dict dict;
    dict["min"] = stats.min;
    dict["median"] = stats.median;
    dict["p90"] = stats.p90;
    dict["max"] = stats.max;
    dict["mean"] = stats.mean;
    return dict;
  }

  kiln_model *model = nullptr;
  kiln_session *session = nullptr;
  std::vector<kiln_tensor_info> inputInfo, outputInfo;
};

} // namespace
} // namespace kiln::python

NB_MODULE(_runtime, m) {
  using namespace kiln::python;
  m.doc() = "libkiln_runtime's C API: load compiled Kiln models and run them";
  nb::class_<Trace>(m, "Trace")
      .def(nb::init<>())
      .def("events", &Trace::events)
      .def("write_json", &Trace::writeJSON, nb::arg("path"));
  nb::class_<LoadedModel>(m, "LoadedModel")
      .def(nb::init<const std::string &, int32_t, int32_t, uint64_t>(), nb::arg("path"),
           nb::arg("device"), nb::arg("threads"), nb::arg("max_bytes"))
      .def("info", &LoadedModel::info)
      .def("inputs", &LoadedModel::inputs)
      .def("outputs", &LoadedModel::outputs)
      .def("run", &LoadedModel::run, nb::arg("args"), nb::arg("trace").none() = nb::none())
      .def("input_addresses", &LoadedModel::inputAddresses, nb::arg("args"))
      .def("benchmark", &LoadedModel::benchmark, nb::arg("args"), nb::arg("warmup"),
           nb::arg("runs"));
  m.attr("DEVICE_CPU") = static_cast<int>(KILN_DEVICE_CPU);
  m.attr("DEVICE_CUDA") = static_cast<int>(KILN_DEVICE_CUDA);
}
