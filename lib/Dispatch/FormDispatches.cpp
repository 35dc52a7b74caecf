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
// kernel applies it to each output tile. Reshapes that do not collapse
// away (the head split [S, H*D] -> [S, H, D] read in the order [H, S, D])
// stay as the epilogue's view of C: the kernel then stores each tile in the
// permuted layout, so a projection's bias and head-split transpose, and an
// attention product's head merge (a batch_matmul epilogue), cost no pass
// of their own.
//
// Convolutions: the per-tap matmuls of a stride-1 conv and the im2col
// matmul of any other conv become one `kiln.conv_taps` contraction each,
// which the CPU kernel runs as an implicit GEMM (its B packing reads the
// input through the conv's index map); a stride-1 depthwise conv's
// activation joins it at the row pitch when only 1x1 convs read it.
//
// Row groups (RowGroups.h): softmax, layer norm and other last-axis
// reductions with their elementwise neighbours, marked between the steps
// above and the batched products' epilogues.
//
//===----------------------------------------------------------------------===//

#include "ConvDispatches.h"
#include "RowGroups.h"

#include "kiln/Dispatch/Epilogue.h"
#include "kiln/Dispatch/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
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

/// A matmul on tensors the CPU integer kernel takes (an i16 kiln.matmul's
/// lowering: 2-D static i16 operands, i32 result, the default indexing maps).
static bool integerKernelMatmul(linalg::MatmulOp matmul) {
  if (!matmul.hasPureTensorSemantics() || matmul.hasUserDefinedMaps())
    return false;
  auto typeOf = [](Value v) { return dyn_cast<RankedTensorType>(v.getType()); };
  RankedTensorType a = typeOf(matmul.getDpsInputs()[0]), b = typeOf(matmul.getDpsInputs()[1]),
                   c = typeOf(matmul.getDpsInits()[0]);
  // Static shapes only: the kernel (kiln-cpu-integer-matmul) takes no
  // other, and a dynamic M stays generic loops without an epilogue.
  return a && b && c && a.getRank() == 2 && b.getRank() == 2 && c.getRank() == 2 &&
         a.hasStaticShape() && b.hasStaticShape() && a.getDimSize(1) > 0 &&
         a.getElementType().isInteger(16) && b.getElementType().isInteger(16) &&
         c.getElementType().isInteger(32);
}

namespace {

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

/// dim(expand_shape(x) output_shape s, i) = s[i]: the size of a batched
/// conv's result, whose reshape moved below its epilogue, is the batch the
/// inputs gave (not a read of the conv's result).
struct DimOfExpandShape final : OpRewritePattern<tensor::DimOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::DimOp op, PatternRewriter &rewriter) const override {
    auto expand = op.getSource().getDefiningOp<tensor::ExpandShapeOp>();
    std::optional<int64_t> index = op.getConstantIndex();
    if (!expand || !index || *index < 0 || *index >= expand.getResultType().getRank())
      return failure();
    OpFoldResult size = expand.getMixedOutputShape()[*index];
    rewriter.replaceOp(op, getValueOrCreateConstantIndexOp(rewriter, op.getLoc(), size));
    return success();
  }
};

