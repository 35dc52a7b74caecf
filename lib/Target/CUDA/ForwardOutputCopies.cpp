//===- ForwardOutputCopies.cpp - The kiln-cuda-forward-output-copies pass -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// A result computed into a temporary and then copied into its output buffer
// is computed in the output buffer: the copy kernel (a full read and write
// of the tensor) goes.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/CUDA/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCUDAFORWARDOUTPUTCOPIESPASS
#include "kiln/Target/CUDA/Passes.h.inc"

namespace {

using namespace mlir;

/// The op of `block` that holds `op` (itself, or an ancestor), or null.
Operation *inBlock(Block *block, Operation *op) {
  return block->findAncestorOpInBlock(*op);
}

/// Whether every use of `temp` other than `copy` and its deallocation is by
/// an op that yields no memref (no alias escapes) and sits before `copy` in
/// its block.
bool usesPrecede(memref::AllocOp temp, linalg::CopyOp copy) {
  Block *block = copy->getBlock();
  for (Operation *user : temp->getUsers()) {
    if (user == copy.getOperation() || isa<memref::DeallocOp>(user))
      continue;
    if (llvm::any_of(user->getResultTypes(), [](Type t) { return isa<BaseMemRefType>(t); }))
      return false;
    Operation *top = inBlock(block, user);
    if (!top || !top->isBeforeInBlock(copy))
      return false;
  }
  return true;
}

/// Whether nothing uses `out` before `copy` (an out-param is written last).
bool unusedBefore(BlockArgument out, linalg::CopyOp copy) {
  Block *block = copy->getBlock();
  for (Operation *user : out.getUsers()) {
    if (user == copy.getOperation())
      continue;
    Operation *top = inBlock(block, user);
    if (!top || top->isBeforeInBlock(copy))
      return false;
  }
  return true;
}

struct KilnCUDAForwardOutputCopiesPass final
    : impl::KilnCUDAForwardOutputCopiesPassBase<KilnCUDAForwardOutputCopiesPass> {
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    SmallVector<linalg::CopyOp> copies;
    for (Operation &op : func.getBody().front())
      if (auto copy = dyn_cast<linalg::CopyOp>(op))
        copies.push_back(copy);
    for (linalg::CopyOp copy : copies) {
      auto temp = copy.getInputs()[0].getDefiningOp<memref::AllocOp>();
      auto out = dyn_cast<BlockArgument>(copy.getOutputs()[0]);
      if (!temp || !out || out.getOwner() != &func.getBody().front() ||
          temp->getBlock() != copy->getBlock())
        continue;
      auto type = cast<MemRefType>(temp.getType());
      if (type != out.getType() || !type.getLayout().isIdentity())
        continue;
      if (!usesPrecede(temp, copy) || !unusedBefore(out, copy))
        continue;
      SmallVector<Operation *> deallocs;
      for (Operation *user : temp->getUsers())
        if (isa<memref::DeallocOp>(user))
          deallocs.push_back(user);
      copy->erase();
      for (Operation *dealloc : deallocs)
        dealloc->erase();
      temp.getResult().replaceAllUsesWith(out);
      temp->erase();
    }
  }
};

} // namespace
} // namespace kiln
