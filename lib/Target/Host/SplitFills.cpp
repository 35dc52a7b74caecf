//===- SplitFills.cpp - The kiln-split-fills pass -------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNSPLITFILLSPASS
#include "kiln/Target/Host/Passes.h.inc"

namespace {

/// Where the fill that `use` reads goes: right before its user, except for
/// the destination of an insert_slice whose source is written in place
/// from an empty tensor (a chain of destination-style ops in the same
/// block: an epilogue writing a conv's output slice into the next conv's
/// zero padding), which goes before the chain's first op, so that
/// empty-tensor elimination can compute the chain in the destination.
Operation *fillPosition(OpOperand *use, Value fillValue, DominanceInfo &dominance) {
  Operation *user = use->getOwner();
  auto insert = dyn_cast<tensor::InsertSliceOp>(user);
  if (!insert || use->get() != insert.getDest())
    return user;
  Operation *first = nullptr;
  Value value = insert.getSource();
  while (auto writer = value.getDefiningOp<DestinationStyleOpInterface>()) {
    auto result = cast<OpResult>(value);
    if (writer->getBlock() != user->getBlock() ||
        result.getResultNumber() >= static_cast<unsigned>(writer.getNumDpsInits()))
      return user;
    first = writer;
    value = writer.getDpsInitOperand(result.getResultNumber())->get();
  }
  if (!first || !value.getDefiningOp<tensor::EmptyOp>() ||
      !dominance.properlyDominates(fillValue, first))
    return user;
  return first;
}

/// Replaces `fill` by one clone (with its own tensor.empty) at each of its
/// uses' fillPosition.
void splitFill(linalg::FillOp fill, DominanceInfo &dominance) {
  auto empty = fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>();
  SmallVector<OpOperand *> uses =
      llvm::map_to_vector(fill->getResult(0).getUses(), [](OpOperand &use) { return &use; });
  for (OpOperand *use : uses) {
    OpBuilder b(fillPosition(use, fill.getInputs()[0], dominance));
    IRMapping map;
    if (empty)
      map.map(empty.getResult(), b.clone(*empty)->getResult(0));
    use->set(b.clone(*fill, map)->getResult(0));
  }
  fill.erase();
  if (empty && empty->use_empty())
    empty.erase();
}

struct KilnSplitFillsPass final : impl::KilnSplitFillsPassBase<KilnSplitFillsPass> {
  void runOnOperation() override {
    DominanceInfo dominance(getOperation());
    SmallVector<linalg::FillOp> shared;
    getOperation().walk([&](linalg::FillOp fill) {
      if (!fill.hasPureTensorSemantics() || fill->use_empty())
        return;
      // A fill of one use moves only for an in-place insertion after it.
      OpOperand &use = *fill->getUses().begin();
      if (!fill->hasOneUse() ||
          fillPosition(&use, fill.getInputs()[0], dominance) != use.getOwner())
        shared.push_back(fill);
    });
    for (linalg::FillOp fill : shared)
      splitFill(fill, dominance);
  }
};

} // namespace
} // namespace kiln
