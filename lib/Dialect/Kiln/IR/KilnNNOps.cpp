//===- KilnNNOps.cpp - Type inference for contractions, conv, pooling, reductions -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===------------------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace kiln {

static constexpr int64_t kDyn = ShapedType::kDynamic;

/// Two dims that must agree: fine when either is dynamic.
static bool dimsAgree(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto lhs = asRanked(adaptor.getLhs().getType());
  auto rhs = asRanked(adaptor.getRhs().getType());
  if (!lhs || !rhs)
    return emitInferenceError(loc, "expected ranked tensor operands");
  if (lhs.getRank() == 0 || rhs.getRank() == 0)
    return emitInferenceError(loc, "operands must have rank >= 1, got ranks " +
                                       Twine(lhs.getRank()) + " and " +
                                       Twine(rhs.getRank()));
  // i16 operands are an integer matmul (kiln-recognize-integer-matmul):
  // exact i16 x i16 products summed in i32, lhs [..., M, K] and rhs [K, N].
  Type element = lhs.getElementType();
  if (element.isInteger(16)) {
    if (lhs.getRank() < 2 || rhs.getRank() != 2)
      return emitInferenceError(loc, "an i16 (integer) matmul needs lhs [..., M, K] and rhs "
                                     "[K, N], got ranks " +
                                         Twine(lhs.getRank()) + " and " + Twine(rhs.getRank()));
    element = IntegerType::get(lhs.getContext(), 32);
  }
  // Promote 1-D operands to matrices; the inserted dim is dropped at the end.
  SmallVector<int64_t> a(lhs.getShape()), b(rhs.getShape());
  bool rowVector = a.size() == 1, columnVector = b.size() == 1;
  if (rowVector)
    a.insert(a.begin(), 1);
  if (columnVector)
    b.push_back(1);
  int64_t k = a.back(), kb = b[b.size() - 2];
  if (!dimsAgree(k, kb))
    return emitInferenceError(loc, "contraction dims differ: lhs has " +
                                       Twine(k) + ", rhs has " + Twine(kb));
  FailureOr<SmallVector<int64_t>> batch = broadcastShapes(
      loc, {ArrayRef(a).drop_back(2), ArrayRef(b).drop_back(2)});
  if (failed(batch))
    return failure();
  SmallVector<int64_t> shape = *batch;
  if (!rowVector)
    shape.push_back(a[a.size() - 2]);
  if (!columnVector)
    shape.push_back(b.back());
  types.push_back(RankedTensorType::get(shape, element));
  return success();
}

