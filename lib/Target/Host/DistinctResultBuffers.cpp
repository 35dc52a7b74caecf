//===- DistinctResultBuffers.cpp - The kiln-distinct-result-buffers pass --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// `buffer-results-to-out-params{hoist-static-allocs}` replaces a returned
// memref.alloc by the caller's output buffer instead of copying it there.
// A model whose outputs are one value (two zero-size splits, CSE'd; one
// tensor listed twice) returns that alloc twice, and the upstream pass
// then uses the alloc after erasing it (kilnc crashed). Each repeated
// return operand gets a buffer of its own here, a copy of the first.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNDISTINCTRESULTBUFFERSPASS
#include "kiln/Target/Host/Passes.h.inc"

namespace {

/// A fresh buffer of `value`'s type (its dynamic sizes read from `value`)
/// holding a copy of it, built before `ret`.
Value copyOf(OpBuilder &b, Location loc, Value value) {
  auto type = cast<MemRefType>(value.getType());
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(memref::DimOp::create(b, loc, value, d));
  Value copy = memref::AllocOp::create(b, loc, type, sizes, b.getI64IntegerAttr(64));
  memref::CopyOp::create(b, loc, value, copy);
  return copy;
}

struct KilnDistinctResultBuffersPass final
    : impl::KilnDistinctResultBuffersPassBase<KilnDistinctResultBuffersPass> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      llvm::DenseSet<Value> seen;
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value value = operand.get();
        if (!isa<MemRefType>(value.getType()) || seen.insert(value).second)
          continue;
        operand.set(copyOf(b, ret.getLoc(), value));
      }
    });
  }
};

} // namespace
} // namespace kiln
