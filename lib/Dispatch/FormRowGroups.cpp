//===- FormRowGroups.cpp - The kiln-form-row-groups pass ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Row groups for a target without matmul epilogues (CUDA): the rule of
// RowGroups.h, run on its own.
//
//===----------------------------------------------------------------------===//

#include "RowGroups.h"

#include "kiln/Dispatch/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNFORMROWGROUPSPASS
#include "kiln/Dispatch/Passes.h.inc"

namespace {

struct KilnFormRowGroupsPass final : impl::KilnFormRowGroupsPassBase<KilnFormRowGroupsPass> {
  using Base::Base;
  void runOnOperation() override {
    // A reduction's result read with unit dims added (a global average
    // pool's division) is read directly, loops collapsed, so that the
    // division joins the reduction's group (as kiln-form-dispatches does).
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    linalg::populateFoldReshapeOpsByCollapsingPatterns(patterns, isReductionResultUnitExpand);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    for (Block &block : getOperation().getBody())
      formRowGroups(block, RowGroupRules{halfFloats, oneRowLength});
  }
};

} // namespace
} // namespace kiln
