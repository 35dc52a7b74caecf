//===- PoolToLinalg.cpp - kiln pooling -> linalg ------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// 2-D max pooling of up to 49 taps is one all-parallel generic with the taps
// unrolled; other 2-D pooling uses pooling_nchw_{max,sum}, 1-D and 3-D the
// same windows as a linalg.generic; average pooling divides by the number of elements each
// window really covered, computed the same way on ones.
// Global pooling is rewritten as kiln.reduce, which the reduction patterns
// lower.
//
//===----------------------------------------------------------------------===//

#include "LoweringFailure.h"
#include "LinalgBuilders.h"
#include "PitchedViews.h"
#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/IR/ShapeUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace kiln {
namespace {

using lowering::batchDynamicSize;
using lowering::createInit;
using lowering::padSpatial;
using lowering::scalarConstant;

/// Extra end padding so that ceil-mode windows stay inside the input.
SmallVector<int64_t> poolEndPads(RankedTensorType input, RankedTensorType result,
                                 ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                                 ArrayRef<int64_t> dilations, ArrayRef<int64_t> pads) {
  int64_t spatial = kernel.size();
  SmallVector<int64_t> ends;
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t needed = (result.getDimSize(i + 2) - 1) * strides[i] +
                     dilations[i] * (kernel[i] - 1) + 1;
    int64_t have = input.getDimSize(i + 2) + pads[i] + pads[i + spatial];
    ends.push_back(pads[i + spatial] + std::max<int64_t>(0, needed - have));
  }
  return ends;
}

/// A max or sum pooling of the padded NC... `input` into `init`: the NCHW
/// named ops for 2-D, otherwise the same computation as a linalg.generic over
/// (n, c, o1..ok, w1..wk) reading input[n, c, o_i * stride_i + w_i * dilation_i].
Value poolWindows(OpBuilder &b, Location loc, RankedTensorType result, Value input,
                  ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                  ArrayRef<int64_t> dilations, Value init, bool isMax) {
  Type element = result.getElementType();
  int64_t spatial = kernel.size(), rank = result.getRank();
  if (spatial == 2) {
    Value window = tensor::EmptyOp::create(b, loc, kernel, element);
    auto stridesAttr = b.getI64TensorAttr(strides);
    auto dilationsAttr = b.getI64TensorAttr(dilations);
    if (isMax)
      return linalg::PoolingNchwMaxOp::create(b, loc, result, ValueRange{input, window},
                                              init, stridesAttr, dilationsAttr)
          .getResult(0);
    return linalg::PoolingNchwSumOp::create(b, loc, result, ValueRange{input, window}, init,
                                            stridesAttr, dilationsAttr)
        .getResult(0);
  }
  MLIRContext *context = b.getContext();
  int64_t loops = rank + spatial;
  SmallVector<AffineExpr> inputExprs = {getAffineDimExpr(0, context),
                                        getAffineDimExpr(1, context)};
  SmallVector<AffineExpr> windowExprs;
  for (int64_t i = 0; i < spatial; ++i) {
    AffineExpr out = getAffineDimExpr(2 + i, context);
    AffineExpr tap = getAffineDimExpr(rank + i, context);
    inputExprs.push_back(out * strides[i] + tap * dilations[i]);
    windowExprs.push_back(tap);
  }
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, inputExprs, context),
                                 AffineMap::get(loops, 0, windowExprs, context),
                                 AffineMap::getMultiDimIdentityMap(rank, context)};
  maps.back() = AffineMap::get(loops, 0, maps.back().getResults(), context);
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators.append(spatial, utils::IteratorType::reduction);
  Value window = tensor::EmptyOp::create(b, loc, kernel, element);
  return linalg::GenericOp::create(
             b, loc, result, ValueRange{input, window}, init, maps, iterators,
             [isMax](OpBuilder &nb, Location l, ValueRange args) {
               Value combined =
                   isMax ? arith::MaximumFOp::create(nb, l, args[0], args[2]).getResult()
                         : arith::AddFOp::create(nb, l, args[0], args[2]).getResult();
               linalg::YieldOp::create(nb, l, combined);
             })
      .getResult(0);
}

/// Windows up to this many taps are unrolled into one all-parallel generic
/// (as depthwise convs are, ConvToLinalg.cpp): ResNet's 3x3 stride-2 max
/// pooling ran as pooling_nchw_max's scalar window loops after a -inf fill
/// of its output, at 4x onnxruntime's time.
constexpr int64_t kMaxUnrolledPoolTaps = 49;

