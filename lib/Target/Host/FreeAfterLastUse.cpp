//===- FreeAfterLastUse.cpp - The kiln-free-after-last-use pass -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The heap buffers of the entry function (those kiln-plan-arena could not
// place: dynamic sizes) are freed right after their last use instead of at
// the end of the run, so that a run's live heap memory follows the
// buffers' lifetimes as the arena's does.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/MemoryPlan.h"
#include "kiln/Target/Host/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNFREEAFTERLASTUSEPASS
#include "kiln/Target/Host/Passes.h.inc"

namespace {

struct KilnFreeAfterLastUsePass final
    : impl::KilnFreeAfterLastUsePassBase<KilnFreeAfterLastUsePass> {
  void runOnOperation() override {
    auto entry = getOperation().lookupSymbol<func::FuncOp>(kEntryFunctionName);
    if (!entry || entry.isExternal())
      return;
    Block &body = entry.getBody().front();
    DenseMap<Operation *, unsigned> position;
    SmallVector<Operation *> ops;
    for (auto [i, op] : llvm::enumerate(body)) {
      position[&op] = i;
      ops.push_back(&op);
    }
    for (auto alloc : llvm::make_early_inc_range(body.getOps<memref::AllocOp>())) {
      unsigned at = position.lookup(alloc), first = at, last = at;
      SmallVector<Operation *> deallocs;
      if (failed(collectBufferLifetime(alloc, body, position, first, last, deallocs)) ||
          deallocs.size() != 1)
        continue;
      // free(buffer) right after its last use, unless it is there already.
      Operation *lastUse = ops[last];
      Operation *dealloc = deallocs.front();
      if (position.lookup(dealloc) > last + 1 && !lastUse->hasTrait<OpTrait::IsTerminator>())
        dealloc->moveAfter(lastUse);
    }
  }
};

} // namespace
} // namespace kiln
