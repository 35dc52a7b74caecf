//===- ConstantEvalShape.cpp - Evaluating data movement and reductions ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Data-movement ops are evaluated as "result element at index i comes from
// input element map(i)"; result types are static (checked by the caller), so
// shapes are read from them rather than recomputed.
//
//===----------------------------------------------------------------------===//

#include "ConstantEval.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;

namespace kiln::consteval {
namespace {

using Results = std::optional<SmallVector<Literal>>;

Results one(std::optional<Literal> literal) {
  if (!literal)
    return std::nullopt;
  return SmallVector<Literal>{std::move(*literal)};
}

/// The same elements under another static type (reshape family).
Literal retype(const Literal &input, Type type) {
  Literal result = input;
  result.type = cast<RankedTensorType>(type);
  return result;
}

/// Builds a result of `type` whose element at multi-index `i` is
/// `input[map(i)]`; `map` returns -1 for "out of range" (not folded).
std::optional<Literal> mapIndices(const Literal &input, RankedTensorType type,
                                  function_ref<int64_t(ArrayRef<int64_t>)> map) {
  Literal result = Literal::zeros(type);
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t out = 0, e = result.size(); out < e; ++out) {
    int64_t from = map(index);
    if (from < 0)
      return std::nullopt;
    result.copyFrom(input, from, out);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return result;
}

int64_t normalized(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

std::optional<Literal> transpose(TransposeOp op, const Literal &input) {
  SmallVector<int64_t> strides = stridesOf(input.type.getShape());
  ArrayRef<int64_t> perm = op.getPerm();
  return mapIndices(input, op.getType(), [&](ArrayRef<int64_t> i) {
    int64_t from = 0;
    for (size_t d = 0; d < perm.size(); ++d)
      from += i[d] * strides[perm[d]];
    return from;
  });
}

std::optional<Literal> slice(SliceOp op, const Literal &input) {
  ArrayRef<int64_t> shape = input.type.getShape();
  SmallVector<int64_t> start(shape.size(), 0), step(shape.size(), 1);
  for (auto [k, axisAttr] : llvm::enumerate(op.getAxes())) {
    int64_t axis = normalized(axisAttr, shape.size()), size = shape[axis];
    int64_t s = op.getStarts()[k], st = op.getSteps()[k];
    if (s < 0)
      s = s < -size ? -1 : s + size;
    start[axis] = st > 0 ? std::clamp<int64_t>(s, 0, size)
                         : std::clamp<int64_t>(s, -1, size - 1);
    step[axis] = st;
  }
  SmallVector<int64_t> strides = stridesOf(shape);
  return mapIndices(input, op.getType(), [&](ArrayRef<int64_t> i) {
    int64_t from = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      from += (start[d] + i[d] * step[d]) * strides[d];
    return from;
  });
}

std::optional<Literal> gather(GatherOp op, const Literal &input, const Literal &indices) {
  ArrayRef<int64_t> shape = input.type.getShape();
  int64_t axis = normalized(static_cast<int64_t>(op.getAxis()), shape.size());
  int64_t indexRank = indices.type.getRank();
  SmallVector<int64_t> strides = stridesOf(shape);
  SmallVector<int64_t> indexStrides = stridesOf(indices.type.getShape());
  return mapIndices(input, op.getType(), [&](ArrayRef<int64_t> i) -> int64_t {
    int64_t at = 0;
    for (int64_t d = 0; d < indexRank; ++d)
      at += i[axis + d] * indexStrides[d];
    int64_t pick = indices.ints[at];
    if (pick < 0)
      pick += shape[axis];
    if (pick < 0 || pick >= shape[axis])
      return -1;
    int64_t from = pick * strides[axis];
    for (int64_t d = 0; d < axis; ++d)
      from += i[d] * strides[d];
    for (int64_t d = axis + 1; d < static_cast<int64_t>(shape.size()); ++d)
      from += i[d + indexRank - 1] * strides[d];
    return from;
  });
}

std::optional<Literal> concat(ConcatOp op, ArrayRef<Literal> inputs) {
  RankedTensorType type = op.getType();
  int64_t axis = normalized(static_cast<int64_t>(op.getAxis()), type.getRank());
  // Map each result position along the axis to (input, position in it).
  SmallVector<std::pair<size_t, int64_t>> along;
  for (auto [k, input] : llvm::enumerate(inputs))
    for (int64_t j = 0; j < input.type.getDimSize(axis); ++j)
      along.push_back({k, j});
  Literal result = Literal::zeros(type);
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> index(shape.size(), 0);
  SmallVector<SmallVector<int64_t>> strides;
  for (const Literal &input : inputs)
    strides.push_back(stridesOf(input.type.getShape()));
  for (int64_t out = 0, e = result.size(); out < e; ++out) {
    auto [k, j] = along[index[axis]];
    int64_t from = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      from += (static_cast<int64_t>(d) == axis ? j : index[d]) * strides[k][d];
    result.copyFrom(inputs[k], from, out);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return result;
}

Results split(SplitOp op, const Literal &input) {
  ArrayRef<int64_t> shape = input.type.getShape();
  int64_t axis = normalized(static_cast<int64_t>(op.getAxis()), shape.size());
  SmallVector<int64_t> strides = stridesOf(shape);
  SmallVector<Literal> results;
  int64_t offset = 0;
  for (Value output : op.getOutputs()) {
    auto type = cast<RankedTensorType>(output.getType());
    std::optional<Literal> piece = mapIndices(input, type, [&](ArrayRef<int64_t> i) {
      int64_t from = offset * strides[axis];
      for (size_t d = 0; d < shape.size(); ++d)
        from += i[d] * strides[d];
      return from;
    });
    if (!piece)
      return std::nullopt;
    results.push_back(std::move(*piece));
    offset += type.getDimSize(axis);
  }
  return results;
}

std::optional<Literal> tile(TileOp op, const Literal &input) {
  ArrayRef<int64_t> shape = input.type.getShape();
  SmallVector<int64_t> strides = stridesOf(shape);
  return mapIndices(input, op.getType(), [&](ArrayRef<int64_t> i) {
    int64_t from = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      from += (i[d] % shape[d]) * strides[d];
    return from;
  });
}

std::optional<Literal> expand(RankedTensorType type, const Literal &input) {
  Literal result = Literal::zeros(type);
  forEachBroadcast(type.getShape(), {input.type.getShape()},
                   [&](int64_t out, ArrayRef<int64_t> at) {
                     result.copyFrom(input, at[0], out);
                   });
  return result;
}

std::optional<Literal> range(RangeOp op, ArrayRef<Literal> operands) {
  RankedTensorType type = op.getType();
  Literal result = Literal::zeros(type);
  if (result.isFloat()) {
    double start = operands[0].floats[0], limit = operands[1].floats[0],
           delta = operands[2].floats[0];
    if (delta == 0 ||
        std::max<double>(std::ceil((limit - start) / delta), 0) != result.size())
      return std::nullopt;
    for (int64_t i = 0, e = result.size(); i < e; ++i)
      result.floats[i] = roundToFloat(start + i * delta, type.getElementType());
    return result;
  }
  int64_t start = operands[0].ints[0], limit = operands[1].ints[0],
          delta = operands[2].ints[0];
  if (delta == 0)
    return std::nullopt;
  int64_t count = std::max<int64_t>(
      (limit - start + delta + (delta > 0 ? -1 : 1)) / delta, 0);
  if (count != result.size())
    return std::nullopt;
  for (int64_t i = 0; i < count; ++i)
    result.ints[i] = start + i * delta;
  return result;
}

std::optional<Literal> constantOfShape(ConstantOfShapeOp op) {
  Literal result = Literal::zeros(op.getType());
  Attribute value = op.getValue();
  if (auto f = dyn_cast<FloatAttr>(value)) {
    if (!result.isFloat())
      return std::nullopt;
    std::fill(result.floats.begin(), result.floats.end(),
              roundToFloat(f.getValueAsDouble(), op.getType().getElementType()));
  } else if (auto i = dyn_cast<IntegerAttr>(value)) {
    if (result.isFloat())
      return std::nullopt;
    int64_t v = i.getType().isUnsignedInteger() || i.getType().isInteger(1)
                    ? static_cast<int64_t>(i.getValue().getZExtValue())
                    : i.getValue().getSExtValue();
    std::fill(result.ints.begin(), result.ints.end(), v);
  } else {
    return std::nullopt;
  }
  return result;
}

/// Reductions on floats (integers: sum, max, min, prod only).
std::optional<Literal> reduce(ReduceOp op, const Literal &input) {
  ArrayRef<int64_t> shape = input.type.getShape();
  SmallVector<bool> reduced(shape.size(), op.getAxes().empty());
  for (int64_t axis : op.getAxes())
    reduced[normalized(axis, shape.size())] = true;
  ReduceKind kind = op.getKind();
  bool isFloat = input.isFloat();
  if (!isFloat && kind != ReduceKind::sum && kind != ReduceKind::max &&
      kind != ReduceKind::min && kind != ReduceKind::prod)
    return std::nullopt;
  // Output strides per input dim (0 on reduced dims).
  SmallVector<int64_t> keptShape;
  for (size_t d = 0; d < shape.size(); ++d)
    keptShape.push_back(reduced[d] ? 1 : shape[d]);
  SmallVector<int64_t> outStrides = stridesOf(keptShape);
  int64_t outCount = 1, groupSize = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    outCount *= keptShape[d];
    groupSize *= reduced[d] ? shape[d] : 1;
    if (reduced[d])
      outStrides[d] = 0;
  }
  double init = kind == ReduceKind::max   ? -INFINITY
                : kind == ReduceKind::min ? INFINITY
                : kind == ReduceKind::prod ? 1.0
                                           : 0.0;
  std::vector<double> acc(outCount, init), maxes(outCount, -INFINITY);
  if (kind == ReduceKind::log_sum_exp) // subtract the max for stability
    for (int64_t in = 0; in < input.size(); ++in) {
      int64_t out = 0, rest = in;
      for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
        out += (rest % shape[d]) * outStrides[d];
        rest /= shape[d];
      }
      maxes[out] = std::max(maxes[out], input.floats[in]);
    }
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t in = 0; in < input.size(); ++in) {
    int64_t out = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      out += index[d] * outStrides[d];
    double v = input.getDouble(in);
    double &a = acc[out];
    switch (kind) {
    case ReduceKind::sum: case ReduceKind::mean: a += v; break;
    case ReduceKind::max: a = std::max(a, v); break;
    case ReduceKind::min: a = std::min(a, v); break;
    case ReduceKind::prod: a *= v; break;
    case ReduceKind::l1: a += std::fabs(v); break;
    case ReduceKind::l2: case ReduceKind::sum_square: a += v * v; break;
    case ReduceKind::log_sum_exp: a += std::exp(v - maxes[out]); break;
    }
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  Literal result = Literal::zeros(op.getType());
  Type element = op.getType().getElementType();
  for (int64_t out = 0; out < outCount; ++out) {
    double a = acc[out];
    if (kind == ReduceKind::mean)
      a /= static_cast<double>(groupSize);
    else if (kind == ReduceKind::l2)
      a = std::sqrt(a);
    else if (kind == ReduceKind::log_sum_exp)
      a = std::log(a) + maxes[out];
    if (isFloat)
      result.floats[out] = roundToFloat(a, element);
    else if (std::fabs(a) < 9.2e18)
      result.ints[out] = wrapToInteger(static_cast<int64_t>(a), element);
    else
      return std::nullopt;
  }
  return result;
}

} // namespace

Results evaluateStructural(Operation *op, ArrayRef<Literal> operands) {
  return llvm::TypeSwitch<Operation *, Results>(op)
      .Case<ReshapeOp, SqueezeOp, UnsqueezeOp, FlattenOp>([&](auto op) {
        return one(retype(operands[0], op.getType()));
      })
      .Case([&](ExpandOp op) { return one(expand(op.getType(), operands[0])); })
      .Case([&](TransposeOp op) { return one(transpose(op, operands[0])); })
      .Case([&](SliceOp op) { return one(slice(op, operands[0])); })
      .Case([&](GatherOp op) { return one(gather(op, operands[0], operands[1])); })
      .Case([&](ConcatOp op) { return one(concat(op, operands)); })
      .Case([&](SplitOp op) { return split(op, operands[0]); })
      .Case([&](TileOp op) { return one(tile(op, operands[0])); })
      .Case([&](RangeOp op) { return one(range(op, operands)); })
      .Case([&](ConstantOfShapeOp op) { return one(constantOfShape(op)); })
      .Case([&](ReduceOp op) { return one(reduce(op, operands[0])); })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace kiln::consteval
