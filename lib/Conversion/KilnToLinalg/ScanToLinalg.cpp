//===- ScanToLinalg.cpp - kiln.cumsum -> linalg.generic --------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// A prefix sum as one linalg.generic: the output dims are parallel and one
// extra reduction dim walks the source position j along the axis; element i
// adds x[j] when j <= i (j < i exclusive; j >= i, j > i reversed). This is
// quadratic in the axis length: simple and correct, not a fast scan kernel.
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

/// cumsum (`isProduct` false) and cumprod: a generic whose reduction
/// dimension runs along the axis and keeps the elements up to the current one.
template <typename OpTy, bool isProduct>
struct ScanToGeneric final : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Type element = type.getElementType();
    if (element.isUnsignedInteger())
      return lowering::failLowering(rewriter, op, "unsigned integer tensors");
    Location loc = op.getLoc();
    int64_t rank = type.getRank(), axis = static_cast<int64_t>(op.getAxis());
    MLIRContext *context = rewriter.getContext();
    SmallVector<AffineExpr> source, target;
    for (int64_t d = 0; d < rank; ++d) {
      target.push_back(getAffineDimExpr(d, context));
      source.push_back(getAffineDimExpr(d == axis ? rank : d, context));
    }
    SmallVector<AffineMap> maps = {AffineMap::get(rank + 1, 0, source, context),
                                   AffineMap::get(rank + 1, 0, target, context)};
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    Value zero = lowering::scalarConstant(rewriter, loc, element, isProduct ? 1 : 0);
    Value init = lowering::createInit(
        rewriter, loc, type, lowering::dynamicSizesOf(rewriter, loc, adaptor.getInput()), zero);
    arith::CmpIPredicate keep =
        op.getReverse() ? (op.getExclusive() ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::sge)
                        : (op.getExclusive() ? arith::CmpIPredicate::slt : arith::CmpIPredicate::sle);
    bool isFloat = isa<FloatType>(element);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{adaptor.getInput()}, ValueRange{init}, maps,
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value i = linalg::IndexOp::create(b, l, axis);
          Value j = linalg::IndexOp::create(b, l, rank);
          Value take = arith::CmpIOp::create(b, l, keep, j, i);
          Value term = arith::SelectOp::create(b, l, take, args[0], zero);
          Value sum;
          if (isProduct)
            sum = isFloat ? arith::MulFOp::create(b, l, args[1], term).getResult()
                          : arith::MulIOp::create(b, l, args[1], term).getResult();
          else
            sum = isFloat ? arith::AddFOp::create(b, l, args[1], term).getResult()
                          : arith::AddIOp::create(b, l, args[1], term).getResult();
          linalg::YieldOp::create(b, l, sum);
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

} // namespace

void populateScanToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ScanToGeneric<CumSumOp, false>, ScanToGeneric<CumProdOp, true>>(
      patterns.getContext());
}

} // namespace kiln
