//===- ResizeHandlers.cpp - ONNX Resize and Upsample ----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Resize and the older Upsample (whose defaults differ by opset) become
// `kiln.resize`. What kiln.resize does not model (antialiasing, exclude_outside,
// tf_crop_and_resize with its extrapolation value) needs static shapes and is
// built as ONNX's reference computes it: resizing is separable, so each
// resized axis is one contraction (`kiln.einsum`) with a constant [out, in]
// weight matrix that holds each output position's filter taps (edge taps
// clamped onto the border element, as the reference pads), and in
// tf_crop_and_resize a `select` that puts the extrapolation value where the
// source coordinate leaves the input.
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"

#include "kiln/Import/ONNX/ONNXImporter.h"

#include <cmath>

using namespace mlir;

namespace kiln::onnx_import {
namespace {

static constexpr int64_t kDyn = ShapedType::kDynamic;

struct ResizeSpec {
  ResizeMode mode = ResizeMode::nearest;
  CoordinateTransform transform = CoordinateTransform::asymmetric;
  NearestMode nearest = NearestMode::floor;
  float cubicA = -0.75f;
  /// coordinate_transformation_mode tf_crop_and_resize (`transform` unused).
  bool cropAndResize = false;
  bool excludeOutside = false;
  bool antialias = false;
  float extrapolation = 0;
  /// keep_aspect_ratio_policy: 0 stretch, -1 not_larger, 1 not_smaller.
  int policy = 0;
  /// Per dim (after expandResizeAxes); with sizes and a policy, the scales
  /// hold the policy's scale for the resized axes.
  SmallVector<double> scales;
  SmallVector<int64_t> sizes;

