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

/// Fuse a producer only into its single consumer: with several consumers it
/// would be recomputed in each (fine for cheap ops, but the fused kernels
/// would also re-read its inputs).
bool shouldFuse(mlir::OpOperand *fused) {
  mlir::Operation *producer = fused->get().getDefiningOp();
  return producer && producer->hasOneUse();
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
  void runOnOperation() override {
    LocationMerger merger;
    auto control = [&](mlir::OpOperand *fused) {
      if (!shouldFuse(fused))
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
