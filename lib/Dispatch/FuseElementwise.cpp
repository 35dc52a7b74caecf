//===- FuseElementwise.cpp - The kiln-fuse-elementwise pass ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Dispatch/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_KILNFUSEELEMENTWISEPASS
#include "kiln/Dispatch/Passes.h.inc"

namespace {

/// Operations in the body of a linalg op (0 for other ops).
int64_t bodySize(mlir::Operation *op) {
  auto linalgOp = llvm::dyn_cast_or_null<mlir::linalg::LinalgOp>(op);
  return linalgOp ? static_cast<int64_t>(linalgOp.getBlock()->getOperations().size())
                  : 0;
}

/// Fuse a producer only into its single consumer: with several consumers it
/// would be recomputed in each (fine for cheap ops, but the fused kernels
/// would also re-read its inputs). Kernel bodies stay within `maxOps`.
bool shouldFuse(mlir::OpOperand *fused, int64_t maxOps) {
  mlir::Operation *producer = fused->get().getDefiningOp();
  return producer && producer->hasOneUse() &&
         bodySize(producer) + bodySize(fused->getOwner()) <= maxOps;
}

/// Keeps the source locations of everything fused into a kernel: the op a
/// fusion creates gets a FusedLoc of its consumer's and producer's locations,
/// so reports (kilnc --report=fusion) can name the model nodes a dispatch
/// covers. Upstream creates the fused op right after the control function
/// accepts, which is when `pending` is set.
struct LocationMerger final : mlir::RewriterBase::Listener {
  llvm::SmallVector<mlir::Location> pending;

