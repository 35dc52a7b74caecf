//===- KilnOps.cpp - Verifiers of kiln ops with given result types --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Ops whose result type cannot be computed from operand types alone (it comes
// from the value of a shape operand, or is the same as the input) check here
// that what is written is consistent. Inference lives in KilnNNOps.cpp and
// KilnShapeOps.cpp; folders in KilnOpFolders.cpp.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace kiln {

//===----------------------------------------------------------------------===//
// Constants and elementwise ops
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, ValueRange, DictionaryAttr attrs,
    OpaqueProperties properties, RegionRange, SmallVectorImpl<Type> &types) {
  auto *props = properties.as<Properties *>();
  ElementsAttr value = props ? props->value : ElementsAttr();
  if (!value)
    return emitInferenceError(loc, "requires an elements attribute 'value'");
  types.push_back(value.getType());
  return success();
}

LogicalResult ClipOp::verify() {
  if (getMin() && getMax() && *getMin() > *getMax())
    return emitOpError("'min' value ")
           << getMin()->convertToDouble() << " is greater than 'max' value "
           << getMax()->convertToDouble();
  return success();
}

//===----------------------------------------------------------------------===//
// Softmax, normalizations, cumsum
//===----------------------------------------------------------------------===//

static LogicalResult verifyAxis(Operation *op, StringRef name, int64_t axis,
                                int64_t rank) {
  return normalizeAxis(op->getLoc(), name, axis, rank);
}

template <typename OpTy>
static LogicalResult verifySoftmaxLike(OpTy op) {
  return verifyAxis(op, "axis", op.getAxis(), op.getInput().getType().getRank());
}
LogicalResult SoftmaxOp::verify() { return verifySoftmaxLike(*this); }
LogicalResult LogSoftmaxOp::verify() { return verifySoftmaxLike(*this); }

LogicalResult BitcastOp::verify() {
  // Bools are stored as one byte.
  auto bits = [](Type t) {
    Type element = cast<RankedTensorType>(t).getElementType();
    return element.isInteger(1) ? 8u : element.getIntOrFloatBitWidth();
  };
  if (bits(getInput().getType()) != bits(getOutput().getType()))
    return emitOpError() << "element types " << getInput().getType().getElementType()
                         << " and " << getOutput().getType().getElementType()
                         << " differ in width";
  return success();
}

LogicalResult CumSumOp::verify() {
  return verifyAxis(*this, "axis", getAxis(), getInput().getType().getRank());
}
LogicalResult CumProdOp::verify() {
  return verifyAxis(*this, "axis", getAxis(), getInput().getType().getRank());
}

LogicalResult LayerNormOp::verify() {
  int64_t rank = getInput().getType().getRank();
  FailureOr<int64_t> axis = normalizeAxis(getLoc(), "axis", getAxis(), rank);
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> normalized = getInput().getType().getShape().drop_front(*axis);
  for (auto [name, value] : {std::pair<StringRef, Value>{"scale", getScale()},
                             {"bias", getBias()}}) {
    if (!value)
      continue;
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getRank() > static_cast<int64_t>(normalized.size()))
      return emitOpError("'") << name << "' has rank " << type.getRank()
                              << ", accepted at most " << normalized.size()
                              << " (the normalized dims)";
    if (failed(broadcastShapes(getLoc(), {normalized, type.getShape()})))
      return failure();
  }
  if (getEpsilon().isNegative())
    return emitOpError("'epsilon' value is ")
           << getEpsilon().convertToDouble() << ", accepted range is [0, inf)";
  return success();
}

/// `[N, C, ...]` input with `[C]` per-channel parameters.
static LogicalResult verifyChannelParams(Operation *op, Value input,
                                         ValueRange params,
                                         ArrayRef<StringRef> names) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getRank() < 2)
    return op->emitOpError("input has rank ")
           << type.getRank() << ", expected at least 2 ([N, C, ...])";
  int64_t channels = type.getDimSize(1);
  for (auto [name, param] : llvm::zip(names, params)) {
    auto paramType = cast<RankedTensorType>(param.getType());
    if (paramType.getRank() != 1)
      return op->emitOpError("'") << name << "' has rank "
                                  << paramType.getRank() << ", expected 1";
    int64_t size = paramType.getDimSize(0);
    if (!ShapedType::isDynamic(size) && !ShapedType::isDynamic(channels) &&
        size != channels)
      return op->emitOpError("'") << name << "' has " << size
                                  << " elements, expected " << channels
                                  << " (the channel dim)";
  }
  return success();
}

LogicalResult BatchNormOp::verify() {
  return verifyChannelParams(*this, getInput(),
                             {getScale(), getBias(), getMean(), getVariance()},
                             {"scale", "bias", "mean", "variance"});
}

