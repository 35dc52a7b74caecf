//===- DynamicSlice.cpp - ONNX Slice with bounds computed by the graph ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// kiln.slice takes its bounds as attributes. Exports with dynamic axes slice
// buffers to a run-time length (Hugging Face's position_ids[:, :seq], GPT-2's
// causal mask bias[:, :, :seq, :seq]): there the bounds are Shape chains of a
// symbolic dim. Such a Slice becomes, per axis, the ONNX-clamped bounds as
// i64 scalars, a kiln.range of the positions and a kiln.gather of them.
//
//===----------------------------------------------------------------------===//

#include "DynamicSlice.h"

#include "kiln/Dialect/Kiln/IR/ShapeUtils.h"

using namespace mlir;

namespace kiln::onnx_import {
namespace {

bool isNull(Value value) { return !value; }
template <typename T>
bool isNull(const T &) {
  return false;
}

/// Builds the scalar i64 arithmetic of one Slice; the first failure sticks
/// and every later step returns null.
class BoundBuilder {
public:
  explicit BoundBuilder(NodeBinder &b) : b(b), i64(b.builder().getI64Type()) {}

  bool failed() const { return hasFailed; }

  template <typename OpTy, typename... Args>
  Value make(Args... args) {
    if (hasFailed || (isNull(args) || ...))
      return fail();
    FailureOr<Value> out = b.make<OpTy>(args...);
    return mlir::failed(out) ? fail() : *out;
  }

  /// Entry `i` of a 1-D integer tensor, as a rank-0 i64 tensor.
  Value entry(Value vector, int64_t i) {
    Value value = make<kiln::GatherOp>(vector, b.scalar(i64, i), static_cast<uint64_t>(0));
    if (!value || cast<RankedTensorType>(value.getType()).getElementType() == i64)
      return value;
    FailureOr<Value> wide =
        b.makeTyped<kiln::CastOp>(RankedTensorType::get({}, i64), value);
    return mlir::failed(wide) ? fail() : *wide;
  }

  /// dim `axis` of x, as a rank-0 i64 tensor.
  Value dim(Value x, int64_t axis) {
    FailureOr<Value> shape = b.make<kiln::ShapeOp>(x, IntegerAttr(), IntegerAttr());
    return mlir::failed(shape) ? fail() : entry(*shape, axis);
  }

  /// ONNX's bound for a positive step: negative counts from the end, then
  /// clamped to [0, dim].
  Value clamp(Value bound, Value size) {
    Value negative = make<kiln::LessOp>(bound, b.scalar(i64, 0));
    Value wrapped = make<kiln::SelectOp>(negative, make<kiln::AddOp>(bound, size), bound);
    return make<kiln::MinOp>(make<kiln::MaxOp>(wrapped, b.scalar(i64, 0)), size);
  }

  Value range(Value start, Value end, int64_t step) {
    if (hasFailed || !start || !end)
      return fail();
    FailureOr<Value> out = b.makeTyped<kiln::RangeOp>(
        RankedTensorType::get({ShapedType::kDynamic}, i64), start, end, b.scalar(i64, step));
    return mlir::failed(out) ? fail() : *out;
  }

private:
  Value fail() {
    hasFailed = true;
    return {};
  }

  NodeBinder &b;
  Type i64;
  bool hasFailed = false;
};

/// The constant list of input `index` (or 0..n-1 / all ones when absent).
FailureOr<SmallVector<int64_t>> constantList(NodeBinder &b, unsigned index, StringRef what,
                                             SmallVector<int64_t> fallback) {
  if (!b.hasInput(index))
    return fallback;
  return b.requireConstantInts(index, what);
}
} // namespace

bool hasComputedSliceBounds(NodeBinder &b) {
  return b.opset() >= 10 && ((b.hasInput(1) && !b.constantInts(1)) ||
                             (b.hasInput(2) && !b.constantInts(2)));
}

LogicalResult importDynamicSlice(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), starts = b.input(1), ends = b.input(2);
  if (failed(x) || failed(starts) || failed(ends))
    return failure();
  auto startsType = cast<RankedTensorType>(starts->getType());
  auto endsType = cast<RankedTensorType>(ends->getType());
  if (startsType.getRank() != 1 || !startsType.hasStaticShape() || endsType != startsType)
    return b.unsupported("Slice with computed 'starts'/'ends' needs both to be 1-D "
                         "tensors of one static length");
  int64_t n = startsType.getDimSize(0);
  FailureOr<SmallVector<int64_t>> axes =
      constantList(b, 3, "'axes'", llvm::to_vector(llvm::seq<int64_t>(0, n)));
  FailureOr<SmallVector<int64_t>> steps =
      constantList(b, 4, "'steps'", SmallVector<int64_t>(n, 1));
  if (failed(axes) || failed(steps))
    return failure();
  if (static_cast<int64_t>(axes->size()) != n || static_cast<int64_t>(steps->size()) != n)
    return b.emitError() << "'starts', 'ends', 'axes' and 'steps' have different lengths";
  int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
  FailureOr<SmallVector<int64_t>> normalized = kiln::normalizeAxes(b.loc(), "axes", *axes, rank);
  if (failed(normalized))
    return failure();
  BoundBuilder bounds(b);
  Value result = *x;
  for (int64_t i = 0; i < n; ++i) {
    if ((*steps)[i] <= 0)
      return b.unsupported("Slice with computed 'starts'/'ends' and step " +
                           Twine((*steps)[i]) + " (only positive steps are supported)");
    int64_t axis = (*normalized)[i];
    Value size = bounds.dim(result, axis);
    Value first = bounds.clamp(bounds.entry(*starts, i), size);
    Value last = bounds.clamp(bounds.entry(*ends, i), size);
    Value positions = bounds.range(first, last, (*steps)[i]);
    result = bounds.make<kiln::GatherOp>(result, positions, static_cast<uint64_t>(axis));
  }
  return bounds.failed() ? failure() : b.setOutput(0, result);
}

} // namespace kiln::onnx_import
