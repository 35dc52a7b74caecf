//===- ResizeToLinalg.cpp - kiln.resize -> linalg.generic ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Resize as one linalg.generic over the output that gathers from the input.
// Each resized dim maps its output index y to a source coordinate x (the
// coordinate transformation mode, computed in f64 in the order the ONNX
// reference uses) and reads taps around x with weights: nearest reads one
// element (rounded by nearest_mode), linear two (floor(x), floor(x) + 1 with
// 1 - r and r, r = x - floor(x)), cubic four (floor(x) - 1 .. floor(x) + 2
// with the Keys coefficients of cubic_coeff_a). Taps outside the input are
// clamped to its edge, as the reference's edge padding does. Interpolation
// is separable, so an output element is the sum over every combination of
// taps of the product of their weights times the element they address.
// Dims that keep their size with scale 1 are read directly.
//
//===----------------------------------------------------------------------===//

#include "LoweringFailure.h"
#include "LinalgBuilders.h"
#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;

namespace kiln {
namespace {

/// Most taps one output element may read (4^k for k cubic dims).
constexpr int64_t kMaxTaps = 4096;

/// One tap of one dim: the input index it reads and its weight (f64; null
/// for weight 1).
struct Tap {
  Value index;
  Value weight;
};

struct DimPlan {
  bool identity = false;
  int64_t inSize = 0, outSize = 0;
  double scale = 1.0;
};

/// The source coordinate (f64) of output index `y` along a dim, per the ONNX
/// reference's _compute_x_ori.
Value sourceCoordinate(OpBuilder &b, Location loc, CoordinateTransform mode,
                       const DimPlan &dim, Value y) {
  auto f64 = [&](double v) {
    return arith::ConstantFloatOp::create(b, loc, b.getF64Type(), APFloat(v)).getResult();
  };
  double outputWidth = dim.scale * static_cast<double>(dim.inSize);
  auto halfPixel = [&]() -> Value {
    Value shifted = arith::AddFOp::create(b, loc, y, f64(0.5));
    Value scaled = arith::DivFOp::create(b, loc, shifted, f64(dim.scale));
    return arith::SubFOp::create(b, loc, scaled, f64(0.5));
  };
  switch (mode) {
  case CoordinateTransform::half_pixel:
    return halfPixel();
  case CoordinateTransform::pytorch_half_pixel:
    return outputWidth == 1.0 ? f64(-0.5) : halfPixel();
  case CoordinateTransform::align_corners: {
    if (outputWidth == 1.0)
      return f64(0.0);
    Value stretched =
        arith::MulFOp::create(b, loc, y, f64(static_cast<double>(dim.inSize - 1)));
    return arith::DivFOp::create(b, loc, stretched, f64(outputWidth - 1.0));
  }
  case CoordinateTransform::asymmetric:
    return arith::DivFOp::create(b, loc, y, f64(dim.scale));
  case CoordinateTransform::half_pixel_symmetric: {
    double adjustment = static_cast<double>(dim.outSize) / outputWidth;
    double offset = static_cast<double>(dim.inSize) / 2.0 * (1.0 - adjustment);
    return arith::AddFOp::create(b, loc, f64(offset), halfPixel());
  }
  }
  llvm_unreachable("unknown coordinate transformation mode");
}

/// min(max(i, 0), size - 1) of an i64 `i`, as an index.
Value clampToIndex(OpBuilder &b, Location loc, Value i, int64_t size) {
  Type i64 = b.getI64Type();
  Value clamped = arith::MaxSIOp::create(
      b, loc,
      arith::MinSIOp::create(b, loc, i, arith::ConstantIntOp::create(b, loc, i64, size - 1)),
      arith::ConstantIntOp::create(b, loc, i64, 0));
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), clamped);
}

