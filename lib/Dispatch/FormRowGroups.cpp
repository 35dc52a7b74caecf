//===- FormRowGroups.cpp - The kiln-form-row-groups pass ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Row groups for a target without matmul epilogues (CUDA): the rule of
// RowGroups.h, run on its own.
//
//===----------------------------------------------------------------------===//

#include "RowGroups.h"

#include "kiln/Dispatch/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNFORMROWGROUPSPASS
#include "kiln/Dispatch/Passes.h.inc"

namespace {

struct KilnFormRowGroupsPass final : impl::KilnFormRowGroupsPassBase<KilnFormRowGroupsPass> {
  using Base::Base;
  void runOnOperation() override {
    for (Block &block : getOperation().getBody())
      formRowGroups(block, RowGroupRules{halfFloats, oneRowLength});
  }
};

} // namespace
} // namespace kiln
