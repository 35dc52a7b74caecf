//===- SamplingHandlers.cpp - ONNX ops that sample at computed positions --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// DeformConv and RoiAlign read their input at fractional positions computed
// at run time; both are compositions of kiln ops (static shapes, 2-D):
//
// - DeformConv, as ONNX's reference computes it: each kernel tap's position
//   (its place in the window plus the offset) is normalized and read with
//   `grid_sample` (bilinear, zeros outside, align_corners), the offset
//   groups batched; the samples times the mask are contracted with the
//   weights (`einsum`, per conv group), plus the bias.
// - RoiAlign: the sample rows and columns of each region are separable, so
//   bilinear sampling is two contractions with [R, rows, H] and [R, cols, W]
//   weight matrices built at run time (`equal` against an iota, weights in
//   place, zero where the reference drops a sample), then a mean over each
//   bin's samples. Max mode takes, per sample, the largest of the four
//   weighted corners (as the reference does), each corner gathered by a
//   one-hot contraction.
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"

using namespace mlir;

namespace kiln::onnx_import {
namespace {

/// Chains kiln ops, stopping at the first failure (the diagnostic is out).
class Chain {
public:
  explicit Chain(NodeBinder &b) : b(b) {}
  bool failed() const { return hasFailed; }

  template <typename OpTy, typename... Args>
  Value make(Args &&...args) {
    if (hasFailed)
      return {};
    FailureOr<Value> v = b.make<OpTy>(std::forward<Args>(args)...);
    hasFailed = mlir::failed(v);
    return hasFailed ? Value() : *v;
  }
  template <typename OpTy, typename... Args>
  Value makeTyped(Type type, Args &&...args) {
    if (hasFailed)
      return {};
    FailureOr<Value> v = b.makeTyped<OpTy>(type, std::forward<Args>(args)...);
    hasFailed = mlir::failed(v);
    return hasFailed ? Value() : *v;
  }
  Value reshape(Value x, ArrayRef<int64_t> shape) {
    if (hasFailed)
      return {};
    auto type = RankedTensorType::get(shape, tensorType(x).getElementType());
    if (type == x.getType())
      return x;
    return makeTyped<kiln::ReshapeOp>(type, x, b.i64Vector(shape));
  }
  Value slice(Value x, int64_t axis, int64_t start, int64_t end) {
    return make<kiln::SliceOp>(x, ArrayRef<int64_t>{start}, ArrayRef<int64_t>{end},
                               ArrayRef<int64_t>{axis}, ArrayRef<int64_t>{1});
  }
  Value einsum(StringRef equation, ValueRange inputs, ArrayRef<int64_t> shape) {
    if (hasFailed)
      return {};
    Type element = tensorType(inputs.front()).getElementType();
    return makeTyped<kiln::EinsumOp>(RankedTensorType::get(shape, element), inputs,
                                     b.builder().getStringAttr(equation));
  }
  /// A constant of `shape` in `element` (a float type).
  Value floats(ArrayRef<int64_t> shape, Type element, ArrayRef<double> values) {
    auto type = RankedTensorType::get(shape, element);
    const llvm::fltSemantics &semantics = cast<FloatType>(element).getFloatSemantics();
    SmallVector<APFloat> data;
    bool lost;
    for (double v : values) {
      APFloat f(v);
      f.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
      data.push_back(f);
    }
    return b.constant(DenseElementsAttr::get(type, data));
  }

private:
  NodeBinder &b;
  bool hasFailed = false;
};

//===----------------------------------------------------------------------===//
// DeformConv
//===----------------------------------------------------------------------===//

LogicalResult deformConv(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), w = b.input(1), offset = b.input(2);
  if (failed(x) || failed(w) || failed(offset))
    return failure();
  Value bias = b.optionalInput(3), mask = b.optionalInput(4);
  RankedTensorType xType = tensorType(*x), wType = tensorType(*w),
                   offType = tensorType(*offset);
  for (Value v : {*x, *w, *offset, bias, mask})
    if (v && !tensorType(v).hasStaticShape())
      return b.unsupported("a dynamic input shape");
  if (xType.getRank() != 4)
    return b.unsupported("DeformConv of rank " + Twine(xType.getRank()) +
                         " (2-D images only)");
  auto element = dyn_cast<FloatType>(xType.getElementType());
  if (!element)
    return b.emitError() << "input 0 has non-float elements";
  if (wType.getRank() != 4 || offType.getRank() != 4)
    return b.emitError() << "inputs 1 (W) and 2 (offset) must have rank 4";

