//===- CPUPolicy.h - What the CPU kernels want from the shared stages -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===---------------------------------------------------------------------------===//
//
// The CPU target's answers to the target policy's questions (see
// kiln::TargetPolicy): the shapes of its attention kernel, the column
// alignment of its matmul epilogues and the conv cut-offs measured on its
// matmul kernels. The shared stages receive them as typed pass options.
//
//===---------------------------------------------------------------------------===//

#ifndef KILN_TARGET_CPU_CPUPOLICY_H
#define KILN_TARGET_CPU_CPUPOLICY_H

#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

namespace kiln {

/// The column alignment the CPU matmul kernel needs of an epilogue that
/// splits the matmul's columns: no vector (16 lanes at most, starting at
/// multiples of its width) spans two rows of the split.
inline constexpr int64_t kCPUEpilogueColumnAlign = 16;

/// What the CPU attention kernel (kiln-cpu-attention) computes: f32 query,
/// key and value, a head dim that is a multiple of 16 up to 256, no mask or
/// an f32 additive one.
inline AttentionKernelShapes cpuAttentionKernelShapes() {
  AttentionKernelShapes shapes;
  shapes.f32 = true;
  shapes.headDimMultiple = 16;
  shapes.maxHeadDim = 256;
  return shapes;
}

/// The conv forms' cut-offs, measured on the CPU matmul kernels (the
/// comments at convRunsShifted and depthwiseConvFlat in ConvToLinalg.cpp).
inline ConvLoweringOptions cpuConvLowering() {
  ConvLoweringOptions conv;
  conv.stridedWindowsOnPhases = true;
  // Rows of at most half a 16-lane vector (EfficientNet-B0's 7x7; at 14
  // columns the flat conv and its separate SiLU measured 8% faster).
  conv.depthwiseRowsMaxWidth = 8;
  // Strided depthwise convs with rows of at least a 16-lane vector on
  // strided views, rows of whole vectors plus one column (no phase copy).
  conv.stridedDepthwiseColumns = 16;
  return conv;
}

} // namespace kiln

#endif // KILN_TARGET_CPU_CPUPOLICY_H
