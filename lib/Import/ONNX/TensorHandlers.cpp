//===- TensorHandlers.cpp - ONNX constants, generators, sampling, quantization ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Ops that create tensors (Constant, ConstantOfShape, Range), inference-time
// no-ops (Identity, Dropout), GridSample and affine quantization.
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"
#include "TensorLoader.h"

using namespace mlir;

namespace kiln::onnx_import {
namespace {

static constexpr int64_t kDyn = ShapedType::kDynamic;

LogicalResult constantNode(NodeBinder &b) {
  static constexpr StringRef kForms[] = {"value",      "value_float",
                                         "value_floats", "value_int",
                                         "value_ints", "sparse_value",
                                         "value_string", "value_strings"};
  SmallVector<StringRef> given;
  for (StringRef form : kForms)
    if (b.hasAttr(form))
      given.push_back(form);
  if (given.size() != 1)
    return b.emitError() << "needs exactly one value attribute, got "
                         << given.size();
  StringRef form = given.front();
  Builder builder(b.context());
  ElementsAttr value;
  if (form == "value") {
    FailureOr<ElementsAttr> tensor = b.tensorAttr("value");
    if (failed(tensor))
      return failure();
    value = *tensor;
  } else if (form == "value_float" || form == "value_int") {
    bool isFloat = form == "value_float";
    FailureOr<float> f = isFloat ? b.floatAttr(form, std::nullopt) : 0.0f;
    FailureOr<int64_t> i = isFloat ? 0 : b.intAttr(form, std::nullopt);
    if (failed(f) || failed(i))
      return failure();
    Type type = isFloat ? Type(builder.getF32Type()) : Type(builder.getI64Type());
    Attribute element = isFloat ? Attribute(builder.getF32FloatAttr(*f))
                                : Attribute(builder.getI64IntegerAttr(*i));
    value = DenseElementsAttr::get(RankedTensorType::get({}, type), element);
  } else if (form == "value_floats") {
    FailureOr<SmallVector<float>> floats = b.floatsAttr(form, std::nullopt);
    if (failed(floats))
      return failure();
    auto type = RankedTensorType::get({static_cast<int64_t>(floats->size())},
                                      builder.getF32Type());
    value = DenseElementsAttr::get(type, ArrayRef(*floats));
  } else if (form == "value_ints") {
    FailureOr<SmallVector<int64_t>> ints = b.intsAttr(form, std::nullopt);
    if (failed(ints))
      return failure();
    auto type = RankedTensorType::get({static_cast<int64_t>(ints->size())},
                                      builder.getI64Type());
    value = DenseElementsAttr::get(type, ArrayRef(*ints));
  } else {
    return b.unsupported("Constant with attribute '" + form + "'");
  }
  return b.setOutput(0, b.constant(value));
}

/// Also passes sequences and optionals on.
LogicalResult identity(NodeBinder &b) {
  FailureOr<Value> x = b.anyInput(0);
  return failed(x) ? failure() : b.setOutput(0, *x);
}

/// A tensor shaped like `like` filled with `value`: a splat constant when the
/// shape is static, else constant_of_shape(shape(like)).
FailureOr<Value> filledLike(NodeBinder &b, Value like, TypedAttr value) {
  RankedTensorType type = tensorType(like);
  auto result = RankedTensorType::get(type.getShape(), value.getType());
  if (type.hasStaticShape())
    return b.constant(DenseElementsAttr::get(result, value));
  FailureOr<Value> shape = b.make<kiln::ShapeOp>(like, IntegerAttr(), IntegerAttr());
  if (failed(shape))
    return failure();
  return b.makeTyped<kiln::ConstantOfShapeOp>(result, *shape, value);
}

/// Inference: Dropout is the identity and its mask is all true.
LogicalResult dropout(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  if (failed(x))
    return failure();
  if (b.opset() >= 12 && b.hasInput(2)) {
    std::optional<SmallVector<int64_t>> training = b.constantInts(2);
    if (!training || llvm::any_of(*training, [](int64_t v) { return v != 0; }))
      return b.unsupported("training_mode that is not a constant false");
  }
  if (b.outputUsed(1)) {
    FailureOr<Value> mask = filledLike(b, *x, b.builder().getBoolAttr(true));
    if (failed(mask) || failed(b.setOutput(1, *mask)))
      return failure();
  }
  return b.setOutput(0, *x);
}

LogicalResult constantOfShape(NodeBinder &b) {
  FailureOr<Value> shape = b.input(0);
  if (failed(shape))
    return failure();
  TypedAttr value = b.builder().getF32FloatAttr(0.0f);
  if (b.hasAttr("value")) {
    FailureOr<ElementsAttr> tensor = b.tensorAttr("value");
    if (failed(tensor))
      return failure();
    if (tensor->getNumElements() != 1)
      return b.emitError() << "attribute 'value' has " << tensor->getNumElements()
                           << " elements, expected 1";
    value = cast<TypedAttr>(*tensor->getValues<Attribute>().begin());
  }
  RankedTensorType shapeType = tensorType(*shape);
  if (shapeType.getRank() != 1 || shapeType.isDynamicDim(0))
    return b.unsupported("the shape input must be 1-D with a known length");
  if (std::optional<SmallVector<int64_t>> dims = b.constantInts(0)) {
    if (llvm::any_of(*dims, [](int64_t d) { return d < 0; }))
      return b.emitError() << "the shape has a negative dim";
    auto type = RankedTensorType::get(*dims, value.getType());
    if (failed(b.checkSize(type)))
      return failure();
    return b.setOutput(0, b.constant(DenseElementsAttr::get(type, value)));
  }
  if (failed(b.checkComputedRank(shapeType.getDimSize(0))))
    return failure();
  auto type = RankedTensorType::get(
      SmallVector<int64_t>(shapeType.getDimSize(0), kDyn), value.getType());
  FailureOr<Value> out = b.makeTyped<kiln::ConstantOfShapeOp>(type, *shape, value);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult range(NodeBinder &b) {
  FailureOr<Value> start = b.input(0), limit = b.input(1), delta = b.input(2);
  if (failed(start) || failed(limit) || failed(delta))
    return failure();
  // The spec makes the operands scalars; function bodies (AffineGrid's) also
  // pass one-element 1-D tensors, read as their one value.
  for (FailureOr<Value> *operand : {&start, &limit, &delta}) {
    RankedTensorType type = tensorType(**operand);
    if (type.getRank() == 0 || !type.hasStaticShape() || type.getNumElements() != 1)
      continue;
    SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
    *operand = b.make<kiln::SqueezeOp>(**operand, ArrayRef<int64_t>(axes));
    if (failed(*operand))
      return failure();
  }
  Type element = tensorType(*start).getElementType();
  // Range-27: stash_type 1 (float) computes 16-bit ranges in wider floats,
  // as kiln.range does; a 16-bit stash would round every step.
  if (b.opset() >= 27 && (element.isF16() || element.isBF16())) {
    FailureOr<int64_t> stash = b.intAttr("stash_type", 1);
    if (failed(stash))
      return failure();
    if (*stash != 1)
      return b.unsupported("Range with 'stash_type' " + Twine(*stash) +
                           " (only 1, float, is supported)");
  }
  int64_t length = kDyn;
  std::optional<SmallVector<double>> s = b.constantFloats(0),
                                     l = b.constantFloats(1),
                                     d = b.constantFloats(2);
  if (s && l && d && s->size() == 1 && l->size() == 1 && d->size() == 1) {
    if (d->front() == 0)
      return b.emitError() << "'delta' is 0";
    double count = std::ceil((l->front() - s->front()) / d->front());
    // Written so that NaN (from an infinite or NaN bound) fails it too.
    if (!(count <= static_cast<double>(INT32_MAX)))
      return b.emitError() << "the range has " << count
                           << " elements, accepted at most " << INT32_MAX;
    length = static_cast<int64_t>(std::max(0.0, count));
  }
  auto type = RankedTensorType::get({length}, element);
  FailureOr<Value> out = b.makeTyped<kiln::RangeOp>(type, *start, *limit, *delta);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult oneHot(NodeBinder &b) {
  FailureOr<Value> indices = b.input(0), values = b.input(2);
  if (failed(indices) || failed(values))
    return failure();
  FailureOr<SmallVector<double>> depth = b.requireConstantFloats(1, "'depth'");
  FailureOr<int64_t> axis = b.intAttr("axis", -1);
  if (failed(depth) || failed(axis))
    return failure();
  if (depth->size() != 1)
    return b.emitError() << "'depth' has " << depth->size()
                         << " elements, expected 1";
  // Checked before the cast to an unsigned attribute (NaN fails it too).
  if (!(depth->front() >= 0 && depth->front() <= INT32_MAX))
    return b.emitError() << "'depth' value is " << depth->front()
                         << ", accepted range is [0, " << INT32_MAX << "]";
  Value index = *indices;
  Type element = tensorType(index).getElementType();
  if (!element.isSignlessInteger(32) && !element.isSignlessInteger(64)) {
    // ONNX accepts any numeric indices; kiln.one_hot takes i32/i64.
    auto type = RankedTensorType::get(tensorType(index).getShape(),
                                      b.builder().getI64Type());
    FailureOr<Value> cast = b.makeTyped<kiln::CastOp>(type, index);
    if (failed(cast))
      return failure();
    index = *cast;
  }
  FailureOr<Value> out = b.make<kiln::OneHotOp>(
      index, *values, static_cast<uint64_t>(depth->front()),
      static_cast<uint64_t>(*axis));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// GridSample-16 knows bilinear/bicubic and 4-D inputs; 20 renamed the modes
/// linear/cubic and allows any number of spatial dims.
LogicalResult gridSample(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), grid = b.input(1);
  FailureOr<std::string> mode =
      b.stringAttr("mode", b.opset() >= 20 ? "linear" : "bilinear");
  FailureOr<std::string> padding = b.stringAttr("padding_mode", "zeros");
  FailureOr<int64_t> alignCorners = b.intAttr("align_corners", 0);
  if (failed(x) || failed(grid) || failed(mode) || failed(padding) ||
      failed(alignCorners) ||
      failed(b.checkRange("attribute 'align_corners'", *alignCorners, 0, 1)))
    return failure();
  bool newNames = b.opset() >= 20;
  std::optional<ResizeMode> kind;
  if (*mode == "nearest")
    kind = ResizeMode::nearest;
  else if (*mode == (newNames ? "linear" : "bilinear"))
    kind = ResizeMode::linear;
  else if (*mode == (newNames ? "cubic" : "bicubic"))
    kind = ResizeMode::cubic;
  if (!kind)
    return b.emitError() << "attribute 'mode' value is '" << *mode
                         << "', accepted values are "
                         << (newNames ? "nearest, linear, cubic" : "bilinear, nearest, bicubic");
  std::optional<GridSamplePadding> pad = symbolizeGridSamplePadding(*padding);
  if (!pad)
    return b.emitError() << "attribute 'padding_mode' value is '" << *padding
                         << "', accepted values are zeros, border, reflection";
  RankedTensorType input = tensorType(*x), gridType = tensorType(*grid);
  int64_t spatial = input.getRank() - 2;
  if (spatial < 1 || (!newNames && spatial != 2))
    return b.emitError() << "input 0 has rank " << input.getRank() << ", expected "
                         << (newNames ? "at least 3" : "4");
  if (gridType.getRank() != input.getRank())
    return b.emitError() << "input 1 (grid) has rank " << gridType.getRank()
                         << ", expected " << input.getRank();
  SmallVector<int64_t> shape = {input.getDimSize(0), input.getDimSize(1)};
  llvm::append_range(shape, gridType.getShape().drop_front().drop_back());
  FailureOr<Value> out = b.makeTyped<kiln::GridSampleOp>(
      RankedTensorType::get(shape, input.getElementType()), *x, *grid, *kind, *pad,
      *alignCorners == 1);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

/// A per-tensor scale given as a 1-element vector becomes a scalar, which is
/// what kiln means by per tensor.
FailureOr<Value> scalarIfSingle(NodeBinder &b, Value value) {
  RankedTensorType type = tensorType(value);
  if (type.getRank() != 1 || type.getDimSize(0) != 1)
    return value;
  return b.makeTyped<kiln::ReshapeOp>(
      RankedTensorType::get({}, type.getElementType()), value, Value());
}

/// The zero point, or a zero of `element` shaped like the scale.
FailureOr<Value> zeroPoint(NodeBinder &b, Value scale, Type element) {
  if (b.hasInput(2)) {
    FailureOr<Value> given = b.input(2);
    if (failed(given))
      return failure();
    return scalarIfSingle(b, *given);
  }
  RankedTensorType scaleType = tensorType(scale);
  if (!scaleType.hasStaticShape())
    return b.unsupported("a per-axis scale of unknown length without a zero point");
  auto type = RankedTensorType::get(scaleType.getShape(), element);
  return b.constant(
      DenseElementsAttr::get(type, b.builder().getIntegerAttr(element, 0)));
}

template <bool isQuantize>
LogicalResult quantize(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), scaleInput = b.input(1);
  FailureOr<int64_t> axis = b.intAttr("axis", 1);
  FailureOr<int64_t> blockSize = b.intAttr("block_size", 0);
  FailureOr<int64_t> outputType = b.intAttr("output_dtype", 0);
  if (failed(x) || failed(scaleInput) || failed(axis) || failed(blockSize) ||
      failed(outputType))
    return failure();
  if (failed(checkQuantizationScale(b, 1, isQuantize ? "y_scale" : "x_scale", *x, *axis,
                                    *blockSize)))
    return failure();
  FailureOr<Value> scale =
      *blockSize != 0 ? FailureOr<Value>(*scaleInput) : scalarIfSingle(b, *scaleInput);
  if (failed(scale))
    return failure();
  // QuantizeLinear's saturate (opset 19, for the 8-bit floats).
  FailureOr<int64_t> saturate =
      isQuantize && b.opset() >= 19 ? b.intAttr("saturate", 1) : FailureOr<int64_t>(1);
  if (failed(saturate))
    return failure();
  if (*saturate != 0 && *saturate != 1)
    return b.emitError() << "attribute 'saturate' is " << *saturate << ", expected 0 or 1";
  // The 8-bit floats, the sub-byte types and blocked quantization: a
  // composition of kiln ops (QuantHandlers.cpp).
  Type narrow = tensorType(*x).getElementType();
  if (isQuantize)
    narrow = b.hasInput(2) ? tensorType(*b.input(2)).getElementType()
             : *outputType ? convertElementType(b.context(), static_cast<int32_t>(*outputType))
                           : IntegerType::get(b.context(), 8, IntegerType::Unsigned);
  if (!narrow)
    return b.unsupported("output_dtype " + elementTypeName(static_cast<int32_t>(*outputType)));
  if (isa<FloatType>(narrow) || narrow.getIntOrFloatBitWidth() < 8 || *blockSize != 0)
    return quantizeComposed(b, isQuantize, *x, *scale, b.hasInput(2) ? *b.input(2) : Value(),
                            narrow, *axis, *blockSize, *saturate != 0);
  Builder builder(b.context());
  Type zeroType = isQuantize ? builder.getIntegerType(8, /*isSigned=*/false)
                             : tensorType(*x).getElementType();
  if (isQuantize && *outputType != 0) {
    // TensorProto codes: UINT8 = 2, INT8 = 3, UINT16 = 4, INT16 = 5.
    if (*outputType < 2 || *outputType > 5)
      return b.unsupported("output_dtype " + Twine(*outputType));
    bool isSigned = *outputType == 3 || *outputType == 5;
    zeroType = builder.getIntegerType(*outputType <= 3 ? 8 : 16, isSigned);
  }
  FailureOr<Value> zero = zeroPoint(b, *scale, zeroType);
  if (failed(zero))
    return failure();
  Type resultElement = isQuantize ? tensorType(*zero).getElementType()
                                  : tensorType(*scale).getElementType();
  auto type = RankedTensorType::get(tensorType(*x).getShape(), resultElement);
  FailureOr<Value> out;
  if constexpr (isQuantize)
    out = b.makeTyped<kiln::QuantizeLinearOp>(type, *x, *scale, *zero,
                                              static_cast<uint64_t>(*axis));
  else
    out = b.makeTyped<kiln::DequantizeLinearOp>(type, *x, *scale, *zero,
                                                static_cast<uint64_t>(*axis));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// DynamicQuantizeLinear as its ONNX function body: the range of x widened
/// to hold 0, scale = range / 255, zero point = saturate(round(-min /
/// scale)) as u8, then quantize_linear.
LogicalResult dynamicQuantize(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  if (failed(x))
    return failure();
  Type element = tensorType(*x).getElementType();
  if (!element.isF32())
    return b.emitError() << "input 0 has element type " << element << ", expected f32";
  Value zero = b.scalar(element, 0.0);
  FailureOr<Value> low = b.make<kiln::ReduceOp>(*x, ReduceKind::min, ArrayRef<int64_t>(),
                                                /*keepdims=*/false);
  FailureOr<Value> high = b.make<kiln::ReduceOp>(*x, ReduceKind::max, ArrayRef<int64_t>(),
                                                 /*keepdims=*/false);
  if (failed(low) || failed(high))
    return failure();
  low = b.make<kiln::MinOp>(*low, zero);
  high = b.make<kiln::MaxOp>(*high, zero);
  if (failed(low) || failed(high))
    return failure();
  FailureOr<Value> range = b.make<kiln::SubOp>(*high, *low);
  if (failed(range))
    return failure();
  FailureOr<Value> scale = b.make<kiln::DivOp>(*range, b.scalar(element, 255.0));
  if (failed(scale))
    return failure();
  FailureOr<Value> point = b.make<kiln::DivOp>(*low, *scale);
  if (succeeded(point))
    point = b.make<kiln::SubOp>(zero, *point);
  if (succeeded(point))
    point = b.make<kiln::ClipOp>(*point, b.builder().getF64FloatAttr(0.0),
                                 b.builder().getF64FloatAttr(255.0));
  if (succeeded(point))
    point = b.make<kiln::RoundOp>(*point);
  if (failed(point))
    return failure();
  Type u8 = b.builder().getIntegerType(8, /*isSigned=*/false);
  FailureOr<Value> zeroPoint =
      b.makeTyped<kiln::CastOp>(RankedTensorType::get({}, u8), *point);
  if (failed(zeroPoint))
    return failure();
  FailureOr<Value> y = b.makeTyped<kiln::QuantizeLinearOp>(
      RankedTensorType::get(tensorType(*x).getShape(), u8), *x, *scale, *zeroPoint,
      static_cast<uint64_t>(1));
  if (failed(y) || failed(b.setOutput(0, *y)) || failed(b.setOutput(1, *scale)))
    return failure();
  return b.setOutput(2, *zeroPoint);
}

/// Trilu keeps x[..., i, j] where j - i >= k (upper) or j - i <= k (lower)
/// and zeroes the rest: a select on (cols - rows) compared with k, which
/// folds to a constant mask when k is a constant.
LogicalResult trilu(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<int64_t> upper = b.intAttr("upper", 1);
  if (failed(x) || failed(upper) ||
      failed(b.checkRange("attribute 'upper'", *upper, 0, 1)))
    return failure();
  RankedTensorType type = tensorType(*x);
  if (type.getRank() < 2)
    return b.emitError() << "input 0 has rank " << type.getRank()
                         << ", expected at least 2";
  int64_t rows = type.getDimSize(type.getRank() - 2),
          cols = type.getDimSize(type.getRank() - 1);
  if (ShapedType::isDynamic(rows) || ShapedType::isDynamic(cols))
    return b.unsupported("Trilu over dynamic matrix dims");
  Type i64 = b.builder().getI64Type();
  Value k = b.optionalInput(1);
  if (!k)
    k = b.scalar(i64, 0);
  else if (tensorType(k).getNumElements() != 1 || !tensorType(k).getElementType().isInteger(64))
    return b.emitError() << "input 1 (k) has type " << tensorType(k)
                         << ", expected one i64 element";
  auto index = [&](int64_t n, ArrayRef<int64_t> shape) {
    return b.constant(DenseIntElementsAttr::get(
        RankedTensorType::get(shape, i64), llvm::to_vector(llvm::seq<int64_t>(0, n))));
  };
  Value colIndex = index(cols, {1, cols});
  Value rowIndex = index(rows, {rows, 1});
  FailureOr<Value> diff = b.make<kiln::SubOp>(colIndex, rowIndex);
  if (failed(diff))
    return failure();
  if (tensorType(k).getRank() > 0) {
    FailureOr<Value> scalarK = b.makeTyped<kiln::ReshapeOp>(
        RankedTensorType::get({}, i64), k, b.i64Vector({}));
    if (failed(scalarK))
      return failure();
    k = *scalarK;
  }
  FailureOr<Value> keep = *upper ? b.make<kiln::GreaterEqualOp>(*diff, k)
                                 : b.make<kiln::LessEqualOp>(*diff, k);
  if (failed(keep))
    return failure();
  FailureOr<Value> out =
      b.make<kiln::SelectOp>(*keep, *x, b.scalar(type.getElementType(), 0));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// EyeLike: a constant with ones where j - i == k, of `dtype` (default: the
/// input's element type) and the input's static 2-D shape.
LogicalResult eyeLike(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<int64_t> k = b.intAttr("k", 0);
  if (failed(x) || failed(k))
    return failure();
  RankedTensorType type = tensorType(*x);
  if (type.getRank() != 2)
    return b.emitError() << "input 0 has rank " << type.getRank() << ", expected 2";
  if (!type.hasStaticShape())
    return b.unsupported("EyeLike of dynamic dims");
  Type element = type.getElementType();
  if (b.hasAttr("dtype")) {
    FailureOr<int64_t> dtype = b.intAttr("dtype", std::nullopt);
    if (failed(dtype))
      return failure();
    element = convertElementType(b.context(), static_cast<int32_t>(*dtype));
    if (!element)
      return b.unsupported("EyeLike of " + elementTypeName(static_cast<int32_t>(*dtype)));
  }
  auto attr = [&](bool one) -> Attribute {
    if (auto f = dyn_cast<FloatType>(element))
      return FloatAttr::get(f, one ? 1.0 : 0.0);
    if (element.isInteger(1))
      return BoolAttr::get(b.context(), one);
    return IntegerAttr::get(element, one ? 1 : 0);
  };
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < type.getDimSize(0); ++i)
    for (int64_t j = 0; j < type.getDimSize(1); ++j)
      values.push_back(attr(j - i == *k));
  return b.setOutput(0, b.constant(DenseElementsAttr::get(type.clone(element), values)));
}

/// Hardmax: 1 at the first maximum along `axis`, 0 elsewhere:
/// select(iota == argmax(x), 1, 0), iota running along the axis.
LogicalResult hardmax(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<int64_t> axis = b.intAttr("axis", -1);
  if (failed(x) || failed(axis))
    return failure();
  RankedTensorType type = tensorType(*x);
  FailureOr<int64_t> normalized = kiln::normalizeAxis(b.loc(), "axis", *axis, type.getRank());
  if (failed(normalized))
    return failure();
  int64_t size = type.getDimSize(*normalized);
  if (ShapedType::isDynamic(size))
    return b.unsupported("Hardmax along a dynamic dim");
  FailureOr<Value> first = b.make<kiln::ArgMaxOp>(*x, static_cast<uint64_t>(*normalized),
                                                  /*keepdims=*/true, /*last=*/false);
  SmallVector<int64_t> iotaShape(type.getRank(), 1);
  iotaShape[*normalized] = size;
  Value iota = b.constant(DenseIntElementsAttr::get(
      RankedTensorType::get(iotaShape, b.builder().getI64Type()),
      llvm::to_vector(llvm::seq<int64_t>(0, size))));
  FailureOr<Value> hit = succeeded(first) ? b.make<kiln::EqualOp>(iota, *first) : first;
  if (failed(hit))
    return failure();
  Type element = type.getElementType();
  Value off = b.scalar(element, 0);
  Value on = b.scalar(element, 1);
  FailureOr<Value> out = b.make<kiln::SelectOp>(*hit, on, off);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

} // namespace

void registerTensorHandlers(HandlerRegistry &r) {
  r.add("Constant", 7, constantNode);
  r.add("Identity", 1, identity); // later versions add types only
  r.add("Dropout", 7, dropout);
  r.add("ConstantOfShape", 9, constantOfShape);
  r.add("Range", 11, range);
  r.add("OneHot", 9, oneHot);
  r.add("Trilu", 14, trilu);
  r.add("EyeLike", 9, eyeLike);
  r.add("Hardmax", 13, hardmax);
  r.add("GridSample", 16, gridSample);
  r.add("QuantizeLinear", 10, quantize<true>);
  r.add("DequantizeLinear", 10, quantize<false>);
  r.add("DynamicQuantizeLinear", 11, dynamicQuantize);
}

} // namespace kiln::onnx_import
