//===- TiledTranspose.h - A coalesced transpose kernel for kiln-cuda-gemm -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_TARGET_CUDA_TILEDTRANSPOSE_H
#define KILN_LIB_TARGET_CUDA_TILEDTRANSPOSE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln {

/// Replaces `transpose` (a linalg.transpose on dense static buffers swapping
/// the last two dimensions: a K-major B made at run time) by a kernel that
/// moves 32x32 tiles through shared memory (rows padded to 33 elements, no
/// bank conflicts), so that both its reads and its writes are coalesced.
void emitTiledTranspose(mlir::IRRewriter &b, mlir::linalg::TransposeOp transpose);

} // namespace kiln

#endif // KILN_LIB_TARGET_CUDA_TILEDTRANSPOSE_H
