//===- Passes.h - Dispatch formation passes (stage 4) -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_DISPATCH_PASSES_H
#define KILN_DISPATCH_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "kiln/Dispatch/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Dispatch/Passes.h.inc"

/// Part of kiln-form-dispatches: a kiln.attention_kernel whose only user is
/// the head merge transpose writes the merged [B, Sq, H, D] layout itself.
void mergeHeadsIntoAttention(mlir::func::FuncOp func);

} // namespace kiln

#endif // KILN_DISPATCH_PASSES_H
