//===- RecognizeGemm.cpp - The kiln-recognize-gemm pass -------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Exporters write a linear layer as MatMul then Add (the TorchScript exporter
// for inputs of rank > 2, e.g. [batch, seq, hidden] x [hidden, out] + [out]).
// As one kiln.gemm the bias is the product's epilogue rather than a separate
// elementwise op. Leading dims of A fold into the rows with reshapes, which
// are views.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNRECOGNIZEGEMMPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"

namespace {

/// A static bias that broadcasts along the rows of an [.., N] result: every
/// dim is 1 except the last, which is 1 or N.
bool isRowBias(RankedTensorType bias, int64_t n) {
  if (!bias.hasStaticShape())
    return false;
  if (bias.getRank() == 0)
    return true;
  ArrayRef<int64_t> shape = bias.getShape();
  return llvm::all_of(shape.drop_back(), [](int64_t d) { return d == 1; }) &&
         (shape.back() == 1 || shape.back() == n);
}

// add(matmul(A, B), c) = reshape(gemm(reshape(A, [M, K]), B, reshape(c, [N'])))
// where M is the product of A's leading dims and c broadcasts along rows.
struct MatmulBiasToGemm final : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rewriter) const override {
    for (auto [product, bias] : {std::pair(op.getLhs(), op.getRhs()),
                                 std::pair(op.getRhs(), op.getLhs())}) {
      auto matmul = product.getDefiningOp<MatmulOp>();
      // An integer matmul (i16 operands, i32 result) keeps its i32 bias add.
      if (!matmul || !matmul->hasOneUse() || matmul.getType() != op.getType() ||
          cast<RankedTensorType>(matmul.getLhs().getType()).getElementType() !=
              matmul.getType().getElementType())
        continue;
      auto a = cast<RankedTensorType>(matmul.getLhs().getType());
      auto b = cast<RankedTensorType>(matmul.getRhs().getType());
      auto out = cast<RankedTensorType>(matmul.getType());
      auto biasType = cast<RankedTensorType>(bias.getType());
      int64_t n = out.getShape().back();
      if (a.getRank() < 2 || b.getRank() != 2 || ShapedType::isDynamic(n) ||
          !isRowBias(biasType, n))
        continue;
      if (a.getRank() > 2 && !(a.hasStaticShape() && out.hasStaticShape()))
        continue;
      Location loc = rewriter.getFusedLoc({matmul.getLoc(), op.getLoc()});
      Type element = out.getElementType();
      Value c = bias;
      int64_t biasLength = biasType.getRank() == 0 ? 1 : biasType.getShape().back();
      if (biasType.getRank() != 1)
        c = ReshapeOp::create(rewriter, loc, RankedTensorType::get({biasLength}, element),
                              bias, Value());
      Value lhs = matmul.getLhs();
      int64_t rows = a.getShape()[0];
      if (a.getRank() > 2) {
        rows = a.getNumElements() / a.getShape().back();
        lhs = ReshapeOp::create(rewriter, loc,
                                RankedTensorType::get({rows, a.getShape().back()}, element),
                                lhs, Value());
      }
      Value gemm = GemmOp::create(rewriter, loc, RankedTensorType::get({rows, n}, element), lhs,
                                  matmul.getRhs(), c, llvm::APFloat(1.0f), llvm::APFloat(1.0f));
      if (a.getRank() > 2)
        gemm = ReshapeOp::create(rewriter, loc, out, gemm, Value());
      rewriter.replaceOp(op, gemm);
      return success();
    }
    return failure();
  }
};

struct KilnRecognizeGemmPass final : impl::KilnRecognizeGemmPassBase<KilnRecognizeGemmPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRecognizeGemmPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void populateRecognizeGemmPatterns(RewritePatternSet &patterns) {
  patterns.add<MatmulBiasToGemm>(patterns.getContext());
}

} // namespace kiln