/// The taps of a resized dim for output index `y` (an index).
SmallVector<Tap> dimTaps(OpBuilder &b, Location loc, ResizeOp op, const DimPlan &dim,
                         Value y) {
  FloatType f64Type = b.getF64Type();
  Type i64 = b.getI64Type();
  auto f64 = [&](double v) {
    return arith::ConstantFloatOp::create(b, loc, f64Type, APFloat(v)).getResult();
  };
  auto i64Const = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i64, v).getResult();
  };
  Value yf = arith::SIToFPOp::create(
      b, loc, f64Type, arith::IndexCastOp::create(b, loc, i64, y).getResult());
  Value x = sourceCoordinate(b, loc, op.getCoordinateTransformationMode(), dim, yf);
  Value floorX = math::FloorOp::create(b, loc, x);
  Value base = arith::FPToSIOp::create(b, loc, i64, floorX);
  Value ratio = arith::SubFOp::create(b, loc, x, floorX);

  switch (op.getMode()) {
  case ResizeMode::nearest: {
    // Integral x reads x; otherwise floor or floor + 1 by nearest_mode.
    Value up;
    switch (op.getNearestMode()) {
    case NearestMode::round_prefer_floor:
      up = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, ratio, f64(0.5));
      break;
    case NearestMode::round_prefer_ceil:
      up = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, ratio, f64(0.5));
      break;
    case NearestMode::floor:
      up = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
      break;
    case NearestMode::ceil:
      up = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, ratio, f64(0.0));
      break;
    }
    Value index = arith::SelectOp::create(
        b, loc, up, arith::AddIOp::create(b, loc, base, i64Const(1)), base);
    return {{clampToIndex(b, loc, index, dim.inSize), Value()}};
  }
  case ResizeMode::linear: {
    Value one = f64(1.0);
    return {{clampToIndex(b, loc, base, dim.inSize),
             arith::SubFOp::create(b, loc, one, ratio)},
            {clampToIndex(b, loc, arith::AddIOp::create(b, loc, base, i64Const(1)),
                          dim.inSize),
             ratio}};
  }
  case ResizeMode::cubic: {
    double a = static_cast<double>(op.getCubicCoeffA().convertToFloat());
    // Keys' kernel at distance t from the sample, for t in [1, 2] (outer)
    // and [0, 1] (inner), as the reference writes it.
    auto outer = [&](Value t) -> Value {
      Value v = arith::SubFOp::create(b, loc, arith::MulFOp::create(b, loc, f64(a), t),
                                      f64(5 * a));
      v = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, v, t), f64(8 * a));
      return arith::SubFOp::create(b, loc, arith::MulFOp::create(b, loc, v, t), f64(4 * a));
    };
    auto inner = [&](Value t) -> Value {
      Value v = arith::SubFOp::create(b, loc, arith::MulFOp::create(b, loc, f64(a + 2), t),
                                      f64(a + 3));
      v = arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, v, t), t);
      return arith::AddFOp::create(b, loc, v, f64(1.0));
    };
    Value one = f64(1.0);
    Value rest = arith::SubFOp::create(b, loc, one, ratio);
    SmallVector<Value> weights = {outer(arith::AddFOp::create(b, loc, ratio, one)),
                                  inner(ratio), inner(rest),
                                  outer(arith::AddFOp::create(b, loc, rest, one))};
    SmallVector<Tap> taps;
    for (int64_t t = 0; t < 4; ++t)
      taps.push_back(
          {clampToIndex(b, loc, arith::AddIOp::create(b, loc, base, i64Const(t - 1)),
                        dim.inSize),
           weights[t]});
    return taps;
  }
  }
  llvm_unreachable("unknown resize mode");
}

