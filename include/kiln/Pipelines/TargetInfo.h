//===- TargetInfo.h - What differs between Kiln's code generation targets -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===--------------------------------------------------------------------------------===//
//
// The stages up to `dispatch` are target-independent; from `codegen` on, the
// pipelines and the writer of the final output are the target's. kilnc and
// the stage pipelines ask the TargetInfo of --target instead of testing the
// target themselves.
//
//===--------------------------------------------------------------------------------===//

#ifndef KILN_PIPELINES_TARGETINFO_H
#define KILN_PIPELINES_TARGETINFO_H

#include "kiln/Pipelines/Pipelines.h"
#include "kiln/Target/Host/ModelSignature.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

namespace kiln {

class TargetInfo {
public:
  virtual ~TargetInfo() = default;
  /// "cpu" or "cuda", as in --target.
  virtual llvm::StringRef name() const = 0;
  /// Whether this build implements `stage` for the target.
  virtual bool implementsStage(Stage stage) const = 0;
  /// Stage 5: buffers, loops and kernels.
  virtual void buildCodegenPipeline(mlir::OpPassManager &pm,
                                    const PipelineOptions &options) const = 0;
  /// Stage 6: everything to the LLVM dialect.
  virtual void buildLLVMPipeline(mlir::OpPassManager &pm,
                                 const PipelineOptions &options) const = 0;
  /// Writes the result of `stage` (llvm, ptx, obj or lib) for the module
  /// lowered by buildLLVMPipeline to `path`.
  virtual llvm::Error writeOutput(mlir::ModuleOp module, const ModelSignature &signature,
                                  Stage stage, const PipelineOptions &options,
                                  llvm::StringRef path) const = 0;
};

const TargetInfo &getTargetInfo(Target target);

} // namespace kiln

#endif // KILN_PIPELINES_TARGETINFO_H
