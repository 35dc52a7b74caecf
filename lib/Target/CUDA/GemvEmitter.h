//===- GemvEmitter.h - The one-row product kernel of kiln-cuda-gemm -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// A product with a single row of A (a decode step's projections: one token)
// reads every weight once and does two flops per weight: it is bound by
// memory bandwidth, and the GEMM template's 128x128 tiles give it one block
// per 128 columns, far too few to stream the weights at the device's
// bandwidth. This kernel spreads the columns over ceil(N / 16) blocks
// instead, and splits K over a thread-block cluster when those are too few
// to fill the GPU (see GemvEmitter.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_TARGET_CUDA_GEMVEMITTER_H
#define KILN_LIB_TARGET_CUDA_GEMVEMITTER_H

#include "GemmEmitter.h"

namespace kiln::cuda_gemm {

/// Marks an op of a kernel body (gpu.launch) with the resident blocks per SM
/// the kernel needs ptxas to allow (an integer): kiln-cuda-merge-kernel-
/// modules makes it the outlined kernel's nvvm.minctasm.
inline constexpr llvm::StringLiteral kMinBlocksPerSMAttrName = "kiln.min_blocks_per_sm";

/// Whether the one-row kernel can compute `g` when A has a single row: an
/// unbatched f16/bf16 product with an N-major B, N a multiple of 8 (16-byte
/// loads), and M 1 or symbolic (then the host picks the kernel at run time).
bool gemvApplies(const Gemm &g);

/// Emits the one-row kernel of `g` at the builder's insertion point, with
/// `emitGemmKernel`'s meaning of `accumulate`, `epilogue` and `enabled`; it
/// computes row 0 only (the caller makes sure M is 1 when it runs). K is
/// split until there are `targetBlocks` blocks (at most 8 slices).
void emitGemvKernel(mlir::OpBuilder &b, mlir::Location loc, const Gemm &g, int64_t targetBlocks,
                    bool accumulate, mlir::linalg::GenericOp epilogue,
                    mlir::Value enabled = {});

} // namespace kiln::cuda_gemm

#endif // KILN_LIB_TARGET_CUDA_GEMVEMITTER_H
