//===- GemmNeighbours.h - What kiln-cuda-gemm fuses around a GEMM -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// What kiln-cuda-gemm (GemmTemplate.cpp) does with the buffers around one
// GEMM: the zero fill or zero copy of C before it (bufferization may have
// made the dispatch's zero fill a copy of a shared zero buffer), its
// dispatch's epilogue seen through an expand_shape of C, the copy of its
// result into a final output, and fills that a later op overwrites. Which
// consumer is the epilogue is the dispatch stage's decision
// (kiln-form-gemm-epilogues), read from the kiln.dispatch ids.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_TARGET_CUDA_GEMMNEIGHBOURS_H
#define KILN_LIB_TARGET_CUDA_GEMMNEIGHBOURS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln::cuda_gemm {

/// Whether a tensor map can read `type` at its aligned pointer: dense, row
/// major, no offset, static but (with `symbolicBatch`) for its first dim,
/// whose size the map reads at run time.
bool isDenseRowMajor(mlir::MemRefType type, bool symbolicBatch = false);

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

/// A product's epilogue that reads it through a memref.expand_shape
/// `expand` (a convolution's [N, F, OH*OW] as [N, F, OH, OW], a
/// projection's [B*S, N] as [B, S, N]), rewritten over the product's rank:
/// the product read directly, the other identity operands and the output
/// through memref.collapse_shape, the others (projected permutations of
/// dims whose group is one dim) on the collapsed dims. Returns the new
/// generic, or null when `consumer` does not have that form.
mlir::linalg::GenericOp collapseOntoProduct(mlir::linalg::GenericOp consumer,
                                            mlir::memref::ExpandShapeOp expand,
                                            mlir::IRRewriter &rewriter);

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
