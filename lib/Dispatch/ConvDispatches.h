//===- ConvDispatches.h - Convolution dispatches of the CPU -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The convolution rewrites of kiln-form-dispatches (CPU): the per-tap
// matmuls of a stride-1 conv and the im2col matmul of any other conv
// become one `kiln.conv_taps` contraction (kiln/Dispatch/Epilogue.h),
// which the CPU matmul kernel runs as an implicit GEMM; a stride-1
// depthwise conv's activation joins it at the row pitch.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_DISPATCH_CONVDISPATCHES_H
#define KILN_LIB_DISPATCH_CONVDISPATCHES_H

#include "kiln/Dispatch/Epilogue.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace kiln {

/// A matmul on tensors the CPU kernel generator takes (f32, 2-D, the
/// default indexing maps), or null. (FormDispatches.cpp)
mlir::linalg::MatmulOp kernelMatmul(mlir::Value value);

/// The static offsets of `slice` when its sizes are `sizes` and its
/// strides 1 (a unit size may be rank-reduced away), or nothing.
std::optional<llvm::SmallVector<int64_t>> staticSlice(mlir::tensor::ExtractSliceOp slice,
                                                      llvm::ArrayRef<int64_t> sizes);

/// The filter [F, C, kh, kw] of a conv matmul's A (collapsed [F, C*kh*kw]),
/// or null.
mlir::Value convFilter(mlir::linalg::MatmulOp matmul);

/// Replaces `matmul` (one conv image) by a `kiln.conv_taps` contraction of
/// `filter` [F, C, kh, kw] and image `image` of `x` [N, C, L] read at
/// `layout`, into the matmul's C. Returns false, changing nothing, when the
/// layout would not be conv taps (convTapsLayout: e.g. out of bounds).
bool replaceByConvTaps(mlir::linalg::MatmulOp matmul, mlir::Value filter, mlir::Value x,
                       int64_t image, const ConvTapsLayout &layout);

/// The per-tap matmuls of each stride-1 conv image, accumulating from a
/// zero fill, become one conv taps contraction.
void mergeConvTaps(mlir::func::FuncOp func);

/// An im2col matmul of one conv image (W [F, C*kh*kw] times the image's
/// patches) becomes conv taps reading the image through the conv's index
/// map; the patch generic goes once no image reads it. Returns whether it
/// did.
bool im2colToConvTaps(mlir::linalg::MatmulOp matmul);

/// A 1x1 conv matmul whose input is a tensor computed at a padded row
/// pitch and sliced to the image columns becomes conv taps reading the
/// pitched tensor. Returns whether it did.
bool pitchedPointwiseToConvTaps(mlir::linalg::MatmulOp matmul);

/// An elementwise consumer of a pitch-sliced all-parallel generic (the
/// activation of a stride-1 depthwise conv) whose result only 1x1 convs
/// read joins that generic over its pitched domain. Returns whether it
/// did.
bool fuseIntoPitchedProducer(mlir::linalg::GenericOp consumer);

/// A 4-D all-parallel generic computing rows wider than the image (a
/// strided depthwise conv over rows of whole vectors) whose result is
/// sliced to the image columns is read, by that slice, as the pitched form
/// the functions above take: [N, C, oh, Wp] collapsed to [N, C, oh*Wp] and
/// expanded back (a no-op view), so that its activation joins it and 1x1
/// convs read it in place, as for a stride-1 depthwise conv.
void exposePitchedRows(mlir::func::FuncOp func);

/// ConvBatch.cpp: the convs of a batch as one batched conv taps
/// contraction each (Epilogue.h): the per-image conv taps of a static
/// batch of two or more images merged (1x1 conv matmuls first become conv
/// taps), and a linalg conv with a dynamic (or large) batch rewritten.
void batchConvTaps(mlir::func::FuncOp func);
void linalgConvsToTaps(mlir::func::FuncOp func);

/// A batched 1x1 conv taps reading a pitched input (pitchedPointwiseInput)
/// reads the pitched tensor through the layout instead. Returns whether it
/// did.
bool pitchedBatchedToConvTaps(mlir::linalg::GenericOp taps);

/// A tensor computed at a padded row pitch and sliced to its image columns
/// ([N, C, oh*Wp] viewed as [N, C, oh, Wp], sliced to [N, C, oh, ow]) and
/// reshaped to [N, C, oh*ow], as a conv's input: the pitched tensor and
/// the layout a 1x1 conv reads it with (row p / ow at Wp, column p % ow),
/// or nothing.
std::optional<std::pair<mlir::Value, ConvTapsLayout>> pitchedPointwiseInput(mlir::Value col);

/// ConvPrologue.cpp: the elementwise producer of a 1x1 conv's input (read
/// by nothing else) becomes the B prologue of its conv taps contraction
/// (Epilogue.h, convTapsLayout), for a conv taps generic or a 1x1 stride-1
/// conv matmul (which becomes conv taps). Returns whether it did.
bool fuseConvTapsPrologue(mlir::linalg::GenericOp taps);
bool fuseMatmulPrologue(mlir::linalg::MatmulOp matmul);

/// PaddedEpilogue.cpp: a marked epilogue over a conv's product [F, P] whose
/// result is reshaped to [1, F, H, W] and inserted into another tensor (the
/// next conv's zero padding) iterates over [F, H, W] and writes that slice
/// instead, so that it is computed in place in the padded tensor. Only
/// where the kernel can store its rows (W a multiple of `columnAlign`, or at
/// least that: wrapping rows). Returns whether it did.
bool writeEpilogueIntoPadding(mlir::linalg::GenericOp generic, int64_t columnAlign);

} // namespace kiln

#endif // KILN_LIB_DISPATCH_CONVDISPATCHES_H
