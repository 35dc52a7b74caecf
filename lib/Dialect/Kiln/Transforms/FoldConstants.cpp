//===- FoldConstants.cpp - The kiln-fold-constants pass -------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Op folders only touch small tensors (they run in every canonicalization);
// this pass evaluates any evaluable kiln op on constants up to a size limit,
// which is what removes exporter shape plumbing and pre-transposes weights.
//
//===----------------------------------------------------------------------===//

#include "ConstantEval.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNFOLDCONSTANTSPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"

namespace {

using consteval::Literal;

/// Storage bytes of a static tensor type (i1 counts as a byte).
int64_t byteSize(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  int64_t bits = std::max<int64_t>(8, tensor.getElementTypeBitWidth());
  return tensor.getNumElements() * (bits / 8);
}

/// Any kiln op (not a constant) whose operands are all evaluable constants
/// becomes kiln.constant ops holding its results.
struct EvaluateOnConstants final : RewritePattern {
  EvaluateOnConstants(MLIRContext *context, int64_t maxBytes)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context),
        maxBytes(maxBytes) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<KilnDialect>(op->getDialect()) || isa<ConstantOp>(op) ||
        op->getNumResults() == 0 || op->getNumRegions() != 0)
      return failure();
    for (Type type : op->getResultTypes())
      if (!consteval::isEvaluableType(type) || byteSize(type) > maxBytes)
        return rewriter.notifyMatchFailure(op, "result not static or too large");
    SmallVector<Literal> operands;
    for (Value operand : op->getOperands()) {
      ElementsAttr attr;
      if (!matchPattern(operand, m_Constant(&attr)) ||
          !consteval::isEvaluableType(attr.getType()) ||
          byteSize(attr.getType()) > maxBytes)
        return failure();
      std::optional<Literal> literal = consteval::readLiteral(attr);
      if (!literal)
        return failure();
      operands.push_back(std::move(*literal));
    }
    SmallVector<Literal> results;
    if (std::optional<Literal> value = consteval::evaluateElementwise(op, operands))
      results.push_back(std::move(*value));
    else if (auto values = consteval::evaluateStructural(op, operands))
      results = std::move(*values);
    else
      return rewriter.notifyMatchFailure(op, "not evaluable");
    SmallVector<Value> replacements;
    for (const Literal &result : results)
      replacements.push_back(
          ConstantOp::create(rewriter, op->getLoc(), consteval::writeLiteral(result)));
    rewriter.replaceOp(op, replacements);
    return success();
  }

  int64_t maxBytes;
};

/// gemm(a, c, trans_b) = gemm(a, transpose(c)) for a constant c (and the same
/// for trans_a): the transpose then folds, so codegen sees a plain matmul.
struct TransposeConstantGemmOperand final : OpRewritePattern<GemmOp> {
  TransposeConstantGemmOperand(MLIRContext *context, int64_t maxBytes)
      : OpRewritePattern(context), maxBytes(maxBytes) {}

  LogicalResult matchAndRewrite(GemmOp op, PatternRewriter &rewriter) const override {
    auto foldable = [&](Value v) {
      ElementsAttr attr;
      return matchPattern(v, m_Constant(&attr)) &&
             consteval::isEvaluableType(attr.getType()) &&
             byteSize(attr.getType()) <= maxBytes;
    };
    bool a = op.getTransA() && foldable(op.getA());
    bool b = op.getTransB() && foldable(op.getB());
    if (!a && !b)
      return failure();
    auto transposed = [&](Value v) -> Value {
      return TransposeOp::create(rewriter, op.getLoc(), v,
                                 rewriter.getDenseI64ArrayAttr({1, 0}));
    };
    rewriter.modifyOpInPlace(op, [&] {
      if (a) {
        op.getAMutable().assign(transposed(op.getA()));
        op.setTransA(false);
      }
      if (b) {
        op.getBMutable().assign(transposed(op.getB()));
        op.setTransB(false);
      }
    });
    return success();
  }

  int64_t maxBytes;
};

struct KilnFoldConstantsPass final
    : impl::KilnFoldConstantsPassBase<KilnFoldConstantsPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFoldConstantsPatterns(patterns, maxResultBytes);
    (void)applyPatternsGreedily(getOperation(), std::move(patterns));
  }
};

} // namespace

void populateFoldConstantsPatterns(RewritePatternSet &patterns, int64_t maxResultBytes) {
  patterns.add<EvaluateOnConstants, TransposeConstantGemmOperand>(
      patterns.getContext(), maxResultBytes);
}

} // namespace kiln
