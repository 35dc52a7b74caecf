//===- PlanArena.cpp - The kiln-plan-arena pass ----------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Intermediate buffers of the entry function become views into one arena
// that the runtime hands to each run. Offsets come from buffer lifetimes:
// two buffers whose lifetimes overlap never share bytes; others may.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/MemoryPlan.h"
#include "kiln/Target/Host/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <algorithm>

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNPLANARENAPASS
#include "kiln/Target/Host/Passes.h.inc"

namespace {

/// Bytes of a static, identity-layout memref in the default memory space,
/// or nullopt when the buffer cannot live in the arena.
std::optional<int64_t> plannableBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() || type.getMemorySpace())
    return std::nullopt;
  Type element = type.getElementType();
  int64_t elementBytes;
  if (element.isIndex())
    elementBytes = 8;
  else if (element.isIntOrFloat())
    elementBytes = llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);
  else
    return std::nullopt;
  return type.getNumElements() * elementBytes;
}

/// Greedy by size: the largest buffers are placed first, each at the
/// lowest-waste gap (best fit) among the buffers already placed whose
/// lifetimes overlap its own.
int64_t assignOffsets(MutableArrayRef<PlannedBuffer> buffers) {
  SmallVector<PlannedBuffer *> order;
  for (PlannedBuffer &buffer : buffers)
    order.push_back(&buffer);
  llvm::stable_sort(order, [](PlannedBuffer *a, PlannedBuffer *b) {
    return a->bytes > b->bytes;
  });
  SmallVector<PlannedBuffer *> placed;
  int64_t arenaBytes = 0;
  for (PlannedBuffer *buffer : order) {
    int64_t size = llvm::alignTo(buffer->bytes, kPlanAlignment);
    SmallVector<std::pair<int64_t, int64_t>> busy; // [begin, end) in bytes
    for (PlannedBuffer *other : placed)
      if (other->first <= buffer->last && buffer->first <= other->last)
        busy.push_back({other->offset, other->offset + llvm::alignTo(other->bytes,
                                                                     kPlanAlignment)});
    llvm::sort(busy);
    int64_t best = -1, bestWaste = INT64_MAX, cursor = 0;
    for (auto [begin, end] : busy) {
      if (begin - cursor >= size && begin - cursor - size < bestWaste) {
        best = cursor;
        bestWaste = begin - cursor - size;
      }
      cursor = std::max(cursor, end);
    }
    buffer->offset = best >= 0 ? best : cursor;
    placed.push_back(buffer);
    arenaBytes = std::max(arenaBytes, buffer->offset + size);
  }
  return arenaBytes;
}

struct KilnPlanArenaPass final : impl::KilnPlanArenaPassBase<KilnPlanArenaPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto entry = module.lookupSymbol<func::FuncOp>(kEntryFunctionName);
    if (!entry || entry.isExternal())
      return;
    Block &body = entry.getBody().front();
    DenseMap<Operation *, unsigned> position;
    for (auto [i, op] : llvm::enumerate(body))
      position[&op] = i;

    MemoryPlan plan;
    SmallVector<memref::AllocOp> allocs;
    SmallVector<SmallVector<Operation *>> deallocs;
    entry.walk([&](memref::AllocOp alloc) {
      std::optional<int64_t> bytes = plannableBytes(alloc.getType());
      SmallVector<Operation *> frees;
      unsigned at = position.lookup(alloc), first = at, last = at;
      if (alloc->getBlock() != &body || !bytes ||
          failed(collectBufferLifetime(alloc, body, position, first, last, frees))) {
        ++plan.heapAllocs;
        return;
      }
      plan.buffers.push_back({*bytes, first, last, 0});
      allocs.push_back(alloc);
      deallocs.push_back(std::move(frees));
    });
    // Other functions' allocations (the shared matmul kernels' packing
    // buffers) are per-call heap allocations too.
    module.walk([&](memref::AllocOp alloc) {
      if (alloc->getParentOfType<func::FuncOp>() != entry)
        ++plan.heapAllocs;
    });
    plan.arenaBytes = assignOffsets(plan.buffers);
    module->setAttr(kMemoryPlanAttr, plan.toAttr(&getContext()));
    if (allocs.empty())
      return;

    // The arena is the entry's second argument, after the host.
    MLIRContext *context = &getContext();
    auto arenaType = MemRefType::get({plan.arenaBytes}, IntegerType::get(context, 8));
    if (failed(entry.insertArgument(1, arenaType, {}, entry.getLoc())))
      return signalPassFailure();
    Value arena = entry.getArgument(1);
    for (auto [alloc, buffer, frees] : llvm::zip(allocs, plan.buffers, deallocs)) {
      OpBuilder b(alloc);
      Value offset = arith::ConstantIndexOp::create(b, alloc.getLoc(), buffer.offset);
      Value view = memref::ViewOp::create(b, alloc.getLoc(), alloc.getType(), arena, offset,
                                          ValueRange{});
      alloc.replaceAllUsesWith(view);
      alloc.erase();
      for (Operation *free : frees)
        free->erase();
    }
  }
};

} // namespace
} // namespace kiln