/// A generic that copies a slice of a tensor by index -- a Gather with
/// constant indices, lowered to `tensor.extract %src[c, i0, i1, ...]` at
/// the loop indices i0, i1, ... in order (unit loops may be unused) and
/// constants -- is that slice
/// (ViT's selection of q, k and v from the fused [3, B, H, S, D]
/// projection): a view instead of a copy kernel.
struct IndexedCopyToSlice final : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (op.getNumDpsInputs() != 0 || op.getNumDpsInits() != 1 || !op.hasPureTensorSemantics() ||
        op.getNumReductionLoops() != 0 || !type || !type.hasStaticShape() ||
        !op.getIndexingMapsArray()[0].isIdentity())
      return failure();
    Block &body = op.getRegion().front();
    auto extract = body.getTerminator()->getOperand(0).getDefiningOp<tensor::ExtractOp>();
    if (!extract || extract->getBlock() != &body ||
        extract.getTensor().getParentBlock() == &body || !extract.getTensor().getType().hasStaticShape())
      return failure();
    for (Operation &inner : body.without_terminator())
      if (!isa<linalg::IndexOp, tensor::ExtractOp, arith::ConstantOp>(inner))
        return failure();
    SmallVector<OpFoldResult> offsets, sizes;
    int64_t next = 0; // the loop the next non-constant index must be
    for (Value index : extract.getIndices()) {
      if (std::optional<int64_t> constant = getConstantIntValue(index)) {
        offsets.push_back(rewriter.getIndexAttr(*constant));
        sizes.push_back(rewriter.getIndexAttr(1));
        continue;
      }
      // Loops of size 1 may go unused (their index, 0, was folded).
      auto loop = index.getDefiningOp<linalg::IndexOp>();
      while (loop && static_cast<int64_t>(loop.getDim()) > next && type.getDimSize(next) == 1)
        ++next;
      if (!loop || static_cast<int64_t>(loop.getDim()) != next)
        return failure();
      offsets.push_back(rewriter.getIndexAttr(0));
      sizes.push_back(rewriter.getIndexAttr(type.getDimSize(next++)));
    }
    while (next < type.getRank() && type.getDimSize(next) == 1)
      ++next;
    if (next != type.getRank())
      return failure();
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, type, extract.getTensor(), offsets, sizes,
        SmallVector<OpFoldResult>(offsets.size(), rewriter.getIndexAttr(1)));
    return success();
  }
};

/// A generic input that is the expand_shape of a matmul result (or of a
/// batched conv's [N, F, P]): collapsing the generic's loops folds the
/// reshape into it (it moves below the generic).
bool isMatmulResultReshape(OpOperand *operand) {
  auto expand = operand->get().getDefiningOp<tensor::ExpandShapeOp>();
  auto taps = expand ? expand.getSrc().getDefiningOp<linalg::GenericOp>() : nullptr;
  return expand && isa<linalg::GenericOp>(operand->getOwner()) && expand->hasOneUse() &&
         (kernelMatmul(expand.getSrc()) || (taps && isBatchedConvTaps(taps))) &&
         expand.getSrc().hasOneUse();
}

/// A generic input that collapses only unit dims of a matmul result (the
/// squeeze-excite FC of EfficientNet: C [F, 1] read as [F]): expanding the
/// generic's loops by them reads C directly, as its epilogue.
/// Likewise a batched conv taps' [N, F, 1] read as [N, F] (the same FC
/// with a symbolic batch, a linalg conv become conv taps).
bool isMatmulResultUnitCollapse(OpOperand *operand) {
  auto collapse = operand->get().getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse || !isa<linalg::GenericOp>(operand->getOwner()) || !collapse->hasOneUse() ||
      !collapse.getSrc().hasOneUse())
    return false;
  auto type = cast<RankedTensorType>(collapse.getSrc().getType());
  auto taps = collapse.getSrc().getDefiningOp<linalg::GenericOp>();
  bool unitColumn = false;
  if (kernelMatmul(collapse.getSrc()))
    unitColumn = type.hasStaticShape() && type.getDimSize(1) == 1;
  else if (taps && isBatchedConvTaps(taps))
    unitColumn = type.getDimSize(2) == 1 && !ShapedType::isDynamic(type.getDimSize(1)) &&
                 collapse.getReassociationIndices() ==
                     SmallVector<ReassociationIndices>{{0}, {1, 2}};
  // Only where C then covers every loop (an epilogue), not broadcast into
  // a bigger iteration space.
  auto generic = cast<linalg::GenericOp>(operand->getOwner());
  return unitColumn && generic.getMatchingIndexingMap(operand).isIdentity() &&
         ArrayRef<int64_t>(generic.getStaticLoopRanges()) == collapse.getResultType().getShape();
}

/// A batch_matmul on tensors the CPU kernel generator takes (f32, 3-D, the
/// default indexing maps): it runs as one matmul kernel per batch.
linalg::BatchMatmulOp kernelBatchMatmul(Value value) {
  auto matmul = value.getDefiningOp<linalg::BatchMatmulOp>();
  if (!matmul || !matmul.hasPureTensorSemantics() || matmul.hasUserDefinedMaps())
    return nullptr;
  bool f32 = llvm::all_of(matmul->getOperandTypes(), [](Type t) {
    auto type = dyn_cast<RankedTensorType>(t);
    return type && type.getRank() == 3 && type.getElementType().isF32();
  });
  return f32 ? matmul : nullptr;
}

