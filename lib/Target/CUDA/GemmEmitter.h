//===- GemmEmitter.h - The Hopper GEMM kernel of kiln-cuda-gemm -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The kernel of kiln-cuda-gemm (GemmTemplate.cpp, which says what a GEMM
// it takes looks like): host code (tensor maps, a gpu.launch) and the
// TMA + mbarrier + wgmma kernel of one product, its epilogue stored through
// its dispatch's elementwise epilogue when it has one.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_TARGET_CUDA_GEMMEMITTER_H
#define KILN_LIB_TARGET_CUDA_GEMMEMITTER_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace kiln::cuda_gemm {

/// A (batch) matmul the template takes: C[b] (f32) = A[b] (MxK) * B[b] (KxN).
/// With `kMajorB`, B[b] is given transposed (N x K: C = A * B^T), which tf32
/// needs and convolutions use; with `broadcastA`, one A (M x K) serves every
/// batch (a convolution's filters). `batch` may be ShapedType::kDynamic (a
/// convolution's symbolic image count: B's first size at run time), and so
/// may `m` of an unbatched product (A's first size at run time).
struct Gemm {
  mlir::Value a, b, c;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  mlir::Type element;
  bool kMajorB = false, broadcastA = false;
  int64_t elementBytes() const { return element.getIntOrFloatBitWidth() / 8; }
  /// Elements in one 128-byte swizzled TMA box row: the k step.
  int64_t tileK() const { return 128 / elementBytes(); }
  /// K of one wgmma instruction: 32 bytes of each operand row.
  int64_t mmaK() const { return 32 / elementBytes(); }
};

/// Emits the kernel of `g` at the builder's insertion point: `stages`
/// shared-memory buffers; the product added to C's values when
/// `accumulate`, else stored (C started from zero); with `epilogue` (a
/// generic over C's loops reading C, see GemmTemplate.cpp), the epilogue's
/// body applied to the accumulators and its output stored instead of C.
/// With `enabled` (an i1 computed on the host), the grid is empty when it is
/// false: the runtime then launches nothing.
void emitGemmKernel(mlir::OpBuilder &b, mlir::Location loc, const Gemm &g, int64_t stages,
                    bool accumulate, mlir::linalg::GenericOp epilogue,
                    mlir::Value enabled = {});

} // namespace kiln::cuda_gemm

#endif // KILN_LIB_TARGET_CUDA_GEMMEMITTER_H
