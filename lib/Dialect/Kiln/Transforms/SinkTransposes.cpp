//===- SinkTransposes.cpp - The kiln-sink-transposes pass -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Elementwise ops commute with permutations of their operands' elements, so
// a transpose feeding one can move to its result. Moving transposes towards
// the outputs brings pairs together (NCHW <-> NHWC round trips around
// activations, scaling, residual adds) where transpose∘transpose folding
// cancels or merges them.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNSINKTRANSPOSESPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"

namespace {

/// The transpose defining `value`, if it has no other user than `user`
/// (moving a shared transpose would duplicate it).
TransposeOp soleTranspose(Value value, Operation *user) {
  auto transpose = value.getDefiningOp<TransposeOp>();
  if (!transpose)
    return {};
  for (Operation *other : transpose->getUsers())
    if (other != user)
      return {};
  return transpose;
}

/// `type`'s shape before `perm` was applied (result dim i is input dim perm[i]).
RankedTensorType unpermuted(RankedTensorType type, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> shape(type.getRank());
  for (auto [i, p] : llvm::enumerate(perm))
    shape[p] = type.getShape()[i];
  return RankedTensorType::get(shape, type.getElementType());
}

/// Clones `op` on `operands` with result type `type`, then transposes the
/// clone's result by `perm` in place of `op`.
void moveBelow(PatternRewriter &rewriter, Operation *op, ValueRange operands,
               RankedTensorType type, DenseI64ArrayAttr perm) {
  Operation *moved = rewriter.clone(*op);
  rewriter.modifyOpInPlace(moved, [&] {
    moved->setOperands(operands);
    moved->getResult(0).setType(type);
  });
  rewriter.replaceOpWithNewOp<TransposeOp>(op, op->getResult(0).getType(),
                                           moved->getResult(0), perm);
}

// unary(transpose(x, p)) = transpose(unary(x), p)   (also cast)
struct SinkThroughUnary final : OpTraitRewritePattern<OpTrait::Elementwise> {
  using OpTraitRewritePattern::OpTraitRewritePattern;
  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (!isa<KilnDialect>(op->getDialect()) || op->getNumOperands() != 1 ||
        op->getNumResults() != 1)
      return failure();
    TransposeOp transpose = soleTranspose(op->getOperand(0), op);
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!transpose || !type)
      return failure();
    moveBelow(rewriter, op, transpose.getInput(), unpermuted(type, transpose.getPerm()),
              transpose.getPermAttr());
    return success();
  }
};

/// A value that broadcasts the same in any layout: one element.
bool isSingleElement(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() && type.getNumElements() == 1;
}

// f(transpose(a, p), transpose(b, p)) = transpose(f(a, b), p)
// f(transpose(a, p), s) = transpose(f(a, s), p)   for a one-element s
// (f broadcasting and elementwise; both operands have the result's rank, or
// s has one element, so broadcasting pairs the same elements either way).
template <typename BinaryOp>
struct SinkThroughBinary final : OpRewritePattern<BinaryOp> {
  using OpRewritePattern<BinaryOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(BinaryOp op, PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type)
      return failure();
    TransposeOp lhs = soleTranspose(op.getLhs(), op);
    TransposeOp rhs = soleTranspose(op.getRhs(), op);
    TransposeOp any = lhs ? lhs : rhs;
    if (!any)
      return failure();
    ArrayRef<int64_t> perm = any.getPerm();
    auto operandFor = [&](TransposeOp transpose, Value operand) -> Value {
      if (transpose && transpose.getPerm() == perm)
        return transpose.getInput();
      return !transpose && isSingleElement(operand) ? operand : Value();
    };
    Value newLhs = operandFor(lhs, op.getLhs()), newRhs = operandFor(rhs, op.getRhs());
    if (!newLhs || !newRhs)
      return failure();
    moveBelow(rewriter, op, {newLhs, newRhs}, unpermuted(type, perm), any.getPermAttr());
    return success();
  }
};

struct KilnSinkTransposesPass final
    : impl::KilnSinkTransposesPassBase<KilnSinkTransposesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateSinkTransposesPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void populateSinkTransposesPatterns(RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<SinkThroughUnary>(context);
  patterns.add<SinkThroughBinary<AddOp>, SinkThroughBinary<SubOp>, SinkThroughBinary<MulOp>,
               SinkThroughBinary<DivOp>, SinkThroughBinary<PowOp>, SinkThroughBinary<MaxOp>,
               SinkThroughBinary<MinOp>, SinkThroughBinary<ModOp>, SinkThroughBinary<AndOp>,
               SinkThroughBinary<OrOp>, SinkThroughBinary<XorOp>, SinkThroughBinary<EqualOp>,
               SinkThroughBinary<LessOp>, SinkThroughBinary<LessEqualOp>,
               SinkThroughBinary<GreaterOp>, SinkThroughBinary<GreaterEqualOp>>(context);
}

} // namespace kiln
