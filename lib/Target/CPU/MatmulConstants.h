//===- MatmulConstants.h - Weights packed for matmul kernels -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Constant operands of a CPU matmul (weights) packed at compile time into the
// layouts the kernels of MatmulLoops.cpp read, as new private globals.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_TARGET_CPU_MATMULCONSTANTS_H
#define KILN_LIB_TARGET_CPU_MATMULCONSTANTS_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringMap.h"

namespace kiln::matmul_kernel {

/// A constant B (`bMatrix`, a get_global) in the layout the run-time B
/// packing produces, block after block; `numK` is set to the depth blocks.
/// With `bf16`, a bf16 global with pairs of k interleaved in each panel.
/// Null when B is not a constant global.
mlir::FlatSymbolRefAttr packConstantB(mlir::Operation *op, mlir::Value bMatrix, int64_t tileN,
                                      int64_t tileK, int64_t nr, bool bf16, int64_t &numK);

/// A constant A [M, K] (a conv's weights) as MR-row panels per KC-deep
/// depth block (see the definition); with `bf16` (KC even), bf16 panels of
/// k pairs. One global per weights global and blocking, kept in `packedA`;
/// null when A is not a constant global.
mlir::FlatSymbolRefAttr packConstantA(mlir::Value weights, int64_t M, int64_t K, int64_t mr,
                                      int64_t kc, bool bf16,
                                      llvm::StringMap<mlir::FlatSymbolRefAttr> &packedA);

/// Once its weights are packed: erases `getGlobal` if nothing reads it any
/// more, and then its global if nothing else refers to it.
void eraseIfUnread(mlir::memref::GetGlobalOp getGlobal);

} // namespace kiln::matmul_kernel

#endif // KILN_LIB_TARGET_CPU_MATMULCONSTANTS_H
