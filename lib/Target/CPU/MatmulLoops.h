//===- MatmulLoops.h - The loop nest of one CPU matmul ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// kiln-cpu-matmul's rewrite of one C (+)= A B (a linalg.matmul on buffers,
// or a conv's taps) into cache blocks, packing and micro-kernels
// (MatmulLoops.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_TARGET_CPU_MATMULLOOPS_H
#define KILN_LIB_TARGET_CPU_MATMULLOOPS_H

#include "kiln/Dispatch/Epilogue.h"
#include "kiln/Target/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace kiln::matmul_loops {

/// B of a conv's taps (the `kiln.conv_taps` generic of the dispatch
/// stage): B[k][p] = X[c][at(p, i, j)] for k = (c*kh + i)*kw + j, X the
/// image's flattened padded input [C, Hp*Wp], at() its ConvTapsLayout.
struct ConvTaps {
  mlir::Value x;
  int64_t kh, kw;
  ConvTapsLayout layout;
  /// The conv taps generic when it has a B prologue (MatmulPrologue.h).
  mlir::linalg::GenericOp prologue = nullptr;
};

/// C (+)= A B for `op` (a matmul, or a conv's taps with `taps` set and
/// `bMatrix` unused), which is erased with its `epilogue`. With `fresh`,
/// C's previous contents are not read: the first depth block overwrites it
/// (used when C was only zero-filled). With an `epilogue` (reading `op`'s
/// C), the last depth block applies it and writes its output. `aConstant`
/// is A packed at compile time (packConstantA's layout, 1-D; A of static
/// shape), else A is packed per cache block at run time.
void rewriteMatmul(const KilnCPUMatmulPassOptions &options, mlir::Operation *op,
                   mlir::Value aMatrix, mlir::Value bMatrix, mlir::Value c, bool fresh,
                   mlir::linalg::GenericOp epilogue, mlir::Value aConstant = {},
                   std::optional<ConvTaps> taps = std::nullopt);

} // namespace kiln::matmul_loops

#endif // KILN_LIB_TARGET_CPU_MATMULLOOPS_H
