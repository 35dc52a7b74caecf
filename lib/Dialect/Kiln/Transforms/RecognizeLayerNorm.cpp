//===- RecognizeLayerNorm.cpp - The kiln-recognize-layer-norm pass --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Matching is in two steps so that each pattern is small: the normalization
// (x - mean) / sqrt(var + eps) becomes layer_norm with a unit scale, then a
// following `* gamma` and `+ beta` are absorbed one at a time.
//
//===----------------------------------------------------------------------===//

#include "MatchUtils.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNRECOGNIZELAYERNORMPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"

namespace {

/// The first axis of a keepdims mean over the trailing dims of its input.
std::optional<int64_t> trailingMeanAxis(ReduceOp reduce) {
  if (!reduce || reduce.getKind() != ReduceKind::mean || !reduce.getKeepdims())
    return std::nullopt;
  int64_t rank = reduce.getInput().getType().getRank();
  SmallVector<int64_t> axes;
  for (int64_t axis : reduce.getAxes())
    axes.push_back(axis < 0 ? axis + rank : axis);
  llvm::sort(axes);
  if (axes.empty() || axes.back() != rank - 1 ||
      axes.back() - axes.front() + 1 != static_cast<int64_t>(axes.size()))
    return std::nullopt;
  return axes.front();
}

/// d * d or pow(d, 2).
bool isSquareOf(Value value, Value d) {
  if (auto mul = value.getDefiningOp<MulOp>())
    return mul.getLhs() == d && mul.getRhs() == d;
  if (auto pow = value.getDefiningOp<PowOp>())
    return pow.getLhs() == d && isSplatNear(pow.getRhs(), 2.0, 0.0);
  return false;
}

/// The epsilon of `var + eps` (either order) when var is the mean of d^2
/// over the same axes as `mean`.
std::optional<double> varianceEpsilon(Value value, Value d, int64_t axis) {
  auto add = value.getDefiningOp<AddOp>();
  if (!add)
    return std::nullopt;
  for (auto [var, eps] : {std::pair(add.getLhs(), add.getRhs()),
                          std::pair(add.getRhs(), add.getLhs())}) {
    auto reduce = var.getDefiningOp<ReduceOp>();
    std::optional<double> epsilon = getSplatFloat(eps);
    auto epsType = cast<RankedTensorType>(eps.getType());
    if (!epsilon || epsType.getNumElements() != 1 || add.getType() != var.getType() ||
        trailingMeanAxis(reduce) != axis || !isSquareOf(reduce.getInput(), d))
      continue;
    return epsilon;
  }
  return std::nullopt;
}

/// Builds layer_norm(x, 1) over dims axis.. with `eps` for `root`'s value.
LogicalResult replaceWithLayerNorm(Operation *root, Value d, Value denominatorArg,
                                   PatternRewriter &rewriter) {
  auto sub = d.getDefiningOp<SubOp>();
  if (!sub)
    return failure();
  Value x = sub.getLhs();
  auto mean = sub.getRhs().getDefiningOp<ReduceOp>();
  std::optional<int64_t> axis = trailingMeanAxis(mean);
  if (!axis || mean.getInput() != x || x.getType() != root->getResult(0).getType() ||
      sub.getType() != x.getType())
    return failure();
  std::optional<double> eps = varianceEpsilon(denominatorArg, d, *axis);
  if (!eps)
    return failure();
  auto type = cast<RankedTensorType>(x.getType());
  auto scalar = RankedTensorType::get({}, type.getElementType());
  Value one = ConstantOp::create(
      rewriter, root->getLoc(),
      DenseElementsAttr::get(scalar, rewriter.getFloatAttr(type.getElementType(), 1.0)));
  rewriter.replaceOpWithNewOp<LayerNormOp>(root, type, x, one, Value(),
                                           rewriter.getI64IntegerAttr(*axis),
                                           rewriter.getF32FloatAttr(*eps));
  return success();
}

// (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) = layer_norm(x, 1, eps)
struct DivBySqrtToLayerNorm final : OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DivOp op, PatternRewriter &rewriter) const override {
    auto sqrt = op.getRhs().getDefiningOp<SqrtOp>();
    if (!sqrt || !isa<FloatType>(op.getType().getElementType()))
      return failure();
    return replaceWithLayerNorm(op, op.getLhs(), sqrt.getInput(), rewriter);
  }
};

