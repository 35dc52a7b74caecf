//===- KilnShapeOps.cpp - Type inference for data movement and indexing ops ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

using namespace mlir;

namespace kiln {

static constexpr int64_t kDyn = ShapedType::kDynamic;

static LogicalResult requireRanked(std::optional<Location> loc, Type type) {
  if (asRanked(type))
    return success();
  return emitInferenceError(loc, "expected a ranked tensor operand");
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return inferBroadcastResult(loc,
                              {adaptor.getCondition().getType(),
                               adaptor.getOnTrue().getType(),
                               adaptor.getOnFalse().getType()},
                              Type(), types);
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto input = asRanked(adaptor.getInput().getType());
  if (failed(requireRanked(loc, input)))
    return failure();
  ArrayRef<int64_t> perm = adaptor.getPerm();
  if (static_cast<int64_t>(perm.size()) != input.getRank())
    return emitInferenceError(loc, "'perm' has " + Twine(perm.size()) +
                                       " entries, expected " +
                                       Twine(input.getRank()));
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= input.getRank() || seen[p])
      return emitInferenceError(loc, "'perm' is not a permutation of [0, " +
                                         Twine(input.getRank() - 1) + "]");
    seen[p] = true;
    shape.push_back(input.getDimSize(p));
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return emitInferenceError(loc, "requires at least one input");
  auto first = asRanked(inputs.front().getType());
  if (failed(requireRanked(loc, first)))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(loc, "axis", adaptor.getAxis(), first.getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  shape[*axis] = 0;
  for (auto [index, value] : llvm::enumerate(inputs)) {
    auto type = asRanked(value.getType());
    if (!type || type.getRank() != first.getRank())
      return emitInferenceError(loc, "input " + Twine(index) +
                                         " has a different rank than input 0");
    for (int64_t d = 0; d < first.getRank(); ++d) {
      int64_t size = type.getDimSize(d);
      if (d == *axis) {
        std::optional<int64_t> sum =
            (ShapedType::isDynamic(shape[d]) || ShapedType::isDynamic(size))
                ? kDyn
                : CheckedI64(shape[d]).add(size).get();
        if (!sum)
          return emitInferenceError(loc, "concatenated dim " + Twine(d) +
                                             " overflows int64");
        shape[d] = *sum;
      } else if (ShapedType::isDynamic(shape[d])) {
        shape[d] = size;
      } else if (!ShapedType::isDynamic(size) && size != shape[d]) {
        return emitInferenceError(loc, "input " + Twine(index) + " dim " +
                                           Twine(d) + " is " + Twine(size) +
                                           ", expected " + Twine(shape[d]));
      }
    }
  }
  types.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult KVCacheUpdateOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  auto cache = asRanked(adaptor.getCache().getType());
  auto update = asRanked(adaptor.getUpdate().getType());
  if (failed(requireRanked(loc, cache)) || failed(requireRanked(loc, update)))
    return failure();
  if (update.getRank() != cache.getRank())
    return emitInferenceError(loc, "update has rank " + Twine(update.getRank()) +
                                       ", the cache " + Twine(cache.getRank()));
  FailureOr<int64_t> axis = normalizeAxis(loc, "axis", adaptor.getAxis(), cache.getRank());
  if (failed(axis))
    return failure();
  int64_t length = cache.getDimSize(*axis);
  if (ShapedType::isDynamic(length))
    return emitInferenceError(loc, "the cache's dim " + Twine(*axis) +
                                       " (its length) must be static");
  SmallVector<int64_t> shape(cache.getShape());
  for (int64_t d = 0; d < cache.getRank(); ++d) {
    int64_t size = update.getDimSize(d);
    if (d == *axis) {
      if (!ShapedType::isDynamic(size) && size > length)
        return emitInferenceError(loc, "update has " + Twine(size) +
                                           " rows, more than the cache's " + Twine(length));
    } else if (ShapedType::isDynamic(shape[d])) {
      shape[d] = size;
    } else if (!ShapedType::isDynamic(size) && size != shape[d]) {
      return emitInferenceError(loc, "update dim " + Twine(d) + " is " + Twine(size) +
                                         ", the cache's " + Twine(shape[d]));
    }
  }
  Type element = cache.getElementType();
  types.push_back(RankedTensorType::get(shape, element));
  shape[*axis] = kDyn;
  types.push_back(RankedTensorType::get(shape, element));
  types.push_back(RankedTensorType::get(shape, element));
  return success();
}

LogicalResult KVCacheWriteOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &types) {
  auto cache = asRanked(adaptor.getCache().getType());
  auto update = asRanked(adaptor.getUpdate().getType());
  auto positions = asRanked(adaptor.getPositions().getType());
  if (failed(requireRanked(loc, cache)) || failed(requireRanked(loc, update)) ||
      failed(requireRanked(loc, positions)))
    return failure();
  if (update.getRank() != cache.getRank() || cache.getRank() < 2)
    return emitInferenceError(loc, "update has rank " + Twine(update.getRank()) + ", the cache " +
                                       Twine(cache.getRank()) + "; expected equal ranks >= 2");
  FailureOr<int64_t> axis = normalizeAxis(loc, "axis", adaptor.getAxis(), cache.getRank());
  if (failed(axis))
    return failure();
  if (*axis == 0)
    return emitInferenceError(loc, "axis 0 is the batch; the rows lie along another axis");
  if (ShapedType::isDynamic(cache.getDimSize(*axis)))
    return emitInferenceError(loc, "the cache's dim " + Twine(*axis) +
                                       " (its length) must be static");
  if (update.getDimSize(*axis) != 1)
    return emitInferenceError(loc, "update has " +
                                       (update.isDynamicDim(*axis)
                                            ? Twine("?")
                                            : Twine(update.getDimSize(*axis))) +
                                       " rows along the axis; expected 1 per sequence");
  SmallVector<int64_t> shape(cache.getShape());
  for (int64_t d = 0; d < cache.getRank(); ++d) {
    int64_t size = update.getDimSize(d);
    if (d == *axis)
      continue;
    if (ShapedType::isDynamic(shape[d]))
      shape[d] = size;
    else if (!ShapedType::isDynamic(size) && size != shape[d])
      return emitInferenceError(loc, "update dim " + Twine(d) + " is " + Twine(size) +
                                         ", the cache's " + Twine(shape[d]));
  }
  if (positions.getRank() != 2 ||
      (!positions.isDynamicDim(1) && positions.getDimSize(1) != 1) ||
      (!positions.isDynamicDim(0) && !ShapedType::isDynamic(shape[0]) &&
       positions.getDimSize(0) != shape[0]))
    return emitInferenceError(loc, "positions must be [batch, 1] (one row per sequence)");
  types.push_back(RankedTensorType::get(shape, cache.getElementType()));
  return success();
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  auto input = asRanked(adaptor.getInput().getType());
  if (failed(requireRanked(loc, input)))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(loc, "axis", adaptor.getAxis(), input.getRank());
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> sizes = adaptor.getSizes();
  if (sizes.empty())
    return emitInferenceError(loc, "'sizes' must not be empty");
  CheckedI64 sum(0);
  for (int64_t size : sizes) {
    if (size < 0)
      return emitInferenceError(loc, "'sizes' value is " + Twine(size) +
                                         ", accepted range is [0, inf)");
    sum.add(size);
  }
  std::optional<int64_t> checkedTotal = sum.get();
  if (!checkedTotal)
    return emitInferenceError(loc, "'sizes' add up to more than 2^63 - 1");
  int64_t total = *checkedTotal;
  int64_t length = input.getDimSize(*axis);
  if (!ShapedType::isDynamic(length) && total != length)
    return emitInferenceError(loc, "'sizes' add up to " + Twine(total) +
                                       ", expected the axis length " +
                                       Twine(length));
  for (int64_t size : sizes) {
    SmallVector<int64_t> shape(input.getShape());
    shape[*axis] = size;
    types.push_back(RankedTensorType::get(shape, input.getElementType()));
  }
  return success();
}

