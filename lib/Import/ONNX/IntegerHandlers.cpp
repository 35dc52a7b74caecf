//===- IntegerHandlers.cpp - ONNX integer matmuls and convs ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv. The
// zero-point-shifted 8-bit operands are multiplied (or convolved) as f64:
// every product and partial sum of 8-bit values is an integer below 2^53, so
// the f64 result is the exact int32 one while the reduction has fewer than
// 2^37 terms. It is then cast to int32 (the *Integer ops) or scaled by
// x_scale * w_scale / y_scale (computed in the scales' type, like ONNX's
// reference), rounded half to even, shifted by y_zero_point and saturated.
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"

using namespace mlir;

namespace kiln::onnx_import {
namespace {

FailureOr<Value> castTo(NodeBinder &b, Value x, Type element) {
  RankedTensorType type = tensorType(x);
  if (type.getElementType() == element)
    return x;
  return b.makeTyped<kiln::CastOp>(type.clone(element), x);
}

bool isByte(Type t) { return t.isInteger(8); }

/// A per-row operand (zero point or scale of `a`, [M]) as [M, 1] so that it
/// broadcasts over the rows of a [..., M, K] matrix; scalars and 1-element
/// tensors stay as they are.
FailureOr<Value> perRow(NodeBinder &b, Value v) {
  RankedTensorType type = tensorType(v);
  if (type.getRank() != 1 || type.getDimSize(0) == 1)
    return v;
  return b.makeTyped<kiln::ReshapeOp>(type.clone(ArrayRef<int64_t>{type.getDimSize(0), 1}), v,
                                      b.i64Vector({type.getDimSize(0), 1}));
}

/// A per-output-channel operand of a conv weight ([M]) as [M, 1, ...] (or
/// [1, M, 1, ...] for the output, `outputSide`).
FailureOr<Value> perChannel(NodeBinder &b, Value v, int64_t rank, bool outputSide) {
  RankedTensorType type = tensorType(v);
  if (type.getRank() != 1 || type.getDimSize(0) == 1)
    return v;
  SmallVector<int64_t> shape(rank, 1);
  shape[outputSide ? 1 : 0] = type.getDimSize(0);
  return b.makeTyped<kiln::ReshapeOp>(type.clone(shape), v, b.i64Vector(shape));
}

enum class ZeroPointAxis { tensor, row, channel };

/// (x - zeroPoint) as f64; a 1-D zero point applies per row of a matrix or
/// per output channel of a conv weight (cast before the reshape: unsigned
/// tensors are not reshaped by the lowering).
FailureOr<Value> shifted(NodeBinder &b, Value x, Value zeroPoint, ZeroPointAxis axis) {
  Type f64 = b.builder().getF64Type();
  if (!isByte(tensorType(x).getElementType()))
    return b.emitError() << "operand has element type " << tensorType(x).getElementType()
                         << ", expected 8-bit integers";
  FailureOr<Value> wide = castTo(b, x, f64);
  if (failed(wide) || !zeroPoint)
    return wide;
  if (tensorType(zeroPoint).getElementType() != tensorType(x).getElementType())
    return b.emitError() << "a zero point's element type differs from its operand's";
  FailureOr<Value> zp = castTo(b, zeroPoint, f64);
  if (succeeded(zp) && axis == ZeroPointAxis::row)
    zp = perRow(b, *zp);
  else if (succeeded(zp) && axis == ZeroPointAxis::channel)
    zp = perChannel(b, *zp, tensorType(x).getRank(), false);
  if (failed(zp))
    return failure();
  return b.make<kiln::SubOp>(*wide, *zp);
}

/// The node's first `count` inputs, all required.
FailureOr<SmallVector<Value>> requiredInputs(NodeBinder &b, unsigned count) {
  SmallVector<Value> in;
  for (unsigned i = 0; i < count; ++i) {
    FailureOr<Value> v = b.input(i);
    if (failed(v))
      return failure();
    in.push_back(*v);
  }
  return in;
}

LogicalResult requireStatic(NodeBinder &b, ValueRange values) {
  for (Value v : values)
    if (v && !tensorType(v).hasStaticShape())
      return b.unsupported(b.opType() + " with dynamic input shapes");
  return success();
}

/// saturate(round(acc * xScale * wScale / yScale) + y_zp) in `out`'s type.
FailureOr<Value> requantize(NodeBinder &b, Value acc, Value factor, Value yZero) {
  Type out = tensorType(yZero).getElementType();
  if (!isByte(out))
    return b.emitError() << "y_zero_point has element type " << out
                         << ", expected 8-bit integers";
  Type f64 = b.builder().getF64Type();
  FailureOr<Value> wideFactor = castTo(b, factor, f64);
  if (failed(wideFactor))
    return failure();
  FailureOr<Value> scaled = b.make<kiln::MulOp>(acc, *wideFactor);
  if (failed(scaled))
    return failure();
  scaled = b.make<kiln::RoundOp>(*scaled);
  if (failed(scaled))
    return failure();
  FailureOr<Value> zero = castTo(b, yZero, f64);
  if (failed(zero))
    return failure();
  scaled = b.make<kiln::AddOp>(*scaled, *zero);
  if (failed(scaled))
    return failure();
  bool isUnsigned = out.isUnsignedInteger();
  FailureOr<Value> low = b.make<kiln::MaxOp>(*scaled, b.scalar(f64, isUnsigned ? 0 : -128));
  if (failed(low))
    return failure();
  FailureOr<Value> clipped = b.make<kiln::MinOp>(*low, b.scalar(f64, isUnsigned ? 255 : 127));
  if (failed(clipped))
    return failure();
  return castTo(b, *clipped, out);
}

/// MatMulInteger (10): int32 (a - a_zero_point) @ (b - b_zero_point).
LogicalResult matmulInteger(NodeBinder &b) {
  FailureOr<Value> a = b.input(0), m = b.input(1);
  Value aZero = b.optionalInput(2), bZero = b.optionalInput(3);
  if (failed(a) || failed(m) || failed(requireStatic(b, {*a, *m, aZero, bZero})))
    return failure();
  FailureOr<Value> x = shifted(b, *a, aZero, ZeroPointAxis::row),
                   y = shifted(b, *m, bZero, ZeroPointAxis::tensor);
  if (failed(x) || failed(y))
    return failure();
  FailureOr<Value> product = b.make<kiln::MatmulOp>(*x, *y);
  if (failed(product))
    return failure();
  FailureOr<Value> out = castTo(b, *product, b.builder().getI32Type());
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// Every scale input (index, name in the ONNX spec) checked.
LogicalResult checkScales(NodeBinder &b,
                          std::initializer_list<std::pair<unsigned, StringRef>> scales) {
  for (auto [index, name] : scales)
    if (failed(checkQuantizationScale(b, index, name)))
      return failure();
  return success();
}

/// QLinearMatMul (10, 21): saturate(round(C * a_scale * b_scale / y_scale) + y_zp).
LogicalResult qlinearMatmul(NodeBinder &b) {
  FailureOr<SmallVector<Value>> inputs = requiredInputs(b, 8);
  if (failed(inputs))
    return failure();
  SmallVector<Value> &in = *inputs;
  if (failed(requireStatic(b, in)))
    return failure();
  Value a = in[0], aScale = in[1], aZero = in[2], m = in[3], bScale = in[4], bZero = in[5],
        yScale = in[6], yZero = in[7];
  if (failed(checkScales(b, {{1, "a_scale"}, {4, "b_scale"}, {6, "y_scale"}})))
    return failure();
  Type scaleType = tensorType(aScale).getElementType();
  if (!isa<FloatType>(scaleType) || tensorType(bScale).getElementType() != scaleType ||
      tensorType(yScale).getElementType() != scaleType)
    return b.emitError() << "the scales must have one float element type";
  FailureOr<Value> x = shifted(b, a, aZero, ZeroPointAxis::row),
                   y = shifted(b, m, bZero, ZeroPointAxis::tensor);
  if (failed(x) || failed(y))
    return failure();
  FailureOr<Value> product = b.make<kiln::MatmulOp>(*x, *y);
  if (failed(product))
    return failure();
  // a_scale * b_scale / y_scale in the scales' type.
  FailureOr<Value> rowScale = perRow(b, aScale);
  if (failed(rowScale))
    return failure();
  FailureOr<Value> factor = b.make<kiln::MulOp>(*rowScale, bScale);
  if (failed(factor))
    return failure();
  factor = b.make<kiln::DivOp>(*factor, yScale);
  if (failed(factor))
    return failure();
  FailureOr<Value> out = requantize(b, *product, *factor, yZero);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// (x - x_zero_point) conv (w - w_zero_point) as exact f64, like MatMulInteger.
FailureOr<Value> shiftedConv(NodeBinder &b, Value x, Value xZero, Value w, Value wZero) {
  FailureOr<Value> input = shifted(b, x, xZero, ZeroPointAxis::tensor);
  if (failed(input))
    return failure();
  FailureOr<Value> weight = shifted(b, w, wZero, ZeroPointAxis::channel);
  if (failed(weight))
    return failure();
  return buildConv(b, *input, *weight, Value());
}

/// ConvInteger (10): int32 (x - x_zero_point) conv (w - w_zero_point).
LogicalResult convInteger(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), w = b.input(1);
  if (failed(x) || failed(w) ||
      failed(requireStatic(b, {*x, *w, b.optionalInput(2), b.optionalInput(3)})))
    return failure();
  FailureOr<Value> acc = shiftedConv(b, *x, b.optionalInput(2), *w, b.optionalInput(3));
  if (failed(acc))
    return failure();
  FailureOr<Value> out = castTo(b, *acc, b.builder().getI32Type());
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// QLinearConv (10): the shifted conv plus the int32 bias, requantized like
/// QLinearMatMul (a per-channel w_scale applies per output channel).
LogicalResult qlinearConv(NodeBinder &b) {
  FailureOr<SmallVector<Value>> inputs = requiredInputs(b, 8);
  if (failed(inputs))
    return failure();
  SmallVector<Value> &in = *inputs;
  Value bias = b.optionalInput(8);
  in.push_back(bias);
  if (failed(requireStatic(b, in)))
    return failure();
  Value x = in[0], xScale = in[1], xZero = in[2], w = in[3], wScale = in[4], wZero = in[5],
        yScale = in[6], yZero = in[7];
  if (failed(checkScales(b, {{1, "x_scale"}, {4, "w_scale"}, {6, "y_scale"}})))
    return failure();
  Type scaleType = tensorType(xScale).getElementType();
  if (!isa<FloatType>(scaleType) || tensorType(wScale).getElementType() != scaleType ||
      tensorType(yScale).getElementType() != scaleType)
    return b.emitError() << "the scales must have one float element type";
  FailureOr<Value> acc = shiftedConv(b, x, xZero, w, wZero);
  if (failed(acc))
    return failure();
  int64_t rank = tensorType(w).getRank();
  if (bias) {
    FailureOr<Value> wideBias = perChannel(b, bias, rank, true);
    if (failed(wideBias))
      return failure();
    wideBias = castTo(b, *wideBias, b.builder().getF64Type());
    if (failed(wideBias))
      return failure();
    acc = b.make<kiln::AddOp>(*acc, *wideBias);
    if (failed(acc))
      return failure();
  }
  FailureOr<Value> channelScale = perChannel(b, wScale, rank, true);
  if (failed(channelScale))
    return failure();
  FailureOr<Value> factor = b.make<kiln::MulOp>(xScale, *channelScale);
  if (failed(factor))
    return failure();
  factor = b.make<kiln::DivOp>(*factor, yScale);
  if (failed(factor))
    return failure();
  FailureOr<Value> out = requantize(b, *acc, *factor, yZero);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

} // namespace

void registerIntegerHandlers(HandlerRegistry &r) {
  r.add("MatMulInteger", 10, matmulInteger);
  r.add("QLinearMatMul", 10, qlinearMatmul);
  r.add("ConvInteger", 10, convInteger);
  r.add("QLinearConv", 10, qlinearConv);
}

} // namespace kiln::onnx_import
