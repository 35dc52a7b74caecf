//===- GemmNeighbours.h - What kiln-cuda-gemm fuses around a GEMM -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The buffer-level matching of kiln-cuda-gemm (GemmTemplate.cpp) around one
// GEMM: the zero fill or zero copy of C before it, the elementwise consumer
// its epilogue applies (also through an expand_shape of C), the copy of its
// result into a final output, and fills that a later op overwrites.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_TARGET_CUDA_GEMMNEIGHBOURS_H
#define KILN_LIB_TARGET_CUDA_GEMMNEIGHBOURS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln::cuda_gemm {

bool isDenseRowMajor(mlir::MemRefType type);

/// The zero linalg.fill that initializes `gemm`'s output right before it
/// (nothing in between touches that buffer), or null: then the kernel adds
/// the output's initial value.
mlir::linalg::FillOp zeroFillBefore(mlir::Operation *gemm, mlir::Value output);

/// The linalg.copy into `gemm`'s output right before it (nothing in between
/// touches that buffer) whose source is a zero-filled buffer nothing wrote
/// since its fill (a zero tensor bufferized once and copied into each
/// product's output), or null: the product then starts from zero too.
mlir::linalg::CopyOp zeroCopyBefore(mlir::Operation *gemm, mlir::Value output);

/// Ops between a product and its consumer that the search steps over:
/// allocations, pure ops, and the dispatch trace hooks of
/// kiln-instrument-dispatches (the consumer's span then holds the fused kernel
/// and the product's span is empty).
bool skippable(mlir::Operation *op);

/// The elementwise consumer whose body the epilogue computes instead of
/// storing the product: the next op with memory effects after `gemm` is a
/// linalg.generic, all parallel over the product's index space, writing a
/// dense buffer with the identity map without reading it, and reading the
/// product (identity map) and otherwise only buffers through projected
/// permutations (a bias); its body is arith/math. The product must be a
/// temporary (an allocation used only by its zero fill, the gemm, the
/// consumer and deallocations), so it need not be stored at all, unless the
/// consumer writes its result in place, into the product's buffer.
mlir::linalg::GenericOp fusableConsumer(mlir::Operation *gemm, mlir::Value output, mlir::Operation *fill);

/// A convolution's product [N, F, OH*OW] reaches its elementwise consumer
/// (bias, activation, residual) through a memref.expand_shape to
/// [N, F, OH, OW]. When the next op after `gemm` is such an all-parallel
/// generic (its output and the product with identity maps, other operands
/// with identity maps or using only dims that stay whole), it is rewritten
/// over the product's rank: the product read directly, the other identity
/// operands through memref.collapse_shape. Returns the new generic, or null.
mlir::linalg::GenericOp collapseThroughExpand(mlir::Operation *gemm, mlir::Value output, mlir::IRRewriter &rewriter);

/// When `result` (the buffer the kernel writes, produced by `producer`) is an
/// allocation whose only other readers are one copy into a function
/// argument, the next op after `producer` that touches memory, and its
/// deallocations: that copy, and returns its target so that the kernel
/// writes the argument (the model's output) directly.
mlir::Operation *finalCopyOf(mlir::Value result, mlir::Operation *producer, mlir::Operation *gemm);

/// Whether `op` writes every element of the buffer `buffer` without reading
/// it: a linalg.copy into it, or an all-parallel generic whose only output
/// is `buffer` or a reshape of it (identity map, its value unused) and whose
/// inputs do not alias it.
bool overwrites(mlir::Operation *op, mlir::Value buffer);

/// Drops each linalg.fill of a buffer that the next op touching it
/// overwrites entirely (a convolution's initial value, once its epilogue or
/// bias generic writes the whole buffer): otherwise a kernel of its own.
void eraseDeadFills(mlir::func::FuncOp func, mlir::IRRewriter &rewriter);

} // namespace kiln::cuda_gemm

#endif // KILN_LIB_TARGET_CUDA_GEMMNEIGHBOURS_H