LogicalResult GemmOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  auto a = asRanked(adaptor.getA().getType());
  auto b = asRanked(adaptor.getB().getType());
  if (!a || !b || a.getRank() != 2 || b.getRank() != 2)
    return emitInferenceError(loc, "'a' and 'b' must be 2-D tensors");
  int64_t m = a.getDimSize(adaptor.getTransA() ? 1 : 0);
  int64_t ka = a.getDimSize(adaptor.getTransA() ? 0 : 1);
  int64_t kb = b.getDimSize(adaptor.getTransB() ? 1 : 0);
  int64_t n = b.getDimSize(adaptor.getTransB() ? 0 : 1);
  if (!dimsAgree(ka, kb))
    return emitInferenceError(loc, "contraction dims differ: op(a) has " +
                                       Twine(ka) + " columns, op(b) has " +
                                       Twine(kb) + " rows");
  SmallVector<int64_t> shape = {m, n};
  if (Value c = adaptor.getC()) {
    auto cType = asRanked(c.getType());
    if (!cType || cType.getRank() > 2)
      return emitInferenceError(loc, "'c' must have rank <= 2");
    FailureOr<SmallVector<int64_t>> merged =
        broadcastShapes(loc, {ArrayRef<int64_t>(shape), cType.getShape()});
    if (failed(merged))
      return failure();
    if (!areRefinedTypes(RankedTensorType::get(*merged, a.getElementType()),
                         RankedTensorType::get(shape, a.getElementType())) &&
        !llvm::any_of(shape, ShapedType::isDynamic))
      return emitInferenceError(loc, "'c' does not broadcast to [M, N]");
  }
  types.push_back(RankedTensorType::get(shape, a.getElementType()));
  return success();
}

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto q = asRanked(adaptor.getQuery().getType());
  auto k = asRanked(adaptor.getKey().getType());
  auto v = asRanked(adaptor.getValue().getType());
  if (!q || !k || !v || q.getRank() < 2 || k.getRank() < 2 || v.getRank() < 2)
    return emitInferenceError(loc, "query, key and value must have rank >= 2");
  int64_t d = q.getShape().back(), dk = k.getShape().back();
  if (!dimsAgree(d, dk))
    return emitInferenceError(loc, "query head dim " + Twine(d) +
                                       " differs from key head dim " + Twine(dk));
  int64_t sk = k.getShape()[k.getRank() - 2], sv = v.getShape()[v.getRank() - 2];
  if (!dimsAgree(sk, sv))
    return emitInferenceError(loc, "key length " + Twine(sk) +
                                       " differs from value length " + Twine(sv));
  FailureOr<SmallVector<int64_t>> batch =
      broadcastShapes(loc, {q.getShape().drop_back(2), k.getShape().drop_back(2),
                            v.getShape().drop_back(2)});
  if (failed(batch))
    return failure();
  int64_t sq = q.getShape()[q.getRank() - 2];
  if (Value mask = adaptor.getMask()) {
    auto maskType = asRanked(mask.getType());
    SmallVector<int64_t> scores(*batch);
    scores.append({sq, sk});
    if (!maskType || failed(broadcastShapes(loc, {ArrayRef<int64_t>(scores),
                                                  maskType.getShape()})))
      return failure();
  }
  if (auto scale = adaptor.getScaleAttr(); scale && !(scale.getValueAsDouble() > 0))
    return emitInferenceError(loc, "'scale' value is " +
                                       llvm::formatv("{0}", scale.getValueAsDouble()) +
                                       ", accepted range is (0, inf)");
  SmallVector<int64_t> shape(*batch);
  shape.append({sq, v.getShape().back()});
  types.push_back(RankedTensorType::get(shape, q.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// Window parameters shared by conv, conv_transpose and pooling: checks the
/// lengths and ranges of strides/dilations/pads for `spatial` dims.
static LogicalResult checkWindow(std::optional<Location> loc, int64_t spatial,
                                 ArrayRef<int64_t> strides,
                                 ArrayRef<int64_t> dilations,
                                 ArrayRef<int64_t> pads) {
  auto checkLength = [&](StringRef name, ArrayRef<int64_t> values,
                         int64_t want) -> LogicalResult {
    if (static_cast<int64_t>(values.size()) == want)
      return success();
    return emitInferenceError(loc, "'" + name + "' has " + Twine(values.size()) +
                                       " entries, expected " + Twine(want));
  };
  if (failed(checkLength("strides", strides, spatial)) ||
      failed(checkLength("dilations", dilations, spatial)) ||
      failed(checkLength("pads", pads, 2 * spatial)))
    return failure();
  for (auto [name, values, lo] :
       {std::tuple<StringRef, ArrayRef<int64_t>, int64_t>{"strides", strides, 1},
        {"dilations", dilations, 1},
        {"pads", pads, 0}})
    for (int64_t value : values)
      if (value < lo)
        return emitInferenceError(loc, "'" + name + "' value is " + Twine(value) +
                                           ", accepted range is [" + Twine(lo) +
                                           ", inf)");
  return success();
}

/// "spatial dim i: <what> overflows int64 (...)" for window sizes.
static LogicalResult windowOverflow(std::optional<Location> loc, int64_t i,
                                    StringRef what, int64_t in, int64_t kernel,
                                    int64_t stride, int64_t dilation) {
  return emitInferenceError(
      loc, "spatial dim " + Twine(i) + ": " + what + " overflows int64 (input " +
               Twine(in) + ", kernel " + Twine(kernel) + ", stride " +
               Twine(stride) + ", dilation " + Twine(dilation) + ")");
}

/// Output length of a sliding window, or failure when the window does not fit
/// or a size overflows int64.
static FailureOr<int64_t> windowOutput(std::optional<Location> loc, int64_t i,
                                       int64_t in, int64_t kernel, int64_t stride,
                                       int64_t dilation, int64_t padBegin,
                                       int64_t padEnd, bool ceilMode) {
  if (ShapedType::isDynamic(in) || ShapedType::isDynamic(kernel))
    return kDyn;
  std::optional<int64_t> span = CheckedI64(kernel - 1).mul(dilation).add(1).get();
  std::optional<int64_t> padded = CheckedI64(in).add(padBegin).add(padEnd).get();
  if (!span || !padded)
    return windowOverflow(loc, i, span ? "padded size" : "window span", in,
                          kernel, stride, dilation);
  std::optional<int64_t> room = CheckedI64(*padded).sub(*span).get();
  if (room && *room < 0)
    return emitInferenceError(loc, "spatial dim " + Twine(i) + ": window of " +
                                       Twine(*span) + " does not fit padded size " +
                                       Twine(*padded));
  if (room && ceilMode)
    room = CheckedI64(*room).add(stride - 1).get();
  std::optional<int64_t> out =
      room ? CheckedI64(*room / stride).add(1).get() : std::nullopt;
  if (!out)
    return windowOverflow(loc, i, "output size", in, kernel, stride, dilation);
  // A window that would start inside the end padding is dropped; (out - 1) *
  // stride <= room + stride - 1 was computed without overflow above.
  if (ceilMode && (*out - 1) * stride >= in + padBegin)
    --*out;
  return *out;
}

static LogicalResult checkConvOperands(std::optional<Location> loc,
                                       RankedTensorType input,
                                       RankedTensorType weight) {
  if (!input || !weight)
    return emitInferenceError(loc, "expected ranked tensor operands");
  if (input.getRank() < 3 || input.getRank() > 5)
    return emitInferenceError(loc, "input has rank " + Twine(input.getRank()) +
                                       ", accepted range is [3, 5] (1-D to 3-D)");
  if (weight.getRank() != input.getRank())
    return emitInferenceError(loc, "weight has rank " + Twine(weight.getRank()) +
                                       ", expected " + Twine(input.getRank()));
  return success();
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  auto input = asRanked(adaptor.getInput().getType());
  auto weight = asRanked(adaptor.getWeight().getType());
  if (failed(checkConvOperands(loc, input, weight)))
    return failure();
  int64_t spatial = input.getRank() - 2, group = adaptor.getGroup();
  if (failed(checkWindow(loc, spatial, adaptor.getStrides(),
                         adaptor.getDilations(), adaptor.getPads())))
    return failure();
  if (group < 1)
    return emitInferenceError(loc, "'group' value is " + Twine(group) +
                                       ", accepted range is [1, inf)");
  int64_t channels = input.getDimSize(1), filters = weight.getDimSize(0);
  int64_t perGroup = weight.getDimSize(1);
  if (!ShapedType::isDynamic(channels) && !ShapedType::isDynamic(perGroup) &&
      CheckedI64(perGroup).mul(group).get() != channels)
    return emitInferenceError(loc, "input has " + Twine(channels) +
                                       " channels but weight expects " +
                                       Twine(perGroup) + " x group " + Twine(group));
  if (!ShapedType::isDynamic(filters) && filters % group != 0)
    return emitInferenceError(loc, "weight has " + Twine(filters) +
                                       " filters, not divisible by group " +
                                       Twine(group));
  if (Value bias = adaptor.getBias()) {
    auto biasType = asRanked(bias.getType());
    if (!biasType || biasType.getRank() != 1 ||
        !dimsAgree(biasType.getDimSize(0), filters))
      return emitInferenceError(loc, "bias must be 1-D with " + Twine(filters) +
                                         " elements");
  }
  SmallVector<int64_t> shape = {input.getDimSize(0), filters};
  for (int64_t i = 0; i < spatial; ++i) {
    FailureOr<int64_t> out = windowOutput(
        loc, i, input.getDimSize(i + 2), weight.getDimSize(i + 2),
        adaptor.getStrides()[i], adaptor.getDilations()[i], adaptor.getPads()[i],
        adaptor.getPads()[i + spatial], /*ceilMode=*/false);
    if (failed(out))
      return failure();
    shape.push_back(*out);
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult ConvTransposeOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  auto input = asRanked(adaptor.getInput().getType());
  auto weight = asRanked(adaptor.getWeight().getType());
  if (failed(checkConvOperands(loc, input, weight)))
    return failure();
  int64_t spatial = input.getRank() - 2, group = adaptor.getGroup();
  ArrayRef<int64_t> outputPadding = adaptor.getOutputPadding();
  if (failed(checkWindow(loc, spatial, adaptor.getStrides(),
                         adaptor.getDilations(), adaptor.getPads())))
    return failure();
  if (static_cast<int64_t>(outputPadding.size()) != spatial)
    return emitInferenceError(loc, "'output_padding' has " +
                                       Twine(outputPadding.size()) +
                                       " entries, expected " + Twine(spatial));
  if (group < 1)
    return emitInferenceError(loc, "'group' value is " + Twine(group) +
                                       ", accepted range is [1, inf)");
  if (!dimsAgree(input.getDimSize(1), weight.getDimSize(0)))
    return emitInferenceError(loc, "input has " + Twine(input.getDimSize(1)) +
                                       " channels but weight has " +
                                       Twine(weight.getDimSize(0)));
  std::optional<int64_t> filters =
      ShapedType::isDynamic(weight.getDimSize(1))
          ? kDyn
          : CheckedI64(weight.getDimSize(1)).mul(group).get();
  if (!filters)
    return emitInferenceError(loc, "output channels " +
                                       Twine(weight.getDimSize(1)) + " x group " +
                                       Twine(group) + " overflow int64");
  SmallVector<int64_t> shape = {input.getDimSize(0), *filters};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t stride = adaptor.getStrides()[i], dilation = adaptor.getDilations()[i];
    // ONNX: each output_padding value is less than its stride or dilation.
    int64_t limit = std::max(stride, dilation);
    if (outputPadding[i] < 0 || outputPadding[i] >= limit)
      return emitInferenceError(loc, "'output_padding' value is " +
                                         Twine(outputPadding[i]) +
                                         ", accepted range is [0, " +
                                         Twine(limit) + ") (max of stride and "
                                         "dilation of spatial dim " +
                                         Twine(i) + ")");
    int64_t in = input.getDimSize(i + 2), k = weight.getDimSize(i + 2);
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(k)) {
      shape.push_back(kDyn);
      continue;
    }
    // stride * (in - 1) + output_padding + dilation * (k - 1) + 1 - pads.
    std::optional<int64_t> span = CheckedI64(k - 1).mul(dilation).add(1).get();
    std::optional<int64_t> out =
        span ? CheckedI64(in - 1)
                   .mul(stride)
                   .add(outputPadding[i])
                   .add(*span)
                   .sub(adaptor.getPads()[i])
                   .sub(adaptor.getPads()[i + spatial])
                   .get()
             : std::nullopt;
    if (!out)
      return windowOverflow(loc, i, "output size", in, k, stride, dilation);
    if (*out <= 0)
      return emitInferenceError(loc, "spatial dim " + Twine(i) +
                                         ": output size would be " + Twine(*out));
    shape.push_back(*out);
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

template <typename Adaptor>
static LogicalResult inferPool(std::optional<Location> loc, Adaptor adaptor,
                               SmallVectorImpl<Type> &types) {
  auto input = asRanked(adaptor.getInput().getType());
  if (!input || input.getRank() < 3)
    return emitInferenceError(loc, "input must have rank >= 3 ([N, C, D1..Dk])");
  int64_t spatial = input.getRank() - 2;
  ArrayRef<int64_t> kernel = adaptor.getKernelShape();
  if (static_cast<int64_t>(kernel.size()) != spatial)
    return emitInferenceError(loc, "'kernel_shape' has " + Twine(kernel.size()) +
                                       " entries, expected " + Twine(spatial));
  for (int64_t k : kernel)
    if (k < 1)
      return emitInferenceError(loc, "'kernel_shape' value is " + Twine(k) +
                                         ", accepted range is [1, inf)");
  if (failed(checkWindow(loc, spatial, adaptor.getStrides(),
                         adaptor.getDilations(), adaptor.getPads())))
    return failure();
  SmallVector<int64_t> shape(input.getShape().take_front(2));
  for (int64_t i = 0; i < spatial; ++i) {
    FailureOr<int64_t> out = windowOutput(
        loc, i, input.getDimSize(i + 2), kernel[i], adaptor.getStrides()[i],
        adaptor.getDilations()[i], adaptor.getPads()[i],
        adaptor.getPads()[i + spatial], adaptor.getCeilMode());
    if (failed(out))
      return failure();
    shape.push_back(*out);
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferPool(loc, adaptor, types);
}

LogicalResult AvgPoolOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferPool(loc, adaptor, types);
}

static LogicalResult inferGlobalPool(std::optional<Location> loc, Type inputType,
                                     SmallVectorImpl<Type> &types) {
  auto input = asRanked(inputType);
  if (!input || input.getRank() < 3)
    return emitInferenceError(loc, "input must have rank >= 3 ([N, C, D1..Dk])");
  SmallVector<int64_t> shape(input.getShape().take_front(2));
  shape.append(input.getRank() - 2, 1);
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult GlobalAvgPoolOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  return inferGlobalPool(loc, adaptor.getInput().getType(), types);
}

LogicalResult GlobalMaxPoolOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  return inferGlobalPool(loc, adaptor.getInput().getType(), types);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Shape after reducing `axes` (all when empty), keeping them as 1 or not.
static FailureOr<SmallVector<int64_t>>
reducedShape(std::optional<Location> loc, StringRef name, ArrayRef<int64_t> shape,
             ArrayRef<int64_t> axes, bool keepDims) {
  SmallVector<int64_t> all;
  if (axes.empty())
    all = llvm::to_vector(llvm::seq<int64_t>(0, shape.size()));
  FailureOr<SmallVector<int64_t>> normalized =
      normalizeAxes(loc, name, axes.empty() ? ArrayRef(all) : axes, shape.size());
  if (failed(normalized))
    return failure();
  SmallVector<int64_t> result;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (!llvm::is_contained(*normalized, static_cast<int64_t>(i)))
      result.push_back(d);
    else if (keepDims)
      result.push_back(1);
  }
  return result;
}

LogicalResult ReduceOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto input = asRanked(adaptor.getInput().getType());
  if (!input)
    return emitInferenceError(loc, "expected a ranked tensor operand");
  FailureOr<SmallVector<int64_t>> shape = reducedShape(
      loc, "axes", input.getShape(), adaptor.getAxes(), adaptor.getKeepdims());
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, input.getElementType()));
  return success();
}