/// max over `taps` (views in the shape `type`) as one all-parallel generic:
/// the output is written once (no fill), with no window loops.
Value maxOfTaps(OpBuilder &b, Location loc, RankedTensorType type, ArrayRef<Value> taps,
                ValueRange dynamicSizes) {
  SmallVector<AffineMap> maps(taps.size() + 1, b.getMultiDimIdentityMap(type.getRank()));
  return linalg::GenericOp::create(
             b, loc, type, taps, createInit(b, loc, type, dynamicSizes), maps,
             SmallVector<utils::IteratorType>(type.getRank(), utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value max = args[0];
               for (Value tap : args.drop_front().drop_back())
                 max = arith::MaximumFOp::create(nb, l, max, tap);
               linalg::YieldOp::create(nb, l, max);
             })
      .getResult(0);
}

/// 2-D max pooling as maxOfTaps over strided views of the padded input in
/// the output's shape, the innermost loop along the output row:
///   out[n, c, y, x] = max_(i,j) in[n, c, y*sh + i*dh, x*sw + j*dw]
Value unrolledMaxPool(OpBuilder &b, Location loc, RankedTensorType result, Value input,
                      ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                      ArrayRef<int64_t> dilations, ValueRange dynamicSizes) {
  SmallVector<Value> taps = lowering::stridedTaps(b, loc, result, input, kernel[0], kernel[1],
                                                  strides, dilations, dynamicSizes);
  return maxOfTaps(b, loc, result, taps, dynamicSizes);
}

/// Whether max pooling runs on the phases of its padded input
/// (maxPoolOnPhases): 2-D, static shapes but the batch, equal strides above 1,
/// no dilation.
bool maxPoolRunsOnPhases(RankedTensorType input, RankedTensorType result,
                         ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                         ArrayRef<int64_t> dilations) {
  return kernel.size() == 2 && hasStaticShapeButBatch(input) && hasStaticShapeButBatch(result) &&
         strides[0] == strides[1] && strides[0] > 1 &&
         llvm::all_of(dilations, [](int64_t d) { return d == 1; });
}

/// Max pooling of stride s on the s*s phases of its padded input (padded to
/// whole phases, PitchedViews.h): tap (i, j) is a contiguous slice of a
/// flattened phase, the output computed at the phase row pitch Wq, as the
/// strided depthwise convs (ConvToLinalg.cpp): the strided taps' loop ran a
/// scalar remainder of each row with NaN-propagating maxima.
Value maxPoolOnPhases(OpBuilder &b, Location loc, RankedTensorType result, Value input,
                      ArrayRef<int64_t> kernel, int64_t s, ValueRange dynamicSizes) {
  int64_t wq = cast<RankedTensorType>(input.getType()).getDimSize(3) / s;
  int64_t columns = result.getDimSize(2) * wq;
  Value phases = lowering::stridedPhases(b, loc, input, s);
  SmallVector<Value> taps;
  for (int64_t i = 0; i < kernel[0]; ++i)
    for (int64_t j = 0; j < kernel[1]; ++j)
      taps.push_back(lowering::phaseTap(b, loc, phases, s, wq, i, j, columns));
  auto flatType = RankedTensorType::get({result.getDimSize(0), result.getDimSize(1), columns},
                                        result.getElementType());
  Value out = maxOfTaps(b, loc, flatType, taps, dynamicSizes);
  return lowering::dropPitchColumns(b, loc, out, result, wq,
                                    tensor::getMixedSize(b, loc, phases, 0));
}

template <typename OpTy>
struct PoolToLinalg final : OpConversionPattern<OpTy> {
  PoolToLinalg(MLIRContext *context, bool stridedOnPhases)
      : OpConversionPattern<OpTy>(context), stridedOnPhases(stridedOnPhases) {}
  bool stridedOnPhases;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    constexpr bool isMax = std::is_same_v<OpTy, MaxPoolOp>;
    Location loc = op.getLoc();
    RankedTensorType result = op.getType();
    auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
    int64_t spatial = inputType.getRank() - 2;
    for (int64_t i = 1; i < inputType.getRank(); ++i)
      if (inputType.isDynamicDim(i))
        return lowering::failLowering(rewriter, op, "dynamic channel or spatial dims");
    Type element = result.getElementType();
    ArrayRef<int64_t> kernel = op.getKernelShape(), pads = op.getPads();
    ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations();
    SmallVector<int64_t> ends =
        poolEndPads(inputType, result, kernel, strides, dilations, pads);
    SmallVector<Value> dynamicSizes =
        batchDynamicSize(rewriter, loc, result, adaptor.getInput());
    Value zero = scalarConstant(rewriter, loc, element, 0);

