//===- ReductionToLinalg.cpp - kiln reductions, softmax and norms -> linalg ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Reductions become reduction linalg.generics into the shape without the
// reduced dims (then tensor.expand_shape for keepdims). Softmax and the norms
// are the textbook passes (max, exp-sum, divide; mean, variance, scale),
// numerically stable, each a generic that the dispatch stage can fuse.
//
//===----------------------------------------------------------------------===//

#include "LoweringFailure.h"
#include "LinalgBuilders.h"
#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace kiln {
namespace {

using lowering::createInit;
using lowering::scalarConstant;
using Combiner = function_ref<Value(OpBuilder &, Location, Value elem, Value acc)>;

/// Sorted, normalized axes; empty `axes` means all.
SmallVector<int64_t> normalizedAxes(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> result;
  if (axes.empty())
    return llvm::to_vector(llvm::seq<int64_t>(0, rank));
  for (int64_t axis : axes)
    result.push_back(axis < 0 ? axis + rank : axis);
  llvm::sort(result);
  return result;
}

/// Map from the full loop space to the dims that survive reducing `axes`.
AffineMap keptDimsMap(int64_t rank, ArrayRef<int64_t> axes, MLIRContext *context) {
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < rank; ++i)
    if (!llvm::is_contained(axes, i))
      exprs.push_back(getAffineDimExpr(i, context));
  return AffineMap::get(rank, 0, exprs, context);
}

/// Reduces `input` over `axes` with `combine`, starting from `initValue`;
/// `prologue` maps each element first (e.g. x*x for l2). Result drops the axes.
Value reduce(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes,
             Value initValue, Combiner combine) {
  auto type = cast<RankedTensorType>(input.getType());
  // Several trailing axes are one contiguous axis: reducing that gives the
  // same result and a single innermost reduction loop (global pooling).
  int64_t rank = type.getRank(), first = rank - static_cast<int64_t>(axes.size());
  if (axes.size() > 1 && llvm::equal(axes, llvm::seq<int64_t>(first, rank))) {
    SmallVector<ReassociationIndices> groups;
    for (int64_t i = 0; i < first; ++i)
      groups.push_back({i});
    groups.push_back(llvm::to_vector(llvm::seq<int64_t>(first, rank)));
    Value collapsed = tensor::CollapseShapeOp::create(b, loc, input, groups);
    return reduce(b, loc, collapsed, {first}, initValue, combine);
  }
  SmallVector<int64_t> shape;
  SmallVector<Value> dynamicSizes;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (llvm::is_contained(axes, i))
      continue;
    shape.push_back(type.getDimSize(i));
    if (type.isDynamicDim(i))
      dynamicSizes.push_back(tensor::DimOp::create(b, loc, input, i));
  }
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  Value init = createInit(b, loc, resultType, dynamicSizes, initValue);
  SmallVector<utils::IteratorType> iterators;
  for (int64_t i = 0; i < type.getRank(); ++i)
    iterators.push_back(llvm::is_contained(axes, i) ? utils::IteratorType::reduction
                                                    : utils::IteratorType::parallel);
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(type.getRank()),
                                 keptDimsMap(type.getRank(), axes, b.getContext())};
  return linalg::GenericOp::create(
             b, loc, resultType, input, init, maps, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, combine(nb, nl, args[0], args[1]));
             })
      .getResult(0);
}

/// Expands a reduced tensor back to `keepType` (the reduced dims as 1s).
Value expandReduced(OpBuilder &b, Location loc, Value reduced,
                    RankedTensorType keepType, ArrayRef<int64_t> axes) {
  return tensor::ExpandShapeOp::create(
      b, loc, keepType, reduced, lowering::unitDimGroups(keepType.getRank(), axes));
}

/// The element count of `axes` of `input`, as a scalar of `element` type.
Value reducedCount(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes,
                   Type element) {
  Value count = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t axis : axes)
    count = arith::MulIOp::create(b, loc, count,
                                  tensor::DimOp::create(b, loc, input, axis));
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), count);
  if (isa<FloatType>(element))
    return arith::SIToFPOp::create(b, loc, element, asInt);
  if (element.getIntOrFloatBitWidth() == 64)
    return asInt;
  return arith::TruncIOp::create(b, loc, element, asInt);
}

