//===- ExpandShapeToReinterpretCast.cpp - Dynamic expand_shape as a cast --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// memref.expand_shape ops whose reassociation groups hold several dynamic
// result dims become memref.reinterpret_cast ops of their source's base
// buffer (upstream expand-strided-metadata handles one dynamic dim per group).
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_KILNEXPANDSHAPETOREINTERPRETCASTPASS
#include "kiln/Target/Host/Passes.h.inc"

namespace {
using namespace mlir;

/// a * b, folded when both are constants.
OpFoldResult multiply(OpBuilder &b, Location loc, OpFoldResult lhs, OpFoldResult rhs) {
  std::optional<int64_t> x = getConstantIntValue(lhs), y = getConstantIntValue(rhs);
  if (x && y)
    return b.getIndexAttr(*x * *y);
  if (x == 1)
    return rhs;
  if (y == 1)
    return lhs;
  return arith::MulIOp::create(b, loc, getValueOrCreateConstantIndexOp(b, loc, lhs),
                               getValueOrCreateConstantIndexOp(b, loc, rhs))
      .getResult();
}

bool hasSeveralDynamicDimsInAGroup(memref::ExpandShapeOp op) {
  MemRefType type = op.getResultType();
  return llvm::any_of(op.getReassociationIndices(), [&](const ReassociationIndices &group) {
    return llvm::count_if(group, [&](int64_t d) { return type.isDynamicDim(d); }) > 1;
  });
}

/// expand_shape(src) = reinterpret_cast(base(src)) with, per group, the
/// sizes of output_shape and row-major strides scaled by the source dim's
/// stride (the group's dims are contiguous relative to each other).
struct ExpandShapeToReinterpretCast final : OpRewritePattern<memref::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::ExpandShapeOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasSeveralDynamicDimsInAGroup(op))
      return rewriter.notifyMatchFailure(op, "at most one dynamic dim per group");
    MemRefType resultType = op.getResultType();
    auto [resultStrides, resultOffset] = resultType.getStridesAndOffset();
    Location loc = op.getLoc();
    auto meta = memref::ExtractStridedMetadataOp::create(rewriter, loc, op.getSrc());
    SmallVector<OpFoldResult> outputShape = op.getMixedOutputShape();
    auto sourceStrides = op.getSrcType().getStridesAndOffset().first;
    SmallVector<OpFoldResult> sizes(resultType.getRank()), strides(resultType.getRank());
    for (auto [groupIndex, group] : llvm::enumerate(op.getReassociationIndices())) {
      OpFoldResult stride = ShapedType::isDynamic(sourceStrides[groupIndex])
                                ? OpFoldResult(meta.getStrides()[groupIndex])
                                : rewriter.getIndexAttr(sourceStrides[groupIndex]);
      for (int64_t dim : llvm::reverse(group)) {
        sizes[dim] = resultType.isDynamicDim(dim)
                         ? outputShape[dim]
                         : rewriter.getIndexAttr(resultType.getDimSize(dim));
        strides[dim] = ShapedType::isDynamic(resultStrides[dim])
                           ? stride
                           : rewriter.getIndexAttr(resultStrides[dim]);
        stride = multiply(rewriter, loc, stride, sizes[dim]);
      }
    }
    OpFoldResult offset = ShapedType::isDynamic(resultOffset)
                              ? OpFoldResult(meta.getOffset())
                              : rewriter.getIndexAttr(resultOffset);
    rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(op, resultType, meta.getBaseBuffer(),
                                                           offset, sizes, strides);
    return success();
  }
};

struct KilnExpandShapeToReinterpretCastPass final
    : impl::KilnExpandShapeToReinterpretCastPassBase<KilnExpandShapeToReinterpretCastPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandShapeToReinterpretCast>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
} // namespace kiln
