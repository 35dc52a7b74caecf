//===- DispatchCheck.h - One kernel per traced dispatch ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGET_HOST_DISPATCHCHECK_H
#define KILN_TARGET_HOST_DISPATCHCHECK_H

#include "mlir/IR/BuiltinOps.h"

namespace kiln {

/// After codegen formed its kernels (kiln-cpu-row-kernels, kiln-cpu-matmul):
/// checks that the span of `@kiln_entry` between the trace hooks of each
/// grouped dispatch (begin hook marked kDispatchGroupAttr by
/// kiln-instrument-dispatches) holds at most one kernel: one
/// loop (scf.for/parallel), one call, or one linalg op other than the
/// fills and copies bufferization adds. A dispatch the fusion stage counted
/// as one kernel that codegen emitted as several is an error, so the
/// dispatch count and the trace names stay true to the generated code.
mlir::LogicalResult verifyOneKernelPerDispatch(mlir::ModuleOp module);

} // namespace kiln

#endif // KILN_TARGET_HOST_DISPATCHCHECK_H
