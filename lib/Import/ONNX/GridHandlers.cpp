//===- GridHandlers.cpp - ONNX Col2Im, AffineGrid, MaxUnpool --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Ops over image grids built from other kiln ops, with static shapes and
// constant shape operands:
// - Col2Im is a `conv_transpose` whose constant weight puts each of the
//   block's columns back at its kernel position (a one-hot kernel);
// - AffineGrid is a `matmul` of a constant homogeneous base grid with the
//   transposed thetas;
// - MaxUnpool scatters the values into a flat zero tensor at their indices;
// - MaxPool's Indices output (called from NNHandlers.cpp's pool handler) is a
//   running arg-max over the window's strided slices.
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"

#include <limits>

using namespace mlir;

namespace kiln::onnx_import {
namespace {

FailureOr<Value> reshapeTo(NodeBinder &b, Value x, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, tensorType(x).getElementType());
  if (type == x.getType())
    return x;
  return b.makeTyped<kiln::ReshapeOp>(type, x, b.i64Vector(shape));
}

/// Ints attribute `name` of `count` values (default: `count` x `fallback`).
FailureOr<SmallVector<int64_t>> windowAttr(NodeBinder &b, StringRef name, size_t count,
                                           int64_t fallback, int64_t low) {
  SmallVector<int64_t> defaults(count, fallback);
  FailureOr<SmallVector<int64_t>> values = b.intsAttr(name, ArrayRef(defaults));
  if (failed(values))
    return failure();
  if (values->size() != count)
    return b.emitError() << "attribute '" << name << "' has " << values->size()
                         << " values, expected " << count;
  for (int64_t v : *values)
    if (failed(b.checkRange(("attribute '" + name + "'").str(), v, low, {})))
      return failure();
  return values;
}

//===----------------------------------------------------------------------===//
// Col2Im
//===----------------------------------------------------------------------===//

/// Col2Im (18): input [N, C * prod(block), L] as [N * C, K, L_1, ..., L_S]
/// (L_i the block positions along dim i), then a transposed conv whose
/// weight [K, 1, block...] is 1 where the kernel position is the column's;
/// output_padding covers image rows no block reaches.
LogicalResult col2im(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<SmallVector<int64_t>> image = b.requireConstantInts(1, "'image_shape'");
  FailureOr<SmallVector<int64_t>> block = b.requireConstantInts(2, "'block_shape'");
  if (failed(x) || failed(image) || failed(block))
    return failure();
  RankedTensorType type = tensorType(*x);
  if (!type.hasStaticShape())
    return b.unsupported("Col2Im with dynamic input shapes");
  if (type.getRank() != 3)
    return b.emitError() << "input 0 has rank " << type.getRank() << ", expected 3";
  size_t dims = image->size();
  if (dims == 0 || block->size() != dims)
    return b.emitError() << "'image_shape' and 'block_shape' must have the same "
                            "number of values (at least 1), but they have "
                         << dims << " and " << block->size();
  FailureOr<SmallVector<int64_t>> strides = windowAttr(b, "strides", dims, 1, 1);
  FailureOr<SmallVector<int64_t>> dilations = windowAttr(b, "dilations", dims, 1, 1);
  FailureOr<SmallVector<int64_t>> pads = windowAttr(b, "pads", 2 * dims, 0, 0);
  if (failed(strides) || failed(dilations) || failed(pads))
    return failure();
  int64_t kernel = 1;
  for (int64_t k : *block) {
    if (k < 1)
      return b.emitError() << "'block_shape' has the value " << k << ", expected >= 1";
    kernel *= k;
  }
  int64_t columns = type.getDimSize(1);
  if (columns % kernel != 0)
    return b.emitError() << "input dim 1 (" << columns
                         << ") is not a multiple of the block size " << kernel;
  int64_t channels = columns / kernel;
  // The channels go to the batch dim, so that the transposed conv has one
  // group (grouped convs lower in 2-D only).
  SmallVector<int64_t> shape = {type.getDimSize(0) * channels, kernel}, outputPadding;
  int64_t blocks = 1;
  for (size_t i = 0; i < dims; ++i) {
    int64_t span = (*dilations)[i] * ((*block)[i] - 1) + 1;
    int64_t room = (*image)[i] + (*pads)[i] + (*pads)[i + dims] - span;
    if ((*image)[i] < 1 || room < 0)
      return b.emitError() << "the block does not fit image dim " << i << " ("
                           << (*image)[i] << " with its padding)";
    int64_t count = room / (*strides)[i] + 1;
    shape.push_back(count);
    outputPadding.push_back(room % (*strides)[i]);
    blocks *= count;
  }
  if (blocks != type.getDimSize(2))
    return b.emitError() << "input dim 2 is " << type.getDimSize(2)
                         << ", but the image holds " << blocks << " blocks";
  FailureOr<Value> grid = reshapeTo(b, *x, shape);
  if (failed(grid))
    return failure();
  SmallVector<int64_t> weightShape = {kernel, 1};
  llvm::append_range(weightShape, *block);
  auto weightType = RankedTensorType::get(weightShape, type.getElementType());
  if (!isa<FloatType>(type.getElementType()))
    return b.emitError() << "input 0 must be a float tensor";
  auto element = cast<FloatType>(type.getElementType());
  APFloat zero = APFloat::getZero(element.getFloatSemantics());
  APFloat one = APFloat::getOne(element.getFloatSemantics());
  SmallVector<APFloat> weights(static_cast<size_t>(kernel * kernel), zero);
  for (int64_t r = 0; r < kernel; ++r)
    weights[r * kernel + r] = one;
  Value weight = b.constant(DenseElementsAttr::get(weightType, weights));
  FailureOr<Value> out = b.make<kiln::ConvTransposeOp>(
      *grid, weight, Value(), ArrayRef(*strides), ArrayRef(*dilations), ArrayRef(*pads),
      ArrayRef(outputPadding), static_cast<uint64_t>(1));
  if (failed(out))
    return failure();
  SmallVector<int64_t> outShape = {type.getDimSize(0), channels};
  llvm::append_range(outShape, *image);
  out = reshapeTo(b, *out, outShape);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

//===----------------------------------------------------------------------===//
// AffineGrid
//===----------------------------------------------------------------------===//

/// AffineGrid (20): base [prod(spatial), S + 1] rows (x, y[, z], 1), times
/// theta^T ([N, S + 1, S]), as [N, spatial..., S].
LogicalResult affineGrid(NodeBinder &b) {
  FailureOr<Value> theta = b.input(0);
  FailureOr<SmallVector<int64_t>> size = b.requireConstantInts(1, "'size'");
  FailureOr<int64_t> alignCorners = b.intAttr("align_corners", 0);
  if (failed(theta) || failed(size) || failed(alignCorners) ||
      failed(b.checkRange("attribute 'align_corners'", *alignCorners, 0, 1)))
    return failure();
  RankedTensorType type = tensorType(*theta);
  if (size->size() != 4 && size->size() != 5)
    return b.emitError() << "input 'size' has " << size->size()
                         << " values, expected 4 (2-D) or 5 (3-D)";
  int64_t s = static_cast<int64_t>(size->size()) - 2;
  int64_t n = (*size)[0];
  if (!type.hasStaticShape() || type.getRank() != 3 || type.getDimSize(0) != n ||
      type.getDimSize(1) != s || type.getDimSize(2) != s + 1)
    return b.emitError() << "theta has type " << type << ", expected [" << n << ", " << s
                         << ", " << s + 1 << "]";
  auto element = dyn_cast<FloatType>(type.getElementType());
  if (!element)
    return b.emitError() << "theta must be a float tensor";
  ArrayRef<int64_t> spatial = ArrayRef(*size).drop_front(2);
  int64_t points = 1;
  for (int64_t d : spatial) {
    if (d < 1 || d > (int64_t(1) << 24))
      return b.emitError() << "input 'size' has the spatial size " << d
                           << ", expected a value in [1, 2^24]";
    points *= d;
  }
  if (points * (s + 1) > (int64_t(1) << 26))
    return b.unsupported("a grid of " + Twine(points) + " points");
  auto coordinate = [&](int64_t i, int64_t count) {
    if (*alignCorners)
      return count == 1 ? -1.0 : -1.0 + 2.0 * static_cast<double>(i) / (count - 1);
    return (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(count) - 1.0;
  };
  SmallVector<APFloat> base;
  bool lost;
  SmallVector<int64_t> index(s, 0);
  for (int64_t p = 0; p < points; ++p) {
    // Row-major position over the spatial dims; x is the last dim.
    int64_t rest = p;
    for (int64_t d = s - 1; d >= 0; --d) {
      index[d] = rest % spatial[d];
      rest /= spatial[d];
    }
    for (int64_t d = s - 1; d >= 0; --d) {
      APFloat v(coordinate(index[d], spatial[d]));
      v.convert(element.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      base.push_back(v);
    }
    base.push_back(APFloat::getOne(element.getFloatSemantics()));
  }
  Value grid = b.constant(
      DenseElementsAttr::get(RankedTensorType::get({points, s + 1}, element), base));
  FailureOr<Value> transposed = b.make<kiln::TransposeOp>(*theta, ArrayRef<int64_t>{0, 2, 1});
  if (failed(transposed))
    return failure();
  FailureOr<Value> out = b.make<kiln::MatmulOp>(grid, *transposed);
  if (failed(out))
    return failure();
  SmallVector<int64_t> shape = {n};
  llvm::append_range(shape, spatial);
  shape.push_back(s);
  out = reshapeTo(b, *out, shape);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

//===----------------------------------------------------------------------===//
// MaxUnpool
//===----------------------------------------------------------------------===//

/// MaxUnpool (9, 11: output_shape): the values scattered into a flat zero
/// tensor of the inferred shape at their (flat) indices, then padded at the
/// end to output_shape, like ONNX's reference.
LogicalResult maxUnpool(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), indices = b.input(1);
  FailureOr<SmallVector<int64_t>> kernel = b.intsAttr("kernel_shape", std::nullopt);
  if (failed(x) || failed(indices) || failed(kernel))
    return failure();
  RankedTensorType type = tensorType(*x);
  if (!type.hasStaticShape() || !tensorType(*indices).hasStaticShape())
    return b.unsupported("MaxUnpool with dynamic input shapes");
  size_t dims = kernel->size();
  if (type.getRank() != static_cast<int64_t>(dims) + 2 ||
      tensorType(*indices).getShape() != type.getShape())
    return b.emitError() << "X has type " << type << " and I " << tensorType(*indices)
                         << "; expected equal shapes of rank " << dims + 2;
  if (!isa<IntegerType>(tensorType(*indices).getElementType()))
    return b.emitError() << "input 1 (indices) must be an integer tensor";
  FailureOr<SmallVector<int64_t>> strides = windowAttr(b, "strides", dims, 1, 1);
  FailureOr<SmallVector<int64_t>> pads = windowAttr(b, "pads", 2 * dims, 0, 0);
  if (failed(strides) || failed(pads))
    return failure();
  SmallVector<int64_t> inferred(type.getShape().take_front(2));
  for (size_t i = 0; i < dims; ++i) {
    int64_t d = (type.getDimSize(i + 2) - 1) * (*strides)[i] - (*pads)[i] -
                (*pads)[i + dims] + (*kernel)[i];
    if (d < 1)
      return b.emitError() << "the unpooled dim " << i + 2 << " would be " << d;
    inferred.push_back(d);
  }
  SmallVector<int64_t> target = inferred;
  if (b.hasInput(2)) {
    FailureOr<SmallVector<int64_t>> given = b.requireConstantInts(2, "'output_shape'");
    if (failed(given))
      return failure();
    if (given->size() != inferred.size())
      return b.emitError() << "input 'output_shape' has " << given->size()
                           << " values, expected " << inferred.size();
    for (auto [want, have] : llvm::zip(*given, inferred))
      if (want < have)
        return b.unsupported("an output_shape smaller than the unpooled shape");
    target = *given;
  }
  auto flatType = RankedTensorType::get(
      {RankedTensorType::get(inferred, type.getElementType()).getNumElements()},
      type.getElementType());
  if (failed(b.checkSize(flatType)))
    return failure();
  Value zeros = b.constant(DenseElementsAttr::get(
      flatType, b.builder().getZeroAttr(type.getElementType())));
  int64_t count = type.getNumElements();
  FailureOr<Value> values = reshapeTo(b, *x, {count});
  FailureOr<Value> at = reshapeTo(b, *indices, {count});
  if (failed(values) || failed(at))
    return failure();
  if (!tensorType(*at).getElementType().isSignlessInteger(64))
    at = b.makeTyped<kiln::CastOp>(RankedTensorType::get({count}, b.builder().getI64Type()),
                                   *at);
  if (failed(at))
    return failure();
  FailureOr<Value> out = b.make<kiln::ScatterElementsOp>(
      zeros, *at, *values, static_cast<uint64_t>(0), ScatterReduction::none);
  if (failed(out))
    return failure();
  out = reshapeTo(b, *out, inferred);
  if (failed(out) || target == inferred)
    return failed(out) ? failure() : b.setOutput(0, *out);
  SmallVector<int64_t> padding(inferred.size(), 0);
  for (size_t i = 0; i < target.size(); ++i)
    padding.push_back(target[i] - inferred[i]);
  out = b.make<kiln::PadOp>(*out, PadMode::constant, ArrayRef(padding), APFloat(0.0));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

} // namespace

//===----------------------------------------------------------------------===//
// MaxPool's Indices output
//===----------------------------------------------------------------------===//

/// One strided slice of the -inf padded input per kernel position, each
/// with the constant flat input index it reads; a running strict maximum
/// keeps the first position of the window's largest value, as ONNX's
/// reference does. The index is (n * C + c) * prod(spatial) plus the
/// row-major (storage_order 0) or column-major (1) spatial offset.
LogicalResult maxPoolIndices(NodeBinder &b, Value x, Value pooled, ArrayRef<int64_t> kernel,
                             ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                             ArrayRef<int64_t> pads, bool ceilMode) {
  FailureOr<int64_t> storageOrder = b.intAttr("storage_order", 0);
  if (failed(storageOrder) ||
      failed(b.checkRange("attribute 'storage_order'", *storageOrder, 0, 1)))
    return failure();
  RankedTensorType type = tensorType(x), outType = tensorType(pooled);
  if (!type.hasStaticShape() || !outType.hasStaticShape())
    return b.unsupported("MaxPool's 'Indices' output with dynamic shapes");
  if (ceilMode)
    return b.unsupported("MaxPool's 'Indices' output with ceil_mode 1");
  size_t dims = kernel.size();
  ArrayRef<int64_t> in = type.getShape().drop_front(2), out = outType.getShape().drop_front(2);
  int64_t positions = 1, outPoints = 1, inPoints = 1;
  for (size_t i = 0; i < dims; ++i) {
    positions *= kernel[i];
    outPoints *= out[i];
    inPoints *= in[i];
  }
  if (positions > 1024)
    return b.unsupported("MaxPool's 'Indices' output for a window of " + Twine(positions) +
                         " positions (at most 1024)");
  SmallVector<int64_t> padding(2, 0);
  padding.append(pads.begin(), pads.begin() + dims);
  padding.append({0, 0});
  padding.append(pads.begin() + dims, pads.end());
  FailureOr<Value> padded = b.make<kiln::PadOp>(x, PadMode::constant, ArrayRef(padding),
                                                APFloat(-std::numeric_limits<double>::infinity()));
  if (failed(padded))
    return failure();
  Type i64 = b.builder().getI64Type();
  SmallVector<int64_t> outSpatial(out);
  auto indexType = RankedTensorType::get(outSpatial, i64);
  FailureOr<Value> best, bestIndex;
  SmallVector<int64_t> offset(dims, 0);
  for (int64_t p = 0; p < positions; ++p) {
    int64_t rest = p;
    for (int64_t d = static_cast<int64_t>(dims) - 1; d >= 0; --d) {
      offset[d] = rest % kernel[d];
      rest /= kernel[d];
    }
    SmallVector<int64_t> starts, ends, axes;
    for (size_t d = 0; d < dims; ++d) {
      starts.push_back(offset[d] * dilations[d]);
      ends.push_back(starts.back() + (out[d] - 1) * strides[d] + 1);
      axes.push_back(static_cast<int64_t>(d) + 2);
    }
    FailureOr<Value> values = b.make<kiln::SliceOp>(*padded, ArrayRef(starts), ArrayRef(ends),
                                                    ArrayRef(axes), strides);
    if (failed(values))
      return failure();
    // The input position each output reads at this kernel offset.
    SmallVector<int64_t> flat;
    SmallVector<int64_t> point(dims, 0);
    for (int64_t o = 0; o < outPoints; ++o) {
      int64_t r = o;
      for (int64_t d = static_cast<int64_t>(dims) - 1; d >= 0; --d) {
        point[d] = r % out[d];
        r /= out[d];
      }
      int64_t index = 0, stride = 1;
      for (size_t k = 0; k < dims; ++k) {
        // Row-major: the last dim varies fastest; column-major: the first.
        size_t d = *storageOrder == 0 ? dims - 1 - k : k;
        int64_t at = point[d] * strides[d] - pads[d] + offset[d] * dilations[d];
        index += std::clamp<int64_t>(at, 0, in[d] - 1) * stride;
        stride *= in[d];
      }
      flat.push_back(index);
    }
    Value index = b.constant(DenseElementsAttr::get(indexType, ArrayRef(flat)));
    if (p == 0) {
      best = values;
      bestIndex = index;
      continue;
    }
    FailureOr<Value> better = b.make<kiln::GreaterOp>(*values, *best);
    if (failed(better))
      return failure();
    best = b.make<kiln::SelectOp>(*better, *values, *best);
    bestIndex = b.make<kiln::SelectOp>(*better, index, *bestIndex);
    if (failed(best) || failed(bestIndex))
      return failure();
  }
  // A window of -inf padding only never happens: pads are smaller than the kernel.
  int64_t planes = type.getDimSize(0) * type.getDimSize(1);
  SmallVector<int64_t> base;
  for (int64_t i = 0; i < planes; ++i)
    base.push_back(i * inPoints);
  SmallVector<int64_t> baseShape = {type.getDimSize(0), type.getDimSize(1)};
  baseShape.append(dims, 1);
  Value planeBase =
      b.constant(DenseElementsAttr::get(RankedTensorType::get(baseShape, i64), ArrayRef(base)));
  FailureOr<Value> indices = b.make<kiln::AddOp>(*bestIndex, planeBase);
  return failed(indices) ? failure() : b.setOutput(1, *indices);
}

void registerGridHandlers(HandlerRegistry &r) {
  r.add("Col2Im", 18, col2im);
  r.add("AffineGrid", 20, affineGrid);
  r.add("MaxUnpool", 9, maxUnpool);
}

} // namespace kiln::onnx_import