/// Python slice length of `start:end:step` on a dim of `size` (ONNX clamping).
static int64_t sliceLength(int64_t size, int64_t start, int64_t end, int64_t step) {
  auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0)
      v = v < -size ? -1 : v + size; // saturates large negatives
    return std::min(std::max(v, lo), hi);
  };
  // ceil(distance / |step|) as (distance - 1) / |step| + 1: no intermediate
  // overflows for steps near +-2^63 (|INT64_MIN| is taken as unsigned).
  if (step > 0) {
    int64_t s = clamp(start, 0, size), e = clamp(end, 0, size);
    return e > s ? (e - s - 1) / step + 1 : 0;
  }
  int64_t s = clamp(start, -1, size - 1), e = clamp(end, -1, size - 1);
  if (end < -size)
    e = -1;
  uint64_t magnitude = 0 - static_cast<uint64_t>(step);
  return s > e ? static_cast<int64_t>(static_cast<uint64_t>(s - e - 1) / magnitude) + 1
               : 0;
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  auto input = asRanked(adaptor.getInput().getType());
  if (failed(requireRanked(loc, input)))
    return failure();
  ArrayRef<int64_t> starts = adaptor.getStarts(), ends = adaptor.getEnds();
  ArrayRef<int64_t> steps = adaptor.getSteps();
  if (starts.size() != ends.size() || starts.size() != adaptor.getAxes().size() ||
      starts.size() != steps.size())
    return emitInferenceError(loc, "'starts', 'ends', 'axes' and 'steps' must "
                                   "have the same length");
  FailureOr<SmallVector<int64_t>> axes =
      normalizeAxes(loc, "axes", adaptor.getAxes(), input.getRank());
  if (failed(axes))
    return failure();
  SmallVector<int64_t> shape(input.getShape());
  for (auto [i, axis] : llvm::enumerate(*axes)) {
    if (steps[i] == 0)
      return emitInferenceError(loc, "'steps' value is 0 (entry " + Twine(i) +
                                         "), accepted: any nonzero value");
    if (!ShapedType::isDynamic(shape[axis]))
      shape[axis] = sliceLength(shape[axis], starts[i], ends[i], steps[i]);
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto input = asRanked(adaptor.getInput().getType());
  auto indices = asRanked(adaptor.getIndices().getType());
  if (!input || !indices || input.getRank() == 0)
    return emitInferenceError(loc, "input must be a tensor of rank >= 1");
  FailureOr<int64_t> axis =
      normalizeAxis(loc, "axis", adaptor.getAxis(), input.getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(input.getShape().take_front(*axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, input.getShape().drop_front(*axis + 1));
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult GatherElementsOp::inferReturnTypes(MLIRContext *,
                                                 std::optional<Location> loc,
                                                 Adaptor adaptor,
                                                 SmallVectorImpl<Type> &types) {
  auto input = asRanked(adaptor.getInput().getType());
  auto indices = asRanked(adaptor.getIndices().getType());
  if (!input || !indices || input.getRank() != indices.getRank())
    return emitInferenceError(loc, "input and indices must have the same rank");
  if (failed(normalizeAxis(loc, "axis", adaptor.getAxis(), input.getRank())))
    return failure();
  types.push_back(RankedTensorType::get(indices.getShape(), input.getElementType()));
  return success();
}

LogicalResult GatherNDOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  auto input = asRanked(adaptor.getInput().getType());
  auto indices = asRanked(adaptor.getIndices().getType());
  if (!input || !indices || indices.getRank() < 1)
    return emitInferenceError(loc, "indices must have rank >= 1");
  int64_t batchDims = static_cast<int64_t>(adaptor.getBatchDims());
  int64_t k = indices.getShape().back();
  if (batchDims < 0 || batchDims >= indices.getRank() || batchDims >= input.getRank())
    return emitInferenceError(loc, "'batch_dims' value is " + Twine(batchDims) +
                                       ", accepted range is [0, " +
                                       Twine(std::min(indices.getRank(), input.getRank()) - 1) +
                                       "]");
  if (ShapedType::isDynamic(k))
    return emitInferenceError(loc, "the last dim of indices (the tuple length) must be static");
  if (k < 1 || batchDims + k > input.getRank())
    return emitInferenceError(loc, "index tuples have " + Twine(k) +
                                       " coordinates, accepted range is [1, " +
                                       Twine(input.getRank() - batchDims) + "]");
  SmallVector<int64_t> shape(indices.getShape().drop_back());
  llvm::append_range(shape, input.getShape().drop_front(batchDims + k));
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult ScatterElementsOp::inferReturnTypes(MLIRContext *,
                                                  std::optional<Location> loc,
                                                  Adaptor adaptor,
                                                  SmallVectorImpl<Type> &types) {
  auto input = asRanked(adaptor.getInput().getType());
  auto indices = asRanked(adaptor.getIndices().getType());
  auto updates = asRanked(adaptor.getUpdates().getType());
  if (!input || !indices || !updates || input.getRank() != indices.getRank() ||
      failed(verifyCompatibleShape(indices, updates)))
    return emitInferenceError(loc, "indices and updates must have the same "
                                   "shape and the input's rank");
  if (failed(normalizeAxis(loc, "axis", adaptor.getAxis(), input.getRank())))
    return failure();
  types.push_back(input);
  return success();
}

LogicalResult SqueezeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto input = asRanked(adaptor.getInput().getType());
  if (failed(requireRanked(loc, input)))
    return failure();
  FailureOr<SmallVector<int64_t>> axes =
      normalizeAxes(loc, "axes", adaptor.getAxes(), input.getRank());
  if (failed(axes))
    return failure();
  SmallVector<int64_t> shape;
  for (auto [i, d] : llvm::enumerate(input.getShape())) {
    bool listed = llvm::is_contained(*axes, static_cast<int64_t>(i));
    if (listed && !ShapedType::isDynamic(d) && d != 1)
      return emitInferenceError(loc, "cannot squeeze dim " + Twine(i) +
                                         " of size " + Twine(d) +
                                         " (only size-1 dims)");
    if (axes->empty() && ShapedType::isDynamic(d))
      return emitInferenceError(loc, "squeezing all size-1 dims needs static "
                                     "dims; dim " + Twine(i) + " is dynamic");
    bool drop = listed || (axes->empty() && d == 1);
    if (!drop)
      shape.push_back(d);
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult UnsqueezeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto input = asRanked(adaptor.getInput().getType());
  if (failed(requireRanked(loc, input)))
    return failure();
  int64_t rank = input.getRank() + adaptor.getAxes().size();
  FailureOr<SmallVector<int64_t>> axes =
      normalizeAxes(loc, "axes", adaptor.getAxes(), rank);
  if (failed(axes))
    return failure();
  SmallVector<int64_t> shape;
  auto next = input.getShape().begin();
  for (int64_t i = 0; i < rank; ++i)
    shape.push_back(llvm::is_contained(*axes, i) ? 1 : *next++);
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult FlattenOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto input = asRanked(adaptor.getInput().getType());
  if (failed(requireRanked(loc, input)))
    return failure();
  // Flatten's axis ranges over [-rank, rank]: axis == rank gives [N, 1].
  int64_t rank = input.getRank(), axis = adaptor.getAxis();
  if (axis < -rank || axis > rank)
    return emitInferenceError(loc, "'axis' value is " + Twine(axis) +
                                       ", accepted range is [" + Twine(-rank) +
                                       ", " + Twine(rank) + "]");
  if (axis < 0)
    axis += rank;
  SmallVector<int64_t, 2> shape;
  for (ArrayRef<int64_t> dims :
       {input.getShape().take_front(axis), input.getShape().drop_front(axis)}) {
    std::optional<int64_t> count = staticElementCount(dims);
    if (!count && !llvm::any_of(dims, ShapedType::isDynamic))
      return emitInferenceError(loc, "flattened dim " + Twine(shape.size()) +
                                         " has more than 2^63 - 1 elements");
    shape.push_back(count ? *count : kDyn);
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  auto input = asRanked(adaptor.getInput().getType());
  if (failed(requireRanked(loc, input)))
    return failure();
  ArrayRef<int64_t> pads = adaptor.getPads();
  int64_t rank = input.getRank();
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    return emitInferenceError(loc, "'pads' has " + Twine(pads.size()) +
                                       " entries, expected " + Twine(2 * rank));
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t d = input.getDimSize(i);
    if (ShapedType::isDynamic(d)) {
      shape.push_back(kDyn);
      continue;
    }
    std::optional<int64_t> out =
        CheckedI64(d).add(pads[i]).add(pads[i + rank]).get();
    if (!out)
      return emitInferenceError(loc, "dim " + Twine(i) +
                                         ": padded size overflows int64");
    if (*out < 0)
      return emitInferenceError(loc, "dim " + Twine(i) + " would have size " +
                                         Twine(*out) + " after padding");
    shape.push_back(*out);
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult TileOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  auto input = asRanked(adaptor.getInput().getType());
  if (failed(requireRanked(loc, input)))
    return failure();
  ArrayRef<int64_t> repeats = adaptor.getRepeats();
  if (static_cast<int64_t>(repeats.size()) != input.getRank())
    return emitInferenceError(loc, "'repeats' has " + Twine(repeats.size()) +
                                       " entries, expected " +
                                       Twine(input.getRank()));
  SmallVector<int64_t> shape;
  for (auto [d, r] : llvm::zip(input.getShape(), repeats)) {
    if (r < 0)
      return emitInferenceError(loc, "'repeats' value is " + Twine(r) +
                                         ", accepted range is [0, inf)");
    int64_t out;
    if (ShapedType::isDynamic(d))
      out = kDyn;
    else if (llvm::MulOverflow(d, r, out))
      return emitInferenceError(loc, "tiled dim overflows int64");
    shape.push_back(out);
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

/// Dims `[start, end)` of a rank-`rank` tensor with Python slice clamping.
static std::pair<int64_t, int64_t> shapeRange(int64_t rank,
                                              std::optional<int64_t> start,
                                              std::optional<int64_t> end) {
  auto clamp = [&](int64_t v) {
    if (v < 0)
      v += rank;
    return std::min(std::max<int64_t>(v, 0), rank);
  };
  int64_t s = clamp(start.value_or(0)), e = clamp(end.value_or(rank));
  return {s, std::max(s, e)};
}

LogicalResult ShapeOp::inferReturnTypes(MLIRContext *context,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  auto input = asRanked(adaptor.getInput().getType());
  if (failed(requireRanked(loc, input)))
    return failure();
  auto [start, end] =
      shapeRange(input.getRank(), adaptor.getStart(), adaptor.getEnd());
  types.push_back(
      RankedTensorType::get({end - start}, IntegerType::get(context, 64)));
  return success();
}

LogicalResult SizeOp::inferReturnTypes(MLIRContext *context,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  if (failed(requireRanked(loc, adaptor.getInput().getType())))
    return failure();
  types.push_back(RankedTensorType::get({}, IntegerType::get(context, 64)));
  return success();
}

LogicalResult OneHotOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto indices = asRanked(adaptor.getIndices().getType());
  auto values = asRanked(adaptor.getValues().getType());
  if (!indices || !values)
    return emitInferenceError(loc, "expected ranked tensor operands");
  if (values.getRank() != 1 || (values.getDimSize(0) != 2 && !ShapedType::isDynamic(values.getDimSize(0))))
    return emitInferenceError(loc, "'values' must be a 2-element 1-D tensor "
                                   "[off, on]");
  if (adaptor.getDepth() < 1)
    return emitInferenceError(loc, "'depth' value is " + Twine(adaptor.getDepth()) +
                                       ", accepted range is [1, inf)");
  FailureOr<int64_t> axis =
      normalizeAxis(loc, "axis", adaptor.getAxis(), indices.getRank() + 1);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(indices.getShape());
  shape.insert(shape.begin() + *axis, adaptor.getDepth());
  types.push_back(RankedTensorType::get(shape, values.getElementType()));
  return success();
}

} // namespace kiln
