//===- DecomposeAttention.cpp - The kiln-decompose-attention pass ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// kiln.attention is expanded back into the ops kiln-recognize-attention
// matched, except where the target's attention kernel computes it: the
// kiln::AttentionKernelShapes of its policy, given as the keep-* options.
//
//===----------------------------------------------------------------------===//

#include "MatchUtils.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNDECOMPOSEATTENTIONPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"

namespace {

/// select(keep, scores, -inf).
Value maskOut(PatternRewriter &rewriter, Location loc, Value keep, Value scores) {
  auto type = cast<RankedTensorType>(scores.getType());
  Value minusInf = scalarConstant(rewriter, loc, type.getElementType(), -INFINITY);
  return SelectOp::create(rewriter, loc, type, keep, scores, minusInf);
}

// attention(Q, K, V, mask) {scale}
//   = matmul(softmax(matmul(Q, transpose(K)) * scale + mask, -1), V)
struct AttentionToSoftmaxProduct final : OpRewritePattern<AttentionOp> {
  AttentionToSoftmaxProduct(MLIRContext *context, const AttentionKernelShapes &keep)
      : OpRewritePattern(context), keep(keep) {}
  AttentionKernelShapes keep;

  LogicalResult matchAndRewrite(AttentionOp op, PatternRewriter &rewriter) const override {
    if (hasAttentionKernel(op, keep))
      return rewriter.notifyMatchFailure(op, "kept for the target's attention kernel");
    Location loc = op.getLoc();
    auto q = cast<RankedTensorType>(op.getQuery().getType());
    auto k = cast<RankedTensorType>(op.getKey().getType());
    int64_t headDim = q.getShape().back();
    int64_t sq = q.getShape()[q.getRank() - 2], sk = k.getShape()[k.getRank() - 2];
    if (!op.getScale() && ShapedType::isDynamic(headDim))
      return rewriter.notifyMatchFailure(op, "default scale needs a static head dim");
    if (op.getIsCausal() && (ShapedType::isDynamic(sq) || ShapedType::isDynamic(sk)))
      return rewriter.notifyMatchFailure(op, "causal mask needs static lengths");
    double scale = op.getScale() ? op.getScale()->convertToDouble()
                                 : 1.0 / std::sqrt(static_cast<double>(headDim));
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, k.getRank()));
    std::swap(perm[k.getRank() - 1], perm[k.getRank() - 2]);
    Value kt = TransposeOp::create(rewriter, loc, op.getKey(),
                                   rewriter.getDenseI64ArrayAttr(perm));
    Value scores = MatmulOp::create(rewriter, loc, op.getQuery(), kt);
    if (scale != 1.0)
      scores = MulOp::create(rewriter, loc, scores,
                             scalarConstant(rewriter, loc, q.getElementType(), scale));
    if (Value mask = op.getMask()) {
      auto maskType = cast<RankedTensorType>(mask.getType());
      if (maskType.getElementType().isInteger(1)) {
        FailureOr<SmallVector<int64_t>> shape = broadcastShapes(
            std::nullopt, {cast<RankedTensorType>(scores.getType()).getShape(),
                           maskType.getShape()});
        if (failed(shape))
          return failure();
        auto widened = RankedTensorType::get(*shape, q.getElementType());
        scores = SelectOp::create(rewriter, loc, widened, mask, scores,
                                  scalarConstant(rewriter, loc, q.getElementType(),
                                                 -INFINITY));
      } else {
        scores = AddOp::create(rewriter, loc, scores, mask);
      }
    }
    if (op.getIsCausal()) {
      SmallVector<bool> keep;
      for (int64_t i = 0; i < sq; ++i)
        for (int64_t j = 0; j < sk; ++j)
          keep.push_back(j <= i);
      auto maskType = RankedTensorType::get({sq, sk}, rewriter.getI1Type());
      Value causal = ConstantOp::create(rewriter, loc, DenseElementsAttr::get(maskType, keep));
      scores = maskOut(rewriter, loc, causal, scores);
    }
    Value probs = SoftmaxOp::create(rewriter, loc, scores.getType(), scores,
                                    rewriter.getI64IntegerAttr(-1));
    rewriter.replaceOpWithNewOp<MatmulOp>(op, op.getType(), probs, op.getValue());
    return success();
  }
};

struct KilnDecomposeAttentionPass final
    : impl::KilnDecomposeAttentionPassBase<KilnDecomposeAttentionPass> {
  using KilnDecomposeAttentionPassBase::KilnDecomposeAttentionPassBase;
  void runOnOperation() override {
    AttentionKernelShapes keep;
    keep.f32 = keepF32;
    keep.halfFloats = keepHalfFloats;
    keep.headDimMultiple = headDimMultiple;
    keep.maxHeadDim = maxHeadDim;
    if ((keep.f32 || keep.halfFloats) &&
        (keep.headDimMultiple < 1 || keep.maxHeadDim < keep.headDimMultiple)) {
      getOperation()->emitError()
          << "kiln-decompose-attention: head-dim-multiple=" << keep.headDimMultiple
          << " max-head-dim=" << keep.maxHeadDim
          << ", expected 1 <= head-dim-multiple <= max-head-dim";
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateDecomposeAttentionPatterns(patterns, keep);
    (void)applyPatternsGreedily(getOperation(), std::move(patterns));
  }
};

} // namespace

void populateDecomposeAttentionPatterns(RewritePatternSet &patterns,
                                        const AttentionKernelShapes &keep) {
  patterns.add<AttentionToSoftmaxProduct>(patterns.getContext(), keep);
}

} // namespace kiln
