//===- IntegerHandlers.cpp - ONNX integer matmuls --------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// MatMulInteger and QLinearMatMul. The zero-point-shifted 8-bit operands are
// multiplied as f64 (every product and partial sum of 8-bit values is an
// integer below 2^53, so the f64 matmul is the exact int32 result, as long as
// the inner dim is below 2^37), then cast to int32 (MatMulInteger) or scaled
// by a_scale * b_scale / y_scale (computed in the scales' type, like ONNX's
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

/// (x - zeroPoint) as f64; `row` says a per-axis zero point is per row.
FailureOr<Value> shifted(NodeBinder &b, Value x, Value zeroPoint, bool row) {
  Type f64 = b.builder().getF64Type();
  if (!isByte(tensorType(x).getElementType()))
    return b.emitError() << "operand has element type " << tensorType(x).getElementType()
                         << ", expected 8-bit integers";
  FailureOr<Value> wide = castTo(b, x, f64);
  if (failed(wide) || !zeroPoint)
    return wide;
  if (tensorType(zeroPoint).getElementType() != tensorType(x).getElementType())
    return b.emitError() << "a zero point's element type differs from its operand's";
  FailureOr<Value> zp = row ? perRow(b, zeroPoint) : FailureOr<Value>(zeroPoint);
  if (failed(zp))
    return failure();
  zp = castTo(b, *zp, f64);
  if (failed(zp))
    return failure();
  return b.make<kiln::SubOp>(*wide, *zp);
}

LogicalResult requireStatic(NodeBinder &b, ValueRange values) {
  for (Value v : values)
    if (v && !tensorType(v).hasStaticShape())
      return b.unsupported(b.opType() + " with dynamic input shapes");
  return success();
}

/// MatMulInteger (10): int32 (a - a_zero_point) @ (b - b_zero_point).
LogicalResult matmulInteger(NodeBinder &b) {
  FailureOr<Value> a = b.input(0), m = b.input(1);
  Value aZero = b.optionalInput(2), bZero = b.optionalInput(3);
  if (failed(a) || failed(m) || failed(requireStatic(b, {*a, *m, aZero, bZero})))
    return failure();
  FailureOr<Value> x = shifted(b, *a, aZero, true), y = shifted(b, *m, bZero, false);
  if (failed(x) || failed(y))
    return failure();
  FailureOr<Value> product = b.make<kiln::MatmulOp>(*x, *y);
  if (failed(product))
    return failure();
  FailureOr<Value> out = castTo(b, *product, b.builder().getI32Type());
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// QLinearMatMul (10, 21): saturate(round(C * a_scale * b_scale / y_scale) + y_zp).
LogicalResult qlinearMatmul(NodeBinder &b) {
  SmallVector<Value> in;
  for (unsigned i = 0; i < 8; ++i) {
    FailureOr<Value> v = b.input(i);
    if (failed(v))
      return failure();
    in.push_back(*v);
  }
  if (failed(requireStatic(b, in)))
    return failure();
  Value a = in[0], aScale = in[1], aZero = in[2], m = in[3], bScale = in[4], bZero = in[5],
        yScale = in[6], yZero = in[7];
  Type out = tensorType(yZero).getElementType();
  if (!isByte(out))
    return b.emitError() << "y_zero_point has element type " << out
                         << ", expected 8-bit integers";
  Type scaleType = tensorType(aScale).getElementType();
  if (!isa<FloatType>(scaleType) || tensorType(bScale).getElementType() != scaleType ||
      tensorType(yScale).getElementType() != scaleType)
    return b.emitError() << "the scales must have one float element type";
  FailureOr<Value> x = shifted(b, a, aZero, true), y = shifted(b, m, bZero, false);
  if (failed(x) || failed(y))
    return failure();
  FailureOr<Value> product = b.make<kiln::MatmulOp>(*x, *y);
  if (failed(product))
    return failure();
  // a_scale * b_scale / y_scale in the scales' type, then f64.
  FailureOr<Value> rowScale = perRow(b, aScale);
  if (failed(rowScale))
    return failure();
  FailureOr<Value> factor = b.make<kiln::MulOp>(*rowScale, bScale);
  if (failed(factor))
    return failure();
  factor = b.make<kiln::DivOp>(*factor, yScale);
  if (failed(factor))
    return failure();
  Type f64 = b.builder().getF64Type();
  factor = castTo(b, *factor, f64);
  if (failed(factor))
    return failure();
  FailureOr<Value> scaled = b.make<kiln::MulOp>(*product, *factor);
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
  FailureOr<Value> result = castTo(b, *clipped, out);
  return failed(result) ? failure() : b.setOutput(0, *result);
}

} // namespace

void registerIntegerHandlers(HandlerRegistry &r) {
  r.add("MatMulInteger", 10, matmulInteger);
  r.add("QLinearMatMul", 10, qlinearMatmul);
}

} // namespace kiln::onnx_import