struct ResizeToGeneric final : OpConversionPattern<ResizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ResizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    RankedTensorType result = op.getType();
    int64_t rank = result.getRank();
    ArrayRef<float> scales = op.getScales();
    SmallVector<DimPlan> plans(rank);
    int64_t taps = 1;
    SmallVector<Value> dynamicSizes;
    for (int64_t i = 0; i < rank; ++i) {
      DimPlan &dim = plans[i];
      int64_t in = inputType.getDimSize(i), out = result.getDimSize(i);
      bool unitScale = scales.empty() || scales[i] == 1.0f;
      if (ShapedType::isDynamic(in) || ShapedType::isDynamic(out)) {
        if (in != out || !unitScale)
          return lowering::failLowering(rewriter, op, "a resized dim is dynamic");
        dim.identity = true;
        dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, input, i));
        continue;
      }
      dim.inSize = in, dim.outSize = out;
      dim.identity = in == out && unitScale;
      if (dim.identity)
        continue;
      if (in == 0)
        return lowering::failLowering(rewriter, op, "resizing an empty dim");
      dim.scale = scales.empty() ? static_cast<double>(out) / static_cast<double>(in)
                                 : static_cast<double>(scales[i]);
      taps *= op.getMode() == ResizeMode::cubic    ? 4
              : op.getMode() == ResizeMode::linear ? 2
                                                   : 1;
      if (taps > kMaxTaps)
        return lowering::failLowering(rewriter, op, "too many taps per output element");
    }

    Type element = result.getElementType();
    // Accumulate in f32 (f64 for f64 tensors); weights are f64.
    Type accType = element.isF64() ? element : rewriter.getF32Type();
    Value init = lowering::createInit(rewriter, loc, result, dynamicSizes);
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, result, ValueRange{}, init, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<SmallVector<Tap>> perDim;
          for (int64_t i = 0; i < rank; ++i) {
            Value y = linalg::IndexOp::create(b, l, i);
            if (plans[i].identity)
              perDim.push_back({{y, Value()}});
            else
              perDim.push_back(dimTaps(b, l, op, plans[i], y));
          }
          // Walk every combination of taps (an odometer over the dims).
          SmallVector<size_t> choice(rank, 0);
          Value sum;
          while (true) {
            SmallVector<Value> coords;
            Value weight;
            for (int64_t i = 0; i < rank; ++i) {
              const Tap &tap = perDim[i][choice[i]];
              coords.push_back(tap.index);
              if (tap.weight)
                weight = weight ? arith::MulFOp::create(b, l, weight, tap.weight).getResult()
                                : tap.weight;
            }
            Value value = tensor::ExtractOp::create(b, l, input, coords);
            if (weight) {
              if (value.getType() != accType)
                value = arith::ExtFOp::create(b, l, accType, value);
              if (accType != weight.getType())
                weight = arith::TruncFOp::create(b, l, accType, weight);
              value = arith::MulFOp::create(b, l, weight, value);
            }
            sum = sum ? arith::AddFOp::create(b, l, sum, value).getResult() : value;
            int64_t i = rank - 1;
            for (; i >= 0; --i) {
              if (++choice[i] < perDim[i].size())
                break;
              choice[i] = 0;
            }
            if (i < 0)
              break;
          }
          if (sum.getType() != element)
            sum = arith::TruncFOp::create(b, l, element, sum);
          linalg::YieldOp::create(b, l, sum);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// Reflects `x` (f32) into [lo, hi] by the nearer border until inside, as
/// the ONNX reference's _gs_reflect: n = trunc(distance / range) whole
/// ranges, then the rest from the border an even n leaves it at.
Value reflectInto(OpBuilder &b, Location loc, Value x, double lo, double hi) {
  Type f32 = b.getF32Type();
  auto k = [&](double v) {
    return arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32), APFloat(float(v)))
        .getResult();
  };
  Value low = k(lo), high = k(hi), range = k(hi - lo);
  auto fold = [&](Value distance, Value near, Value far, bool fromLow) -> Value {
    Value whole = arith::FPToSIOp::create(
        b, loc, b.getI64Type(), arith::DivFOp::create(b, loc, distance, range));
    Value rest = arith::SubFOp::create(
        b, loc, distance,
        arith::MulFOp::create(b, loc, arith::SIToFPOp::create(b, loc, f32, whole), range));
    Value even = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::AndIOp::create(b, loc, whole,
                              arith::ConstantIntOp::create(b, loc, b.getI64Type(), 1)),
        arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0));
    Value fromNear = fromLow ? arith::AddFOp::create(b, loc, near, rest).getResult()
                             : arith::SubFOp::create(b, loc, near, rest).getResult();
    Value fromFar = fromLow ? arith::SubFOp::create(b, loc, far, rest).getResult()
                            : arith::AddFOp::create(b, loc, far, rest).getResult();
    return arith::SelectOp::create(b, loc, even, fromNear, fromFar);
  };
  Value below = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, low);
  Value above = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, high);
  Value fromLow = fold(arith::SubFOp::create(b, loc, low, x), low, high, true);
  Value fromHigh = fold(arith::SubFOp::create(b, loc, x, high), high, low, false);
  return arith::SelectOp::create(b, loc, below, fromLow,
                                 arith::SelectOp::create(b, loc, above, fromHigh, x));
}

/// A tap of grid_sample along one dim: the index read, whether it is inside
/// (zeros padding reads 0 outside), and its weight (null for 1).
struct GridTap {
  Value index, inside, weight;
};