/// Reduction combiners may reassociate: that is what lets the loop
/// vectorizer keep partial sums in vector lanes instead of one serial chain.
arith::FastMathFlagsAttr reassociable(OpBuilder &b) {
  return arith::FastMathFlagsAttr::get(b.getContext(), arith::FastMathFlags::reassoc);
}
/// `x op y` with the float or the signed-integer op; `reassoc` float ops may
/// reassociate (reduction combiners, see reassociable).
template <typename FloatOp, typename IntOp, bool reassoc = false>
Value binary(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType())) {
    if constexpr (reassoc)
      return FloatOp::create(b, loc, x, y, reassociable(b));
    return FloatOp::create(b, loc, x, y);
  }
  return IntOp::create(b, loc, x, y);
}

Value addReassoc(OpBuilder &b, Location loc, Value x, Value y) {
  return binary<arith::AddFOp, arith::AddIOp, true>(b, loc, x, y);
}
Value maxReassoc(OpBuilder &b, Location loc, Value x, Value y) {
  return binary<arith::MaximumFOp, arith::MaxSIOp, true>(b, loc, x, y);
}
/// The max that only shifts exponentials for stability: a NaN reaches the
/// result through its own exponential anyway, so maxnum (which ignores
/// NaN operands) is as good as maximum there, and cheaper on x86.
Value stabilizingMax(OpBuilder &b, Location loc, Value x, Value y) {
  return binary<arith::MaxNumFOp, arith::MaxSIOp, true>(b, loc, x, y);
}
Value mulReassoc(OpBuilder &b, Location loc, Value x, Value y) {
  return binary<arith::MulFOp, arith::MulIOp, true>(b, loc, x, y);
}
Value mul(OpBuilder &b, Location loc, Value x, Value y) {
  return binary<arith::MulFOp, arith::MulIOp>(b, loc, x, y);
}
Value minimum(OpBuilder &b, Location loc, Value x, Value y) {
  return binary<arith::MinimumFOp, arith::MinSIOp>(b, loc, x, y);
}
Value divide(OpBuilder &b, Location loc, Value x, Value y) {
  return binary<arith::DivFOp, arith::DivSIOp>(b, loc, x, y);
}

/// Elementwise generic over `input`'s shape; `reduced` (shape without `axes`)
/// is read through the kept-dims map.
Value mapWithReduced(OpBuilder &b, Location loc, Value input, Value reduced,
                     ArrayRef<int64_t> axes,
                     function_ref<Value(OpBuilder &, Location, Value, Value)> body) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(type.getRank()),
                                 keptDimsMap(type.getRank(), axes, b.getContext()),
                                 b.getMultiDimIdentityMap(type.getRank())};
  Value init = createInit(b, loc, type, lowering::dynamicSizesOf(b, loc, input));
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{input, reduced}, init, maps, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, body(nb, nl, args[0], args[1]));
             })
      .getResult(0);
}

