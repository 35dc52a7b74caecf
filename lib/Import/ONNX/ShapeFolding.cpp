//===- ShapeFolding.cpp - Import-time evaluation of small integer ops -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Works on kiln ops (the handlers have already resolved ONNX defaults and
// normalized axes) whose operands are integer constants of at most
// kMaxElements elements. Floating-point values are never evaluated here, except
// that an integer constant cast to a float type becomes a float constant.
//
//===----------------------------------------------------------------------===//

#include "ShapeFolding.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace kiln::onnx_import {
namespace {

constexpr int64_t kMaxElements = 4096;

/// A small integer tensor: row-major values widened to int64.
struct IntTensor {
  SmallVector<int64_t> shape;
  SmallVector<int64_t> data;
};

std::optional<IntTensor> constantOf(Value value) {
  DenseIntElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  auto type = cast<RankedTensorType>(attr.getType());
  if (!type.hasStaticShape() || type.getNumElements() > kMaxElements)
    return std::nullopt;
  bool zeroExtend =
      type.getElementType().isUnsignedInteger() || type.getElementType().isInteger(1);
  IntTensor t{SmallVector<int64_t>(type.getShape()), {}};
  for (const APInt &v : attr.getValues<APInt>())
    t.data.push_back(zeroExtend ? static_cast<int64_t>(v.getZExtValue())
                                : v.getSExtValue());
  return t;
}

DenseElementsAttr toAttr(RankedTensorType type, ArrayRef<int64_t> data) {
  Type element = type.getElementType();
  if (element.isInteger(1)) {
    SmallVector<bool> bits;
    for (int64_t v : data)
      bits.push_back(v != 0);
    return DenseElementsAttr::get(type, bits);
  }
  unsigned width = element.getIntOrFloatBitWidth();
  SmallVector<APInt> values;
  for (int64_t v : data)
    values.push_back(APInt(width, static_cast<uint64_t>(v), /*isSigned=*/true,
                           /*implicitTrunc=*/true));
  return DenseElementsAttr::get(type, values);
}

SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// Flat index into `shape` (right-aligned against `out`, size-1 dims
/// broadcast) of the output element at multi-index `index`.
int64_t broadcastIndex(ArrayRef<int64_t> index, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides = stridesOf(shape);
  size_t offset = index.size() - shape.size();
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    flat += (shape[d] == 1 ? 0 : index[d + offset]) * strides[d];
  return flat;
}

/// Calls `fn` with each multi-index of `shape`, in row-major order, until it
/// returns false; false when it did.
template <typename Fn>
bool forEachIndex(ArrayRef<int64_t> shape, Fn fn) {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    if (!fn(ArrayRef<int64_t>(index)))
      return false;
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return true;
}

/// Evaluates `fn` over the broadcast of `operands` into `out`'s shape.
template <typename Fn>
std::optional<SmallVector<int64_t>> elementwise(ArrayRef<IntTensor> operands,
                                                ArrayRef<int64_t> out, Fn fn) {
  SmallVector<int64_t> result, args(operands.size());
  bool evaluated = forEachIndex(out, [&](ArrayRef<int64_t> index) {
    for (auto [i, t] : llvm::enumerate(operands))
      args[i] = t.data[broadcastIndex(index, t.shape)];
    std::optional<int64_t> v = fn(ArrayRef<int64_t>(args));
    if (v)
      result.push_back(*v);
    return v.has_value();
  });
  return evaluated ? std::optional(result) : std::nullopt;
}

std::optional<int64_t> binary(Operation *op, int64_t a, int64_t b) {
  return llvm::TypeSwitch<Operation *, std::optional<int64_t>>(op)
      .Case([&](kiln::AddOp) { return a + b; })
      .Case([&](kiln::SubOp) { return a - b; })
      .Case([&](kiln::MulOp) { return a * b; })
      .Case([&](kiln::DivOp) -> std::optional<int64_t> {
        if (b == 0 || (a == INT64_MIN && b == -1))
          return std::nullopt;
        return a / b; // ONNX integer Div truncates
      })
      .Case([&](kiln::ModOp mod) -> std::optional<int64_t> {
        if (b == 0 || (a == INT64_MIN && b == -1))
          return std::nullopt;
        // fmod truncates (the dividend's sign); ONNX's default floors (the
        // divisor's sign): Swin's pads are (7 - h % 7) % 7.
        int64_t r = a % b;
        return !mod.getFmod() && r != 0 && (r < 0) != (b < 0) ? r + b : r;
      })
      .Case([&](kiln::MaxOp) { return std::max(a, b); })
      .Case([&](kiln::MinOp) { return std::min(a, b); })
      .Case([&](kiln::EqualOp) { return int64_t(a == b); })
      .Case([&](kiln::LessOp) { return int64_t(a < b); })
      .Case([&](kiln::LessEqualOp) { return int64_t(a <= b); })
      .Case([&](kiln::GreaterOp) { return int64_t(a > b); })
      .Case([&](kiln::GreaterEqualOp) { return int64_t(a >= b); })
      // Bitwise, which is also the logical op on i1's 0 and 1 (4-bit
      // weights and zero points are unpacked with `and`).
      .Case([&](kiln::AndOp) { return a & b; })
      .Case([&](kiln::OrOp) { return a | b; })
      .Case([&](kiln::XorOp) { return a ^ b; })
      .Default([](Operation *) { return std::nullopt; });
}

/// ONNX Gather along `axis` with negative indices counted from the end.
std::optional<SmallVector<int64_t>> gather(const IntTensor &data,
                                           const IntTensor &indices, int64_t axis) {
  int64_t outer = 1, inner = 1, length = data.shape[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= data.shape[d];
  for (size_t d = axis + 1; d < data.shape.size(); ++d)
    inner *= data.shape[d];
  SmallVector<int64_t> result;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : indices.data) {
      if (i < -length || i >= length)
        return std::nullopt;
      int64_t row = i < 0 ? i + length : i;
      for (int64_t k = 0; k < inner; ++k)
        result.push_back(data.data[(o * length + row) * inner + k]);
    }
  return result;
}

/// A slice of any rank: along each sliced axis the output's i-th element is
/// the input's start + i * step, the start clamped as ONNX does (exporters
/// reverse a [pairs, 2] pads tensor with a step -1 slice).
std::optional<SmallVector<int64_t>> slice(kiln::SliceOp op, const IntTensor &t,
                                          ArrayRef<int64_t> out) {
  size_t rank = t.shape.size();
  if (out.size() != rank)
    return std::nullopt;
  SmallVector<int64_t> start(rank, 0), step(rank, 1);
  for (auto [axis, first, stride] : llvm::zip(op.getAxes(), op.getStarts(), op.getSteps())) {
    if (axis < 0 || axis >= static_cast<int64_t>(rank) || stride == 0)
      return std::nullopt;
    int64_t size = t.shape[axis], at = first < 0 ? first + size : first;
    start[axis] = stride > 0 ? std::clamp<int64_t>(at, 0, size)
                             : std::clamp<int64_t>(at, -1, size - 1);
    step[axis] = stride;
  }
  SmallVector<int64_t> strides = stridesOf(t.shape), result;
  bool inside = forEachIndex(out, [&](ArrayRef<int64_t> index) {
    int64_t flat = 0;
    for (size_t d = 0; d < rank; ++d) {
      int64_t at = start[d] + index[d] * step[d];
      if (at < 0 || at >= t.shape[d])
        return false;
      flat += at * strides[d];
    }
    result.push_back(t.data[flat]);
    return true;
  });
  return inside ? std::optional(result) : std::nullopt;
}

/// out[i0, .., in] = t[j] where j[perm[d]] = i[d].
std::optional<SmallVector<int64_t>> transpose(kiln::TransposeOp op, const IntTensor &t,
                                              ArrayRef<int64_t> out) {
  ArrayRef<int64_t> perm = op.getPerm();
  if (perm.size() != t.shape.size() || out.size() != perm.size())
    return std::nullopt;
  SmallVector<int64_t> strides = stridesOf(t.shape), result;
  forEachIndex(out, [&](ArrayRef<int64_t> index) {
    int64_t flat = 0;
    for (size_t d = 0; d < perm.size(); ++d)
      flat += index[d] * strides[perm[d]];
    result.push_back(t.data[flat]);
    return true;
  });
  return result;
}

std::optional<SmallVector<int64_t>> reduce(kiln::ReduceOp op, const IntTensor &t) {
  if (op.getKind() != ReduceKind::prod && op.getKind() != ReduceKind::sum)
    return std::nullopt;
  // Shape arithmetic reduces 1-D tensors (the product of some dims).
  if (t.shape.size() != 1)
    return std::nullopt;
  bool product = op.getKind() == ReduceKind::prod;
  int64_t acc = product ? 1 : 0;
  for (int64_t v : t.data)
    if (product ? llvm::MulOverflow(acc, v, acc) : llvm::AddOverflow(acc, v, acc))
      return std::nullopt;
  return SmallVector<int64_t>{acc};
}

std::optional<SmallVector<int64_t>> evaluate(Operation *op,
                                             ArrayRef<IntTensor> args,
                                             RankedTensorType type) {
  ArrayRef<int64_t> out = type.getShape();
  if (isa<kiln::ReshapeOp, kiln::UnsqueezeOp, kiln::SqueezeOp, kiln::FlattenOp>(op))
    return args.front().data;
  if (isa<kiln::ExpandOp>(op))
    return elementwise(args.take_front(), out,
                       [](ArrayRef<int64_t> a) { return a[0]; });
  if (auto cast = dyn_cast<kiln::CastOp>(op)) {
    if (!isa<IntegerType>(getElementTypeOrSelf(cast.getInput())))
      return std::nullopt;
    return args.front().data; // truncation happens in toAttr
  }
  if (isa<kiln::NegOp>(op))
    return elementwise(args, out, [](ArrayRef<int64_t> a) { return -a[0]; });
  if (isa<kiln::NotOp>(op))
    return elementwise(args, out, [](ArrayRef<int64_t> a) { return int64_t(!a[0]); });
  if (isa<kiln::SelectOp>(op))
    return elementwise(args, out,
                       [](ArrayRef<int64_t> a) { return a[0] ? a[1] : a[2]; });
  if (auto gatherOp = dyn_cast<kiln::GatherOp>(op))
    return gather(args[0], args[1], gatherOp.getAxis());
  if (auto concat = dyn_cast<kiln::ConcatOp>(op)) {
    if (out.size() != 1)
      return std::nullopt;
    SmallVector<int64_t> result;
    for (const IntTensor &t : args)
      llvm::append_range(result, t.data);
    return result;
  }
  if (auto sliceOp = dyn_cast<kiln::SliceOp>(op))
    return slice(sliceOp, args.front(), out);
  if (auto transposeOp = dyn_cast<kiln::TransposeOp>(op))
    return transpose(transposeOp, args.front(), out);
  if (auto reduceOp = dyn_cast<kiln::ReduceOp>(op))
    return reduce(reduceOp, args.front());
  if (isa<kiln::RangeOp>(op)) {
    // start, start + delta, ...: the result type already holds the length.
    if (out.size() != 1 || llvm::any_of(args, [](const IntTensor &t) {
          return t.data.size() != 1;
        }))
      return std::nullopt;
    SmallVector<int64_t> result;
    int64_t value = args[0].data[0], delta = args[2].data[0];
    for (int64_t i = 0; i < out[0]; ++i) {
      result.push_back(value);
      if (llvm::AddOverflow(value, delta, value) && i + 1 < out[0])
        return std::nullopt;
    }
    return result;
  }
  if (args.size() == 2)
    return elementwise(args, out, [&](ArrayRef<int64_t> a) {
      return binary(op, a[0], a[1]);
    });
  return std::nullopt;
}

} // namespace

