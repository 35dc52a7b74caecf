//===- FuseElementwise.cpp - The kiln-fuse-elementwise pass ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Dispatch/Passes.h"

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

struct KilnFuseElementwisePass final
    : impl::KilnFuseElementwisePassBase<KilnFuseElementwisePass> {
  using Base::Base;
  void runOnOperation() override {
    LocationMerger merger;
    auto control = [&](mlir::OpOperand *fused) {
      if (!shouldFuse(fused, maxFusedOps))
        return false;
      merger.pending = {fused->getOwner()->getLoc(), fused->get().getDefiningOp()->getLoc()};
      return true;
    };
    mlir::RewritePatternSet patterns(&getContext());
    mlir::linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    mlir::linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    mlir::GreedyRewriteConfig config;
    config.setListener(&merger);
    if (failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
