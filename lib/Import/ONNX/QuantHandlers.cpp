//===- QuantHandlers.cpp - ONNX quantization compositions ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Quantize/DequantizeLinear to and from the 8-bit floats, and blocked
// quantization, as compositions of kiln ops (the handlers in
// TensorHandlers.cpp call quantizeComposed). The integer matmuls and convs
// are in IntegerHandlers.cpp.
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <string>

using namespace mlir;

namespace kiln::onnx_import {
namespace {

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

namespace {
/// A scale's value as a user reads it: "0", "-0.5", "NaN", "+infinity".
std::string describeScale(double value) {
  if (std::isnan(value))
    return "NaN";
  if (std::isinf(value))
    return value > 0 ? "+infinity" : "-infinity";
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}
} // namespace

LogicalResult checkQuantizationScale(NodeBinder &b, unsigned index, StringRef name, Value x,
                                     std::optional<int64_t> axis, int64_t block) {
  FailureOr<Value> scale = b.input(index);
  if (failed(scale))
    return failure();
  if (std::optional<SmallVector<double>> values = b.constantFloats(index))
    for (auto [element, value] : llvm::enumerate(*values))
      if (!std::isfinite(value) || value == 0.0)
        return b.emitError() << "input '" << name << "' (a quantization scale) element "
                             << element << " is " << describeScale(value)
                             << "; a scale must be finite and non-zero";
  RankedTensorType scaleType = tensorType(*scale);
  if (!x || !axis || block != 0 || scaleType.getRank() != 1 || scaleType.isDynamicDim(0))
    return success();
  RankedTensorType xType = tensorType(x);
  int64_t rank = xType.getRank(), along = *axis < 0 ? *axis + rank : *axis;
  if (along < 0 || along >= rank || xType.isDynamicDim(along) ||
      scaleType.getDimSize(0) == xType.getDimSize(along))
    return success();
  return b.emitError() << "input '" << name << "' (a per-axis quantization scale) has "
                       << scaleType.getDimSize(0) << " elements, but axis " << *axis
                       << " of the quantized tensor has " << xType.getDimSize(along);
}

/// As ONNX's reference: quantize to an integer (blocked, `block` > 0; the
/// 4- and 2-bit ones too) is clip(rint(x / scale) + zero_point) in i32, to an
/// 8-bit float cast(x / scale) with `saturate`, to FLOAT4E2M1
/// cast(x / scale + zero_point) (saturating); dequantize is
/// (x - zero_point) * scale in f32, then the scale's type. The float types'
/// zero point (zero in ONNX's spec) is otherwise not used, as in the
/// reference.
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
    if (zero && isa<Float4E2M1FNType>(narrow)) {
      FailureOr<Value> zf = castTo(zero, tensorType(*q).getElementType());
      if (succeeded(zf))
        zf = alongAxis(b, *zf, axis, rank, block, shape);
      if (succeeded(zf))
        q = b.make<kiln::AddOp>(*q, *zf);
      if (failed(q))
        return failure();
    }
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

} // namespace kiln::onnx_import