/// grid_sample as one generic over the output [N, C, O...]: per spatial dim
/// the grid coordinate is denormalized, (nearest) rounded half to even,
/// brought inside by the padding mode, and split into taps whose indices
/// go through the padding mode again, exactly as the ONNX reference does.
struct GridSampleToGeneric final : OpConversionPattern<GridSampleOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GridSampleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), grid = adaptor.getGrid();
    auto inputType = cast<RankedTensorType>(input.getType());
    RankedTensorType result = op.getType();
    int64_t spatial = inputType.getRank() - 2, outRank = result.getRank();
    for (int64_t i = 2; i < inputType.getRank(); ++i)
      if (inputType.isDynamicDim(i))
        return lowering::failLowering(rewriter, op, "dynamic spatial dims");
    int64_t taps = 1;
    for (int64_t i = 0; i < spatial; ++i)
      taps *= op.getMode() == ResizeMode::cubic ? 4 : op.getMode() == ResizeMode::linear ? 2 : 1;
    if (taps > kMaxTaps)
      return lowering::failLowering(rewriter, op, "too many taps per output element");
    Type element = result.getElementType();
    if (!element.isF32() && !element.isF16() && !element.isBF16() && !element.isF64())
      return lowering::failLowering(rewriter, op, "element type");
    bool align = op.getAlignCorners();
    GridSamplePadding padding = op.getPaddingMode();
    ResizeMode mode = op.getMode();
    SmallVector<Value> dynamicSizes;
    for (int64_t i = 0; i < outRank; ++i)
      if (result.isDynamicDim(i))
        dynamicSizes.push_back(i < 2 ? tensor::DimOp::create(rewriter, loc, input, i)
                                     : tensor::DimOp::create(rewriter, loc, grid, i - 1));
    Value init = lowering::createInit(rewriter, loc, result, dynamicSizes);
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(outRank)};
    SmallVector<utils::IteratorType> iterators(outRank, utils::IteratorType::parallel);
    Type accType = element.isF64() ? element : rewriter.getF32Type();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, result, ValueRange{}, init, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange) {
          Type f32 = b.getF32Type(), i64 = b.getI64Type();
          auto k = [&](double v) {
            return arith::ConstantFloatOp::create(b, l, cast<FloatType>(f32), APFloat(float(v)))
                .getResult();
          };
          auto i64c = [&](int64_t v) { return arith::ConstantIntOp::create(b, l, i64, v).getResult(); };
          SmallVector<Value> outIndex;
          for (int64_t i = 0; i < outRank; ++i)
            outIndex.push_back(linalg::IndexOp::create(b, l, i));
          SmallVector<SmallVector<GridTap>> perDim;
          for (int64_t d = 0; d < spatial; ++d) {
            int64_t size = inputType.getDimSize(d + 2);
            double lo = align ? 0.0 : -0.5, hi = align ? size - 1.0 : size - 0.5;
            // grid[n, o..., spatial - 1 - d]
            SmallVector<Value> at = {outIndex[0]};
            llvm::append_range(at, ArrayRef(outIndex).drop_front(2));
            at.push_back(arith::ConstantIndexOp::create(b, l, spatial - 1 - d));
            Value g = tensor::ExtractOp::create(b, l, grid, at);
            if (g.getType() != f32)
              g = g.getType().getIntOrFloatBitWidth() > 32
                      ? arith::TruncFOp::create(b, l, f32, g).getResult()
                      : arith::ExtFOp::create(b, l, f32, g).getResult();
            Value gp1 = arith::AddFOp::create(b, l, g, k(1.0));
            Value x = align ? arith::MulFOp::create(
                                  b, l, arith::DivFOp::create(b, l, gp1, k(2.0)), k(size - 1.0))
                                  .getResult()
                            : arith::DivFOp::create(
                                  b, l,
                                  arith::SubFOp::create(
                                      b, l, arith::MulFOp::create(b, l, gp1, k(double(size))),
                                      k(1.0)),
                                  k(2.0))
                                  .getResult();
            if (mode == ResizeMode::nearest)
              x = math::RoundEvenOp::create(b, l, x);
            if (padding == GridSamplePadding::border) {
              // Clamped into [0, size - 1] only when outside [lo, hi].
              Value outside = arith::OrIOp::create(
                  b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, k(lo)),
                  arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, k(hi)));
              Value clamped = arith::MinimumFOp::create(
                  b, l, arith::MaximumFOp::create(b, l, x, k(0.0)), k(size - 1.0));
              x = arith::SelectOp::create(b, l, outside, clamped, x);
            }
            else if (padding == GridSamplePadding::reflection)
              x = reflectInto(b, l, x, lo, hi);
            // An index through the padding mode: zeros marks it outside,
            // border clamps, reflection reflects (then truncates, as int()).
            auto tapAt = [&](Value index, Value weight) -> GridTap {
              Value last = i64c(size - 1);
              Value clamped = arith::MaxSIOp::create(
                  b, l, arith::MinSIOp::create(b, l, index, last), i64c(0));
              Value inside;
              if (padding == GridSamplePadding::zeros) {
                inside = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, clamped, index);
              } else if (padding == GridSamplePadding::reflection) {
                Value r = reflectInto(b, l, arith::SIToFPOp::create(b, l, f32, index), lo, hi);
                Value ri = arith::FPToSIOp::create(b, l, i64, r);
                clamped = arith::MaxSIOp::create(
                    b, l, arith::MinSIOp::create(b, l, ri, last), i64c(0));
              }
              return {arith::IndexCastOp::create(b, l, b.getIndexType(), clamped), inside,
                      weight};
            };
            SmallVector<GridTap> list;
            if (mode == ResizeMode::nearest) {
              list.push_back(tapAt(arith::FPToSIOp::create(b, l, i64, x), Value()));
            } else {
              Value floorX = math::FloorOp::create(b, l, x);
              Value base = arith::FPToSIOp::create(b, l, i64, floorX);
              Value t = arith::SubFOp::create(b, l, x, floorX);
              SmallVector<Value> weights;
              if (mode == ResizeMode::linear) {
                weights = {arith::SubFOp::create(b, l, k(1.0), t), t};
              } else {
                const double a = -0.75;
                auto outer = [&](Value s) -> Value { // Keys' kernel for s in [1, 2]
                  Value v = arith::SubFOp::create(b, l, arith::MulFOp::create(b, l, k(a), s),
                                                  k(5 * a));
                  v = arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, v, s), k(8 * a));
                  return arith::SubFOp::create(b, l, arith::MulFOp::create(b, l, v, s), k(4 * a));
                };
                auto inner = [&](Value s) -> Value { // and for s in [0, 1]
                  Value v = arith::SubFOp::create(
                      b, l, arith::MulFOp::create(b, l, k(a + 2), s), k(a + 3));
                  v = arith::MulFOp::create(b, l, arith::MulFOp::create(b, l, v, s), s);
                  return arith::AddFOp::create(b, l, v, k(1.0));
                };
                Value rest = arith::SubFOp::create(b, l, k(1.0), t);
                weights = {outer(arith::AddFOp::create(b, l, t, k(1.0))), inner(t), inner(rest),
                           outer(arith::SubFOp::create(b, l, k(2.0), t))};
              }
              int64_t first = mode == ResizeMode::cubic ? -1 : 0;
              for (auto [j, w] : llvm::enumerate(weights))
                list.push_back(
                    tapAt(arith::AddIOp::create(b, l, base, i64c(first + int64_t(j))), w));
            }
            perDim.push_back(std::move(list));
          }
          // Sum over every combination of taps (an odometer over the dims).
          SmallVector<size_t> choice(spatial, 0);
          Value sum;
          Value zero = arith::ConstantFloatOp::create(b, l, cast<FloatType>(accType),
                                                      APFloat::getZero(cast<FloatType>(accType).getFloatSemantics()));
          while (true) {
            SmallVector<Value> coords = {outIndex[0], outIndex[1]};
            Value weight, inside;
            for (int64_t d = 0; d < spatial; ++d) {
              const GridTap &tap = perDim[d][choice[d]];
              coords.push_back(tap.index);
              if (tap.weight)
                weight = weight ? arith::MulFOp::create(b, l, weight, tap.weight).getResult()
                                : tap.weight;
              if (tap.inside)
                inside = inside ? arith::AndIOp::create(b, l, inside, tap.inside).getResult()
                                : tap.inside;
            }
            Value value = tensor::ExtractOp::create(b, l, input, coords);
            if (value.getType() != accType)
              value = arith::ExtFOp::create(b, l, accType, value);
            if (inside)
              value = arith::SelectOp::create(b, l, inside, value, zero);
            if (weight) {
              if (weight.getType() != accType)
                weight = arith::ExtFOp::create(b, l, accType, weight);
              value = arith::MulFOp::create(b, l, weight, value);
            }
            sum = sum ? arith::AddFOp::create(b, l, sum, value).getResult() : value;
            int64_t d = spatial - 1;
            for (; d >= 0; --d) {
              if (++choice[d] < perDim[d].size())
                break;
              choice[d] = 0;
            }
            if (d < 0)
              break;
          }
          if (sum.getType() != element)
            sum = arith::TruncFOp::create(b, l, element, sum);
          linalg::YieldOp::create(b, l, sum);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void populateResizeToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ResizeToGeneric, GridSampleToGeneric>(patterns.getContext());
}

} // namespace kiln
