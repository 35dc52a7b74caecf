//===- Im2colKernel.h - A vectorized im2col kernel for kiln-cuda-gemm -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_TARGET_CUDA_IM2COLKERNEL_H
#define KILN_LIB_TARGET_CUDA_IM2COLKERNEL_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln {

/// Replaces `op`, kiln-cuda-lower-precision's im2col generic of a
/// convolution (marked `kiln.im2col`: col[n, oh, ow, c, i, j] =
/// x[n, c, oh*sh + i*dh, ow*sw + j*dw], converted to f16, bf16 or f32, on
/// static dense buffers), by a kernel with one thread per 16-byte vector of
/// col (8 f16/bf16 or 4 f32 elements along K = C*KH*KW), threads of a warp
/// on consecutive output positions (coalesced reads of x along its rows),
/// all index arithmetic in 32 bits. When x is a zero-padded copy (a zero
/// linalg.fill of an allocation, then a copy of the source into a subview
/// of it, as the padding of a convolution bufferizes; nested, as the RGB
/// stem's zero channels are), the kernel reads the source with bounds
/// checks instead and the fill and copy go. Returns false, leaving `op`
/// alone, for anything else.
bool emitIm2colKernel(mlir::IRRewriter &b, mlir::linalg::GenericOp op);

} // namespace kiln

#endif // KILN_LIB_TARGET_CUDA_IM2COLKERNEL_H
