//===- SelectScatterToLinalg.cpp - kiln.top_k, kiln.scatter_elements -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Both stay in linalg, with a reduction dim along the op's axis; both are
// quadratic in the axis length: simple and correct, not fast kernels.
//
// top_k ranks every element along the axis (the number of elements that come
// before it: larger ones, or smaller ones for smallest, and equal ones at a
// lower index, so ties keep index order), then output position p takes the
// element of rank p:
//   rank[.., i, ..] = sum_j beats(x[.., j, ..], j, x[.., i, ..], i)
//   values[.., p, ..] = x[.., i, ..] and indices[.., p, ..] = i where rank == p
//
// scatter_elements starts each output element from the input and walks the
// updates along the axis in order: update j lands on output o when o agrees
// with j's position off the axis and indices[j] (negative ones count from
// the end) equals o's position on it; `none` keeps the last such update,
// the reductions combine them. Indices outside the axis write nothing.
//
//===----------------------------------------------------------------------===//

#include "LoweringFailure.h"
#include "LinalgBuilders.h"
#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;

namespace kiln {
namespace {

/// Maps (d0 .. d{rank-1}, d{rank}) to the rank dims with dim `axis`
/// replaced by d{rank} (the reduction dim).
AffineMap axisFromReduction(MLIRContext *context, int64_t rank, int64_t axis) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    exprs.push_back(getAffineDimExpr(d == axis ? rank : d, context));
  return AffineMap::get(rank + 1, 0, exprs, context);
}

struct TopKToLinalg final : OpConversionPattern<TopKOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TopKOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = lowering::signlessType(cast<RankedTensorType>(input.getType()));
    if (!inputType.hasStaticShape())
      return lowering::failLowering(rewriter, op, "dynamic shapes");
    Type element = inputType.getElementType();
    bool isFloat = isa<FloatType>(element);
    bool isUnsigned = op.getInput().getType().getElementType().isUnsignedInteger();
    bool largest = op.getLargest();
    int64_t rank = inputType.getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += rank;
    MLIRContext *context = rewriter.getContext();
    Type i64 = rewriter.getI64Type();
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
    AffineMap outer = AffineMap::get(rank + 1, 0, identity.getResults(), context);
    AffineMap along = axisFromReduction(context, rank, axis);
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);

    // rank[i] = #{ j : x[j] before x[i] }
    auto rankType = RankedTensorType::get(inputType.getShape(), i64);
    Value zero = arith::ConstantIntOp::create(rewriter, loc, i64, 0);
    Value ranks0 = lowering::createInit(rewriter, loc, rankType, {}, zero);
    Value ranks =
        linalg::GenericOp::create(
            rewriter, loc, rankType, ValueRange{input, input}, ranks0,
            SmallVector<AffineMap>{outer, along, outer}, iterators,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value xi = args[0], xj = args[1];
              Value before, equal;
              if (isFloat) {
                before = arith::CmpFOp::create(
                    b, l, largest ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT,
                    xj, xi);
                equal = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, xj, xi);
              } else {
                arith::CmpIPredicate pred =
                    largest ? (isUnsigned ? arith::CmpIPredicate::ugt
                                          : arith::CmpIPredicate::sgt)
                            : (isUnsigned ? arith::CmpIPredicate::ult
                                          : arith::CmpIPredicate::slt);
                before = arith::CmpIOp::create(b, l, pred, xj, xi);
                equal = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, xj, xi);
              }
              Value i = linalg::IndexOp::create(b, l, axis);
              Value j = linalg::IndexOp::create(b, l, rank);
              Value earlier = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, j, i);
              Value beats = arith::OrIOp::create(
                  b, l, before, arith::AndIOp::create(b, l, equal, earlier));
              Value one = arith::ExtUIOp::create(b, l, b.getI64Type(), beats);
              linalg::YieldOp::create(b, l,
                                      arith::AddIOp::create(b, l, args[2], one).getResult());
            })
            .getResult(0);

    // values[p], indices[p] = x[i], i where rank[i] == p.
    auto valuesType = lowering::signlessType(op.getValues().getType());
    RankedTensorType indicesType = op.getIndices().getType();
    Value valuesInit = lowering::createInit(rewriter, loc, valuesType, {},
                                            lowering::scalarConstant(rewriter, loc, element, 0));
    Value indicesInit = lowering::createInit(rewriter, loc, indicesType, {}, zero);
    auto select = linalg::GenericOp::create(
        rewriter, loc, TypeRange{valuesType, indicesType}, ValueRange{input, ranks},
        ValueRange{valuesInit, indicesInit},
        SmallVector<AffineMap>{along, along, outer, outer}, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value p = arith::IndexCastOp::create(b, l, b.getI64Type(),
                                               linalg::IndexOp::create(b, l, axis));
          Value i = arith::IndexCastOp::create(b, l, b.getI64Type(),
                                               linalg::IndexOp::create(b, l, rank));
          Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, args[1], p);
          linalg::YieldOp::create(
              b, l,
              ValueRange{arith::SelectOp::create(b, l, hit, args[0], args[2]),
                         arith::SelectOp::create(b, l, hit, i, args[3])});
        });
    rewriter.replaceOp(op, select.getResults());
    return success();
  }
};

