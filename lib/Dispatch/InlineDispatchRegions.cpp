//===- InlineDispatchRegions.cpp - The kiln-inline-dispatch-regions pass --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Every kiln.dispatch is replaced by its body, in place, before a target's
// codegen bufferizes the function; each kernel op that comes out of one
// carries the region's identity (kiln/Dispatch/DispatchAttr.h), so that
// codegen, the trace hooks and the cost report read the dispatch stage's
// grouping instead of finding it again.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dispatch/DispatchAttr.h"
#include "kiln/Dispatch/Passes.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNINLINEDISPATCHREGIONSPASS
#include "kiln/Dispatch/Passes.h.inc"

namespace {

/// Marks the kernel ops of `op`'s body as dispatch `id`, then replaces `op`
/// by its body.
void inlineDispatch(DispatchOp op, int64_t id, IRRewriter &rewriter) {
  Block &body = op.getBody().front();
  for (Operation &inner : body)
    if (isDispatchKernelOp(&inner))
      setDispatchAttr(&inner, id, op.getKind(), op.getNodes());
  auto yield = cast<YieldOp>(body.getTerminator());
  rewriter.inlineBlockBefore(&body, op, op.getInputs());
  rewriter.replaceOp(op, yield.getValues());
  rewriter.eraseOp(yield);
}

struct KilnInlineDispatchRegionsPass final
    : impl::KilnInlineDispatchRegionsPassBase<KilnInlineDispatchRegionsPass> {
  void runOnOperation() override {
    // Program order: ids count the regions as they run.
    SmallVector<DispatchOp> dispatches;
    getOperation()->walk<WalkOrder::PreOrder>([&](DispatchOp op) { dispatches.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (auto [id, op] : llvm::enumerate(dispatches))
      inlineDispatch(op, static_cast<int64_t>(id), rewriter);
  }
};

} // namespace
} // namespace kiln