/// An integer constant cast to a float type (ONNX function bodies turn sizes
/// into floats this way, e.g. the window functions' Range limits). The
/// conversion rounds to nearest, like the generated code's sitofp.
DenseElementsAttr integerToFloat(kiln::CastOp op, RankedTensorType type) {
  auto element = dyn_cast<FloatType>(type.getElementType());
  // Floats of 8 bits or fewer round and saturate by kiln.cast's own rules.
  if (!element || element.getWidth() <= 8 || !isa<IntegerType>(getElementTypeOrSelf(op.getInput())) ||
      getElementTypeOrSelf(op.getInput()).isUnsignedInteger())
    return {};
  std::optional<IntTensor> t = constantOf(op.getInput());
  if (!t)
    return {};
  SmallVector<APFloat> values;
  for (int64_t v : t->data) {
    APFloat f(element.getFloatSemantics());
    f.convertFromAPInt(APInt(64, static_cast<uint64_t>(v), /*isSigned=*/true),
                       /*IsSigned=*/true, APFloat::rmNearestTiesToEven);
    values.push_back(f);
  }
  return DenseElementsAttr::get(type, values);
}

DenseElementsAttr evaluateIntegerOp(Operation *op) {
  if (op->getNumResults() != 1 || !isa<kiln::KilnDialect>(op->getDialect()) ||
      isa<kiln::ConstantOp>(op))
    return {};
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (auto castOp = dyn_cast<kiln::CastOp>(op);
      castOp && type && type.hasStaticShape() && type.getNumElements() <= kMaxElements &&
      isa<FloatType>(type.getElementType()))
    return integerToFloat(castOp, type);
  if (!type || !type.hasStaticShape() || type.getNumElements() > kMaxElements ||
      !isa<IntegerType>(type.getElementType()))
    return {};
  SmallVector<IntTensor> args;
  for (Value operand : op->getOperands()) {
    std::optional<IntTensor> t = constantOf(operand);
    if (!t)
      return {};
    args.push_back(std::move(*t));
  }
  if (args.empty())
    return {};
  std::optional<SmallVector<int64_t>> data = evaluate(op, args, type);
  if (!data || static_cast<int64_t>(data->size()) != type.getNumElements())
    return {};
  return toAttr(type, *data);
}

} // namespace kiln::onnx_import