struct ScatterElementsToLinalg final : OpConversionPattern<ScatterElementsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScatterElementsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), indices = adaptor.getIndices(),
          updates = adaptor.getUpdates();
    auto resultType = lowering::signlessType(op.getType());
    auto updatesType = cast<RankedTensorType>(updates.getType());
    if (!resultType.hasStaticShape() || !updatesType.hasStaticShape())
      return lowering::failLowering(rewriter, op, "dynamic shapes");
    Type element = resultType.getElementType();
    bool isFloat = isa<FloatType>(element);
    bool isUnsigned = op.getType().getElementType().isUnsignedInteger();
    if (isUnsigned && op.getReduction() != ScatterReduction::none &&
        op.getReduction() != ScatterReduction::add && op.getReduction() != ScatterReduction::mul)
      return lowering::failLowering(rewriter, op, "unsigned max/min scatter");
    int64_t rank = resultType.getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += rank;
    int64_t axisSize = resultType.getDimSize(axis);
    MLIRContext *context = rewriter.getContext();
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
    AffineMap outer = AffineMap::get(rank + 1, 0, identity.getResults(), context);
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    // The reduction dim walks the updates' axis; out[o] = input[o] first.
    auto reduceType = RankedTensorType::get({updatesType.getDimSize(axis)}, element);
    Value walk = tensor::EmptyOp::create(rewriter, loc, reduceType.getShape(), element);
    AffineMap walkMap =
        AffineMap::get(rank + 1, 0, getAffineDimExpr(rank, context), context);
    ScatterReduction reduction = op.getReduction();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, resultType, ValueRange{walk}, ValueRange{input},
        SmallVector<AffineMap>{walkMap, outer}, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value acc = args[1];
          Value j = linalg::IndexOp::create(b, l, rank);
          SmallVector<Value> coords;
          Value valid;
          auto both = [&](Value a, Value c) {
            return a ? arith::AndIOp::create(b, l, a, c).getResult() : c;
          };
          for (int64_t d = 0; d < rank; ++d) {
            if (d == axis) {
              coords.push_back(j);
              continue;
            }
            Value o = linalg::IndexOp::create(b, l, d);
            int64_t size = updatesType.getDimSize(d);
            if (size < resultType.getDimSize(d)) {
              Value inRange = arith::CmpIOp::create(
                  b, l, arith::CmpIPredicate::ult, o,
                  arith::ConstantIndexOp::create(b, l, size));
              valid = both(valid, inRange);
              // Clamped so the read stays in bounds; `valid` drops it.
              o = arith::MinUIOp::create(b, l, o,
                                         arith::ConstantIndexOp::create(b, l, size - 1));
            }
            coords.push_back(o);
          }
          if (updatesType.getNumElements() == 0) {
            linalg::YieldOp::create(b, l, acc);
            return;
          }
          Value index = tensor::ExtractOp::create(b, l, indices, coords);
          Type i64 = b.getI64Type();
          if (index.getType() != i64)
            index = arith::ExtSIOp::create(b, l, i64, index);
          Value size = arith::ConstantIntOp::create(b, l, i64, axisSize);
          Value negative = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::slt, index,
              arith::ConstantIntOp::create(b, l, i64, 0));
          index = arith::SelectOp::create(b, l, negative,
                                          arith::AddIOp::create(b, l, index, size), index);
          Value o = arith::IndexCastOp::create(b, l, i64, linalg::IndexOp::create(b, l, axis));
          valid = both(valid, arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, index, o));
          Value update = tensor::ExtractOp::create(b, l, updates, coords);
          Value combined;
          switch (reduction) {
          case ScatterReduction::none:
            combined = update;
            break;
          case ScatterReduction::add:
            combined = isFloat ? arith::AddFOp::create(b, l, acc, update).getResult()
                               : arith::AddIOp::create(b, l, acc, update).getResult();
            break;
          case ScatterReduction::mul:
            combined = isFloat ? arith::MulFOp::create(b, l, acc, update).getResult()
                               : arith::MulIOp::create(b, l, acc, update).getResult();
            break;
          case ScatterReduction::max:
            combined = isFloat ? arith::MaximumFOp::create(b, l, acc, update).getResult()
                               : arith::MaxSIOp::create(b, l, acc, update).getResult();
            break;
          case ScatterReduction::min:
            combined = isFloat ? arith::MinimumFOp::create(b, l, acc, update).getResult()
                               : arith::MinSIOp::create(b, l, acc, update).getResult();
            break;
          }
          linalg::YieldOp::create(b, l,
                                  arith::SelectOp::create(b, l, valid, combined, acc).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void populateSelectScatterToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<TopKToLinalg, ScatterElementsToLinalg>(patterns.getContext());
}

} // namespace kiln
