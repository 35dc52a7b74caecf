//===- RecognizeGelu.cpp - The kiln-recognize-gelu pass -------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// GELU is a product of three factors, x, 0.5 and (1 + f(x)), which exporters
// associate in every possible way. The root multiplication is split into
// three factors by expanding one of its operands (when that is a single-use
// multiplication), and the factors are then matched in any order.
//
//===----------------------------------------------------------------------===//

#include "MatchUtils.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <array>

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNRECOGNIZEGELUPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"

namespace {

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kTanhCubic = 0.044715;

/// `x * c` (either order) with c near `factor`, or `x / c` with c near 1/factor.
bool isScaledBy(Value value, Value x, double factor) {
  if (auto mul = value.getDefiningOp<MulOp>())
    return isSplatNear(otherOperand(mul, x), factor);
  if (auto div = value.getDefiningOp<DivOp>())
    return div.getLhs() == x && isSplatNear(div.getRhs(), 1.0 / factor);
  return false;
}

/// x^3 as pow(x, 3), x * (x * x) or (x * x) * x.
bool isCubeOf(Value value, Value x) {
  if (auto pow = value.getDefiningOp<PowOp>())
    return pow.getLhs() == x && isSplatNear(pow.getRhs(), 3.0, 0.0);
  auto mul = value.getDefiningOp<MulOp>();
  if (!mul)
    return false;
  Value square = otherOperand(mul, x);
  auto inner = square ? square.getDefiningOp<MulOp>() : MulOp();
  return inner && inner.getLhs() == x && inner.getRhs() == x;
}

/// sqrt(2/pi) * (x + 0.044715 * x^3), in any operand order.
bool isTanhArgument(Value value, Value x) {
  auto mul = value.getDefiningOp<MulOp>();
  if (!mul)
    return false;
  for (auto [c, sum] : {std::pair(mul.getLhs(), mul.getRhs()),
                        std::pair(mul.getRhs(), mul.getLhs())}) {
    auto add = sum.getDefiningOp<AddOp>();
    if (!isSplatNear(c, kSqrt2OverPi) || !add)
      continue;
    Value cubic = otherOperand(add, x);
    auto scaled = cubic ? cubic.getDefiningOp<MulOp>() : MulOp();
    if (!scaled)
      continue;
    for (auto [k, cube] : {std::pair(scaled.getLhs(), scaled.getRhs()),
                           std::pair(scaled.getRhs(), scaled.getLhs())})
      if (isSplatNear(k, kTanhCubic) && isCubeOf(cube, x))
        return true;
  }
  return false;
}

/// Which GELU `1 + f(x)` is, if any.
std::optional<GeluApproximation> onePlusCdf(Value value, Value x) {
  auto add = value.getDefiningOp<AddOp>();
  if (!add)
    return std::nullopt;
  for (auto [one, f] : {std::pair(add.getLhs(), add.getRhs()),
                        std::pair(add.getRhs(), add.getLhs())}) {
    if (!isSplatNear(one, 1.0, 0.0))
      continue;
    if (auto erf = f.getDefiningOp<ErfOp>(); erf && isScaledBy(erf.getInput(), x, 1 / kSqrt2))
      return GeluApproximation::none;
    if (auto tanh = f.getDefiningOp<TanhOp>(); tanh && isTanhArgument(tanh.getInput(), x))
      return GeluApproximation::tanh;
  }
  return std::nullopt;
}

/// Matches {x, 0.5, 1 + f(x)} in any order.
std::optional<std::pair<Value, GeluApproximation>> matchFactors(std::array<Value, 3> f) {
  for (int half = 0; half < 3; ++half) {
    if (!isSplatNear(f[half], 0.5, 0.0))
      continue;
    for (int x = 0; x < 3; ++x) {
      if (x == half)
        continue;
      Value cdf = f[3 - half - x];
      if (std::optional<GeluApproximation> kind = onePlusCdf(cdf, f[x]))
        return std::pair(f[x], *kind);
    }
  }
  return std::nullopt;
}

// x * 0.5 * (1 + erf(x / sqrt(2))) = gelu(x);
// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) = gelu_tanh(x)
struct ProductToGelu final : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rewriter) const override {
    if (!isa<FloatType>(op.getType().getElementType()))
      return failure();
    for (auto [inner, rest] : {std::pair(op.getLhs(), op.getRhs()),
                               std::pair(op.getRhs(), op.getLhs())}) {
      auto mul = inner.getDefiningOp<MulOp>();
      if (!mul || !mul->hasOneUse())
        continue;
      auto match = matchFactors({mul.getLhs(), mul.getRhs(), rest});
      if (!match || match->first.getType() != op.getType())
        continue;
      rewriter.replaceOpWithNewOp<GeluOp>(op, match->first, match->second);
      return success();
    }
    return failure();
  }
};

struct KilnRecognizeGeluPass final
    : impl::KilnRecognizeGeluPassBase<KilnRecognizeGeluPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRecognizeGeluPatterns(patterns);
    (void)applyPatternsGreedily(getOperation(), std::move(patterns));
  }
};

} // namespace

void populateRecognizeGeluPatterns(RewritePatternSet &patterns) {
  patterns.add<ProductToGelu>(patterns.getContext());
}

} // namespace kiln