/// Marks the epilogue of `contraction` (a kernel matmul or batch_matmul)
/// and moves the contraction (and the zero fill of its C, which the kernel
/// then skips) right before it. The epilogue reads C directly or through
/// one expand_shape (the head split of a projection, the batch of heads of
/// an attention product), and writes its output in any order that keeps
/// C's innermost dim innermost: the multi-head transposes become the
/// kernel's store pattern.
void formEpilogue(linalg::LinalgOp contraction, int64_t columnAlign) {
  Value result = contraction->getResult(0);
  if (!result.hasOneUse())
    return;
  OpOperand *use = &*result.use_begin();
  SmallVector<Operation *> views; // between the contraction and the generic
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(use->getOwner())) {
    if (!expand->hasOneUse())
      return;
    views.push_back(expand);
    use = &*expand->use_begin();
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(use->getOwner())) {
      if (!slice->hasOneUse())
        return;
      views.push_back(slice);
      use = &*slice->use_begin();
    }
  }
  auto generic = dyn_cast<linalg::GenericOp>(use->getOwner());
  if (!generic || generic->hasAttr(kEpilogueAttr) || generic->hasAttr(kRowGroupAttr) ||
      !generic.isDpsInput(use))
    return;
  EpilogueView view = epilogueView(use->get());
  if (view.source != result ||
      view.groups.size() != static_cast<size_t>(cast<ShapedType>(result.getType()).getRank()) ||
      !isMatmulEpilogue(generic, use->getOperandNumber(), view.groups, columnAlign, view.pitch))
    return;
  SmallVector<Value> unitStride = {contraction.getDpsInputs()[1], contraction.getDpsInits()[0],
                                   generic.getDpsInits()[0]};
  AffineExpr column = generic.getMatchingIndexingMap(use).getResults().back();
  for (OpOperand *input : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(input);
    if (map.getNumResults() && map.getResults().back() == column)
      unitStride.push_back(input->get());
  }
  if (!llvm::all_of(unitStride, bufferizesWithUnitInnerStride))
    return;
  joinEpilogue(contraction, generic, *use, views);
}

