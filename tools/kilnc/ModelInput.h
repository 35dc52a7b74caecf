//===- ModelInput.h - How kilnc reads the model it is given -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILNC_MODELINPUT_H
#define KILN_TOOLS_KILNC_MODELINPUT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SourceMgr.h"

#include <optional>

namespace kilnc {

/// Reads `path` (`-` for stdin): `.onnx` through the ONNX importer (with the
/// `--input-shape` flags), anything else as MLIR (text or bytecode). Problems
/// are reported as diagnostics on `context` (file:line:col for MLIR text);
/// returns null after an error.
mlir::OwningOpRef<mlir::ModuleOp> loadModel(llvm::StringRef path,
                                            llvm::SourceMgr &sourceMgr,
                                            mlir::MLIRContext &context);

/// Whether `--check` was given (see Check.h).
bool checkRequested();

} // namespace kilnc

#endif // KILN_TOOLS_KILNC_MODELINPUT_H
