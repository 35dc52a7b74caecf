//===- Im2col.h - A convolution's patches as one linalg.generic -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Both routes that turn a 2-D convolution into a product build its im2col:
// convert-kiln-to-linalg (filters x patches per image) and
// kiln-cuda-lower-precision (the GEMM template's K-major patches). They
// differ only in the order of the patch dims.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONVERSION_KILNTOLINALG_IM2COL_H
#define KILN_CONVERSION_KILNTOLINALG_IM2COL_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace kiln {

/// The order of a patch tensor's six dims (batch, channel, kernel row i,
/// kernel column j, output row y, output column x); the generic's loops
/// follow it.
enum class PatchLayout {
  /// [N, C, KH, KW, OH, OW]: K = (c, i, j) rows over P = (y, x) columns.
  ChannelsOuter,
  /// [N, OH, OW, C, KH, KW]: P rows of K each (K-major).
  PixelsOuter,
};

/// An all-parallel linalg.generic writing into `init` (a tensor of the
/// layout's shape) the patches of the padded NCHW tensor `input`:
/// patch[n, c, i, j, y, x] = input[n, c, y*s0 + i*d0, x*s1 + j*d1] for
/// `strides` s and `dilations` d, truncated to `init`'s element type where
/// that is a narrower float.
mlir::linalg::GenericOp createIm2col(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                                     mlir::Value init, PatchLayout layout,
                                     llvm::ArrayRef<int64_t> strides,
                                     llvm::ArrayRef<int64_t> dilations);

} // namespace kiln

#endif // KILN_CONVERSION_KILNTOLINALG_IM2COL_H
