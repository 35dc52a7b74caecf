//===- PythonTools.h - kilnc verify and kilnc quantize ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILNC_PYTHONTOOLS_H
#define KILN_TOOLS_KILNC_PYTHONTOOLS_H

namespace kilnc {

/// A subcommand whose logic is a Python script shipped beside kilnc, in
/// `<bin>/../share/kiln/<name>/<script>`.
struct PythonTool {
  const char *name;
  const char *script;
};

/// `kilnc verify` (differential check against onnxruntime, docs/verify.md).
inline constexpr PythonTool kVerifyTool = {"verify", "kiln_verify.py"};
/// `kilnc quantize` (calibration and QDQ quantization, docs/quantization.md).
inline constexpr PythonTool kQuantizeTool = {"quantize", "kiln_quantize.py"};

/// `kilnc <tool> ARGS...`: runs the tool's script with the Python of
/// `--python=PATH`, else $KILN_PYTHON, else the test virtualenv this kilnc
/// was built with, else `python3` on PATH; passes it this kilnc and the
/// kiln-run beside it (`--kilnc`, `--kiln-run`). Returns the script's exit
/// code (1 when it cannot start).
int runPythonTool(int argc, char **argv, const PythonTool &tool);

} // namespace kilnc

#endif // KILN_TOOLS_KILNC_PYTHONTOOLS_H