  FailureOr<SmallVector<int64_t>> kernel = b.intsAttr("kernel_shape", wType.getShape().drop_front(2));
  FailureOr<SmallVector<int64_t>> strides = b.intsAttr("strides", ArrayRef<int64_t>{1, 1});
  FailureOr<SmallVector<int64_t>> dilations = b.intsAttr("dilations", ArrayRef<int64_t>{1, 1});
  FailureOr<SmallVector<int64_t>> pads = b.intsAttr("pads", ArrayRef<int64_t>{0, 0, 0, 0});
  FailureOr<int64_t> group = b.intAttr("group", 1);
  FailureOr<int64_t> offsetGroup = b.intAttr("offset_group", 1);
  if (failed(kernel) || failed(strides) || failed(dilations) || failed(pads) ||
      failed(group) || failed(offsetGroup) ||
      failed(b.checkRange("attribute 'group'", *group, 1, {})) ||
      failed(b.checkRange("attribute 'offset_group'", *offsetGroup, 1, {})))
    return failure();
  if (kernel->size() != 2 || strides->size() != 2 || dilations->size() != 2 ||
      pads->size() != 4)
    return b.emitError() << "kernel_shape, strides and dilations need 2 values and pads 4";
  if (llvm::any_of(*strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(*dilations, [](int64_t d) { return d < 1; }))
    return b.emitError() << "strides and dilations must be >= 1";
  int64_t n = xType.getDimSize(0), c = xType.getDimSize(1), h = xType.getDimSize(2),
          wd = xType.getDimSize(3);
  int64_t oc = wType.getDimSize(0), kh = (*kernel)[0], kw = (*kernel)[1], k = kh * kw;
  int64_t g = *offsetGroup, groups = *group;
  if (wType.getDimSize(1) * groups != c || oc % groups != 0 || wType.getDimSize(2) != kh ||
      wType.getDimSize(3) != kw)
    return b.emitError() << "W has shape [" << oc << ", " << wType.getDimSize(1) << ", "
                         << wType.getDimSize(2) << ", " << wType.getDimSize(3)
                         << "], expected [M, C / group, kH, kW] with C = " << c
                         << ", group = " << groups << ", kernel " << kh << "x" << kw
                         << " and M a multiple of the group";
  if (c % g != 0)
    return b.emitError() << "offset_group " << g << " does not divide the " << c
                         << " input channels";
  int64_t oh = offType.getDimSize(2), ow = offType.getDimSize(3);
  int64_t expectH = (h + (*pads)[0] + (*pads)[2] - ((kh - 1) * (*dilations)[0] + 1)) /
                        (*strides)[0] + 1;
  int64_t expectW = (wd + (*pads)[1] + (*pads)[3] - ((kw - 1) * (*dilations)[1] + 1)) /
                        (*strides)[1] + 1;
  if (offType.getDimSize(0) != n || offType.getDimSize(1) != g * 2 * k || oh != expectH ||
      ow != expectW)
    return b.emitError() << "offset has shape [" << offType.getDimSize(0) << ", "
                         << offType.getDimSize(1) << ", " << oh << ", " << ow
                         << "], expected [" << n << ", " << g * 2 * k << ", " << expectH
                         << ", " << expectW << "]";
  if (mask && tensorType(mask).getShape() != ArrayRef<int64_t>{n, g * k, oh, ow})
    return b.emitError() << "mask must have shape [" << n << ", " << g * k << ", " << oh
                         << ", " << ow << "]";
  if (bias && tensorType(bias).getShape() != ArrayRef<int64_t>{oc})
    return b.emitError() << "B must have shape [" << oc << "]";
  if (h < 2 || wd < 2)
    return b.unsupported("an input of height or width 1 (the reference normalizes "
                         "positions by size - 1)");

  // The taps' positions without the offsets, [1, 1, K, oH, oW] per axis.
  SmallVector<double> baseH, baseW;
  for (int64_t ki = 0; ki < kh; ++ki)
    for (int64_t kj = 0; kj < kw; ++kj)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          baseH.push_back(static_cast<double>(-(*pads)[0] + (*strides)[0] * i +
                                              (*dilations)[0] * ki));
          baseW.push_back(static_cast<double>(-(*pads)[1] + (*strides)[1] * j +
                                              (*dilations)[1] * kj));
        }
  Chain ch(b);
  SmallVector<int64_t> tapShape = {1, 1, k, oh, ow};
  Value offsets = ch.reshape(*offset, {n, g, k, 2, oh, ow});
  // Positions normalized to [-1, 1] (align_corners), then the grid's (x, y).
  auto coordinate = [&](int64_t which, ArrayRef<double> base, int64_t size) {
    Value part = ch.reshape(ch.slice(offsets, 3, which, which + 1), {n, g, k, oh, ow});
    Value pos = ch.make<kiln::AddOp>(part, ch.floats(tapShape, element, base));
    Value scaled = ch.make<kiln::DivOp>(pos, b.scalar(element, static_cast<double>(size - 1)));
    Value normalized = ch.make<kiln::SubOp>(ch.make<kiln::MulOp>(scaled, b.scalar(element, 2)),
                                            b.scalar(element, 1));
    return ch.reshape(normalized, {n, g, k, oh, ow, 1});
  };
  Value gy = coordinate(0, baseH, h), gx = coordinate(1, baseW, wd);
  Value grid = ch.make<kiln::ConcatOp>(ValueRange{gx, gy}, static_cast<uint64_t>(5));
  grid = ch.reshape(grid, {n * g, k * oh, ow, 2});
  Value images = ch.reshape(*x, {n * g, c / g, h, wd});
  Value sampled = ch.makeTyped<kiln::GridSampleOp>(
      RankedTensorType::get({n * g, c / g, k * oh, ow}, element), images, grid,
      ResizeMode::linear, GridSamplePadding::zeros, true);
  sampled = ch.reshape(sampled, {n, g, c / g, k, oh, ow});
  if (mask)
    sampled = ch.make<kiln::MulOp>(sampled, ch.reshape(mask, {n, g, 1, k, oh, ow}));
  // The conv: per group, sum over its channels and the taps.
  sampled = ch.reshape(sampled, {n, groups, c / groups, k, oh, ow});
  Value weights = ch.reshape(*w, {groups, oc / groups, c / groups, k});
  Value out = ch.einsum("ngckhw,gock->ngohw", {sampled, weights},
                        {n, groups, oc / groups, oh, ow});
  out = ch.reshape(out, {n, oc, oh, ow});
  if (bias)
    out = ch.make<kiln::AddOp>(out, ch.reshape(bias, {1, oc, 1, 1}));
  return ch.failed() ? failure() : b.setOutput(0, out);
}

//===----------------------------------------------------------------------===//
// RoiAlign
//===----------------------------------------------------------------------===//

/// One axis of every region's bilinear samples ([R, P] positions): the
/// one-hot rows of the lower and upper neighbours ([R, P, size]) and their
/// weights ([R, P], zero for a sample the reference drops).
struct AxisSamples {
  Value lowHot, highHot, lowWeight, highWeight;
};

/// Sample positions along one axis: region bounds from columns `first` and
/// `first + 2` of `rois`, `pooled` bins of `ratio` samples each.
AxisSamples axisSamples(NodeBinder &b, Chain &ch, Value rois, int64_t first, int64_t size,
                        int64_t pooled, int64_t ratio, float spatialScale, bool halfPixel) {
  Type element = tensorType(rois).getElementType();
  int64_t r = tensorType(rois).getDimSize(0), p = pooled * ratio;
  auto bound = [&](int64_t column) {
    Value v = ch.make<kiln::MulOp>(ch.slice(rois, 1, column, column + 1),
                                   b.scalar(element, spatialScale));
    return halfPixel ? ch.make<kiln::SubOp>(v, b.scalar(element, 0.5)) : v;
  };
  Value start = bound(first), length = ch.make<kiln::SubOp>(bound(first + 2), start);
  if (!halfPixel) // malformed regions become 1 x 1
    length = ch.make<kiln::MaxOp>(length, b.scalar(element, 1));
  Value bin = ch.make<kiln::DivOp>(length, b.scalar(element, static_cast<double>(pooled)));
  // Sample i of bin j sits (j + (i + 0.5) / ratio) bins past the start.
  SmallVector<double> steps;
  for (int64_t j = 0; j < pooled; ++j)
    for (int64_t i = 0; i < ratio; ++i)
      steps.push_back(static_cast<double>(j) +
                      (static_cast<double>(i) + 0.5) / static_cast<double>(ratio));
  Value pos = ch.make<kiln::AddOp>(
      start, ch.make<kiln::MulOp>(bin, ch.floats({1, p}, element, steps)));
  // The reference drops samples outside [-1, size], clamps the rest into
  // [0, size - 1] and interpolates between floor and floor + 1.
  Value inside = ch.make<kiln::AndOp>(
      ch.make<kiln::GreaterEqualOp>(pos, b.scalar(element, -1)),
      ch.make<kiln::LessEqualOp>(pos, b.scalar(element, static_cast<double>(size))));
  Value y = ch.make<kiln::MaxOp>(pos, b.scalar(element, 0));
  Value low = ch.make<kiln::FloorOp>(y);
  Value last = b.scalar(element, static_cast<double>(size - 1));
  Value atEdge = ch.make<kiln::GreaterEqualOp>(low, last);
  low = ch.make<kiln::SelectOp>(atEdge, last, low);
  y = ch.make<kiln::SelectOp>(atEdge, last, y);
  Value high = ch.make<kiln::SelectOp>(
      atEdge, last, ch.make<kiln::AddOp>(low, b.scalar(element, 1)));
  Value zero = b.scalar(element, 0);
  Value upper = ch.make<kiln::SubOp>(y, low);
  Value lower = ch.make<kiln::SubOp>(b.scalar(element, 1), upper);
  SmallVector<double> iota;
  for (int64_t i = 0; i < size; ++i)
    iota.push_back(static_cast<double>(i));
  Value positions = ch.floats({1, 1, size}, element, iota);
  auto oneHot = [&](Value index) {
    Value hit = ch.make<kiln::EqualOp>(ch.reshape(index, {r, p, 1}), positions);
    return ch.makeTyped<kiln::CastOp>(RankedTensorType::get({r, p, size}, element), hit);
  };
  return {oneHot(low), oneHot(high), ch.make<kiln::SelectOp>(inside, lower, zero),
          ch.make<kiln::SelectOp>(inside, upper, zero)};
}

LogicalResult roiAlign(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), rois = b.input(1), batch = b.input(2);
  if (failed(x) || failed(rois) || failed(batch))
    return failure();
  FailureOr<std::string> mode = b.stringAttr("mode", "avg");
  FailureOr<std::string> transform = b.stringAttr(
      "coordinate_transformation_mode", b.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  FailureOr<int64_t> outH = b.intAttr("output_height", 1), outW = b.intAttr("output_width", 1);
  FailureOr<int64_t> ratio = b.intAttr("sampling_ratio", 0);
  FailureOr<float> spatialScale = b.floatAttr("spatial_scale", 1.0f);
  if (failed(mode) || failed(transform) || failed(outH) || failed(outW) || failed(ratio) ||
      failed(spatialScale) ||
      failed(b.checkRange("attribute 'output_height'", *outH, 1, {})) ||
      failed(b.checkRange("attribute 'output_width'", *outW, 1, {})) ||
      failed(b.checkRange("attribute 'sampling_ratio'", *ratio, 0, {})))
    return failure();
  if (*mode != "avg" && *mode != "max")
    return b.emitError() << "attribute 'mode' value is '" << *mode
                         << "', accepted values are avg, max";
  if (*transform != "half_pixel" && *transform != "output_half_pixel")
    return b.emitError() << "attribute 'coordinate_transformation_mode' value is '"
                         << *transform << "', accepted values are half_pixel, "
                                          "output_half_pixel";
  if (*ratio == 0)
    return b.unsupported("sampling_ratio 0 (the samples per bin would depend on the "
                         "regions' sizes at run time)");
  for (Value v : {*x, *rois, *batch})
    if (!tensorType(v).hasStaticShape())
      return b.unsupported("a dynamic input shape");
  RankedTensorType xType = tensorType(*x), roisType = tensorType(*rois);
  auto element = dyn_cast<FloatType>(xType.getElementType());
  if (xType.getRank() != 4 || !element)
    return b.emitError() << "input 0 (X) must be a float tensor of rank 4";
  int64_t r = roisType.getRank() == 2 ? roisType.getDimSize(0) : -1;
  if (roisType.getShape() != ArrayRef<int64_t>{r, 4} || roisType.getElementType() != element)
    return b.emitError() << "input 1 (rois) must be [num_rois, 4] of X's element type";
  if (tensorType(*batch).getShape() != ArrayRef<int64_t>{r} ||
      !tensorType(*batch).getElementType().isSignlessInteger())
    return b.emitError() << "input 2 (batch_indices) must be [" << r << "] integers";
  int64_t c = xType.getDimSize(1), h = xType.getDimSize(2), w = xType.getDimSize(3);
  int64_t s = *ratio, p = *outH * s, q = *outW * s;
  bool halfPixel = *transform == "half_pixel";

  Chain ch(b);
  Value images = ch.make<kiln::GatherOp>(*x, *batch, static_cast<uint64_t>(0));
  AxisSamples ys = axisSamples(b, ch, *rois, 1, h, *outH, s, *spatialScale, halfPixel);
  AxisSamples xs = axisSamples(b, ch, *rois, 0, w, *outW, s, *spatialScale, halfPixel);
  if (ch.failed())
    return failure();
  // [R, C, P, Q] samples of the rows `rowHot` and columns `colHot`.
  auto gather = [&](Value rowHot, Value colHot) {
    Value rows = ch.einsum("rph,rchw->rcpw", {rowHot, images}, {r, c, p, w});
    return ch.einsum("rcpw,rqw->rcpq", {rows, colHot}, {r, c, p, q});
  };
  auto rowWeight = [&](Value v) { return ch.reshape(v, {r, 1, p, 1}); };
  auto colWeight = [&](Value v) { return ch.reshape(v, {r, 1, 1, q}); };
  Value samples;
  ReduceKind pool = ReduceKind::mean;
  if (*mode == "avg") {
    auto blend = [&](const AxisSamples &a, int64_t n) {
      Value lowW = ch.reshape(a.lowWeight, {r, n, 1});
      Value highW = ch.reshape(a.highWeight, {r, n, 1});
      return ch.make<kiln::AddOp>(ch.make<kiln::MulOp>(a.lowHot, lowW),
                                  ch.make<kiln::MulOp>(a.highHot, highW));
    };
    samples = gather(blend(ys, p), blend(xs, q));
  } else {
    // The largest weighted corner of each sample.
    pool = ReduceKind::max;
    for (auto [rowHot, rowW] : {std::pair(ys.lowHot, ys.lowWeight),
                                std::pair(ys.highHot, ys.highWeight)})
      for (auto [colHot, colW] : {std::pair(xs.lowHot, xs.lowWeight),
                                  std::pair(xs.highHot, xs.highWeight)}) {
        Value corner = ch.make<kiln::MulOp>(
            ch.make<kiln::MulOp>(gather(rowHot, colHot), rowWeight(rowW)), colWeight(colW));
        samples = samples ? ch.make<kiln::MaxOp>(samples, corner) : corner;
      }
  }
  Value bins = ch.reshape(samples, {r, c, *outH, s, *outW, s});
  Value out = ch.make<kiln::ReduceOp>(bins, pool, ArrayRef<int64_t>{3, 5}, false);
  return ch.failed() ? failure() : b.setOutput(0, out);
}

} // namespace

void registerSamplingHandlers(HandlerRegistry &r) {
  r.add("DeformConv", 19, deformConv);
  r.add("RoiAlign", 10, roiAlign);
}

} // namespace kiln::onnx_import
