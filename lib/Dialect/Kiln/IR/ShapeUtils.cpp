//===- ShapeUtils.cpp - Shape arithmetic shared by kiln type inference ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/ShapeUtils.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace kiln {

LogicalResult emitInferenceError(std::optional<Location> loc,
                                 const llvm::Twine &message) {
  if (loc)
    emitError(*loc) << message;
  return failure();
}

bool areRefinedTypes(TypeRange inferred, TypeRange actual) {
  if (inferred.size() != actual.size())
    return false;
  for (auto [want, got] : llvm::zip(inferred, actual)) {
    if (want == got)
      continue;
    auto wantTensor = asRanked(want), gotTensor = asRanked(got);
    if (!wantTensor || !gotTensor ||
        wantTensor.getElementType() != gotTensor.getElementType() ||
        wantTensor.getRank() != gotTensor.getRank())
      return false;
    for (auto [w, g] : llvm::zip(wantTensor.getShape(), gotTensor.getShape()))
      if (!ShapedType::isDynamic(w) && w != g)
        return false;
  }
  return true;
}

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << "?";
    else
      os << d;
  });
  os << "]";
  return text;
}

FailureOr<SmallVector<int64_t>>
broadcastShapes(std::optional<Location> loc, ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (ArrayRef<int64_t> shape : shapes)
    rank = std::max(rank, shape.size());
  SmallVector<int64_t> result(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    // Walk dims aligned from the back; `known` is the first static dim > 1.
    int64_t known = 1;
    bool sawDynamic = false;
    for (ArrayRef<int64_t> shape : shapes) {
      if (i >= rank - shape.size()) {
        int64_t d = shape[i - (rank - shape.size())];
        if (ShapedType::isDynamic(d)) {
          sawDynamic = true;
          continue;
        }
        if (d == 1)
          continue;
        if (known != 1 && known != d) {
          std::string list;
          for (ArrayRef<int64_t> s : shapes)
            list += (list.empty() ? "" : ", ") + shapeString(s);
          return emitInferenceError(
              loc, "shapes " + list + " are not broadcast-compatible (dim " +
                       Twine(i) + " of the result: " + Twine(known) + " vs " +
                       Twine(d) + ")");
        }
        known = d;
      }
    }
    result[i] = (known == 1 && sawDynamic) ? ShapedType::kDynamic : known;
  }
  return result;
}

LogicalResult inferBroadcastResult(std::optional<Location> loc,
                                   ArrayRef<Type> operands, Type elementType,
                                   SmallVectorImpl<Type> &results) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Type type : operands) {
    auto tensor = asRanked(type);
    if (!tensor)
      return emitInferenceError(loc, "expected ranked tensor operands");
    shapes.push_back(tensor.getShape());
  }
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(loc, shapes);
  if (failed(shape))
    return failure();
  if (!elementType)
    elementType = asRanked(operands.back()).getElementType();
  results.push_back(RankedTensorType::get(*shape, elementType));
  return success();
}

FailureOr<int64_t> normalizeAxis(std::optional<Location> loc, StringRef name,
                                 int64_t axis, int64_t rank) {
  int64_t lo = -rank, hi = rank - 1;
  if (axis < lo || axis > hi)
    return emitInferenceError(loc, "'" + name + "' value is " + Twine(axis) +
                                       ", accepted range is [" + Twine(lo) +
                                       ", " + Twine(hi) + "]");
  return axis < 0 ? axis + rank : axis;
}

FailureOr<SmallVector<int64_t>> normalizeAxes(std::optional<Location> loc,
                                              StringRef name,
                                              ArrayRef<int64_t> axes,
                                              int64_t rank) {
  SmallVector<int64_t> result;
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t axis : axes) {
    FailureOr<int64_t> normalized = normalizeAxis(loc, name, axis, rank);
    if (failed(normalized))
      return failure();
    if (!seen.insert(*normalized).second)
      return emitInferenceError(loc, "'" + name + "' names dim " +
                                         Twine(*normalized) + " twice");
    result.push_back(*normalized);
  }
  return result;
}

std::optional<int64_t> staticElementCount(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (ShapedType::isDynamic(d) || d < 0)
      return std::nullopt;
    if (llvm::MulOverflow(count, d, count))
      return std::nullopt;
  }
  return count;
}

} // namespace kiln
