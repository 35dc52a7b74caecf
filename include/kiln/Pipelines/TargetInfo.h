//===- TargetInfo.h - What differs between Kiln's code generation targets -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===--------------------------------------------------------------------------------===//
//
// The stages up to `dispatch` are target-independent: what they do for a
// target they learn from its TargetPolicy. From `codegen` on, the pipelines
// and the writer of the final output are the target's. kilnc and the stage
// pipelines ask the TargetInfo of --target instead of testing the target
// themselves.
//
//===--------------------------------------------------------------------------------===//

#ifndef KILN_PIPELINES_TARGETINFO_H
#define KILN_PIPELINES_TARGETINFO_H

#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dispatch/Epilogue.h"
#include "kiln/Pipelines/Pipelines.h"
#include "kiln/Target/Host/ModelSignature.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

namespace kiln {

/// What a target wants from the target-independent stages. Each field is
/// one question; the stage pipelines pass the answers to their passes as
/// typed options and never test which target they serve.
struct TargetPolicy {
  /// Graph: which kiln.attention ops stay one op for the target's attention
  /// kernel (kiln-decompose-attention expands the rest).
  AttentionKernelShapes attention;
  /// Graph: whether quantized matmuls become kiln.matmul of i16
  /// (kiln-recognize-integer-matmul): the target has integer kernels.
  bool integerMatmuls = false;
  /// Graph: whether matmuls with block-quantized constant weights (the
  /// importer's MatMulNBits) keep their low-bit weight in one
  /// kiln.matmul_nbits_kernel (kiln-recognize-nbits-matmul).
  bool lowBitMatmuls = false;
  /// Linalg: whether gather indices are checked at run time (host code
  /// reads them; a device buffer it cannot read is only clamped).
  bool indexChecks = true;
  /// Linalg: whether a batched matmul whose rhs is a transpose of its last
  /// two dims reads the transpose's input K-major (linalg.batch_matmul with
  /// the maps of C = A * B^T): the target's product kernels take a K-major
  /// B, so the transpose is never a kernel of its own.
  bool kMajorBatchedRhs = false;
  /// Linalg: the cut-offs between the conv forms (matmuls per image,
  /// shifted matmuls, unrolled depthwise taps).
  ConvLoweringOptions conv;
  /// Dispatch: whether matmul epilogues, conv taps and B prologues join
  /// their matmul's dispatch (kiln-form-dispatches): the target's matmul
  /// kernel applies them.
  bool formDispatches = false;
  /// Dispatch: whether a row reduction and its elementwise neighbours
  /// become one dispatch (kiln-form-row-groups; kiln-form-dispatches forms
  /// them itself): the target's row kernel runs them as one.
  bool formRowGroups = false;
  /// Dispatch: whether f16 and bf16 rows join row groups too, and whether a
  /// group's rows must have one length.
  bool rowGroupHalfFloats = false;
  bool rowGroupOneLength = false;
  /// Dispatch: the column alignment such an epilogue needs where it splits
  /// the matmul's columns (the kernel's vector width).
  int64_t epilogueColumnAlign = 16;
  /// Dispatch: which products' elementwise consumers join their dispatch
  /// for a GEMM kernel that stores its output tiles through them
  /// (kiln-form-gemm-epilogues).
  GemmEpilogueShapes gemmEpilogues;
};

class TargetInfo {
public:
  virtual ~TargetInfo() = default;
  /// The target's name, as --target spells it.
  virtual llvm::StringRef name() const = 0;
  /// Whether this build implements `stage` for the target.
  virtual bool implementsStage(Stage stage) const = 0;
  /// The target's answers for stages 2-4 under `options` (chip, precision).
  virtual TargetPolicy policy(const PipelineOptions &options) const = 0;
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

/// Registers `--kiln-cuda-{dispatch,codegen,llvm}-pipeline`: the stages that
/// differ from the default (CPU) options of `--kiln-<stage>-pipeline`, with
/// the options `precision=` and `gpu=` (kilnc's --precision and --gpu).
void registerTargetPipelines();

} // namespace kiln

#endif // KILN_PIPELINES_TARGETINFO_H
