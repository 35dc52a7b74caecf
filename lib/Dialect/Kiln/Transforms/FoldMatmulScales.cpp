//===- FoldMatmulScales.cpp - The kiln-fold-matmul-scales pass ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// A scalar factor commutes with every op that only moves elements, and a
// product is linear in each operand: matmul(move(a * s1), move'(b * s2)) =
// matmul(move(a * (s1 * s2)), move'(b)). GPT-2's exports scale both Q and
// K by d^-1/4; K is the whole KV cache, so its scale is a kernel that
// reads and writes the cache every decode step, and it keeps the cache from
// being the product's operand as it is (a K-major B).
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNFOLDMATMULSCALESPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"

namespace {

/// Ops whose result elements are input elements (moved, dropped or
/// repeated, never combined): they commute with a scalar factor.
bool onlyMovesElements(Operation *op) {
  return isa<TransposeOp, ReshapeOp, SqueezeOp, UnsqueezeOp, FlattenOp, ExpandOp, SliceOp>(op);
}

/// Whether every reader of `value` but `next` only asks for its shape.
bool othersReadOnlyShape(Value value, Operation *next) {
  return llvm::all_of(value.getUsers(), [&](Operation *user) {
    return user == next || isa<ShapeOp, SizeOp>(user);
  });
}

/// A scalar factor of a matmul operand: the kiln.mul by a one-element float
/// splat constant, found through ops that only move elements, whose value
/// reaches the matmul and nothing else (shape queries aside).
struct Factor {
  MulOp mul;
  unsigned constantIndex = 0;
  llvm::APFloat value{0.0};
};

std::optional<Factor> scalarFactor(Value operand, Operation *matmul) {
  Operation *next = matmul;
  for (Value link = operand;; link = link.getDefiningOp()->getOperand(0)) {
    if (!othersReadOnlyShape(link, next))
      return std::nullopt;
    Operation *def = link.getDefiningOp();
    if (!def)
      return std::nullopt;
    if (auto mul = dyn_cast<MulOp>(def)) {
      auto type = dyn_cast<RankedTensorType>(mul.getType());
      if (!type || !isa<FloatType>(type.getElementType()))
        return std::nullopt;
      for (unsigned i : {1u, 0u}) {
        Value constant = mul->getOperand(i), data = mul->getOperand(1 - i);
        auto constantType = dyn_cast<RankedTensorType>(constant.getType());
        SplatElementsAttr splat;
        // One element: dropping the mul keeps the data's type.
        if (!constantType || !constantType.hasStaticShape() ||
            constantType.getNumElements() != 1 || data.getType() != type ||
            !matchPattern(constant, m_Constant(&splat)))
          continue;
        return Factor{mul, i, splat.getSplatValue<llvm::APFloat>()};
      }
      return std::nullopt;
    }
    if (!onlyMovesElements(def))
      return std::nullopt;
    next = def;
  }
}

// matmul(move(a * s1), move'(b * s2)) = matmul(move(a * (s1 * s2)), move'(b))
struct FoldRhsScaleIntoLhs final : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rewriter) const override {
    std::optional<Factor> lhs = scalarFactor(op.getLhs(), op);
    if (!lhs)
      return rewriter.notifyMatchFailure(op, "lhs has no scalar factor");
    std::optional<Factor> rhs = scalarFactor(op.getRhs(), op);
    if (!rhs)
      return rewriter.notifyMatchFailure(op, "rhs has no scalar factor");
    if (lhs->mul == rhs->mul)
      return rewriter.notifyMatchFailure(op, "both operands share one factor");
    llvm::APFloat product = lhs->value;
    llvm::APFloat::opStatus status =
        product.multiply(rhs->value, llvm::APFloat::rmNearestTiesToEven);
    if ((status & (llvm::APFloat::opOverflow | llvm::APFloat::opUnderflow)) ||
        !product.isFiniteNonZero())
      return rewriter.notifyMatchFailure(op, "s1 * s2 is not a finite nonzero value");
    Value oldConstant = lhs->mul->getOperand(lhs->constantIndex);
    auto constantType = cast<RankedTensorType>(oldConstant.getType());
    rewriter.setInsertionPoint(lhs->mul);
    Value constant = ConstantOp::create(rewriter, oldConstant.getLoc(),
                                        DenseElementsAttr::get(constantType, product));
    rewriter.modifyOpInPlace(lhs->mul,
                             [&] { lhs->mul->setOperand(lhs->constantIndex, constant); });
    rewriter.replaceOp(rhs->mul, rhs->mul->getOperand(1 - rhs->constantIndex));
    return success();
  }
};

struct KilnFoldMatmulScalesPass final
    : impl::KilnFoldMatmulScalesPassBase<KilnFoldMatmulScalesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFoldMatmulScalesPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void populateFoldMatmulScalesPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldRhsScaleIntoLhs>(patterns.getContext());
}

} // namespace kiln
