//===- ReshapeViews.h - Reshapes as views where the shapes allow --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CONVERSION_KILNTOLINALG_RESHAPEVIEWS_H
#define KILN_LIB_CONVERSION_KILNTOLINALG_RESHAPEVIEWS_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace kiln::lowering {

/// `input` reshaped to `type` (same elements, row-major): collapse_shape /
/// expand_shape views when both shapes are static, or when each has one
/// dynamic dim and their static dims multiply to the same count (then the
/// dynamic dims are equal: a batch kept through a channel shuffle's
/// computed shape); else tensor.reshape from `shape` (from the static
/// result shape when `shape` is null). Null when the result is dynamic and
/// there is neither.
mlir::Value reshapeTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                      mlir::RankedTensorType type, mlir::Value shape);

/// Whether `value` (a kiln value, before conversion) is a whole buffer or a
/// contiguous view of one after bufferization: through reshapes and
/// transposes, a split or slice must take one contiguous block (a row of a
/// fused projection's output at batch 1, not at batch 32).
bool bufferizesContiguous(mlir::Value value);

/// A transpose of `input` by `perm` that keeps the order of the dims not
/// statically 1 (a decode step's head split [b, 1, h, d] -> [b, h, 1, d])
/// moves no element: the input without its unit dims, expanded to `result`
/// (views after bufferization, no kernel). Null for any other permutation.
mlir::Value unitDimsMoved(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                          llvm::ArrayRef<int64_t> perm, mlir::RankedTensorType result);

} // namespace kiln::lowering

#endif // KILN_LIB_CONVERSION_KILNTOLINALG_RESHAPEVIEWS_H
