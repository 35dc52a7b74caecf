//===- SplitFills.cpp - The kiln-split-fills pass -------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNSPLITFILLSPASS
#include "kiln/Target/Host/Passes.h.inc"

namespace {

/// Replaces `fill` by one clone (with its own tensor.empty) right before
/// each of its users.
void splitFill(linalg::FillOp fill) {
  auto empty = fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>();
  SmallVector<OpOperand *> uses =
      llvm::map_to_vector(fill->getResult(0).getUses(), [](OpOperand &use) { return &use; });
  for (OpOperand *use : uses) {
    OpBuilder b(use->getOwner());
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
    SmallVector<linalg::FillOp> shared;
    getOperation().walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics() && !fill->use_empty() && !fill->hasOneUse())
        shared.push_back(fill);
    });
    for (linalg::FillOp fill : shared)
      splitFill(fill);
  }
};

} // namespace
} // namespace kiln