struct ReduceToLinalg final : OpConversionPattern<ReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    Type element = type.getElementType();
    if (element.isUnsignedInteger())
      return lowering::failLowering(rewriter, op, "unsigned integer tensors");
    bool isFloat = isa<FloatType>(element);
    SmallVector<int64_t> axes = normalizedAxes(op.getAxes(), type.getRank());
    Value zero = scalarConstant(rewriter, loc, element, 0);
    auto sum = [&](Value v) {
      return reduce(rewriter, loc, v, axes, zero, addReassoc);
    };
    auto squares = [&](Value v) {
      return lowering::buildElementwise(rewriter, loc, type, v,
                                        [](OpBuilder &b, Location l, ValueRange a) {
                                          return mul(b, l, a[0], a[0]);
                                        });
    };
    Value reduced;
    switch (op.getKind()) {
    case ReduceKind::sum:
      reduced = sum(input);
      break;
    case ReduceKind::mean: {
      Value total = sum(input);
      Value count = reducedCount(rewriter, loc, input, axes, element);
      reduced = lowering::buildElementwise(
          rewriter, loc, cast<RankedTensorType>(total.getType()), total,
          [&](OpBuilder &b, Location l, ValueRange a) { return divide(b, l, a[0], count); });
      break;
    }
    case ReduceKind::max:
      reduced = reduce(rewriter, loc, input, axes,
                       lowering::lowestValue(rewriter, loc, element), maxReassoc);
      break;
    case ReduceKind::min:
      reduced = reduce(rewriter, loc, input, axes,
                       lowering::highestValue(rewriter, loc, element), minimum);
      break;
    case ReduceKind::prod:
      reduced = reduce(rewriter, loc, input, axes,
                       scalarConstant(rewriter, loc, element, 1), mulReassoc);
      break;
    case ReduceKind::sum_square:
      reduced = sum(squares(input));
      break;
    case ReduceKind::l1:
      reduced = reduce(rewriter, loc, input, axes, zero,
                       [&](OpBuilder &b, Location l, Value x, Value acc) {
                         Value absolute = isFloat ? math::AbsFOp::create(b, l, x).getResult()
                                                  : math::AbsIOp::create(b, l, x).getResult();
                         return addReassoc(b, l, absolute, acc);
                       });
      break;
    case ReduceKind::l2:
    case ReduceKind::log_sum_exp: {
      if (!isFloat)
        return lowering::failLowering(rewriter, op, "l2/log_sum_exp need floats");
      if (op.getKind() == ReduceKind::l2) {
        Value total = sum(squares(input));
        reduced = lowering::buildElementwise(
            rewriter, loc, cast<RankedTensorType>(total.getType()), total,
            [](OpBuilder &b, Location l, ValueRange a) -> Value {
              return math::SqrtOp::create(b, l, a[0]);
            });
        break;
      }
      // log(sum(exp(x - m))) + m with m = max(x), stable for large x.
      Value m = reduce(rewriter, loc, input, axes,
                       lowering::lowestValue(rewriter, loc, element), stabilizingMax);
      Value shifted = mapWithReduced(rewriter, loc, input, m, axes,
                                     [](OpBuilder &b, Location l, Value x, Value mx) -> Value {
                                       return math::ExpOp::create(
                                           b, l, arith::SubFOp::create(b, l, x, mx));
                                     });
      Value total = sum(shifted);
      reduced = lowering::buildElementwise(
          rewriter, loc, cast<RankedTensorType>(total.getType()), {total, m},
          [](OpBuilder &b, Location l, ValueRange a) -> Value {
            return arith::AddFOp::create(b, l, math::LogOp::create(b, l, a[0]), a[1]);
          });
      break;
    }
    }
    if (op.getKeepdims())
      reduced = expandReduced(rewriter, loc, reduced, op.getType(), axes);
    rewriter.replaceOp(op, reduced);
    return success();
  }
};

