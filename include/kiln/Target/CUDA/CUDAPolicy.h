//===- CUDAPolicy.h - What the CUDA kernels want from the shared stages -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===-----------------------------------------------------------------------------===//
//
// The CUDA target's answers to the target policy's questions (see
// kiln::TargetPolicy) that depend on the chip and the precision.
//
//===-----------------------------------------------------------------------------===//

#ifndef KILN_TARGET_CUDA_CUDAPOLICY_H
#define KILN_TARGET_CUDA_CUDAPOLICY_H

#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dispatch/Epilogue.h"
#include "kiln/Target/TargetOptions.h"

namespace kiln {

/// What the flash-attention kernel (kiln-cuda-attention, mma.sync) computes
/// on `chip` in `precision`: nothing below sm_80 or outside fp16/bf16;
/// else f16/bf16 operands as they are and f32 ones rounded to `precision`
/// while loading, head dims 64 and 128, no mask or an additive float one.
inline AttentionKernelShapes cudaAttentionKernelShapes(const Chip &chip, Precision precision) {
  AttentionKernelShapes shapes;
  if (!chip.hasMmaSync() || !isHalfPrecision(precision))
    return shapes;
  shapes.f32 = true;
  shapes.halfFloats = true;
  shapes.headDimMultiple = 64;
  shapes.maxHeadDim = 128;
  return shapes;
}

/// The conv forms: every static-channel 2-D ungrouped conv stays one
/// linalg conv whatever its batch, static or symbolic (no per-image
/// matmuls, no shifted taps). On sm_90a kiln-cuda-lower-precision then
/// makes it one im2col kernel and one GEMM launch over all images (the
/// batch a grid dimension), so the dispatch stage sees one product, with
/// its epilogue, at every batch; elsewhere it is one SIMT kernel (the
/// per-image forms were the CPU kernels' cut-offs and made a conv at batch
/// N up to 18N kernels). Depthwise convs keep the unrolled generic.
inline ConvLoweringOptions cudaConvLowering() {
  ConvLoweringOptions conv;
  conv.matmulMaxBatch = 0;
  conv.shiftedDiscardDivisor = 0;
  conv.depthwiseMaxUnrolledTaps = 49;
  return conv;
}

/// The products whose elementwise consumer the GEMM template (kiln-cuda-gemm,
/// sm_90a) applies as its epilogue, i.e. the products it takes: f16/bf16
/// operands (`precision` fp16/bf16) read N-major, TMA rows of 16 bytes: K
/// and N multiples of 8, K of a batch a multiple of the 64-element k step;
/// tf32 (`precision` tf32, or fp32 as 3xTF32 when `splitF32`) reads both
/// operands K-major: K and N multiples of 4 (kiln-cuda-lower-precision and
/// kiln-cuda-split-f32 rewrite only those), no batch rule; tf32's A is read
/// as it is, so it must be dense. Convolutions always (their K is padded).
/// Elsewhere (no wgmma, fp32 as SIMT loops) none.
inline GemmEpilogueShapes cudaGemmEpilogues(const Chip &chip, Precision precision,
                                            bool splitF32) {
  GemmEpilogueShapes shapes;
  if (!chip.hasWgmma() || (precision == Precision::FP32 && !splitF32))
    return shapes;
  shapes.enabled = true;
  if (isHalfPrecision(precision))
    return shapes; // 8, 8, 64 (the defaults)
  shapes.kMultiple = shapes.nMultiple = 4;
  shapes.batchedKMultiple = 1;
  shapes.denseA = precision == Precision::TF32;
  return shapes;
}

} // namespace kiln

#endif // KILN_TARGET_CUDA_CUDAPOLICY_H
