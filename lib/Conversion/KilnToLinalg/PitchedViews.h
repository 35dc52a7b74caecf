//===- PitchedViews.h - Windows computed at a padded row pitch --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The flat forms of 2-D windows (depthwise convs, max pooling): the output
// computed at the padded input's row pitch, each tap a contiguous slice of
// the flattened input, and for strides above 1 of the input's phases.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CONVERSION_KILNTOLINALG_PITCHEDVIEWS_H
#define KILN_LIB_CONVERSION_KILNTOLINALG_PITCHEDVIEWS_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include <utility>

namespace kiln::lowering {

/// y [n, c, oh*Wp] computed at a padded row pitch Wp, viewed as
/// [n, c, oh, Wp], columns [0, ow) (the `result` shape; n is `images`).
mlir::Value dropPitchColumns(mlir::OpBuilder &b, mlir::Location loc, mlir::Value y,
                             mlir::RankedTensorType result, int64_t wp,
                             mlir::OpFoldResult images);

/// The padded height and width a kh x kw window of stride s needs for
/// stridedPhases: whole phase rows and columns (multiples of s) that cover
/// `height` x `width`, with the phase rows the flat taps of the last of the
/// `outputRows` rows read (one past the window when kw > s).
std::pair<int64_t, int64_t> phasePaddedSize(int64_t height, int64_t width, int64_t kh,
                                            int64_t kw, int64_t s, int64_t outputRows);

/// The s*s phases of the padded NCHW `input` (height and width multiples of
/// s): Q[n, c, a, b, y, x] = input[n, c, s*y + a, s*x + b] (one
/// data-movement generic, the phase column b innermost so that a vector
/// along x reads contiguous inputs), flattened to [n, c, s*s, Hq*Wq].
mlir::Value stridedPhases(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                          int64_t s);

/// Tap (i, j) of a stride-s window on the flattened `phases`: phase
/// (i % s, j % s) from offset (i / s) * Wq + j / s, `columns` long, as
/// [n, c, columns].
mlir::Value phaseTap(mlir::OpBuilder &b, mlir::Location loc, mlir::Value phases, int64_t s,
                     int64_t wq, int64_t i, int64_t j, int64_t columns);

/// The kh x kw taps of a 2-D window as strided views of the padded NCHW
/// `input` in the `result` shape (tap (i, j) starts at (i*dh, j*dw) and
/// steps by the strides; the batch from `dynamicSizes` when dynamic).
llvm::SmallVector<mlir::Value> stridedTaps(mlir::OpBuilder &b, mlir::Location loc,
                                           mlir::RankedTensorType result, mlir::Value input,
                                           int64_t kh, int64_t kw,
                                           llvm::ArrayRef<int64_t> strides,
                                           llvm::ArrayRef<int64_t> dilations,
                                           mlir::ValueRange dynamicSizes);

} // namespace kiln::lowering

#endif // KILN_LIB_CONVERSION_KILNTOLINALG_PITCHEDVIEWS_H
