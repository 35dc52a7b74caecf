//===- FormDispatches.cpp - The kiln-form-dispatches pass -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Matmul epilogues: the elementwise generic that consumes a linalg.matmul
// (bias add, activation, residual add, cast, all fused into one generic by
// kiln-fuse-elementwise) joins the matmul's dispatch. The reshapes between
// them ([B*S, N] -> [B, S, N], or a batch-of-one conv's [F, P] -> [1, F, H, W])
// are moved below the generic by collapsing its loops, the matmul (with the
// zero fill of its C) is moved right before the generic, and the generic is
// marked `kiln.epilogue` (see kiln/Dispatch/Epilogue.h): the CPU matmul
// kernel applies it to each output tile.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dispatch/Epilogue.h"
#include "kiln/Dispatch/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNFORMDISPATCHESPASS
#include "kiln/Dispatch/Passes.h.inc"

namespace {

/// A matmul on tensors the CPU kernel generator takes (f32, 2-D, the
/// default indexing maps).
linalg::MatmulOp kernelMatmul(Value value) {
  auto matmul = value.getDefiningOp<linalg::MatmulOp>();
  if (!matmul || !matmul.hasPureTensorSemantics() || matmul.hasUserDefinedMaps())
    return nullptr;
  bool f32Matrices = llvm::all_of(matmul->getOperandTypes(), [](Type t) {
    auto type = dyn_cast<RankedTensorType>(t);
    return type && type.getRank() == 2 && type.getElementType().isF32();
  });
  return f32Matrices ? matmul : nullptr;
}

/// Whether the buffer `value` bufferizes to has unit stride along its last
/// dim: only a strided `tensor.extract_slice` (through reshapes) gives it
/// another; everything else is a fresh buffer or a function argument, both
/// with identity layouts.
bool hasUnitInnerStride(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
      std::optional<int64_t> stride = getConstantIntValue(slice.getMixedStrides().back());
      if (!stride || *stride != 1)
        return false;
      value = slice.getSource();
    } else if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(def)) {
      value = def->getOperand(0);
    } else {
      return true;
    }
  }
  return true;
}

/// insert_slice(x, tensor.empty) covering the whole destination, which only
/// adds unit dims to x, is expand_shape(x): the per-image result of a conv
/// at batch 1, [F, P] into [1, F, P]. (Same elements, same order.)
struct WholeInsertIntoEmpty final : OpRewritePattern<tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::InsertSliceOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType source = op.getSourceType(), dest = op.getDestType();
    if (!kernelMatmul(op.getSource()) || !op.getDest().getDefiningOp<tensor::EmptyOp>() ||
        !source.hasStaticShape() || !dest.hasStaticShape() ||
        source.getNumElements() != dest.getNumElements() ||
        !areAllConstantIntValue(op.getMixedOffsets(), 0) ||
        !areAllConstantIntValue(op.getMixedStrides(), 1))
      return failure();
    std::optional<SmallVector<ReassociationIndices>> groups =
        getReassociationIndicesForReshape(source, dest);
    if (!groups)
      return failure();
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, dest, op.getSource(), *groups);
    return success();
  }
};

/// A generic input that is the expand_shape of a matmul result: collapsing
/// the generic's loops folds the reshape into it (it moves below the
/// generic).
bool isMatmulResultReshape(OpOperand *operand) {
  auto expand = operand->get().getDefiningOp<tensor::ExpandShapeOp>();
  return expand && isa<linalg::GenericOp>(operand->getOwner()) && expand->hasOneUse() &&
         kernelMatmul(expand.getSrc()) && expand.getSrc().hasOneUse();
}

/// Marks the epilogue of `matmul` and moves the matmul (and the zero fill
/// of its C, which the kernel then skips) right before it.
void formEpilogue(linalg::MatmulOp matmul) {
  Value result = matmul->getResult(0);
  if (!result.hasOneUse())
    return;
  OpOperand &use = *result.use_begin();
  auto generic = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!generic || generic->hasAttr(kEpilogueAttr) || !generic.isDpsInput(&use) ||
      !isMatmulEpilogue(generic, use.getOperandNumber()))
    return;
  SmallVector<Value> unitStride = {matmul.getDpsInputs()[1], matmul.getDpsInits()[0],
                                   generic.getDpsInits()[0]};
  for (OpOperand *input : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(input);
    if (map.getNumResults() && map.getResults().back() == getAffineDimExpr(1, map.getContext()))
      unitStride.push_back(input->get());
  }
  if (!llvm::all_of(unitStride, hasUnitInnerStride))
    return;
  generic->setAttr(kEpilogueAttr, Builder(generic).getI64IntegerAttr(use.getOperandNumber()));
  matmul->moveBefore(generic);
  auto fill = matmul.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (fill && fill->hasOneUse())
    fill->moveBefore(matmul);
}

struct KilnFormDispatchesPass final
    : impl::KilnFormDispatchesPassBase<KilnFormDispatchesPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    auto simplify = [&](bool collapseLoops) {
      RewritePatternSet patterns(context);
      patterns.add<WholeInsertIntoEmpty>(context);
      if (collapseLoops)
        linalg::populateFoldReshapeOpsByCollapsingPatterns(patterns, isMatmulResultReshape);
      tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
      tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
      return applyPatternsGreedily(getOperation(), std::move(patterns));
    };
    if (failed(simplify(false)))
      return signalPassFailure();
    // Unit loops (the batch of 1 in [1, F, H, W]) would keep a channel bias
    // (d1) from collapsing with them: drop them from the candidates first.
    SmallVector<linalg::GenericOp> candidates;
    getOperation().walk([&](linalg::GenericOp generic) {
      bool unitLoop = llvm::is_contained(generic.getStaticLoopRanges(), 1);
      if (unitLoop && llvm::any_of(generic.getDpsInputOperands(), isMatmulResultReshape))
        candidates.push_back(generic);
    });
    IRRewriter rewriter(context);
    linalg::ControlDropUnitDims options;
    for (linalg::GenericOp generic : candidates) {
      rewriter.setInsertionPoint(generic);
      FailureOr<linalg::DropUnitDimsResult> dropped =
          linalg::dropUnitDims(rewriter, generic, options);
      if (succeeded(dropped))
        rewriter.replaceOp(generic, dropped->replacements);
    }
    if (failed(simplify(true)))
      return signalPassFailure();
    SmallVector<linalg::MatmulOp> matmuls;
    getOperation().walk([&](linalg::MatmulOp op) {
      if (kernelMatmul(op->getResult(0)))
        matmuls.push_back(op);
    });
    for (linalg::MatmulOp matmul : matmuls)
      formEpilogue(matmul);
  }
};

} // namespace
} // namespace kiln
