//===- CopiesToLinalg.cpp - The kiln-copies-to-linalg pass ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCOPIESTOLINALGPASS
#include "kiln/Target/Host/Passes.h.inc"

namespace {
struct KilnCopiesToLinalgPass final
    : impl::KilnCopiesToLinalgPassBase<KilnCopiesToLinalgPass> {
  void runOnOperation() override {
    mlir::IRRewriter rewriter(&getContext());
    getOperation().walk([&](mlir::memref::CopyOp copy) {
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<mlir::linalg::CopyOp>(copy, copy.getSource(),
                                                        copy.getTarget());
    });
  }
};
} // namespace
} // namespace kiln