// (x - mean(x)) * rsqrt(mean((x - mean(x))^2) + eps) = layer_norm(x, 1, eps)
struct MulByRsqrtToLayerNorm final : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rewriter) const override {
    if (!isa<FloatType>(op.getType().getElementType()))
      return failure();
    for (auto [d, r] : {std::pair(op.getLhs(), op.getRhs()),
                        std::pair(op.getRhs(), op.getLhs())})
      if (auto rsqrt = r.getDefiningOp<RsqrtOp>())
        if (succeeded(replaceWithLayerNorm(op, d, rsqrt.getInput(), rewriter)))
          return success();
    return failure();
  }
};

/// A layer_norm result `value` that can take a scale or bias: one use, no
/// bias yet, and `param` covers only the normalized dims.
LayerNormOp absorbingLayerNorm(Value value, Value param, Type resultType) {
  auto ln = value.getDefiningOp<LayerNormOp>();
  if (!ln || !ln->hasOneUse() || ln.getBias() || resultType != ln.getType())
    return {};
  int64_t rank = ln.getType().getRank();
  int64_t axis = static_cast<int64_t>(ln.getAxis());
  int64_t normalized = axis < 0 ? -axis : rank - axis;
  auto paramType = cast<RankedTensorType>(param.getType());
  if (paramType.getRank() > normalized ||
      paramType.getElementType() != ln.getType().getElementType())
    return {};
  return ln;
}

// layer_norm(x, 1) * gamma = layer_norm(x, gamma)
struct AbsorbLayerNormScale final : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rewriter) const override {
    for (auto [v, gamma] : {std::pair(op.getLhs(), op.getRhs()),
                            std::pair(op.getRhs(), op.getLhs())}) {
      LayerNormOp ln = absorbingLayerNorm(v, gamma, op.getType());
      if (!ln || !isSplatNear(ln.getScale(), 1.0, 0.0))
        continue;
      rewriter.replaceOpWithNewOp<LayerNormOp>(op, ln.getType(), ln.getInput(), gamma,
                                               Value(), ln.getAxisAttr(),
                                               ln.getEpsilonAttr());
      return success();
    }
    return failure();
  }
};

// layer_norm(x, s) + beta = layer_norm(x, s, beta)
struct AbsorbLayerNormBias final : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rewriter) const override {
    for (auto [v, beta] : {std::pair(op.getLhs(), op.getRhs()),
                           std::pair(op.getRhs(), op.getLhs())}) {
      LayerNormOp ln = absorbingLayerNorm(v, beta, op.getType());
      if (!ln)
        continue;
      rewriter.replaceOpWithNewOp<LayerNormOp>(op, ln.getType(), ln.getInput(),
                                               ln.getScale(), beta, ln.getAxisAttr(),
                                               ln.getEpsilonAttr());
      return success();
    }
    return failure();
  }
};

struct KilnRecognizeLayerNormPass final
    : impl::KilnRecognizeLayerNormPassBase<KilnRecognizeLayerNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRecognizeLayerNormPatterns(patterns);
    (void)applyPatternsGreedily(getOperation(), std::move(patterns));
  }
};

} // namespace

void populateRecognizeLayerNormPatterns(RewritePatternSet &patterns) {
  patterns.add<DivBySqrtToLayerNorm, MulByRsqrtToLayerNorm, AbsorbLayerNormScale,
               AbsorbLayerNormBias>(patterns.getContext());
}

} // namespace kiln
