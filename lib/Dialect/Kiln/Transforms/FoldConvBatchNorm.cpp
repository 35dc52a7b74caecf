//===- FoldConvBatchNorm.cpp - The kiln-fold-conv-batch-norm pass ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The new weight and bias are written as kiln ops on the constants rather
// than computed here, so that kiln-fold-constants (with its size limit) is
// the one place that evaluates tensors.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNFOLDCONVBATCHNORMPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"

namespace {

bool isConstant(Value value) { return value && matchPattern(value, m_Constant()); }

// batch_norm(conv(x, W, b), s, beta, m, v) = conv(x, W * k[:, 1...], (b - m) * k + beta)
// with k = s / sqrt(v + eps)
struct FoldBatchNormIntoConv final : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BatchNormOp bn, PatternRewriter &rewriter) const override {
    auto conv = bn.getInput().getDefiningOp<ConvOp>();
    if (!conv || !conv->hasOneUse())
      return rewriter.notifyMatchFailure(bn, "input is not a single-use conv");
    Value params[] = {bn.getScale(), bn.getBias(), bn.getMean(), bn.getVariance()};
    if (!isConstant(conv.getWeight()) || (conv.getBias() && !isConstant(conv.getBias())) ||
        !llvm::all_of(params, isConstant))
      return rewriter.notifyMatchFailure(bn, "weights or statistics are not constant");
    auto weightType = cast<RankedTensorType>(conv.getWeight().getType());
    auto paramType = cast<RankedTensorType>(bn.getScale().getType());
    if (!weightType.hasStaticShape() || paramType.getRank() != 1 ||
        !llvm::all_of(params, [&](Value p) { return p.getType() == paramType; }) ||
        paramType.getDimSize(0) != weightType.getDimSize(0) ||
        (conv.getBias() && conv.getBias().getType() != paramType))
      return rewriter.notifyMatchFailure(bn, "parameter shapes do not match the weight");

    Location loc = bn.getLoc();
    Type element = paramType.getElementType();
    auto scalarType = RankedTensorType::get({}, element);
    Value eps = ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(scalarType,
                               rewriter.getFloatAttr(element, bn.getEpsilon().convertToDouble())));
    Value k = DivOp::create(
        rewriter, loc, bn.getScale(),
        SqrtOp::create(rewriter, loc, AddOp::create(rewriter, loc, bn.getVariance(), eps)));
    SmallVector<int64_t> column(weightType.getRank(), 1);
    column[0] = weightType.getDimSize(0);
    Value kColumn = ReshapeOp::create(rewriter, loc,
                                      RankedTensorType::get(column, element), k, Value());
    Value weight = MulOp::create(rewriter, loc, conv.getWeight(), kColumn);
    Value shifted = conv.getBias()
                        ? SubOp::create(rewriter, loc, conv.getBias(), bn.getMean()).getResult()
                        : NegOp::create(rewriter, loc, bn.getMean()).getResult();
    Value bias = AddOp::create(rewriter, loc, MulOp::create(rewriter, loc, shifted, k),
                               bn.getBias());
    auto folded = ConvOp::create(rewriter, conv.getLoc(), conv.getType(), conv.getInput(),
                                 weight, bias, conv.getStridesAttr(),
                                 conv.getDilationsAttr(), conv.getPadsAttr(),
                                 conv.getGroupAttr());
    rewriter.replaceOp(bn, folded.getResult());
    rewriter.eraseOp(conv);
    return success();
  }
};

struct KilnFoldConvBatchNormPass final
    : impl::KilnFoldConvBatchNormPassBase<KilnFoldConvBatchNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFoldConvBatchNormPatterns(patterns);
    (void)applyPatternsGreedily(getOperation(), std::move(patterns));
  }
};

} // namespace

void populateFoldConvBatchNormPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldBatchNormIntoConv>(patterns.getContext());
}

} // namespace kiln