template <typename OpTy>
struct SoftmaxToLinalg final : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += type.getRank();
    SmallVector<int64_t> axes = {axis};
    Type element = type.getElementType();
    // m = max(x); e = exp(x - m); s = sum(e)
    Value m = reduce(rewriter, loc, x, axes, lowering::lowestValue(rewriter, loc, element),
                     stabilizingMax);
    Value e = mapWithReduced(rewriter, loc, x, m, axes,
                             [](OpBuilder &b, Location l, Value v, Value mx) -> Value {
                               return math::ExpOp::create(b, l,
                                                          arith::SubFOp::create(b, l, v, mx));
                             });
    Value s = reduce(rewriter, loc, e, axes, scalarConstant(rewriter, loc, element, 0),
                     addReassoc);
    Value y;
    if constexpr (std::is_same_v<OpTy, SoftmaxOp>) {
      // softmax = e * (1 / s): one division per row (the reciprocal does not
      // depend on the position, so codegen hoists it), a multiply per element.
      y = mapWithReduced(rewriter, loc, e, s, axes,
                         [&](OpBuilder &b, Location l, Value v, Value total) -> Value {
                           Value one = scalarConstant(b, l, element, 1);
                           return arith::MulFOp::create(
                               b, l, v, arith::DivFOp::create(b, l, one, total));
                         });
    } else {
      // log_softmax = x - m - log(s)
      Value logS = lowering::buildElementwise(
          rewriter, loc, cast<RankedTensorType>(s.getType()), {s, m},
          [](OpBuilder &b, Location l, ValueRange a) -> Value {
            return arith::AddFOp::create(b, l, math::LogOp::create(b, l, a[0]), a[1]);
          });
      y = mapWithReduced(rewriter, loc, x, logS, axes,
                         [](OpBuilder &b, Location l, Value v, Value shift) -> Value {
                           return arith::SubFOp::create(b, l, v, shift);
                         });
    }
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// (x - mean) * rsqrt(var + eps) over `axes`, two-pass for accuracy.
Value normalize(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> axes,
                double epsilon) {
  auto type = cast<RankedTensorType>(x.getType());
  Type element = type.getElementType();
  Value zero = scalarConstant(b, loc, element, 0);
  Value count = reducedCount(b, loc, x, axes, element);
  Value sum = reduce(b, loc, x, axes, zero, addReassoc);
  auto reducedType = cast<RankedTensorType>(sum.getType());
  Value mean = lowering::buildElementwise(
      b, loc, reducedType, sum,
      [&](OpBuilder &nb, Location l, ValueRange a) { return divide(nb, l, a[0], count); });
  Value centered = mapWithReduced(b, loc, x, mean, axes,
                                  [](OpBuilder &nb, Location l, Value v, Value mu) -> Value {
                                    return arith::SubFOp::create(nb, l, v, mu);
                                  });
  Value squares = reduce(b, loc, centered, axes, zero,
                         [](OpBuilder &nb, Location l, Value v, Value acc) {
                           return addReassoc(nb, l, mul(nb, l, v, v), acc);
                         });
  Value eps = scalarConstant(b, loc, element, epsilon);
  Value invStd = lowering::buildElementwise(
      b, loc, reducedType, squares, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value variance = arith::DivFOp::create(nb, l, a[0], count);
        return math::RsqrtOp::create(nb, l, arith::AddFOp::create(nb, l, variance, eps));
      });
  return mapWithReduced(b, loc, centered, invStd, axes,
                        [](OpBuilder &nb, Location l, Value v, Value s) -> Value {
                          return arith::MulFOp::create(nb, l, v, s);
                        });
}

/// y = x * scale + bias, with scale/bias read through `paramMap`.
Value applyAffine(OpBuilder &b, Location loc, Value x, Value scale, Value bias,
                  AffineMap paramMap) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<Value> inputs = {x, scale};
  if (bias)
    inputs.push_back(bias);
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(type.getRank()), paramMap};
  if (bias)
    maps.push_back(paramMap);
  maps.push_back(b.getMultiDimIdentityMap(type.getRank()));
  Value init = createInit(b, loc, type, lowering::dynamicSizesOf(b, loc, x));
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, inputs, init, maps, iterators,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value y = arith::MulFOp::create(nb, l, args[0], args[1]);
               if (bias)
                 y = arith::AddFOp::create(nb, l, y, args[2]);
               linalg::YieldOp::create(nb, l, y);
             })
      .getResult(0);
}

/// Map reading a [C] parameter at the channel dim 1 of the loop space.
AffineMap channelMap(int64_t rank, MLIRContext *context) {
  return AffineMap::get(rank, 0, getAffineDimExpr(1, context), context);
}

struct LayerNormToLinalg final : OpConversionPattern<LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += type.getRank();
    SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(axis, type.getRank()));
    Value normalized = normalize(rewriter, loc, x, axes,
                                 op.getEpsilon().convertToDouble());
    auto scaleType = cast<RankedTensorType>(adaptor.getScale().getType());
    if (Value bias = adaptor.getBias();
        bias && cast<RankedTensorType>(bias.getType()).getShape() != scaleType.getShape())
      return lowering::failLowering(rewriter, op, "scale and bias shapes differ");
    rewriter.replaceOp(op, applyAffine(rewriter, loc, normalized, adaptor.getScale(),
                                       adaptor.getBias(),
                                       lowering::broadcastMap(scaleType, type)));
    return success();
  }
};

struct InstanceNormToLinalg final : OpConversionPattern<InstanceNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(InstanceNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
    SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(2, rank));
    Value normalized = normalize(rewriter, loc, x, axes, op.getEpsilon().convertToDouble());
    rewriter.replaceOp(op, applyAffine(rewriter, loc, normalized, adaptor.getScale(),
                                       adaptor.getBias(),
                                       channelMap(rank, rewriter.getContext())));
    return success();
  }
};