  void notifyOperationInserted(mlir::Operation *op,
                               mlir::OpBuilder::InsertPoint) override {
    if (pending.empty() || !llvm::isa<mlir::linalg::GenericOp>(op))
      return;
    llvm::SmallVector<mlir::Location> locs = {op->getLoc()};
    locs.append(pending.begin(), pending.end());
    op->setLoc(mlir::FusedLoc::get(op->getContext(), locs));
    pending.clear();
  }
};

/// Whether `op` is a tensor.expand_shape or collapse_shape whose groups
/// each hold at most one dim of size other than 1 (it only adds or drops
/// unit dims).
bool movesOnlyUnitDims(mlir::Operation *op) {
  auto check = [](mlir::ArrayRef<int64_t> shape, const auto &groups) {
    return llvm::all_of(groups, [&](const auto &group) {
      return llvm::count_if(group, [&](int64_t d) { return shape[d] != 1; }) <= 1;
    });
  };
  if (auto expand = llvm::dyn_cast<mlir::tensor::ExpandShapeOp>(op))
    return check(expand.getResultType().getShape(), expand.getReassociationIndices());
  if (auto collapse = llvm::dyn_cast<mlir::tensor::CollapseShapeOp>(op))
    return check(collapse.getSrcType().getShape(), collapse.getReassociationIndices());
  return false;
}

/// Whether `op` reads the result of a contraction (a linalg.matmul or batch
/// matmul, or a generic with a reduction loop of multiplies).
bool readsContraction(mlir::Operation *op) {
  return llvm::any_of(op->getOperands(), [](mlir::Value v) {
    auto producer = v.getDefiningOp<mlir::linalg::LinalgOp>();
    return producer && mlir::linalg::isaContractionOpInterface(producer);
  });
}

/// Moves a static reshape across an all-parallel generic (expanding the
/// generic's iteration space), so that an elementwise op separated from its
/// neighbour by a reshape (bias add, then the [B*S, H*D] -> [B, S, H, D]
/// head split, then a transpose) can still fuse with it. Named ops are never
/// rewritten by these patterns; dynamic shapes are left alone.
bool isStaticElementwiseReshape(mlir::OpOperand *fused) {
  auto generic = llvm::dyn_cast<mlir::linalg::GenericOp>(fused->getOwner());
  mlir::Operation *other = generic ? fused->get().getDefiningOp() : fused->getOwner();
  if (!generic)
    generic = fused->get().getDefiningOp<mlir::linalg::GenericOp>();
  if (!generic || !other || generic.getNumReductionLoops() > 0)
    return false;
  // A reshape that only adds or drops unit dims ([1, N] <-> [1, 1, N], a
  // decode step's rows) is not moved across an op reading a product: the
  // op's other operands would then be reshaped and the product read through
  // a reshape (a residual add), which could no longer be its epilogue.
  if (movesOnlyUnitDims(other) && readsContraction(generic))
    return false;
  auto isStatic = [](mlir::Value v) {
    auto type = llvm::dyn_cast<mlir::RankedTensorType>(v.getType());
    return type && type.hasStaticShape();
  };
  return llvm::all_of(other->getOperands(), isStatic) &&
         llvm::all_of(other->getResults(), isStatic);
}

/// The value a chain of static reshapes that only add or drop unit dims
/// reshapes (null when `value` is not such a reshape).
mlir::Value unitDimReshapeSource(mlir::Value value) {
  mlir::Value source;
  while (mlir::Operation *op = value.getDefiningOp()) {
    if (!movesOnlyUnitDims(op) || !llvm::cast<mlir::ShapedType>(value.getType()).hasStaticShape())
      break;
    value = op->getOperand(0);
    source = value;
  }
  return source;
}

/// A generic reading an all-parallel generic's result through reshapes that
/// only add or drop unit dims (a decode step's [1, 1, H, D] -> [1, H, 1, D]
/// head transpose, a view) reads the producer's result directly, the
/// reshapes folded into its indexing map: the non-unit dims keep their
/// order, and unit dims pair up in order between them (index 0 for a
/// source unit dim without a partner). Upstream fusion then merges the pair
/// even where reshape propagation cannot (the consumer's map for the
/// operand is not a permutation: a KV cache write broadcasting the new row
/// over the cache's rows). Contractions, and ops reading one (a product's epilogue
/// to be, whose other operands are read along its columns) as producer or
/// consumer, are left alone.
struct ReadThroughUnitDimReshapes final : mlir::OpRewritePattern<mlir::linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(mlir::linalg::GenericOp op,
                                      mlir::PatternRewriter &rewriter) const override {
    if (readsContraction(op) || op.getNumReductionLoops() > 0)
      return mlir::failure();
    for (mlir::OpOperand *input : op.getDpsInputOperands()) {
      mlir::Value source = unitDimReshapeSource(input->get());
      auto producer = source ? source.getDefiningOp<mlir::linalg::GenericOp>() : nullptr;
      if (!producer || producer.getNumReductionLoops() > 0 ||
          mlir::linalg::isaContractionOpInterface(producer) || readsContraction(producer))
        continue;
      auto read = llvm::cast<mlir::RankedTensorType>(input->get().getType());
      auto held = llvm::cast<mlir::RankedTensorType>(source.getType());
      mlir::AffineMap map = op.getMatchingIndexingMap(input);
      // Both shapes have the same non-unit dims in order; the unit dims
      // between two of them pair up in order (the read's expression), and
      // a unit dim of the source left without a partner reads index 0.
      llvm::SmallVector<mlir::AffineExpr> exprs;
      int64_t r = 0, readRank = read.getRank();
      bool aligned = true;
      for (int64_t d = 0; d < held.getRank() && aligned; ++d) {
        if (held.getDimSize(d) == 1) {
          bool partner = r < readRank && read.getDimSize(r) == 1;
          exprs.push_back(partner ? map.getResult(r++) : rewriter.getAffineConstantExpr(0));
          continue;
        }
        while (r < readRank && read.getDimSize(r) == 1)
          ++r;
        aligned = r < readRank && read.getDimSize(r) == held.getDimSize(d);
        if (aligned)
          exprs.push_back(map.getResult(r++));
      }
      while (aligned && r < readRank)
        aligned = read.getDimSize(r++) == 1;
      if (!aligned)
        continue;
      llvm::SmallVector<mlir::AffineMap> maps = op.getIndexingMapsArray();
      maps[input->getOperandNumber()] =
          mlir::AffineMap::get(map.getNumDims(), 0, exprs, rewriter.getContext());
      // Every loop must still be read or written by some operand.
      if (!mlir::inversePermutation(mlir::concatAffineMaps(maps, rewriter.getContext())))
        continue;
      rewriter.modifyOpInPlace(op, [&] {
        input->set(source);
        op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      });
      return mlir::success();
    }
    return mlir::failure();
  }
};