struct KilnFormDispatchesPass final
    : impl::KilnFormDispatchesPassBase<KilnFormDispatchesPass> {
  using Base::Base;
  void runOnOperation() override {
    if (epilogueColumnAlign < 1) {
      getOperation().emitError() << "kiln-form-dispatches: epilogue-column-align="
                                 << static_cast<int64_t>(epilogueColumnAlign)
                                 << ", expected a positive column count";
      return signalPassFailure();
    }
    MLIRContext *context = &getContext();
    auto simplify = [&](bool collapseLoops) {
      RewritePatternSet patterns(context);
      patterns.add<WholeInsertIntoEmpty, IndexedCopyToSlice, DimOfExpandShape>(context);
      if (collapseLoops) {
        linalg::populateFoldReshapeOpsByCollapsingPatterns(patterns, [](OpOperand *operand) {
          return isMatmulResultReshape(operand) || isReductionResultUnitExpand(operand);
        });
        linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, isMatmulResultUnitCollapse);
      }
      tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
      tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
      return applyPatternsGreedily(getOperation(), std::move(patterns));
    };
    // Convs the linalg stage left as linalg convs (a dynamic or large
    // batch) become batched conv taps, so that steps below see a
    // contraction as at batch 1.
    linalgConvsToTaps(getOperation());
    if (failed(simplify(false)))
      return signalPassFailure();
    // Unit loops (the batch of 1 in [1, F, H, W]) would keep a channel bias
    // (d1) from collapsing with them: drop them from the candidates first.
    // Only where every map is a projected permutation: in a window such as
    // 2 * d4 + d2 (a strided conv's patches), dropping the unit d4 leaves a
    // plain d2 that reads part of a dim, which the collapse would take for
    // all of it.
    SmallVector<linalg::GenericOp> candidates;
    getOperation().walk([&](linalg::GenericOp generic) {
      bool unitLoop = llvm::is_contained(generic.getStaticLoopRanges(), 1);
      bool permutations = llvm::all_of(generic.getIndexingMapsArray(), [](AffineMap map) {
        return map.isProjectedPermutation(/*allowZeroInResults=*/true);
      });
      if (unitLoop && permutations &&
          llvm::any_of(generic.getDpsInputOperands(), isMatmulResultReshape))
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
    // A depthwise conv's activation joins it at the row pitch (a stride-1
    // conv's flat rows, a strided conv's wide rows) where only 1x1 convs
    // read the result.
    exposePitchedRows(getOperation());
    SmallVector<linalg::GenericOp> pitchConsumers;
    getOperation().walk([&](linalg::GenericOp op) { pitchConsumers.push_back(op); });
    for (linalg::GenericOp op : pitchConsumers)
      fuseIntoPitchedProducer(op);
    SmallVector<linalg::GenericOp> batchedPointwise;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isBatchedConvTaps(op))
        batchedPointwise.push_back(op);
    });
    for (linalg::GenericOp op : batchedPointwise)
      pitchedBatchedToConvTaps(op);
    SmallVector<linalg::MatmulOp> matmuls;
    getOperation().walk([&](linalg::MatmulOp op) {
      if (kernelMatmul(op->getResult(0)) || integerKernelMatmul(op))
        matmuls.push_back(op);
    });
    for (linalg::MatmulOp matmul : matmuls)
      formEpilogue(matmul, epilogueColumnAlign);
    mergeHeadsIntoAttention(getOperation());
    for (Block &block : getOperation().getBody())
      formRowGroups(block);
    // Batched products last: the elementwise ops after them that a row
    // group took (the scale and mask before a softmax) run in the row
    // kernel, which reads those rows anyway.
    SmallVector<linalg::BatchMatmulOp> batched;
    getOperation().walk([&](linalg::BatchMatmulOp op) {
      if (kernelBatchMatmul(op->getResult(0)))
        batched.push_back(op);
    });
    for (linalg::BatchMatmulOp op : batched)
      formEpilogue(op, epilogueColumnAlign);
    // Im2col matmuls (strided convs, narrow rows) read their input
    // through the conv's index map instead of a patch buffer.
    SmallVector<linalg::MatmulOp> im2col;
    getOperation().walk([&](linalg::MatmulOp op) {
      if (kernelMatmul(op->getResult(0)))
        im2col.push_back(op);
    });
    for (linalg::MatmulOp op : im2col)
      if (!im2colToConvTaps(op))
        pitchedPointwiseToConvTaps(op);
    mergeConvTaps(getOperation());
    // The convs of a batch as one batched conv taps each, their consumers'
    // loops collapsed onto [N, F, P] like those of batch 1 (steps 1-2).
    batchConvTaps(getOperation());
    if (failed(simplify(true)))
      return signalPassFailure();
    // A 1x1 conv computes the elementwise producer of its input (a
    // depthwise conv, a squeeze-excite scale) while packing B.
    SmallVector<linalg::MatmulOp> pointwise;
    getOperation().walk([&](linalg::MatmulOp op) { pointwise.push_back(op); });
    for (linalg::MatmulOp op : pointwise)
      fuseMatmulPrologue(op);
    SmallVector<linalg::GenericOp> plainTaps;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op->hasAttr(kConvTapsAttr))
        plainTaps.push_back(op);
    });
    for (linalg::GenericOp op : plainTaps)
      fuseConvTapsPrologue(op);
    SmallVector<linalg::GenericOp> convs;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op->hasAttr(kConvTapsAttr))
        convs.push_back(op);
    });
    for (linalg::GenericOp op : convs)
      formEpilogue(op, epilogueColumnAlign);
    // Epilogues whose result the next conv pads write into its padding
    // (after the last reshape folding, which would collapse them again).
    SmallVector<linalg::GenericOp> epilogues;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op->hasAttr(kEpilogueAttr))
        epilogues.push_back(op);
    });
    for (linalg::GenericOp op : epilogues)
      writeEpilogueIntoPadding(op, epilogueColumnAlign);
    // The sizes read of a result that a kernel now computes inside another
    // (a depthwise conv become a B prologue) are read of its init: the
    // result, no longer used, goes.
    RewritePatternSet dims(context);
    tensor::DimOp::getCanonicalizationPatterns(dims, context);
    if (failed(applyPatternsGreedily(getOperation(), std::move(dims))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace kiln