// batch_norm(x) = x * s + (bias - mean * s), s = scale / sqrt(var + eps)
struct BatchNormToLinalg final : OpConversionPattern<BatchNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BatchNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto paramType = cast<RankedTensorType>(adaptor.getScale().getType());
    Type element = paramType.getElementType();
    Value eps = scalarConstant(rewriter, loc, element, op.getEpsilon().convertToDouble());
    Value scale = lowering::buildElementwise(
        rewriter, loc, paramType, {adaptor.getScale(), adaptor.getVariance()},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value inv = math::RsqrtOp::create(b, l, arith::AddFOp::create(b, l, a[1], eps));
          return arith::MulFOp::create(b, l, a[0], inv);
        });
    Value shift = lowering::buildElementwise(
        rewriter, loc, paramType, {adaptor.getBias(), adaptor.getMean(), scale},
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::SubFOp::create(b, l, a[0], arith::MulFOp::create(b, l, a[1], a[2]));
        });
    int64_t rank = cast<RankedTensorType>(adaptor.getInput().getType()).getRank();
    rewriter.replaceOp(op, applyAffine(rewriter, loc, adaptor.getInput(), scale, shift,
                                       channelMap(rank, rewriter.getContext())));
    return success();
  }
};

template <typename OpTy>
struct ArgReduceToLinalg final : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    constexpr bool isMax = std::is_same_v<OpTy, ArgMaxOp>;
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    Type element = type.getElementType();
    if (element.isUnsignedInteger())
      return lowering::failLowering(rewriter, op, "unsigned integer tensors");
    int64_t rank = type.getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += rank;
    SmallVector<int64_t> shape;
    SmallVector<Value> dynamicSizes;
    for (int64_t i = 0; i < rank; ++i) {
      if (i == axis)
        continue;
      shape.push_back(type.getDimSize(i));
      if (type.isDynamicDim(i))
        dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, x, i));
    }
    auto valueType = RankedTensorType::get(shape, element);
    auto indexType = RankedTensorType::get(shape, rewriter.getI64Type());
    Value start = isMax ? lowering::lowestValue(rewriter, loc, element)
                        : lowering::highestValue(rewriter, loc, element);
    Value values = createInit(rewriter, loc, valueType, dynamicSizes, start);
    Value indices = createInit(rewriter, loc, indexType, dynamicSizes,
                               scalarConstant(rewriter, loc, rewriter.getI64Type(), 0));
    AffineMap kept = keptDimsMap(rank, {axis}, rewriter.getContext());
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    iterators[axis] = utils::IteratorType::reduction;
    bool last = op.getSelectLastIndex();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{valueType, indexType}, x, ValueRange{values, indices},
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(rank), kept, kept}, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value v = args[0], best = args[1], bestIndex = args[2];
          Value better;
          if (isa<FloatType>(element))
            better = arith::CmpFOp::create(
                b, l,
                isMax ? (last ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OGT)
                      : (last ? arith::CmpFPredicate::OLE : arith::CmpFPredicate::OLT),
                v, best);
          else
            better = arith::CmpIOp::create(
                b, l,
                isMax ? (last ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sgt)
                      : (last ? arith::CmpIPredicate::sle : arith::CmpIPredicate::slt),
                v, best);
          Value index = arith::IndexCastOp::create(b, l, b.getI64Type(),
                                                   linalg::IndexOp::create(b, l, axis));
          linalg::YieldOp::create(
              b, l,
              ValueRange{arith::SelectOp::create(b, l, better, v, best),
                         arith::SelectOp::create(b, l, better, index, bestIndex)});
        });
    Value result = generic.getResult(1);
    if (op.getKeepdims())
      result = expandReduced(rewriter, loc, result, op.getType(), {axis});
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateReductionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ReduceToLinalg, SoftmaxToLinalg<SoftmaxOp>, SoftmaxToLinalg<LogSoftmaxOp>,
               LayerNormToLinalg, InstanceNormToLinalg, BatchNormToLinalg,
               ArgReduceToLinalg<ArgMaxOp>, ArgReduceToLinalg<ArgMinOp>>(
      patterns.getContext());
}

} // namespace kiln
