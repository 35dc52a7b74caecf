//===- Compile.h - The compile driver for bindings, in plain C++ -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// kiln::driver::runCompile and runCheck behind plain C++ types: the Python
// extension includes this header only, so it is built with exceptions and
// RTTI without pulling LLVM's (-fno-rtti) class hierarchies into its code.
// Options arrive as kilnc's flag values and are parsed by kilnc's parsers;
// errors come back as the text kilnc prints.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DRIVER_COMPILE_H
#define KILN_DRIVER_COMPILE_H

#include "kiln/Import/ONNX/OpTypeSupport.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::driver {

/// kilnc's flags for one `--emit=lib` compile (or `--check`), by value.
struct CompileRequest {
  std::string input;
  std::string output;
  std::string target = "cpu";
  std::string cpu = "native";
  std::string gpu = "sm_90a";
  std::string precision = "fp32";
  std::string weights = "embed";
  /// ROWSxVECTORSxMxNxK; empty for the default blocking.
  std::string matmulTile;
  /// Each `NAME=AxBxC`, as --input-shape.
  std::vector<std::string> inputShapes;
  int64_t maxFoldBytes = 64 * 1024 * 1024;
};

struct CompileOutcome {
  /// kilnc's exit code: 0 on success.
  int exitCode = 0;
  /// Everything kilnc would print on stderr: diagnostics and error lines.
  std::string messages;
};

/// Compiles `request.input` to the artifact `request.output`.
CompileOutcome compile(const CompileRequest &request);

struct CheckOutcome {
  int exitCode = 0;
  /// kilnc --check's report (stdout) followed by any error lines.
  std::string report;
  std::vector<onnx_import::OpTypeSupport> opTypes;
};

/// kilnc --check of the ONNX model `request.input`.
CheckOutcome check(const CompileRequest &request);

} // namespace kiln::driver

#endif // KILN_DRIVER_COMPILE_H
