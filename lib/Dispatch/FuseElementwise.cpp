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

void populateKilnElementwiseFusionPatterns(mlir::RewritePatternSet &patterns) {
  mlir::linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuse);
  mlir::linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
}

struct KilnFuseElementwisePass final
    : impl::KilnFuseElementwisePassBase<KilnFuseElementwisePass> {
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    populateKilnElementwiseFusionPatterns(patterns);
    if (failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
