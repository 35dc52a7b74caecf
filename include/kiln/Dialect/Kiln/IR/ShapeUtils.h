//===- ShapeUtils.h - Shape arithmetic shared by kiln type inference -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===---------------------------------------------------------------------------===//
//
// Helpers for result-type inference and verification: broadcasting with
// dynamic dims, axis normalization with diagnostics in the house style
// ("'axis' value is 4, accepted range is [-4, 3]"), and the refinement rule
// that lets a written result type be more static than the inferred one.
//
//===---------------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_IR_SHAPEUTILS_H
#define KILN_DIALECT_KILN_IR_SHAPEUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/TypeRange.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MathExtras.h"

#include <optional>

namespace kiln {

/// True when each `actual` type equals `inferred` up to dims: a dim may be
/// static in `actual` where `inferred` says dynamic, never the other way round
/// with a conflicting size, and element types and ranks match exactly.
bool areRefinedTypes(mlir::TypeRange inferred, mlir::TypeRange actual);

/// Numpy broadcast of several shapes; `?` combines with anything (a `?`
/// against a static `n > 1` gives `n`). Emits "shapes ... are not
/// broadcast-compatible (dim i: a vs b)" on failure when `loc` is set.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(std::optional<mlir::Location> loc,
                llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes);

/// Result of a broadcasting elementwise op on `operands` (ranked tensors).
/// `elementType` overrides the element type (i1 for predicates) when set.
mlir::LogicalResult
inferBroadcastResult(std::optional<mlir::Location> loc,
                     llvm::ArrayRef<mlir::Type> operands,
                     mlir::Type elementType,
                     llvm::SmallVectorImpl<mlir::Type> &results);

/// Maps `axis` in `[-rank, rank-1]` to `[0, rank-1]`; emits
/// "'<name>' value is <axis>, accepted range is [-rank, rank-1]" otherwise.
mlir::FailureOr<int64_t> normalizeAxis(std::optional<mlir::Location> loc,
                                       llvm::StringRef name, int64_t axis,
                                       int64_t rank);

/// Normalizes every axis of a list and rejects duplicates.
mlir::FailureOr<llvm::SmallVector<int64_t>>
normalizeAxes(std::optional<mlir::Location> loc, llvm::StringRef name,
              llvm::ArrayRef<int64_t> axes, int64_t rank);

/// Whether every dim of `type` but the first (the batch, which may be
/// symbolic) is static: the kernels that fold the batch into a grid
/// dimension take such shapes.
inline bool hasStaticShapeButBatch(mlir::ShapedType type) {
  return type.hasRank() && type.getRank() > 0 &&
         llvm::none_of(type.getShape().drop_front(), mlir::ShapedType::isDynamic);
}

/// Whether `value` is a ranked f32 tensor with a static shape.
inline bool isStaticF32(mlir::Value value) {
  auto type = llvm::dyn_cast<mlir::RankedTensorType>(value.getType());
  return type && type.hasStaticShape() && type.getElementType().isF32();
}

/// Whether `value` is a ranked f32 tensor static but for its batch (a conv's
/// input or output: the kernels take the image count at run time).
inline bool isStaticButBatchF32(mlir::Value value) {
  auto type = llvm::dyn_cast<mlir::RankedTensorType>(value.getType());
  return type && hasStaticShapeButBatch(type) && type.getElementType().isF32();
}

/// Whether the f32 operands `a` x `b` -> `c` of a matmul (`batched`: a
/// batch_matmul) have the shapes the CUDA GEMM template takes: static, but
/// an unbatched product's rows M (the first size of `a` and `c`, a
/// classifier's after a flatten of a symbolic batch) may be symbolic.
inline bool isStaticButRowsF32(mlir::Value a, mlir::Value b, mlir::Value c, bool batched) {
  if (batched)
    return isStaticF32(a) && isStaticF32(b) && isStaticF32(c);
  return isStaticButBatchF32(a) && isStaticF32(b) && isStaticButBatchF32(c);
}

/// Product of dims, or nullopt when a dim is dynamic or the product overflows
/// int64.
std::optional<int64_t> staticElementCount(llvm::ArrayRef<int64_t> shape);

/// int64 arithmetic on sizes that come from attributes and static dims (both
/// up to 2^63 - 1): each step is checked, and `get()` is nullopt once one
/// overflowed, e.g. `CheckedI64(k - 1).mul(dilation).add(1).get()`.
class CheckedI64 {
public:
  explicit CheckedI64(int64_t value) : value(value) {}
  CheckedI64 &add(int64_t v) {
    overflow |= llvm::AddOverflow(value, v, value);
    return *this;
  }
  CheckedI64 &sub(int64_t v) {
    overflow |= llvm::SubOverflow(value, v, value);
    return *this;
  }
  CheckedI64 &mul(int64_t v) {
    overflow |= llvm::MulOverflow(value, v, value);
    return *this;
  }
  std::optional<int64_t> get() const {
    return overflow ? std::nullopt : std::optional<int64_t>(value);
  }

private:
  int64_t value;
  bool overflow = false;
};

/// Returns the ranked tensor type of `type`, or null.
inline mlir::RankedTensorType asRanked(mlir::Type type) {
  return llvm::dyn_cast_or_null<mlir::RankedTensorType>(type);
}

/// Emits `message` at `loc` when present; always returns failure.
mlir::LogicalResult emitInferenceError(std::optional<mlir::Location> loc,
                                       const llvm::Twine &message);

} // namespace kiln

#endif // KILN_DIALECT_KILN_IR_SHAPEUTILS_H
