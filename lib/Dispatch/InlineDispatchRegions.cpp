//===- InlineDispatchRegions.cpp - The kiln-inline-dispatch-regions pass --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Every kiln.dispatch is replaced by its body, in place, before a target's
// codegen bufferizes the function.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dispatch/Passes.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNINLINEDISPATCHREGIONSPASS
#include "kiln/Dispatch/Passes.h.inc"

namespace {

struct KilnInlineDispatchRegionsPass final
    : impl::KilnInlineDispatchRegionsPassBase<KilnInlineDispatchRegionsPass> {
  void runOnOperation() override {
    SmallVector<DispatchOp> dispatches;
    getOperation()->walk([&](DispatchOp op) { dispatches.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (DispatchOp op : dispatches) {
      Block &body = op.getBody().front();
      auto yield = cast<YieldOp>(body.getTerminator());
      rewriter.inlineBlockBefore(&body, op, op.getInputs());
      rewriter.replaceOp(op, yield.getValues());
      rewriter.eraseOp(yield);
    }
  }
};

} // namespace
} // namespace kiln
