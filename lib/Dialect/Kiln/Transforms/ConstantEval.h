//===- ConstantEval.h - Evaluating kiln ops on constant tensors -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The interpreter behind kiln-fold-constants. Values are widened for
// computation (floats to double, integers and i1 to int64) and rounded back
// to the element type after every op, so a folded result equals what the
// compiled model would compute for +, -, *, / and sqrt (double has more than
// twice f32's precision). 64-bit unsigned tensors are not evaluated.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_TRANSFORMS_CONSTANTEVAL_H
#define KILN_DIALECT_KILN_TRANSFORMS_CONSTANTEVAL_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <vector>

namespace kiln::consteval {

/// A constant tensor with a static shape, widened for computation.
struct Literal {
  mlir::RankedTensorType type;
  std::vector<double> floats; // float element types
  std::vector<int64_t> ints;  // integer and i1 element types

  bool isFloat() const { return llvm::isa<mlir::FloatType>(type.getElementType()); }
  int64_t size() const { return type.getNumElements(); }
  double getDouble(int64_t i) const {
    return isFloat() ? floats[i] : static_cast<double>(ints[i]);
  }
  /// An empty literal of `type`, its storage sized.
  static Literal zeros(mlir::RankedTensorType type);
  /// Copies element `from` of `src` (same element type) into element `to`.
  void copyFrom(const Literal &src, int64_t from, int64_t to) {
    if (isFloat())
      floats[to] = src.floats[from];
    else
      ints[to] = src.ints[from];
  }
};

/// Whether kiln-fold-constants can hold values of `type` (static shape,
/// supported element type).
bool isEvaluableType(mlir::Type type);

/// Reads a dense or dense_resource attribute; nullopt if unsupported.
std::optional<Literal> readLiteral(mlir::ElementsAttr attr);

/// Writes `literal` as a splat, a dense attribute (small or integer) or a
/// dense_resource blob (floats above kInlineFloatElements).
mlir::ElementsAttr writeLiteral(const Literal &literal);
inline constexpr int64_t kInlineFloatElements = 4096;

/// Rounds `value` to `type`'s precision (f32, f16, bf16) or range (integers).
double roundToFloat(double value, mlir::Type type);
int64_t wrapToInteger(int64_t value, mlir::Type type);

/// Calls `fn(result, offsets)` for each element of `shape` in row-major
/// order with each operand's element offset under numpy broadcasting.
void forEachBroadcast(
    llvm::ArrayRef<int64_t> shape,
    llvm::ArrayRef<llvm::ArrayRef<int64_t>> operandShapes,
    llvm::function_ref<void(int64_t, llvm::ArrayRef<int64_t>)> fn);

/// Row-major strides of `shape`.
llvm::SmallVector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape);

/// Evaluates an elementwise op (unary, binary, select, cast); nullopt when
/// `op` is not one or a value cannot be folded (integer division by zero).
std::optional<Literal> evaluateElementwise(mlir::Operation *op,
                                           llvm::ArrayRef<Literal> operands);

/// Evaluates a data-movement, shape-producing or reduction op.
std::optional<llvm::SmallVector<Literal>>
evaluateStructural(mlir::Operation *op, llvm::ArrayRef<Literal> operands);

} // namespace kiln::consteval

#endif // KILN_DIALECT_KILN_TRANSFORMS_CONSTANTEVAL_H
