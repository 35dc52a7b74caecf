//===- WarpShuffle.h - Combining values across a warp's lanes ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The butterfly both CUDA reduction kernels end with (kiln-cuda-row-kernels,
// kiln-cuda-warp-reductions): five xor shuffles leave every lane of a warp
// with the warp's total.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_TARGET_CUDA_WARPSHUFFLE_H
#define KILN_LIB_TARGET_CUDA_WARPSHUFFLE_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace kiln::cuda {

/// Threads in a warp.
inline constexpr int64_t kWarp = 32;

/// Combines the float `partial` of every lane of a warp with `combine`
/// (xor shuffles at offsets 16, 8, 4, 2, 1; `combine(mine, other)`), so that
/// every lane gets the warp's total. shfl.sync moves 32 bits: a narrower
/// float travels as f32 (both conversions exact).
mlir::Value warpAllReduce(mlir::OpBuilder &b, mlir::Location loc, mlir::Value partial,
                          llvm::function_ref<mlir::Value(mlir::Value, mlir::Value)> combine);

} // namespace kiln::cuda

#endif // KILN_LIB_TARGET_CUDA_WARPSHUFFLE_H
