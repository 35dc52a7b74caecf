//===- Compile.h - kiln-run MODEL.onnx: compile through kilnc, cached ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// kiln-run never links LLVM/MLIR: given an ONNX model (or kiln .mlir) it runs
// the kilnc executable to make the artifact, and keeps the result in a cache
// keyed by a hash of everything that decides the artifact's content.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILNRUN_COMPILE_H
#define KILN_TOOLS_KILNRUN_COMPILE_H

#include <string>
#include <vector>

namespace kilnrun {

struct CompileOptions {
  std::string kilnc;                  // empty: $KILNC, then next to kiln-run, then PATH
  std::string cacheDir;               // empty: $KILN_CACHE_DIR, then ~/.cache/kiln
  std::vector<std::string> kilncArgs; // extra kilnc arguments (--input-shape ...)
};

/// True for the model files kiln-run compiles itself (.onnx, .mlir).
bool needsCompilation(const std::string &model);

/// The artifact for `model`: from the cache when the key matches, else
/// compiled by kilnc into the cache (atomically: a temporary file renamed).
/// Prints one line saying which. Throws ToolError when kilnc cannot be
/// found, cannot be started, or fails (its own error lines come first).
std::string compileModel(const std::string &model, const CompileOptions &options);

} // namespace kilnrun

#endif // KILN_TOOLS_KILNRUN_COMPILE_H
