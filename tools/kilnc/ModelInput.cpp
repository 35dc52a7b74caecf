//===- ModelInput.cpp - How kilnc reads the model it is given -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "ModelInput.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/Path.h"

using namespace mlir;

namespace kilnc {

OwningOpRef<ModuleOp> loadModel(llvm::StringRef path, llvm::SourceMgr &sourceMgr,
                                MLIRContext &context) {
  Location fileLoc = FileLineColLoc::get(&context, path, 0, 0);
  if (llvm::sys::path::extension(path) == ".onnx") {
    emitError(fileLoc) << "ONNX input is not supported in this build yet; "
                          "pass a `kiln` dialect .mlir file";
    return nullptr;
  }
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(path, &errorMessage);
  if (!input) {
    emitError(fileLoc) << errorMessage;
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

} // namespace kilnc