  /// The attributes kiln.resize does not model: these take resizeByWeights.
  bool needsWeights() const { return cropAndResize || excludeOutside || antialias; }
};

/// Attributes: Upsample and Resize-10 only know `mode` (asymmetric
/// coordinates, floor rounding); Resize-11 added the rest.
LogicalResult readResizeAttrs(NodeBinder &b, bool isResize11, ResizeSpec &spec) {
  FailureOr<std::string> mode = b.stringAttr("mode", "nearest");
  if (failed(mode))
    return failure();
  if (*mode == "bilinear" || *mode == "linear")
    spec.mode = ResizeMode::linear;
  else if (*mode == "cubic" && isResize11)
    spec.mode = ResizeMode::cubic;
  else if (*mode != "nearest")
    return b.emitError() << "attribute 'mode' value is '" << *mode
                         << "', accepted values are nearest, linear"
                         << (isResize11 ? ", cubic" : "");
  if (!isResize11)
    return success();
  FailureOr<std::string> transform =
      b.stringAttr("coordinate_transformation_mode", "half_pixel");
  FailureOr<std::string> nearest = b.stringAttr("nearest_mode", "round_prefer_floor");
  FailureOr<float> cubicA = b.floatAttr("cubic_coeff_a", -0.75f);
  FailureOr<int64_t> exclude = b.intAttr("exclude_outside", 0);
  FailureOr<int64_t> antialias = b.intAttr("antialias", 0);
  FailureOr<std::string> policy = b.stringAttr("keep_aspect_ratio_policy", "stretch");
  FailureOr<float> extrapolation = b.floatAttr("extrapolation_value", 0.0f);
  if (failed(transform) || failed(nearest) || failed(cubicA) || failed(exclude) ||
      failed(antialias) || failed(policy) || failed(extrapolation) ||
      failed(b.checkRange("attribute 'exclude_outside'", *exclude, 0, 1)) ||
      failed(b.checkRange("attribute 'antialias'", *antialias, 0, 1)))
    return failure();
  std::optional<CoordinateTransform> ct = symbolizeCoordinateTransform(*transform);
  spec.cropAndResize = *transform == "tf_crop_and_resize";
  if (!ct && !spec.cropAndResize)
    return b.emitError() << "attribute 'coordinate_transformation_mode' value is '"
                         << *transform
                         << "', accepted values are half_pixel, half_pixel_symmetric, "
                            "pytorch_half_pixel, align_corners, asymmetric, "
                            "tf_crop_and_resize";
  std::optional<NearestMode> nm = symbolizeNearestMode(*nearest);
  if (!nm)
    return b.emitError() << "attribute 'nearest_mode' value is '" << *nearest
                         << "', accepted values are round_prefer_floor, "
                            "round_prefer_ceil, floor, ceil";
  spec.excludeOutside = *exclude == 1, spec.antialias = *antialias == 1;
  spec.extrapolation = *extrapolation;
  if (spec.antialias && spec.mode == ResizeMode::nearest)
    return b.emitError() << "attribute 'antialias' is 1 in mode nearest, which has no "
                            "antialiasing filter (linear or cubic only)";
  if (*policy == "not_larger")
    spec.policy = -1;
  else if (*policy == "not_smaller")
    spec.policy = 1;
  else if (*policy != "stretch")
    return b.emitError() << "attribute 'keep_aspect_ratio_policy' value is '" << *policy
                         << "', accepted values are stretch, not_larger, not_smaller";
  spec.transform = ct.value_or(CoordinateTransform::asymmetric), spec.nearest = *nm, spec.cubicA = *cubicA;
  return success();
}

/// Scales or sizes: constant inputs (Resize 11+: roi, scales, sizes at 1, 2,
/// 3; Resize-10 and Upsample-9: scales at 1) or the `scales` attribute
/// (Upsample-7). An empty tensor means "not given".
LogicalResult readResizeTargets(NodeBinder &b, Value x, bool isResize11, ResizeSpec &spec) {
  if (b.opType() == "Upsample" && b.opset() < 9) {
    FailureOr<SmallVector<float>> scales = b.floatsAttr("scales", std::nullopt);
    if (failed(scales))
      return failure();
    spec.scales.assign(scales->begin(), scales->end());
    return success();
  }
  unsigned scalesIndex = isResize11 ? 2 : 1;
  if (b.hasInput(scalesIndex)) {
    FailureOr<SmallVector<double>> scales =
        b.requireConstantFloats(scalesIndex, "'scales'");
    if (failed(scales))
      return failure();
    spec.scales = *scales;
  }
  if (isResize11 && b.hasInput(3)) {
    // Exporters write sizes as Concat(Shape(x)[0:2], [h, w]): the batch and
    // channel entries keep x's (dynamic) dims.
    FailureOr<SmallVector<int64_t>> sizes = b.requireSizesKeepingDims(3, "'sizes'", x);
    if (failed(sizes))
      return failure();
    spec.sizes = *sizes;
  }
  if (spec.scales.empty() == spec.sizes.empty())
    return b.emitError() << "exactly one of 'scales' and 'sizes' must be given";
  return success();
}

/// Expands per-axis scales/sizes (`axes`, opset 18) to every dim.
LogicalResult expandResizeAxes(NodeBinder &b, RankedTensorType input,
                               ResizeSpec &spec) {
  int64_t rank = input.getRank();
  FailureOr<SmallVector<int64_t>> axes = b.intsAttr("axes", ArrayRef<int64_t>());
  if (failed(axes))
    return failure();
  if (axes->empty() || b.opset() < 18)
    return success();
  FailureOr<SmallVector<int64_t>> normalized =
      kiln::normalizeAxes(b.loc(), "axes", *axes, rank);
  if (failed(normalized))
    return failure();
  SmallVector<double> scales(spec.scales.empty() ? 0 : rank, 1.0);
  SmallVector<int64_t> sizes(spec.sizes.empty() ? 0 : rank);
  for (int64_t i = 0; i < static_cast<int64_t>(sizes.size()); ++i)
    sizes[i] = input.getDimSize(i);
  for (auto [i, axis] : llvm::enumerate(*normalized)) {
    if (!scales.empty() && i < spec.scales.size())
      scales[axis] = spec.scales[i];
    if (!sizes.empty() && i < spec.sizes.size())
      sizes[axis] = spec.sizes[i];
  }
  spec.scales = scales, spec.sizes = sizes;
  return success();
}

//===----------------------------------------------------------------------===//
// Resize by per-axis weight matrices
//===----------------------------------------------------------------------===//

/// One resized axis: input and output sizes, scale, the roi's [start, end]
/// (tf_crop_and_resize only).
struct AxisPlan {
  int64_t axis, in, out;
  double scale;
  double roiStart = 0, roiEnd = 1;
};

/// The filter taps for an output position whose source coordinate lies
/// `ratio` (in (0, 1]) past the element on its left, as ONNX's reference
/// (`_nearest_coeffs`, `_linear_coeffs[_antialias]`, `_cubic_coeffs[_antialias]`).
SmallVector<double> filterTaps(const ResizeSpec &spec, double ratio, double scale) {
  double a = spec.cubicA;
  if (spec.mode == ResizeMode::nearest) {
    if (ratio == 1.0)
      return {0, 1};
    switch (spec.nearest) {
    case NearestMode::round_prefer_floor:
      return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
    case NearestMode::round_prefer_ceil:
      return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
    case NearestMode::floor:
      return {1, 0};
    case NearestMode::ceil:
      return {0, 1};
    }
    llvm_unreachable("unknown nearest mode");
  }
  auto normalized = [](SmallVector<double> taps) {
    double sum = 0;
    for (double t : taps)
      sum += t;
    for (double &t : taps)
      t /= sum;
    return taps;
  };
  if (spec.mode == ResizeMode::linear) {
    if (!spec.antialias)
      return {1 - ratio, ratio};
    // The triangle filter stretched by 1 / scale when downsampling.
    double s = std::min(scale, 1.0);
    int64_t start = static_cast<int64_t>(std::floor(-1 / s) + 1);
    int64_t footprint = 2 - 2 * start;
    SmallVector<double> taps;
    for (int64_t i = start; i < start + footprint; ++i)
      taps.push_back(std::clamp(1 - std::abs((static_cast<double>(i) - ratio) * s), 0.0, 1.0));
    return normalized(taps);
  }
  if (!spec.antialias) {
    double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
    return {((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a,
            ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1,
            ((a + 2) * q - (a + 3)) * q * q + 1,
            ((a * q1 - 5 * a) * q1 + 8 * a) * q1 - 4 * a};
  }
  // The cubic kernel stretched by 1 / scale when downsampling.
  double s = std::min(scale, 1.0);
  auto kernel = [&](double x) {
    x = std::abs(x);
    if (x <= 1)
      return (a + 2) * x * x * x - (a + 3) * x * x + 1;
    if (x < 2)
      return a * x * x * x - 5 * a * x * x + 8 * a * x - 4 * a;
    return 0.0;
  };
  int64_t start = static_cast<int64_t>(std::floor(-2 / s) + 1);
  SmallVector<double> taps;
  for (int64_t i = start; i < 2 - start; ++i)
    taps.push_back(kernel(s * (static_cast<double>(i) - ratio)));
  return normalized(taps);
}

/// The source coordinate of output position `y` (`_compute_x_ori`).
double sourceCoordinate(const ResizeSpec &spec, const AxisPlan &p, double y) {
  double in = static_cast<double>(p.in);
  double width = p.scale * in; // the unrounded output width
  if (spec.cropAndResize) {
    double x = width == 1 ? (p.roiEnd - p.roiStart) * (in - 1) / 2
                          : y * (p.roiEnd - p.roiStart) * (in - 1) / (width - 1);
    return x + p.roiStart * (in - 1);
  }
  double halfPixel = (y + 0.5) / p.scale - 0.5;
  switch (spec.transform) {
  case CoordinateTransform::half_pixel:
    return halfPixel;
  case CoordinateTransform::pytorch_half_pixel:
    return width == 1 ? -0.5 : halfPixel;
  case CoordinateTransform::align_corners:
    return width == 1 ? 0.0 : y * (in - 1) / (width - 1);
  case CoordinateTransform::asymmetric:
    return y / p.scale;
  case CoordinateTransform::half_pixel_symmetric: {
    double adjustment = static_cast<double>(p.out) / width;
    return in / 2 * (1 - adjustment) + halfPixel;
  }
  }
  llvm_unreachable("unknown coordinate transformation mode");
}

/// The [out, in] weights of one axis, row-major, and which output positions
/// take the extrapolation value (`_interpolate_1d_along_axis`).
void axisWeights(const ResizeSpec &spec, const AxisPlan &p, SmallVectorImpl<double> &weights,
                 SmallVectorImpl<bool> &outside) {
  weights.assign(p.out * p.in, 0.0);
  outside.assign(p.out, false);
  for (int64_t y = 0; y < p.out; ++y) {
    double x = sourceCoordinate(spec, p, static_cast<double>(y));
    if (spec.cropAndResize)
      outside[y] = x < 0 || x > static_cast<double>(p.in - 1);
    double left = std::floor(x);
    // The element on the left is preferred: an integer x has ratio 1.
    double ratio = x == left ? 1.0 : x - left;
    SmallVector<double> taps = filterTaps(spec, ratio, p.scale);
    auto n = static_cast<int64_t>(taps.size());
    // The n indices nearest x, ties to the smaller one, in the coordinates
    // of the input edge-padded by ceil(n / 2).
    int64_t pad = (n + 1) / 2;
    double padded = x + static_cast<double>(pad);
    double floorPadded = std::floor(padded);
    double frac = padded - floorPadded;
    int64_t offset = n % 2 == 0 ? (frac == 0 ? -(n / 2) : -(n / 2) + 1)
                                : (frac <= 0.5 ? -((n - 1) / 2) : -((n - 1) / 2) + 1);
    int64_t first = static_cast<int64_t>(floorPadded) + offset - pad;
    if (spec.excludeOutside) {
      double sum = 0;
      for (int64_t j = 0; j < n; ++j) {
        if (first + j < 0 || first + j >= p.in)
          taps[j] = 0;
        sum += taps[j];
      }
      for (double &t : taps)
        t /= sum == 0 ? 1.0 : sum;
    }
    for (int64_t j = 0; j < n; ++j)
      weights[y * p.in + std::clamp<int64_t>(first + j, 0, p.in - 1)] += taps[j];
  }
}

/// The resized axes in the order the reference resizes them (`axes`, else
/// every dim) with their roi; identity axes are left out.
FailureOr<SmallVector<AxisPlan>> planAxes(NodeBinder &b, RankedTensorType input,
                                          const ResizeSpec &spec, ArrayRef<int64_t> dims) {
  int64_t rank = input.getRank();
  FailureOr<SmallVector<int64_t>> axesAttr = b.intsAttr("axes", ArrayRef<int64_t>());
  if (failed(axesAttr))
    return failure();
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (!axesAttr->empty() && b.opset() >= 18) {
    FailureOr<SmallVector<int64_t>> normalized =
        kiln::normalizeAxes(b.loc(), "axes", *axesAttr, rank);
    if (failed(normalized))
      return failure();
    axes = *normalized;
  }
  SmallVector<double> roi;
  if (spec.cropAndResize) {
    if (!b.hasInput(1))
      return b.emitError() << "coordinate_transformation_mode tf_crop_and_resize needs "
                              "input 'roi'";
    FailureOr<SmallVector<double>> values = b.requireConstantFloats(1, "'roi'");
    if (failed(values))
      return failure();
    if (values->size() != 2 * axes.size())
      return b.emitError() << "input 'roi' has " << values->size() << " values, expected "
                           << 2 * axes.size() << " (a start and an end per resized axis)";
    roi = *values;
  }
  SmallVector<AxisPlan> plans;
  for (auto [i, axis] : llvm::enumerate(axes)) {
    AxisPlan p{axis, input.getDimSize(axis), dims[axis], spec.scales[axis]};
    if (!roi.empty())
      p.roiStart = roi[i], p.roiEnd = roi[axes.size() + i];
    bool identity = std::abs(p.scale - 1.0) <= 1e-9 * std::max(1.0, std::abs(p.scale)) &&
                    p.out == p.in && p.roiStart == 0 &&
                    std::abs(p.roiEnd - 1.0) <= 1e-9;
    if (!identity)
      plans.push_back(p);
  }
  return plans;
}

/// Resize `x` to `dims` one axis at a time: a contraction with the axis's
/// constant weights, then the extrapolation value where the source
/// coordinate leaves the input (tf_crop_and_resize).
LogicalResult resizeByWeights(NodeBinder &b, Value x, const ResizeSpec &spec,
                              ArrayRef<int64_t> dims) {
  RankedTensorType input = tensorType(x);
  auto element = dyn_cast<FloatType>(input.getElementType());
  if (!element)
    return b.unsupported("exclude_outside, antialias or tf_crop_and_resize on " +
                         Twine("a tensor of non-float elements"));
  // One letter per dim (graph values have at most kMaxRank = 32 dims) and
  // 'z' for the resized one.
  static constexpr StringLiteral kLetters =
      "abcdefghijklmnopqrstuvwxyABCDEFGHIJKLMNOPQRSTUVWXY";
  static_assert(kLetters.size() >= kMaxRank);
  int64_t rank = input.getRank();
  FailureOr<SmallVector<AxisPlan>> plans = planAxes(b, input, spec, dims);
  if (failed(plans))
    return failure();
  auto toElement = [&](double v) {
    APFloat f(v);
    bool lost;
    f.convert(element.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    return f;
  };
  SmallVector<double> weights;
  SmallVector<bool> outside;
  for (const AxisPlan &p : *plans) {
    axisWeights(spec, p, weights, outside);
    auto weightType = RankedTensorType::get({p.out, p.in}, element);
    if (failed(b.checkSize(weightType)))
      return failure();
    Value matrix = b.constant(DenseElementsAttr::get(
        weightType, llvm::map_to_vector(weights, toElement)));
    // "abcd,zc->abzd" for axis 2 of a rank-4 input.
    std::string term = kLetters.substr(0, rank).str();
    std::string result = term;
    result[p.axis] = 'z';
    std::string equation = term + ",z" + term[p.axis] + "->" + result;
    SmallVector<int64_t> shape(tensorType(x).getShape());
    shape[p.axis] = p.out;
    FailureOr<Value> resized = b.makeTyped<kiln::EinsumOp>(
        RankedTensorType::get(shape, element), ValueRange{x, matrix},
        b.builder().getStringAttr(equation));
    if (failed(resized))
      return failure();
    x = *resized;
    if (!llvm::is_contained(outside, true))
      continue;
    SmallVector<int64_t> maskShape(rank, 1);
    maskShape[p.axis] = p.out;
    Value mask = b.constant(DenseElementsAttr::get(
        RankedTensorType::get(maskShape, b.builder().getI1Type()), ArrayRef<bool>(outside)));
    FailureOr<Value> filled =
        b.make<kiln::SelectOp>(mask, b.scalar(element, spec.extrapolation), x);
    if (failed(filled))
      return failure();
    x = *filled;
  }
  return b.setOutput(0, x);
}

LogicalResult resize(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  if (failed(x))
    return failure();
  bool isResize11 = b.opType() == "Resize" && b.opset() >= 11;
  ResizeSpec spec;
  RankedTensorType input = tensorType(*x);
  if (failed(readResizeAttrs(b, isResize11, spec)) ||
      failed(readResizeTargets(b, *x, isResize11, spec)) ||
      failed(expandResizeAxes(b, input, spec)))
    return failure();
  size_t rank = input.getRank();
  if ((!spec.scales.empty() && spec.scales.size() != rank) ||
      (!spec.sizes.empty() && spec.sizes.size() != rank))
    return b.emitError() << "'scales'/'sizes' must have one entry per input "
                            "dim (" << rank << ")";
  SmallVector<int64_t> dims;
  SmallVector<float> scales;
  if (spec.policy != 0 && !spec.sizes.empty()) {
    // keep_aspect_ratio_policy: one scale for the resized axes, the smallest
    // (not_larger) or largest (not_smaller) of sizes / input, and sizes
    // rounded half up from it, as the ONNX reference does.
    FailureOr<SmallVector<int64_t>> axesAttr = b.intsAttr("axes", ArrayRef<int64_t>());
    if (failed(axesAttr))
      return failure();
    SmallVector<int64_t> axes;
    if (axesAttr->empty()) {
      axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    } else {
      FailureOr<SmallVector<int64_t>> normalized =
          kiln::normalizeAxes(b.loc(), "axes", *axesAttr, rank);
      if (failed(normalized))
        return failure();
      axes = *normalized;
    }
    std::optional<double> scale;
    for (int64_t axis : axes) {
      int64_t in = input.getDimSize(axis);
      if (ShapedType::isDynamic(in) || in == 0)
        return b.unsupported("keep_aspect_ratio_policy on a dynamic or empty dim");
      double ratio = static_cast<double>(spec.sizes[axis]) / static_cast<double>(in);
      scale = !scale ? ratio : spec.policy < 0 ? std::min(*scale, ratio) : std::max(*scale, ratio);
    }
    scales.assign(rank, 1.0f);
    spec.scales.assign(rank, 1.0);
    for (int64_t axis : axes) {
      double size = *scale * static_cast<double>(input.getDimSize(axis)) + 0.5;
      if (!(size <= INT32_MAX))
        return b.emitError() << "'sizes' with keep_aspect_ratio_policy give dim " << axis
                             << " size " << size << ", accepted at most " << INT32_MAX;
      scales[axis] = static_cast<float>(*scale);
      spec.scales[axis] = *scale;
      spec.sizes[axis] = static_cast<int64_t>(size);
    }
  }
  for (size_t i = 0; i < rank; ++i) {
    int64_t in = input.getDimSize(i);
    if (!spec.sizes.empty()) {
      if (ShapedType::isDynamic(spec.sizes[i])) { // keeps the input's dynamic dim
        dims.push_back(kDyn);
        continue;
      }
      if (spec.sizes[i] < 0)
        return b.checkRange("'sizes'", spec.sizes[i], 0, {});
      dims.push_back(spec.sizes[i]);
      continue;
    }
    if (!(spec.scales[i] > 0))
      return b.emitError() << "'scales' value is " << spec.scales[i]
                           << ", accepted range is (0, inf)";
    scales.push_back(spec.scales[i]);
    double out = ShapedType::isDynamic(in) ? 0 : std::floor(in * spec.scales[i]);
    if (!(out <= INT32_MAX)) // an infinite or huge scale is not a dim
      return b.emitError() << "'scales' value is " << spec.scales[i] << ": dim "
                           << i << " would have size " << out
                           << ", accepted at most " << INT32_MAX;
    dims.push_back(ShapedType::isDynamic(in) ? kDyn : static_cast<int64_t>(out));
  }
  if (spec.needsWeights()) {
    if (!input.hasStaticShape() || input.getNumElements() == 0)
      return b.unsupported("exclude_outside, antialias or tf_crop_and_resize on a "
                           "dynamic or empty input shape");
    if (spec.scales.empty())
      for (size_t i = 0; i < rank; ++i)
        spec.scales.push_back(static_cast<double>(spec.sizes[i]) /
                              static_cast<double>(input.getDimSize(i)));
    return resizeByWeights(b, *x, spec, dims);
  }
  auto type = RankedTensorType::get(dims, input.getElementType());
  FailureOr<Value> out = b.makeTyped<kiln::ResizeOp>(
      type, *x, spec.mode, spec.transform, spec.nearest, ArrayRef(scales),
      APFloat(spec.cubicA));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

} // namespace

void registerResizeHandlers(HandlerRegistry &r) {
  r.add("Upsample", 7, resize);
  r.add("Resize", 10, resize);
}

} // namespace kiln::onnx_import
