//===- DispatchCost.h - Compile-time FLOP and byte estimates per dispatch -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===--------------------------------------------------------------------------------===//

#ifndef KILN_TARGET_HOST_DISPATCHCOST_H
#define KILN_TARGET_HOST_DISPATCHCOST_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {

/// The module attribute kiln-instrument-dispatches leaves next to the
/// dispatch names: a dense i64 array, (flops, bytes) per dispatch in trace-id
/// order, -1 where a size is dynamic.
inline constexpr llvm::StringLiteral kDispatchCostsAttr = "kiln.dispatch_costs";

/// Roofline inputs of one dispatch. flops: floating-point operations of the
/// payload (add, mul, compare, max, ... = 1; fma = 2; exp/tanh/erf/... = 1)
/// times the iteration count. bytes: compulsory traffic, each input operand
/// read once (slices of one tensor at most that tensor's bytes), each output
/// written once (and read once when the payload uses its old value), i.e.
/// perfect reuse inside the dispatch.
struct DispatchCost {
  int64_t flops = -1, bytes = -1;
};
DispatchCost estimateDispatchCost(mlir::linalg::LinalgOp op);
/// A linalg op as above, or a kiln.attention_kernel (4·B·H·Sq·Sk·D FLOPs of
/// its two products; its operands' bytes once).
DispatchCost estimateDispatchCost(mlir::Operation *op);

/// `kilnc --report=cost`: each instrumented dispatch (trace id, name, FLOPs,
/// bytes, FLOP/byte) as text or JSON.
void printDispatchCostReport(mlir::ModuleOp module, llvm::raw_ostream &os, bool json);

} // namespace kiln

#endif // KILN_TARGET_HOST_DISPATCHCOST_H
