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

} // namespace kiln::lowering

#endif // KILN_LIB_CONVERSION_KILNTOLINALG_RESHAPEVIEWS_H
