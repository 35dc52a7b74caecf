//===- FormDispatchRegions.cpp - The kiln-form-dispatch-regions pass ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Each dispatch the dispatch stage formed -- an attention kernel, or a
// linalg op other than a fill with its marked epilogue or the rest of its
// row group (kiln/Dispatch/Epilogue.h) -- becomes one kiln.dispatch region,
// so that one region is one future kernel. This is the only place the
// grouping rule lives: codegen, trace hooks and reports read the regions
// (after kiln-inline-dispatch-regions, their ids) instead.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dispatch/DispatchAttr.h"
#include "kiln/Dispatch/Epilogue.h"
#include "kiln/Dispatch/FusionReport.h"
#include "kiln/Dispatch/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNFORMDISPATCHREGIONSPASS
#include "kiln/Dispatch/Passes.h.inc"

namespace {

/// The op whose kernel runs `op`: the contraction (matmul, batch_matmul,
/// conv taps, a conv) whose result a marked epilogue reads as its C
/// (kiln/Dispatch/Epilogue.h), otherwise `op` itself.
Operation *dispatchRoot(linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  std::optional<unsigned> c = generic ? epilogueInput(generic) : std::nullopt;
  if (!c || *c >= generic.getNumDpsInputs())
    return op;
  SmallVector<ReassociationIndices> groups;
  Operation *def = epilogueSource(generic.getDpsInputs()[*c], groups).getDefiningOp();
  if (isa_and_nonnull<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNchwFchwOp>(def) ||
      (def && def->hasAttr(kConvTapsAttr)))
    return def;
  return op;
}

/// Whether `op` is part of the dispatch that starts with `first` (the
/// dispatch before it): `first`'s marked epilogue, or a member of the same
/// row group.
bool joinsDispatch(linalg::LinalgOp op, Operation *first) {
  if (dispatchRoot(op) == first)
    return op.getOperation() != first;
  auto group = op->getAttrOfType<IntegerAttr>(kRowGroupAttr);
  return group && group == first->getAttrOfType<IntegerAttr>(kRowGroupAttr);
}

/// The dispatches of `block`, each its ops in order (root first).
SmallVector<SmallVector<Operation *>> groupDispatches(Block &block) {
  SmallVector<SmallVector<Operation *>> groups;
  for (Operation &op : block) {
    if (!isDispatchKernelOp(&op))
      continue;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
    Operation *first = groups.empty() ? nullptr : groups.back().front();
    if (linalgOp && isa_and_nonnull<linalg::LinalgOp>(first) && joinsDispatch(linalgOp, first))
      groups.back().push_back(&op);
    else
      groups.push_back({&op});
  }
  return groups;
}

/// Whether `op` is used, and only by `ops` (nested users count at their
/// ancestor in the block).
bool onlyUsedBy(Operation *op, const llvm::SmallPtrSetImpl<Operation *> &ops) {
  if (op->use_empty())
    return false;
  Block *block = op->getBlock();
  for (Operation *user : op->getUsers()) {
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    if (!ancestor || !ops.contains(ancestor))
      return false;
  }
  return true;
}

std::string kindOf(ArrayRef<Operation *> members) {
  if (isa<AttentionKernelOp>(members.front()))
    return "attention";
  if (isa<MatmulNBitsKernelOp>(members.front()))
    return "matmul_nbits";
  if (members.front()->hasAttr(kRowGroupAttr))
    return "row_group";
  std::string kind = dispatchKind(cast<linalg::LinalgOp>(members.front()));
  std::replace(kind.begin(), kind.end(), ' ', '_'); // "data movement"
  return kind;
}

/// Wraps the ops of one dispatch into a kiln.dispatch.
void formRegion(ArrayRef<Operation *> members, OpBuilder &b) {
  Operation *first = members.front(), *last = members.back();
  // The span from the first member to the last, and before it the fills
  // and empty tensors that only the span uses (C's zero fill).
  llvm::SmallPtrSet<Operation *, 16> span;
  for (Operation *op = first;; op = op->getNextNode()) {
    span.insert(op);
    if (op == last)
      break;
  }
  while (Operation *prev = first->getPrevNode()) {
    if (!isa<linalg::FillOp, tensor::EmptyOp>(prev) || !onlyUsedBy(prev, span))
      break;
    span.insert(prev);
    first = prev;
  }
  // Ops of the span that neither read the dispatch's values nor are read
  // by it (an empty tensor or constant of a later op) move after it.
  SmallVector<Operation *> ops, after;
  for (Operation *op = first;; op = op->getNextNode()) {
    bool readsSpan = false;
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (Operation *def = operand.getDefiningOp())
          if (Operation *ancestor = first->getBlock()->findAncestorOpInBlock(*def))
            readsSpan |= ancestor != op && span.contains(ancestor);
    });
    bool readBySpan = llvm::any_of(op->getUsers(), [&](Operation *user) {
      Operation *ancestor = first->getBlock()->findAncestorOpInBlock(*user);
      return ancestor && span.contains(ancestor);
    });
    if (!llvm::is_contained(members, op) && !readsSpan && !readBySpan && isMemoryEffectFree(op))
      after.push_back(op);
    else
      ops.push_back(op);
    if (op == last)
      break;
  }
  llvm::SmallPtrSet<Operation *, 16> inside(ops.begin(), ops.end());
  // Results: what the rest of the function reads of the dispatch.
  SmallVector<Value> yielded;
  for (Operation *op : ops)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            Operation *ancestor = first->getBlock()->findAncestorOpInBlock(*user);
            return !ancestor || !inside.contains(ancestor);
          }))
        yielded.push_back(result);
  std::vector<std::string> nodes;
  for (Operation *member : members)
    for (std::string &node : sourceNodeNames(member->getLoc()))
      if (!llvm::is_contained(nodes, node))
        nodes.push_back(std::move(node));
  SmallVector<StringRef> nodeRefs(nodes.begin(), nodes.end());
  b.setInsertionPoint(first);
  SmallVector<Location> locs;
  for (Operation *member : members)
    locs.push_back(member->getLoc());
  auto dispatch = DispatchOp::create(b, b.getFusedLoc(locs), ValueRange(yielded).getTypes(),
                                     ValueRange{}, kindOf(members),
                                     b.getStrArrayAttr(nodeRefs));
  Block *body = b.createBlock(&dispatch.getBody());
  for (Operation *op : ops)
    op->moveBefore(body, body->end());
  b.setInsertionPointToEnd(body);
  YieldOp::create(b, dispatch.getLoc(), yielded);
  for (auto [value, result] : llvm::zip(yielded, dispatch.getResults()))
    value.replaceUsesWithIf(result, [&](OpOperand &use) {
      return !dispatch->isProperAncestor(use.getOwner());
    });
  // Isolated from above: each value read from outside becomes an operand
  // and the region argument standing for it.
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(dispatch.getBody(), captured);
  SmallVector<Value> inputs(captured.begin(), captured.end());
  dispatch.getInputsMutable().assign(inputs);
  for (Value value : inputs) {
    BlockArgument argument = body->addArgument(value.getType(), value.getLoc());
    value.replaceUsesWithIf(argument, [&](OpOperand &use) {
      return dispatch->isProperAncestor(use.getOwner());
    });
  }
  Operation *anchor = dispatch;
  for (Operation *op : after) {
    op->moveAfter(anchor);
    anchor = op;
  }
}

struct KilnFormDispatchRegionsPass final
    : impl::KilnFormDispatchRegionsPassBase<KilnFormDispatchRegionsPass> {
  void runOnOperation() override {
    // Blocks of the function and of its control flow, not of the kernels'
    // bodies; those of existing dispatches are left alone.
    SmallVector<Block *> blocks;
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<linalg::LinalgOp, DispatchOp, AttentionKernelOp, MatmulNBitsKernelOp>(op))
        return WalkResult::skip();
      for (Region &region : op->getRegions())
        for (Block &block : region)
          blocks.push_back(&block);
      return WalkResult::advance();
    });
    OpBuilder b(&getContext());
    for (Block *block : blocks) {
      if (block->getParentOp()->getParentOfType<DispatchOp>())
        continue; // moved into a dispatch of an outer block (no such case yet)
      for (const SmallVector<Operation *> &members : groupDispatches(*block))
        formRegion(members, b);
    }
  }
};

} // namespace
} // namespace kiln
