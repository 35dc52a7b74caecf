//===- DispatchAttr.h - Which kiln.dispatch an op came from -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The dispatch stage decides what one kernel is (a kiln.dispatch region);
// kiln-inline-dispatch-regions dissolves the regions before bufferization
// and leaves that decision on each kernel op that came out of one:
//
//   linalg.matmul {kiln.dispatch = {id = 3 : i64, kind = "contraction",
//                                   nodes = ["fc1/Gemm", "fc1/Relu"]}} ...
//
// `id` numbers the regions of a function in order, `kind` and `nodes` are
// the region's. Codegen, trace hooks and reports read it instead of
// re-deriving the grouping: ops with one id are one kernel.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DISPATCH_DISPATCHATTR_H
#define KILN_DISPATCH_DISPATCHATTR_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

#include <optional>

namespace kiln {

/// On a kernel op: the kiln.dispatch it came from ({id, kind, nodes}).
inline constexpr llvm::StringLiteral kDispatchAttr = "kiln.dispatch";

/// Whether `op` is a kernel op of a dispatch (a member or its root): an
/// attention kernel or a linalg op other than a fill. Fills, empty tensors
/// and views in a region are its set-up, not kernels.
bool isDispatchKernelOp(mlir::Operation *op);

/// Marks `op` as a kernel op of dispatch `id` of kind `kind` covering the
/// model nodes `nodes` (an array of strings).
void setDispatchAttr(mlir::Operation *op, int64_t id, llvm::StringRef kind,
                     mlir::ArrayAttr nodes);

/// Gives `to`, which replaces `from` one for one (a product with new
/// operands), `from`'s dispatch, if it has one.
void copyDispatchAttr(mlir::Operation *from, mlir::Operation *to);

/// The id of the dispatch `op` came from, if it carries one.
std::optional<int64_t> dispatchId(mlir::Operation *op);

/// The model nodes of the dispatch `op` came from (empty when none).
mlir::ArrayAttr dispatchNodes(mlir::Operation *op);

/// Whether `a` and `b` may be one dispatch's: they carry the same id, or
/// one carries none (IR written without regions, or an op a codegen pass
/// made, which decides nothing about grouping).
bool inSameDispatch(mlir::Operation *a, mlir::Operation *b);

/// Whether `ops` may be one dispatch's: all that carry an id carry the same.
bool inOneDispatch(llvm::ArrayRef<mlir::Operation *> ops);

} // namespace kiln

#endif // KILN_DISPATCH_DISPATCHATTR_H
