//===- MatmulEpilogue.h - Epilogues of the CPU matmul kernel ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The part of kiln-cpu-matmul that fuses a marked elementwise epilogue
// (kiln/Dispatch/Epilogue.h) into the matmul kernel: finding it after the
// matmul, and applying its body to the kernel's accumulators; splitting a
// batch_matmul (and its epilogue) into per-batch matmuls; dropping the zero
// fill of C that the kernel makes unnecessary.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_TARGET_CPU_MATMULEPILOGUE_H
#define KILN_LIB_TARGET_CPU_MATMULEPILOGUE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace kiln {

/// The marked epilogue reading `op`'s C after it, with `op` moved right
/// before it, or null. Between them only buffer allocations, fills and
/// copies that commute with the matmul (commutesWith), pure ops (views,
/// constants) and deallocations may lie; deallocations of the matmul's
/// operands move after the epilogue.
mlir::linalg::GenericOp takeEpilogue(mlir::linalg::MatmulOp op);

/// The same for a batch_matmul, whose epilogue reads C [batch, M, N] (or an
/// expansion of it).
mlir::linalg::GenericOp takeBatchEpilogue(mlir::linalg::BatchMatmulOp op);

/// The same for a conv's taps (a `kiln.conv_taps` generic writing C [F, P]).
mlir::linalg::GenericOp takeConvTapsEpilogue(mlir::linalg::GenericOp op);

/// The epilogue of one batch of a batch_matmul's `epilogue`, created at
/// `b`: the batch loops fixed at the indices of `batch`, every operand
/// sliced to it (unit dims kept), C read as `cBatch` (that batch's [M, N]
/// view, which the batch's matmul writes) expanded like the batched C's
/// rows and columns. It is a matmul epilogue of that matmul.
mlir::linalg::GenericOp sliceBatchEpilogue(mlir::OpBuilder &b, mlir::Location loc,
                                           mlir::linalg::GenericOp epilogue, mlir::Value batch,
                                           mlir::Value cBatch);

/// Stores f(acc) into the epilogue's output for the tile rows x vectors at
/// (rows[r], cols[v]) (`masks`, one per vector, at a ragged column edge).
void applyEpilogue(mlir::OpBuilder &b, mlir::Location loc, mlir::linalg::GenericOp generic,
                   llvm::ArrayRef<mlir::Value> acc, llvm::ArrayRef<mlir::Value> rows,
                   llvm::ArrayRef<mlir::Value> cols, llvm::ArrayRef<mlir::Value> masks,
                   int64_t vectorWidth);

/// Marks the image loop of a batched conv's taps (unit) and each image's
/// taps (the batch size).
inline constexpr llvm::StringLiteral kImagesAttr = "kiln.images";

/// Each image loop of splitConvTapsBatch whose body is views of the image
/// and one heavy task loop (the rewritten taps) becomes one heavy parallel
/// loop over (image, task): the images share the threads instead of each
/// image's tasks being one pool launch after another.
void mergeImageLoops(mlir::Operation *root);

/// batch_matmul = a loop over batches of 2-D matmuls on rank-reduced views.
/// A marked epilogue becomes one per batch, sliced to it, after its matmul.
/// A zero fill of C right before it is dropped: the batches' matmuls are
/// then `fresh` (they start from zero accumulators).
void splitBatches(mlir::linalg::BatchMatmulOp op,
                  llvm::SmallPtrSetImpl<mlir::Operation *> &fresh);

/// A batched conv taps contraction (kiln/Dispatch/Epilogue.h) = a loop
/// over images of conv taps on rank-reduced views (x [C, L], out [F, P];
/// row inputs sliced to the image, unit dims kept). A marked epilogue
/// becomes one per image, sliced to it, after its taps; a zero fill of C
/// right before it is dropped, and the images' taps are then `fresh`. The
/// loop and each image's taps carry kImagesAttr (the taps: the static batch,
/// 0 when dynamic), for mergeImageLoops and the image's parallel split.
void splitConvTapsBatch(mlir::linalg::GenericOp op,
                        llvm::SmallPtrSetImpl<mlir::Operation *> &fresh);

/// Erases a `linalg.fill` of 0.0 (0 for an integer C) into the matmul's C right before it (in
/// the same block, the same buffer; only trace hooks and ops without memory
/// effects between them) and returns true: the kernels then write C in
/// their first depth block instead of reading the zeros. Only for a static
/// depth K > 0, which guarantees that first block.
bool dropZeroFill(mlir::linalg::MatmulOp op);

/// The same for any op that overwrites `c` in its first depth block (a
/// conv's taps); the caller guarantees that block exists.
bool dropZeroFill(mlir::Operation *op, mlir::Value c);

} // namespace kiln

#endif // KILN_LIB_TARGET_CPU_MATMULEPILOGUE_H