    if constexpr (isMax) {
      Value lowest = lowering::lowestValue(rewriter, loc, element);
      bool onPhases = stridedOnPhases &&
                      kernel.size() == 2 && kernel[0] * kernel[1] <= kMaxUnrolledPoolTaps &&
                      maxPoolRunsOnPhases(inputType, result, kernel, strides, dilations);
      if (onPhases) {
        int64_t h = inputType.getDimSize(2) + pads[0], w = inputType.getDimSize(3) + pads[1];
        auto [hp, wp] = lowering::phasePaddedSize(h + ends[0], w + ends[1], kernel[0],
                                                  kernel[1], strides[0], result.getDimSize(2));
        ends = {hp - h, wp - w};
      }
      Value input = padSpatial(rewriter, loc, adaptor.getInput(), pads.take_front(spatial),
                               ends, lowest);
      if (onPhases) {
        rewriter.replaceOp(op, maxPoolOnPhases(rewriter, loc, result, input, kernel, strides[0],
                                               dynamicSizes));
        return success();
      }
      if (spatial == 2 && kernel[0] * kernel[1] <= kMaxUnrolledPoolTaps) {
        rewriter.replaceOp(op, unrolledMaxPool(rewriter, loc, result, input, kernel, strides,
                                               dilations, dynamicSizes));
        return success();
      }
      Value init = createInit(rewriter, loc, result, dynamicSizes, lowest);
      rewriter.replaceOp(op, poolWindows(rewriter, loc, result, input, kernel, strides,
                                         dilations, init, /*isMax=*/true));
      return success();
    } else {
      auto sumPool = [&](Value source, ArrayRef<int64_t> begins, ArrayRef<int64_t> endPads,
                         Value padValue) {
        Value padded = padSpatial(rewriter, loc, source, begins, endPads, padValue);
        Value init = createInit(rewriter, loc, result, dynamicSizes, zero);
        return poolWindows(rewriter, loc, result, padded, kernel, strides, dilations, init,
                           /*isMax=*/false);
      };
      Value sums = sumPool(adaptor.getInput(), pads.take_front(spatial), ends, zero);
      // Counts: the same windows over ones; explicit pads count only with
      // count_include_pad, the ceil-mode overhang never does.
      Value one = scalarConstant(rewriter, loc, element, 1);
      Value ones = createInit(rewriter, loc, inputType,
                              lowering::dynamicSizesOf(rewriter, loc, adaptor.getInput()),
                              one);
      Value counted = ones;
      SmallVector<int64_t> overhang;
      for (int64_t i = 0; i < spatial; ++i)
        overhang.push_back(ends[i] - pads[i + spatial]);
      if (op.getCountIncludePad())
        counted = padSpatial(rewriter, loc, ones, pads.take_front(spatial),
                             pads.drop_front(spatial), one);
      SmallVector<int64_t> noPads(spatial, 0);
      Value counts = op.getCountIncludePad()
                         ? sumPool(counted, noPads, overhang, zero)
                         : sumPool(counted, pads.take_front(spatial), ends, zero);
      rewriter.replaceOp(op, lowering::buildElementwise(
                                 rewriter, loc, result, {sums, counts},
                                 [](OpBuilder &b, Location l, ValueRange a) -> Value {
                                   return arith::DivFOp::create(b, l, a[0], a[1]);
                                 }));
      return success();
    }
  }
};

/// global pooling = reduce over every spatial dim, keeping them as 1.
template <typename OpTy, ReduceKind kind>
struct GlobalPoolToReduce final : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    int64_t rank = op.getType().getRank();
    rewriter.replaceOpWithNewOp<ReduceOp>(
        op, op.getType(), adaptor.getInput(), kind,
        llvm::to_vector(llvm::seq<int64_t>(2, rank)), /*keepdims=*/true);
    return success();
  }
};

} // namespace

void populatePoolToLinalgPatterns(RewritePatternSet &patterns,
                                  const ConvLoweringOptions &options) {
  patterns.add<PoolToLinalg<MaxPoolOp>, PoolToLinalg<AvgPoolOp>>(patterns.getContext(),
                                                                 options.stridedWindowsOnPhases);
  patterns.add<GlobalPoolToReduce<GlobalAvgPoolOp, ReduceKind::mean>,
               GlobalPoolToReduce<GlobalMaxPoolOp, ReduceKind::max>>(patterns.getContext());
}

} // namespace kiln