template <typename Adaptor>
static LogicalResult inferArgReduce(MLIRContext *context, std::optional<Location> loc,
                                    Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = asRanked(adaptor.getInput().getType());
  if (!input || input.getRank() == 0)
    return emitInferenceError(loc, "input must have rank >= 1");
  FailureOr<SmallVector<int64_t>> shape =
      reducedShape(loc, "axis", input.getShape(),
                   {static_cast<int64_t>(adaptor.getAxis())},
                   adaptor.getKeepdims());
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, IntegerType::get(context, 64)));
  return success();
}

LogicalResult ArgMaxOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return inferArgReduce(context, loc, adaptor, types);
}

LogicalResult ArgMinOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return inferArgReduce(context, loc, adaptor, types);
}

LogicalResult TopKOp::inferReturnTypes(MLIRContext *context,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  auto input = asRanked(adaptor.getInput().getType());
  if (!input || input.getRank() == 0)
    return emitInferenceError(loc, "input must have rank >= 1");
  FailureOr<int64_t> axis =
      normalizeAxis(loc, "axis", adaptor.getAxis(), input.getRank());
  if (failed(axis))
    return failure();
  int64_t k = adaptor.getK(), length = input.getDimSize(*axis);
  int64_t hi = ShapedType::isDynamic(length) ? INT64_MAX : length;
  if (k < 0 || k > hi)
    return emitInferenceError(loc, "'k' value is " + Twine(k) +
                                       ", accepted range is [0, " +
                                       (ShapedType::isDynamic(length)
                                            ? Twine("dim size")
                                            : Twine(length)) +
                                       "]");
  SmallVector<int64_t> shape(input.getShape());
  shape[*axis] = k;
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  types.push_back(RankedTensorType::get(shape, IntegerType::get(context, 64)));
  return success();
}

} // namespace kiln
