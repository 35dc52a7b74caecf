//===- MatchUtils.h - Small matchers shared by the recognition passes -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===---------------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_TRANSFORMS_MATCHUTILS_H
#define KILN_DIALECT_KILN_TRANSFORMS_MATCHUTILS_H

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Value.h"

#include <cmath>
#include <optional>

namespace kiln {

/// The value of a float splat constant (any shape), or nullopt.
/// A rank-0 kiln.constant of `element` holding `value`.
inline mlir::Value scalarConstant(mlir::PatternRewriter &rewriter, mlir::Location loc,
                                  mlir::Type element, double value) {
  auto type = mlir::RankedTensorType::get({}, element);
  return ConstantOp::create(
      rewriter, loc, mlir::DenseElementsAttr::get(type, rewriter.getFloatAttr(element, value)));
}

inline std::optional<double> getSplatFloat(mlir::Value value) {
  mlir::SplatElementsAttr splat;
  if (!value || !mlir::matchPattern(value, mlir::m_Constant(&splat)) ||
      !llvm::isa<mlir::FloatType>(splat.getElementType()))
    return std::nullopt;
  return splat.getSplatValue<llvm::APFloat>().convertToDouble();
}

/// True when `value` is a float splat within `relTol` of `expected`.
inline bool isSplatNear(mlir::Value value, double expected, double relTol = 1e-4) {
  std::optional<double> got = getSplatFloat(value);
  return got && std::fabs(*got - expected) <= relTol * std::fabs(expected);
}

/// For a two-operand op, the operand that is not `one` (nullptr if neither).
inline mlir::Value otherOperand(mlir::Operation *op, mlir::Value one) {
  if (op->getOperand(0) == one)
    return op->getOperand(1);
  if (op->getOperand(1) == one)
    return op->getOperand(0);
  return nullptr;
}

} // namespace kiln

#endif // KILN_DIALECT_KILN_TRANSFORMS_MATCHUTILS_H
