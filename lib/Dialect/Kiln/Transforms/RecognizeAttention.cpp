//===- RecognizeAttention.cpp - The kiln-recognize-attention pass ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The exporters' form is matmul(softmax(matmul(Q, Kt) * s [+ mask]), V) with
// Kt written as a transpose (of K, or of the reshaped projection directly).
// kiln.attention takes K itself, so the match wraps Kt in the transpose that
// swaps its last two dims; transpose∘transpose folding cancels it against the
// exporter's transpose. GPT-2's causal mask is a masked fill instead of an
// add, select(keep, scores, finfo.min); it becomes the equivalent additive
// mask select(keep, 0, finfo.min), which constant folding evaluates.
//
//===----------------------------------------------------------------------===//

#include "MatchUtils.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNRECOGNIZEATTENTIONPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"

namespace {

/// The pieces of matmul(softmax(scale * Q Kt + mask), V). A masked-fill
/// (`select(keep, scores, fill)`, GPT-2's causal Where) is kept as its
/// condition and fill until the rewrite turns it into an additive mask.
struct AttentionMatch {
  Value query, keyTransposed, value, mask;
  Value keep;          // the select's condition, when the mask is a fill
  bool keepIsTrue = true; // scores are kept where `keep` is true
  double fill = 0.0;
  double scale = 1.0;
};

/// Below this a fill is "minus infinity" for softmax: fl(s + fill) == fill for
/// every score |s| < 1e31, so select(keep, s, fill) == s + select(keep, 0, fill)
/// exactly, and exp(fill - max) underflows to 0 either way.
constexpr double kNegligibleFill = -1e30;

/// `scores` is Q Kt, Q Kt * c, c * Q Kt or Q Kt / c for a positive scalar c;
/// every intermediate has one use.
bool matchScaledProduct(Value scores, AttentionMatch &match) {
  Operation *def = scores.getDefiningOp();
  if (!def || !def->hasOneUse())
    return false;
  Value product = scores;
  if (auto mul = dyn_cast<MulOp>(def)) {
    for (auto [p, c] : {std::pair(mul.getLhs(), mul.getRhs()),
                        std::pair(mul.getRhs(), mul.getLhs())}) {
      std::optional<double> s = getSplatFloat(c);
      if (s && p.getType() == mul.getType() && p.getDefiningOp<MatmulOp>()) {
        match.scale = *s;
        product = p;
        break;
      }
    }
  } else if (auto div = dyn_cast<DivOp>(def)) {
    std::optional<double> s = getSplatFloat(div.getRhs());
    if (s && *s != 0 && div.getLhs().getType() == div.getType()) {
      match.scale = 1.0 / *s;
      product = div.getLhs();
    }
  }
  auto matmul = product.getDefiningOp<MatmulOp>();
  if (!matmul || !matmul->hasOneUse() || !(match.scale > 0))
    return false;
  if (matmul.getLhs().getType().getRank() < 2 || matmul.getRhs().getType().getRank() < 2)
    return false;
  match.query = matmul.getLhs();
  match.keyTransposed = matmul.getRhs();
  return true;
}

/// Matches the whole chain ending in the matmul with V.
std::optional<AttentionMatch> matchAttention(MatmulOp op) {
  auto softmax = op.getLhs().getDefiningOp<SoftmaxOp>();
  if (!softmax || !softmax->hasOneUse() || op.getRhs().getType().getRank() < 2)
    return std::nullopt;
  int64_t rank = softmax.getType().getRank();
  int64_t axis = static_cast<int64_t>(softmax.getAxis());
  if (axis != -1 && axis != rank - 1)
    return std::nullopt;
  AttentionMatch match;
  match.value = op.getRhs();
  Value scores = softmax.getInput();
  if (matchScaledProduct(scores, match))
    return match;
  if (auto select = scores.getDefiningOp<SelectOp>()) {
    if (!select->hasOneUse() || select.getType() != scores.getType())
      return std::nullopt;
    for (auto [s, fill, keepIsTrue] :
         {std::tuple(select.getOnTrue(), select.getOnFalse(), true),
          std::tuple(select.getOnFalse(), select.getOnTrue(), false)}) {
      AttentionMatch candidate = match;
      std::optional<double> f = getSplatFloat(fill);
      if (!f || !(*f <= kNegligibleFill) || s.getType() != select.getType() ||
          !matchScaledProduct(s, candidate))
        continue;
      candidate.keep = select.getCondition();
      candidate.keepIsTrue = keepIsTrue;
      candidate.fill = *f;
      return candidate;
    }
    return std::nullopt;
  }
  auto add = scores.getDefiningOp<AddOp>();
  if (!add || !add->hasOneUse())
    return std::nullopt;
  for (auto [s, mask] : {std::pair(add.getLhs(), add.getRhs()),
                         std::pair(add.getRhs(), add.getLhs())}) {
    AttentionMatch candidate = match;
    if (s.getType() == add.getType() && matchScaledProduct(s, candidate)) {
      candidate.mask = mask;
      return candidate;
    }
  }
  return std::nullopt;
}

/// select(keep, 0, fill) (or select(keep, fill, 0)): the masked fill as an
/// additive mask of the condition's shape.
Value additiveMask(PatternRewriter &rewriter, Location loc, const AttentionMatch &match,
                   Type element) {
  auto keepType = cast<RankedTensorType>(match.keep.getType());
  auto type = RankedTensorType::get(keepType.getShape(), element);
  Value zero = scalarConstant(rewriter, loc, element, 0.0);
  Value fill = scalarConstant(rewriter, loc, element, match.fill);
  return SelectOp::create(rewriter, loc, type, match.keep, match.keepIsTrue ? zero : fill,
                          match.keepIsTrue ? fill : zero);
}

// matmul(softmax(matmul(Q, Kt) * s + mask, -1), V)
//   = attention(Q, transpose(Kt, swap last two), V, mask) {scale = s}
struct SoftmaxProductToAttention final : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rewriter) const override {
    std::optional<AttentionMatch> match = matchAttention(op);
    if (!match || !isa<FloatType>(op.getType().getElementType()))
      return failure();
    auto q = cast<RankedTensorType>(match->query.getType());
    auto kt = cast<RankedTensorType>(match->keyTransposed.getType());
    auto v = cast<RankedTensorType>(match->value.getType());
    // The attention result must be the matmul's: the mask may not widen the batch.
    FailureOr<SmallVector<int64_t>> batch = broadcastShapes(
        std::nullopt, {q.getShape().drop_back(2), kt.getShape().drop_back(2),
                       v.getShape().drop_back(2)});
    if (failed(batch))
      return failure();
    SmallVector<int64_t> shape(*batch);
    shape.append({q.getShape()[q.getRank() - 2], v.getShape().back()});
    if (!areRefinedTypes(RankedTensorType::get(shape, q.getElementType()), op.getType()))
      return rewriter.notifyMatchFailure(op, "the mask widens the batch dims");
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, kt.getRank()));
    std::swap(perm[kt.getRank() - 1], perm[kt.getRank() - 2]);
    Value key = TransposeOp::create(rewriter, op.getLoc(), match->keyTransposed,
                                    rewriter.getDenseI64ArrayAttr(perm));
    if (match->keep)
      match->mask = additiveMask(rewriter, op.getLoc(), *match, q.getElementType());
    rewriter.replaceOpWithNewOp<AttentionOp>(
        op, op.getType(), match->query, key, match->value, match->mask,
        rewriter.getF32FloatAttr(match->scale), rewriter.getBoolAttr(false));
    return success();
  }
};

struct KilnRecognizeAttentionPass final
    : impl::KilnRecognizeAttentionPassBase<KilnRecognizeAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRecognizeAttentionPatterns(patterns);
    (void)applyPatternsGreedily(getOperation(), std::move(patterns));
  }
};

} // namespace

void populateRecognizeAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<SoftmaxProductToAttention>(patterns.getContext());
}

} // namespace kiln
