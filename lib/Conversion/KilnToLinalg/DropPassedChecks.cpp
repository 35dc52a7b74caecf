//===- DropPassedChecks.cpp - The kiln-drop-passed-checks pass ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace kiln {
#define GEN_PASS_DEF_KILNDROPPASSEDCHECKSPASS
#include "kiln/Conversion/KilnToLinalg/Passes.h.inc"

namespace {

struct KilnDropPassedChecksPass final
    : impl::KilnDropPassedChecksPassBase<KilnDropPassedChecksPass> {
  void runOnOperation() override {
    getOperation().walk([](mlir::func::CallOp call) {
      if (call.getCallee() != kCheckFunctionName || call.getNumOperands() == 0)
        return;
      // i1 true reads as -1.
      std::optional<int64_t> ok = mlir::getConstantIntValue(call.getOperand(0));
      if (ok && *ok != 0)
        call.erase();
    });
  }
};

} // namespace
} // namespace kiln