LogicalResult InstanceNormOp::verify() {
  return verifyChannelParams(*this, getInput(), {getScale(), getBias()},
                             {"scale", "bias"});
}

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

/// Scale and zero point are scalars (per tensor) or 1-D along `axis`.
static LogicalResult verifyQuantParams(Operation *op, RankedTensorType data,
                                       Value scale, Value zeroPoint,
                                       int64_t axis) {
  auto scaleType = cast<RankedTensorType>(scale.getType());
  auto zeroType = cast<RankedTensorType>(zeroPoint.getType());
  if (scaleType.getShape() != zeroType.getShape())
    return op->emitOpError("'scale' and 'zero_point' shapes differ");
  if (scaleType.getRank() > 1)
    return op->emitOpError("'scale' has rank ")
           << scaleType.getRank() << ", expected 0 (per tensor) or 1 (per axis)";
  if (scaleType.getRank() == 1) {
    FailureOr<int64_t> dim = normalizeAxis(op->getLoc(), "axis", axis, data.getRank());
    if (failed(dim))
      return failure();
    int64_t want = data.getDimSize(*dim), got = scaleType.getDimSize(0);
    if (!ShapedType::isDynamic(want) && !ShapedType::isDynamic(got) && want != got)
      return op->emitOpError("'scale' has ")
             << got << " elements, expected " << want << " (dim " << *dim << ")";
  }
  return success();
}

LogicalResult QuantizeLinearOp::verify() {
  if (getOutput().getType().getElementType() !=
      getZeroPoint().getType().getElementType())
    return emitOpError("result element type must match the zero point's (")
           << getZeroPoint().getType().getElementType() << ")";
  if (failed(verifyCompatibleShape(getInput().getType(), getOutput().getType())))
    return emitOpError("result shape must match the input shape");
  return verifyQuantParams(*this, getInput().getType(), getScale(),
                           getZeroPoint(), getAxis());
}

LogicalResult DequantizeLinearOp::verify() {
  if (getInput().getType().getElementType() !=
      getZeroPoint().getType().getElementType())
    return emitOpError("input element type must match the zero point's (")
           << getZeroPoint().getType().getElementType() << ")";
  if (getOutput().getType().getElementType() !=
      getScale().getType().getElementType())
    return emitOpError("result element type must match the scale's (")
           << getScale().getType().getElementType() << ")";
  if (failed(verifyCompatibleShape(getInput().getType(), getOutput().getType())))
    return emitOpError("result shape must match the input shape");
  return verifyQuantParams(*this, getInput().getType(), getScale(),
                           getZeroPoint(), getAxis());
}

//===----------------------------------------------------------------------===//
// Ops shaped by a shape operand
//===----------------------------------------------------------------------===//

/// The shape operand, when present, has one entry per result dim.
static LogicalResult verifyShapeOperand(Operation *op, Value shape,
                                        RankedTensorType result) {
  if (!shape) {
    if (!result.hasStaticShape())
      return op->emitOpError("result type ")
             << result << " has dynamic dims, so the shape operand is required";
    return success();
  }
  int64_t entries = cast<RankedTensorType>(shape.getType()).getDimSize(0);
  if (!ShapedType::isDynamic(entries) && entries != result.getRank())
    return op->emitOpError("shape operand has ")
           << entries << " entries but the result has rank " << result.getRank();
  return success();
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType in = getInput().getType(), out = getOutput().getType();
  if (failed(verifyShapeOperand(*this, getShape(), out)))
    return failure();
  std::optional<int64_t> inCount = staticElementCount(in.getShape());
  std::optional<int64_t> outCount = staticElementCount(out.getShape());
  // A static shape whose element count overflows int64 cannot be compared
  // (and no buffer can hold it).
  for (auto [what, type, count] :
       {std::tuple<StringRef, RankedTensorType, std::optional<int64_t>>{
            "input", in, inCount},
        {"result", out, outCount}})
    if (type.hasStaticShape() && !count)
      return emitOpError(what) << " type " << type
                               << " has more than 2^63 - 1 elements";
  if (inCount && outCount && *inCount != *outCount)
    return emitOpError("input has ")
           << *inCount << " elements but the result type " << out << " has "
           << *outCount;
  return success();
}

LogicalResult ExpandOp::verify() {
  RankedTensorType in = getInput().getType(), out = getOutput().getType();
  if (failed(verifyShapeOperand(*this, getShape(), out)))
    return failure();
  if (in.getRank() > out.getRank())
    return emitOpError("input rank ")
           << in.getRank() << " exceeds the result rank " << out.getRank();
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(getLoc(), {in.getShape(), out.getShape()});
  if (failed(shape))
    return failure();
  if (!areRefinedTypes(RankedTensorType::get(*shape, out.getElementType()), out))
    return emitOpError("input ") << in << " does not broadcast to " << out;
  return success();
}

