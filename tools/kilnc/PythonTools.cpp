//===- PythonTools.cpp - kilnc verify and kilnc quantize: Python launchers ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------------===//
//
// The verifier and the quantizer run onnxruntime, which only has a Python API
// in the test virtualenv, and edit ONNX graphs (intermediate outputs,
// sub-graphs, inserted Quantize/DequantizeLinear pairs), which the onnx
// package does well; so `kilnc verify` and `kilnc quantize` are thin
// launchers and the logic lives in tools/kilnc/verify/ and
// tools/kilnc/quantize/ (docs/verify.md, docs/quantization.md).
//
//===----------------------------------------------------------------------------===//

#include "PythonTools.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/WithColor.h"

#include <string>
#include <vector>

namespace kilnc {
namespace {

int fail(llvm::StringRef tool, const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "kilnc " + tool.str()) << message << "\n";
  return 1;
}

/// The Python to run: --python=PATH (removed from `args`), $KILN_PYTHON, the
/// build's test virtualenv, python3 on PATH.
std::string findPython(std::vector<std::string> &args) {
  for (auto it = args.begin(); it != args.end(); ++it) {
    llvm::StringRef arg(*it);
    if (arg.consume_front("--python=")) {
      std::string path = arg.str();
      args.erase(it);
      return path;
    }
  }
  if (std::optional<std::string> env = llvm::sys::Process::GetEnv("KILN_PYTHON"))
    return *env;
  if (llvm::sys::fs::can_execute(KILN_DEFAULT_PYTHON))
    return KILN_DEFAULT_PYTHON;
  llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("python3");
  return found ? *found : std::string();
}

} // namespace

int runPythonTool(int argc, char **argv, const PythonTool &tool) {
  std::string self = llvm::sys::fs::getMainExecutable(argv[0], (void *)&runPythonTool);
  if (self.empty())
    return fail(tool.name, "cannot find the path of this kilnc");
  llvm::StringRef binDir = llvm::sys::path::parent_path(self);
  llvm::SmallString<256> script(llvm::sys::path::parent_path(binDir));
  llvm::sys::path::append(script, "share", "kiln", tool.name, tool.script);
  if (!llvm::sys::fs::exists(script))
    return fail(tool.name, "the script '" + script + "' is missing (it is installed beside kilnc)");
  llvm::SmallString<256> kilnRun(binDir);
  llvm::sys::path::append(kilnRun, "kiln-run");

  std::vector<std::string> args(argv + 2, argv + argc);
  std::string python = findPython(args);
  if (python.empty())
    return fail(tool.name, "no Python found: pass --python=PATH (one with onnx, onnxruntime "
                           "and numpy) or set KILN_PYTHON");
  std::vector<std::string> command = {python, std::string(script), "--kilnc", self,
                                      "--kiln-run", std::string(kilnRun)};
  command.insert(command.end(), args.begin(), args.end());
  llvm::SmallVector<llvm::StringRef> argRefs(command.begin(), command.end());
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(python, argRefs, /*Env=*/std::nullopt, {}, 0, 0, &error);
  if (rc < 0)
    return fail(tool.name, "cannot run '" + python + "': " + error);
  return rc;
}

} // namespace kilnc
