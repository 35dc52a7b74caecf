//===- PromoteAccumulators.cpp - The kiln-cuda-promote-accumulators pass --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// On the GPU a kernel thread's k loop otherwise does a load and a store of
// its output element per multiply-add; in a register it does neither.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/CUDA/Passes.h"
#include "kiln/Target/Host/BufferAnalysis.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCUDAPROMOTEACCUMULATORSPASS
#include "kiln/Target/CUDA/Passes.h.inc"

namespace {

using namespace mlir;

/// Whether `root` is a buffer of its own: an allocation, a global or an
/// argument. Anything else (a dynamic reshape, ...) may alias anything.
bool isDistinctBuffer(Value root) {
  if (isa<BlockArgument>(root))
    return true;
  Operation *op = root.getDefiningOp();
  return isa<memref::AllocOp, memref::AllocaOp, memref::GetGlobalOp>(op);
}

/// A load/store pair of one loop-invariant element in `loop`'s body.
struct Accumulator {
  memref::LoadOp load;
  memref::StoreOp store;
};

/// Whether nothing in `loop` but `acc` touches the buffer `acc` accumulates
/// into, and nothing writes memory in ways this pass cannot see.
bool onlyAccess(scf::ForOp loop, Accumulator acc) {
  Value root = rootOf(acc.load.getMemRef());
  if (!isDistinctBuffer(root))
    return false;
  auto mayAlias = [&](Value memref) {
    Value other = rootOf(memref);
    return other == root || !isDistinctBuffer(other);
  };
  WalkResult walk = loop.getBody()->walk([&](Operation *op) {
    if (op == acc.load || op == acc.store)
      return WalkResult::advance();
    if (auto load = dyn_cast<memref::LoadOp>(op))
      return mayAlias(load.getMemRef()) ? WalkResult::interrupt() : WalkResult::advance();
    if (auto store = dyn_cast<memref::StoreOp>(op))
      return mayAlias(store.getMemRef()) ? WalkResult::interrupt() : WalkResult::advance();
    if (isMemoryEffectFree(op) || op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return !walk.wasInterrupted();
}

std::optional<Accumulator> findAccumulator(scf::ForOp loop) {
  for (Operation &op : *loop.getBody()) {
    auto load = dyn_cast<memref::LoadOp>(op);
    if (!load || !loop.isDefinedOutsideOfLoop(load.getMemRef()) ||
        !llvm::all_of(load.getIndices(),
                      [&](Value v) { return loop.isDefinedOutsideOfLoop(v); }))
      continue;
    for (Operation *next = load->getNextNode(); next; next = next->getNextNode()) {
      auto store = dyn_cast<memref::StoreOp>(next);
      if (!store || store.getMemRef() != load.getMemRef() ||
          store.getIndices() != load.getIndices())
        continue;
      Accumulator acc{load, store};
      if (onlyAccess(loop, acc))
        return acc;
      break;
    }
  }
  return std::nullopt;
}

void promote(scf::ForOp loop, Accumulator acc, IRRewriter &rewriter) {
  Location loc = acc.load.getLoc();
  Value memref = acc.load.getMemRef();
  SmallVector<Value> indices(acc.load.getIndices());
  rewriter.setInsertionPoint(loop);
  Value init = memref::LoadOp::create(rewriter, loc, memref, indices);
  Value stored = acc.store.getValueToStore();
  FailureOr<LoopLikeOpInterface> replaced = loop.replaceWithAdditionalYields(
      rewriter, ValueRange{init}, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
        return SmallVector<Value>{stored};
      });
  auto newLoop = cast<scf::ForOp>(replaced->getOperation());
  rewriter.replaceAllUsesWith(acc.load.getResult(), newLoop.getRegionIterArgs().back());
  rewriter.eraseOp(acc.load);
  rewriter.eraseOp(acc.store);
  rewriter.setInsertionPointAfter(newLoop);
  memref::StoreOp::create(rewriter, loc, newLoop.getResults().back(), memref, indices);
}

struct KilnCUDAPromoteAccumulatorsPass final
    : impl::KilnCUDAPromoteAccumulatorsPassBase<KilnCUDAPromoteAccumulatorsPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops; // post-order: innermost first
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops)
      if (std::optional<Accumulator> acc = findAccumulator(loop))
        promote(loop, *acc, rewriter);
  }
};

} // namespace
} // namespace kiln
