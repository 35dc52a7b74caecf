//===- CompilerModule.cpp - kiln._compiler: the driver kilnc uses --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// kiln::driver::compile and check (kiln/Driver/Compile.h) with kilnc's flag
// values as keyword arguments. Plain C++ types only cross this file: the LLVM
// and MLIR code stays in KilnDriver, built with LLVM's flags. The compile runs
// without the GIL.
//
//===----------------------------------------------------------------------===//

#include "kiln/Driver/Compile.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace nb = nanobind;
using kiln::driver::CompileRequest;

/// kilnc's flags, as the functions below take them.
#define KILN_REQUEST_ARGS                                                        \
  nb::arg("input"), nb::arg("output"), nb::arg("target"), nb::arg("cpu"),        \
      nb::arg("gpu"), nb::arg("precision"), nb::arg("weights"),                  \
      nb::arg("matmul_tile"), nb::arg("input_shapes"), nb::arg("max_fold_bytes")

static CompileRequest makeRequest(std::string input, std::string output, std::string target,
                                  std::string cpu, std::string gpu, std::string precision,
                                  std::string weights, std::string matmulTile,
                                  std::vector<std::string> inputShapes, int64_t maxFoldBytes) {
  CompileRequest request;
  request.input = std::move(input);
  request.output = std::move(output);
  request.target = std::move(target);
  request.cpu = std::move(cpu);
  request.gpu = std::move(gpu);
  request.precision = std::move(precision);
  request.weights = std::move(weights);
  request.matmulTile = std::move(matmulTile);
  request.inputShapes = std::move(inputShapes);
  request.maxFoldBytes = maxFoldBytes;
  return request;
}

/// Compiles `input` to the artifact `output`: (exit code, kilnc's stderr text).
static nb::tuple compile(std::string input, std::string output, std::string target,
                         std::string cpu, std::string gpu, std::string precision,
                         std::string weights, std::string matmulTile,
                         std::vector<std::string> inputShapes, int64_t maxFoldBytes) {
  CompileRequest request = makeRequest(input, output, target, cpu, gpu, precision, weights,
                                       matmulTile, inputShapes, maxFoldBytes);
  kiln::driver::CompileOutcome outcome;
  {
    nb::gil_scoped_release release;
    outcome = kiln::driver::compile(request);
  }
  return nb::make_tuple(outcome.exitCode, outcome.messages);
}

/// kilnc --check of the ONNX model `input`: (exit code, report, op types as
/// (domain, op type, count, why not or "", nodes)).
static nb::tuple check(std::string input, std::string output, std::string target,
                       std::string cpu, std::string gpu, std::string precision,
                       std::string weights, std::string matmulTile,
                       std::vector<std::string> inputShapes, int64_t maxFoldBytes) {
  CompileRequest request = makeRequest(input, output, target, cpu, gpu, precision, weights,
                                       matmulTile, inputShapes, maxFoldBytes);
  kiln::driver::CheckOutcome outcome;
  {
    nb::gil_scoped_release release;
    outcome = kiln::driver::check(request);
  }
  nb::list opTypes;
  for (const kiln::onnx_import::OpTypeSupport &op : outcome.opTypes)
    opTypes.append(nb::make_tuple(op.domain, op.opType, op.count, op.why, op.nodes));
  return nb::make_tuple(outcome.exitCode, outcome.report, opTypes);
}

NB_MODULE(_compiler, m) {
  m.doc() = "Kiln's compile driver (the library kilnc runs)";
  m.def("compile", &compile, KILN_REQUEST_ARGS);
  m.def("check", &check, KILN_REQUEST_ARGS);
}
