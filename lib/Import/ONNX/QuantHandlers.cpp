//===- QuantHandlers.cpp - ONNX QLinearMatMul, MatMulInteger ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The integer matmuls as compositions of kiln ops, the way ONNX's reference
// computes them: the operands widened to i32 less their zero points, an i32
// matmul; QLinearMatMul then scales by a_scale * b_scale / y_scale (computed
// in the scales' type), adds the output zero point in f64, rounds half to
// even and saturates to the output type. Scales and zero points must be per
// tensor (one element); per-row/per-column ones are unsupported.
//
// Quantize/DequantizeLinear to and from the 8-bit floats, and blocked
// quantization, are kiln op compositions too (the handlers in
// TensorHandlers.cpp call quantizeComposed).
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"

using namespace mlir;

namespace kiln::onnx_import {
namespace {

Type elementOf(Value value) { return tensorType(value).getElementType(); }

/// A one-element scale or zero point as a rank-0 tensor; an error naming it
/// otherwise.
FailureOr<Value> perTensor(NodeBinder &b, Value value, StringRef what) {
  RankedTensorType type = tensorType(value);
  if (!type.hasStaticShape() || type.getNumElements() != 1)
    return b.unsupported(Twine(what) + " with more than one element (per-axis "
                                       "quantization of a matmul)");
  if (type.getRank() == 0)
    return value;
  return b.makeTyped<kiln::ReshapeOp>(RankedTensorType::get({}, type.getElementType()),
                                      value, Value());
}

/// `x` (an 8-bit integer tensor) as i32, less the zero point input `zeroInput`
/// when given.
FailureOr<Value> widened(NodeBinder &b, Value x, unsigned zeroInput, StringRef what) {
  Type element = elementOf(x);
  if (!element.isInteger(8))
    return b.emitError() << what << " has element type " << element
                         << ", expected an 8-bit integer";
  Type i32 = b.builder().getI32Type();
  FailureOr<Value> wide =
      b.makeTyped<kiln::CastOp>(tensorType(x).clone(i32), x);
  if (failed(wide) || !b.hasInput(zeroInput))
    return wide;
  FailureOr<Value> zero = b.input(zeroInput);
  if (failed(zero))
    return failure();
  if (elementOf(*zero) != element)
    return b.emitError() << "input " << zeroInput << " (the zero point of " << what
                         << ") has element type " << elementOf(*zero) << ", expected "
                         << element;
  // Cast first: unsigned tensors are not reshaped.
  FailureOr<Value> zero32 = b.makeTyped<kiln::CastOp>(tensorType(*zero).clone(i32), *zero);
  if (succeeded(zero32))
    zero32 = perTensor(b, *zero32, "a zero point");
  if (failed(zero32))
    return failure();
  return b.make<kiln::SubOp>(*wide, *zero32);
}

/// MatMulInteger: (a - a_zero_point) @ (b - b_zero_point) in i32.
LogicalResult matmulInteger(NodeBinder &b) {
  FailureOr<Value> a = b.input(0), bm = b.input(1);
  if (failed(a) || failed(bm))
    return failure();
  FailureOr<Value> wa = widened(b, *a, 2, "input 0"), wb = widened(b, *bm, 3, "input 1");
  if (failed(wa) || failed(wb))
    return failure();
  FailureOr<Value> out = b.make<kiln::MatmulOp>(*wa, *wb);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// QLinearMatMul (inputs a, a_scale, a_zero_point, b, b_scale, b_zero_point,
/// y_scale, y_zero_point).
LogicalResult qlinearMatmul(NodeBinder &b) {
  FailureOr<Value> a = b.input(0), bm = b.input(3);
  FailureOr<Value> aScale = b.input(1), bScale = b.input(4), yScale = b.input(6);
  FailureOr<Value> yZero = b.input(7);
  if (failed(a) || failed(bm) || failed(aScale) || failed(bScale) || failed(yScale) ||
      failed(yZero))
    return failure();
  Type scaleType = elementOf(*aScale);
  if (!isa<FloatType>(scaleType) || elementOf(*bScale) != scaleType ||
      elementOf(*yScale) != scaleType)
    return b.emitError() << "the scales have element types " << scaleType << ", "
                         << elementOf(*bScale) << " and " << elementOf(*yScale)
                         << ", expected one float type";
  Type outType = elementOf(*yZero);
  if (!outType.isInteger(8))
    return b.emitError() << "input 7 (y_zero_point) has element type " << outType
                         << ", expected an 8-bit integer";
  aScale = perTensor(b, *aScale, "a scale");
  if (succeeded(aScale))
    bScale = perTensor(b, *bScale, "a scale");
  if (succeeded(bScale))
    yScale = perTensor(b, *yScale, "a scale");
  if (failed(aScale) || failed(bScale) || failed(yScale))
    return failure();
  FailureOr<Value> wa = widened(b, *a, 2, "input 0"), wb = widened(b, *bm, 5, "input 3");
  if (failed(wa) || failed(wb))
    return failure();
  FailureOr<Value> product = b.make<kiln::MatmulOp>(*wa, *wb);
  // The factor in the scales' type, as the reference computes it.
  FailureOr<Value> factor = b.make<kiln::MulOp>(*aScale, *bScale);
  if (succeeded(factor))
    factor = b.make<kiln::DivOp>(*factor, *yScale);
  if (failed(product) || failed(factor))
    return failure();
  // The rest in f64, where int32 * factor is exact enough to round like
  // numpy's float64.
  Type f64 = b.builder().getF64Type();
  auto asF64 = [&](Value v) {
    return b.makeTyped<kiln::CastOp>(tensorType(v).clone(f64), v);
  };
  FailureOr<Value> scaled = asF64(*product), factor64 = asF64(*factor),
                   zero64 = asF64(*yZero);
  if (succeeded(zero64))
    zero64 = perTensor(b, *zero64, "a zero point");
  if (failed(scaled) || failed(factor64) || failed(zero64))
    return failure();
  scaled = b.make<kiln::MulOp>(*scaled, *factor64);
  if (succeeded(scaled))
    scaled = b.make<kiln::AddOp>(*scaled, *zero64);
  if (succeeded(scaled))
    scaled = b.make<kiln::RoundOp>(*scaled);
  bool isUnsigned = outType.isUnsignedInteger();
  if (succeeded(scaled))
    scaled = b.make<kiln::ClipOp>(*scaled, b.builder().getF64FloatAttr(isUnsigned ? 0 : -128),
                                  b.builder().getF64FloatAttr(isUnsigned ? 255 : 127));
  if (failed(scaled))
    return failure();
  FailureOr<Value> out =
      b.makeTyped<kiln::CastOp>(tensorType(*scaled).clone(outType), *scaled);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// A blocked scale or zero point (the input's shape with ceil(dim / block)
/// along `axis`) repeated `block` times along the axis: a tile of a new dim
/// after the axis, then a reshape.
FailureOr<Value> repeatBlocks(NodeBinder &b, Value v, int64_t axis, int64_t block,
                              ArrayRef<int64_t> inputShape) {
  RankedTensorType type = tensorType(v);
  int64_t rank = static_cast<int64_t>(inputShape.size());
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return b.emitError() << "attribute 'axis' is " << axis << ", accepted range is [0, "
                         << rank << ")";
  if (block < 0)
    return b.emitError() << "attribute 'block_size' is " << block << ", expected >= 0";
  if (type.getRank() != rank || !type.hasStaticShape() ||
      ShapedType::isDynamicShape(inputShape))
    return b.unsupported("blocked quantization needs static shapes and a scale of the "
                         "input's rank");
  if (inputShape[axis] % block != 0 || type.getDimSize(axis) * block != inputShape[axis])
    return b.unsupported("blocked quantization where block_size does not divide the "
                         "axis into the scale's blocks");
  SmallVector<int64_t> split(type.getShape());
  split.insert(split.begin() + axis + 1, 1);
  FailureOr<Value> out = b.makeTyped<kiln::ReshapeOp>(type.clone(split), v, Value());
  SmallVector<int64_t> repeats(rank + 1, 1);
  repeats[axis + 1] = block;
  if (succeeded(out))
    out = b.make<kiln::TileOp>(*out, ArrayRef(repeats));
  if (failed(out))
    return failure();
  return b.makeTyped<kiln::ReshapeOp>(type.clone(inputShape), *out, Value());
}

/// A per-axis scale or zero point (1-D along `axis`) shaped to broadcast
/// against a rank-`rank` input; scalars stay. A blocked one (`block` > 0) is
/// repeated to the input's shape.
FailureOr<Value> alongAxis(NodeBinder &b, Value v, int64_t axis, int64_t rank,
                           int64_t block = 0, ArrayRef<int64_t> inputShape = {}) {
  RankedTensorType type = tensorType(v);
  if (block != 0)
    return repeatBlocks(b, v, axis, block, inputShape);
  if (type.getRank() == 0)
    return v;
  if (type.getRank() != 1 || type.isDynamicDim(0))
    return b.unsupported("a scale or zero point that is not a scalar or a static 1-D "
                         "tensor");
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return b.emitError() << "attribute 'axis' is " << axis << ", accepted range is [0, "
                         << rank << ")";
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = type.getDimSize(0);
  return b.makeTyped<kiln::ReshapeOp>(RankedTensorType::get(shape, type.getElementType()), v,
                                      Value());
}

} // namespace

/// As ONNX's reference: quantize to an integer (blocked, `block` > 0) is
/// clip(rint(x / scale) + zero_point) in i32, to an 8-bit float
/// cast(x / scale) with `saturate`; dequantize is (x - zero_point) * scale in
/// f32, then the scale's type. The 8-bit floats' zero point (zero in ONNX's
/// spec) is not used, as in the reference.
LogicalResult quantizeComposed(NodeBinder &b, bool isQuantize, Value x, Value scale,
                               Value zero, Type narrow, int64_t axis, int64_t block,
                               bool saturate) {
  int64_t rank = tensorType(x).getRank();
  ArrayRef<int64_t> shape = tensorType(x).getShape();
  FailureOr<Value> s = alongAxis(b, scale, axis, rank, block, shape);
  if (failed(s))
    return failure();
  if (zero && tensorType(zero).getElementType() != narrow)
    return b.emitError() << "the zero point has element type "
                         << tensorType(zero).getElementType() << ", expected " << narrow;
  auto castTo = [&](Value v, Type element) {
    return b.makeTyped<kiln::CastOp>(tensorType(v).clone(element), v);
  };
  bool isFloat = isa<FloatType>(narrow);
  // The zero point in the arithmetic's type, then along the axis (an
  // unsigned tensor is only cast, never reshaped).
  Type zeroCompute = isQuantize ? Type(b.builder().getI32Type()) : b.builder().getF32Type();
  FailureOr<Value> z = Value();
  if (zero && !isFloat) {
    z = castTo(zero, zeroCompute);
    if (succeeded(z))
      z = alongAxis(b, *z, axis, rank, block, shape);
    if (failed(z))
      return failure();
  }
  if (!isQuantize) {
    Type f32 = b.builder().getF32Type();
    FailureOr<Value> y = castTo(x, f32);
    if (succeeded(y) && *z)
      y = b.make<kiln::SubOp>(*y, *z);
    FailureOr<Value> s32 = castTo(*s, f32);
    if (failed(y) || failed(s32))
      return failure();
    y = b.make<kiln::MulOp>(*y, *s32);
    Type scaleType = tensorType(scale).getElementType();
    if (succeeded(y) && scaleType != f32)
      y = castTo(*y, scaleType);
    return failed(y) ? failure() : b.setOutput(0, *y);
  }
  FailureOr<Value> q = b.make<kiln::DivOp>(x, *s);
  if (failed(q))
    return failure();
  if (isFloat) {
    FailureOr<Value> y = castTo(*q, narrow);
    if (succeeded(y))
      if (auto cast = y->getDefiningOp<kiln::CastOp>())
        cast.setSaturate(saturate);
    return failed(y) ? failure() : b.setOutput(0, *y);
  }
  Type i32 = b.builder().getI32Type();
  q = b.make<kiln::RoundOp>(*q);
  if (succeeded(q))
    q = castTo(*q, i32);
  if (succeeded(q) && *z)
    q = b.make<kiln::AddOp>(*q, *z);
  if (failed(q))
    return failure();
  unsigned width = narrow.getIntOrFloatBitWidth();
  bool isUnsigned = narrow.isUnsignedInteger();
  int64_t lo = isUnsigned ? 0 : -(int64_t(1) << (width - 1));
  int64_t hi = isUnsigned ? (int64_t(1) << width) - 1 : (int64_t(1) << (width - 1)) - 1;
  q = b.make<kiln::MaxOp>(*q, b.scalar(i32, static_cast<double>(lo)));
  if (succeeded(q))
    q = b.make<kiln::MinOp>(*q, b.scalar(i32, static_cast<double>(hi)));
  FailureOr<Value> y = failed(q) ? q : castTo(*q, narrow);
  return failed(y) ? failure() : b.setOutput(0, *y);
}

void registerQuantHandlers(HandlerRegistry &r) {
  r.add("MatMulInteger", 10, matmulInteger);
  r.add("QLinearMatMul", 10, qlinearMatmul);
}

} // namespace kiln::onnx_import