LogicalResult ConstantOfShapeOp::verify() {
  RankedTensorType out = getOutput().getType();
  if (getValue().getType() != out.getElementType())
    return emitOpError("'value' has type ")
           << getValue().getType() << ", expected the result element type "
           << out.getElementType();
  return verifyShapeOperand(*this, getShape(), out);
}

LogicalResult EinsumOp::verify() {
  StringRef equation = getEquation();
  auto [lhs, result] = equation.split("->");
  if (!equation.contains("->"))
    return emitOpError("equation '") << equation << "' has no '->'";
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (terms.size() != getInputs().size())
    return emitOpError("equation has ")
           << terms.size() << " operand terms, but the op has " << getInputs().size()
           << " operands";
  Type element = getOutput().getType().getElementType();
  llvm::StringMap<int64_t> sizes;
  for (auto [term, input] : llvm::zip(terms, getInputs())) {
    auto type = cast<RankedTensorType>(input.getType());
    if (type.getElementType() != element)
      return emitOpError("operand element type ")
             << type.getElementType() << " differs from the result's " << element;
    if (static_cast<int64_t>(term.size()) != type.getRank())
      return emitOpError("term '") << term << "' has " << term.size()
                                   << " letters for an operand of rank " << type.getRank();
    for (auto [i, letter] : llvm::enumerate(term)) {
      if (!llvm::isAlpha(letter))
        return emitOpError("term '") << term << "' holds '" << letter << "', expected letters";
      int64_t size = type.getDimSize(i);
      auto [it, inserted] = sizes.try_emplace(StringRef(&term.data()[i], 1), size);
      if (!inserted && !ShapedType::isDynamic(size) && !ShapedType::isDynamic(it->second) &&
          it->second != size)
        return emitOpError("letter '") << letter << "' has sizes " << it->second << " and "
                                       << size;
    }
  }
  RankedTensorType out = getOutput().getType();
  if (static_cast<int64_t>(result.size()) != out.getRank())
    return emitOpError("result term '") << result << "' has " << result.size()
                                        << " letters for a result of rank " << out.getRank();
  for (auto [i, letter] : llvm::enumerate(result)) {
    auto it = sizes.find(StringRef(&result.data()[i], 1));
    if (it == sizes.end())
      return emitOpError("result letter '") << letter << "' is in no operand term";
    if (result.find(letter) != i)
      return emitOpError("result letter '") << letter << "' repeats";
    if (!ShapedType::isDynamic(it->second) && !out.isDynamicDim(i) &&
        out.getDimSize(i) != it->second)
      return emitOpError("result dim ") << i << " is " << out.getDimSize(i) << ", but letter '"
                                        << letter << "' has size " << it->second;
  }
  return success();
}

LogicalResult GridSampleOp::verify() {
  RankedTensorType in = getInput().getType(), grid = getGrid().getType(),
                   out = getOutput().getType();
  int64_t spatial = in.getRank() - 2;
  if (spatial < 1)
    return emitOpError("input rank ") << in.getRank() << " is below 3 ([N, C, D1..Dk])";
  if (grid.getRank() < 2 || grid.isDynamicDim(grid.getRank() - 1) ||
      grid.getDimSize(grid.getRank() - 1) != spatial)
    return emitOpError("grid must be [N, O1..Om, ")
           << spatial << "] for an input with " << spatial << " spatial dims";
  SmallVector<int64_t> expected = {in.getDimSize(0), in.getDimSize(1)};
  llvm::append_range(expected, grid.getShape().drop_front().drop_back());
  if (failed(verifyCompatibleShape(out.getShape(), expected)) ||
      failed(verifyCompatibleShape(ArrayRef<int64_t>{in.getDimSize(0)},
                                   ArrayRef<int64_t>{grid.getDimSize(0)})))
    return emitOpError("result must be [N, C, O1..Om] of the input and the grid");
  return success();
}

LogicalResult ResizeOp::verify() {
  RankedTensorType in = getInput().getType(), out = getOutput().getType();
  if (in.getRank() != out.getRank())
    return emitOpError("result rank ")
           << out.getRank() << " differs from the input rank " << in.getRank();
  if (!getScales().empty() &&
      static_cast<int64_t>(getScales().size()) != in.getRank())
    return emitOpError("'scales' has ")
           << getScales().size() << " entries, expected " << in.getRank();
  for (float scale : getScales())
    if (!(scale > 0.0f))
      return emitOpError("'scales' value is ")
             << scale << ", accepted range is (0, inf)";
  return success();
}

} // namespace kiln