/// Transposes and broadcasts are elementwise ops with a permuted or
/// projected input map; written as `linalg.generic` they fuse like any other
/// (a bias add followed by the head-split transpose becomes one kernel that
/// writes the permuted layout directly).
void generalizeDataMovement(mlir::func::FuncOp func) {
  llvm::SmallVector<mlir::linalg::LinalgOp> movement;
  func.walk([&](mlir::linalg::LinalgOp op) {
    if (llvm::isa<mlir::linalg::TransposeOp, mlir::linalg::BroadcastOp>(op.getOperation()))
      movement.push_back(op);
  });
  mlir::IRRewriter rewriter(func.getContext());
  for (mlir::linalg::LinalgOp op : movement) {
    rewriter.setInsertionPoint(op);
    (void)mlir::linalg::generalizeNamedOp(rewriter, op);
  }
}

/// Whether `op` reads the i32 result of a linalg.matmul (an integer
/// matmul: its bias add, requantization and dequantization).
bool readsIntegerMatmul(mlir::Operation *op) {
  return op && llvm::any_of(op->getOperands(), [](mlir::Value v) {
           auto matmul = v.getDefiningOp<mlir::linalg::MatmulOp>();
           return matmul && mlir::getElementTypeOrSelf(v.getType()).isInteger(32);
         });
}

/// Whether `op` reads a window of an 8-bit integer tensor (a tensor.extract_slice):
/// an integer depthwise conv's taps (kiln-recognize-integer-matmul), whose
/// products, i32 sums and requantization are one elementwise chain.
bool readsEightBitWindow(mlir::Operation *op) {
  return op && llvm::any_of(op->getOperands(), [](mlir::Value v) {
           return v.getDefiningOp<mlir::tensor::ExtractSliceOp>() &&
                  mlir::getElementTypeOrSelf(v.getType()).isInteger(8);
         });
}

struct KilnFuseElementwisePass final
    : impl::KilnFuseElementwisePassBase<KilnFuseElementwisePass> {
  using Base::Base;
  void runOnOperation() override {
    generalizeDataMovement(getOperation());
    LocationMerger merger;
    // First the elementwise chain after an integer matmul (its i32 bias
    // add, the requantization, the next op's dequantization or zero-point
    // shift) as one op on the matmul's [M, N], before a reshape of the
    // chain (a conv's NCHW view) can come between its ops: the broadcast
    // bias [M, 1] keeps the reshape from moving past the bias add, so the
    // chain would stay split and only the bias add be the kernel's
    // epilogue.
    // The same for an integer depthwise conv: its taps' products and sums
    // (at a stride-1 conv's row pitch) and the requantization, before the
    // reshape to the pitched [N, C, OH, Wp] view moves into the chain.
    auto integerChain = [&](mlir::OpOperand *fused) {
      mlir::Operation *producer = fused->get().getDefiningOp();
      if (!(readsIntegerMatmul(producer) || readsEightBitWindow(producer)) ||
          !shouldFuse(fused, maxFusedOps))
        return false;
      merger.pending = {fused->getOwner()->getLoc(), fused->get().getDefiningOp()->getLoc()};
      return true;
    };
    mlir::RewritePatternSet chain(&getContext());
    mlir::linalg::populateElementwiseOpsFusionPatterns(chain, integerChain);
    mlir::GreedyRewriteConfig chainConfig;
    chainConfig.setListener(&merger);
    if (failed(mlir::applyPatternsGreedily(getOperation(), std::move(chain), chainConfig)))
      return signalPassFailure();
    auto control = [&](mlir::OpOperand *fused) {
      if (!shouldFuse(fused, maxFusedOps))
        return false;
      merger.pending = {fused->getOwner()->getLoc(), fused->get().getDefiningOp()->getLoc()};
      return true;
    };
    mlir::RewritePatternSet patterns(&getContext());
    patterns.add<ReadThroughUnitDimReshapes>(&getContext());
    mlir::linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    mlir::linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, isStaticElementwiseReshape);
    mlir::linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    mlir::GreedyRewriteConfig config;
    config.setListener(&merger);
    if (failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
