//===- MatmulTailColumns.h - The last few columns of a CPU matmul -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The micro-kernel (MatmulKernel.h) holds a tile of rows x vectors of C
// columns; where N is not a multiple of the vector, the last vector of the
// partial column panel is masked, and its FMAs mostly compute nothing: at
// 7x7 (N = 49 = 3 vectors + 1 column) a quarter of a conv's FMAs. Instead
// the panel's whole vectors run the kernel unmasked and its `count` tail
// columns (count < vector width) a tail kernel: per MR-row panel of packed
// A (k-major, MR values per k) a vector of A holds vw / MR depths of all MR
// rows (MR = 5: 5 vectors hold 16 depths), multiplied lane by lane with the
// tail column's B values repeated MR times ("Brep", packed once per row
// block): count FMAs per vw / MR depths instead of MR per depth, then a
// reduction of each row's lanes.
// The epilogue and C's loads and stores take the tile's masked path.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_TARGET_CPU_MATMULTAILCOLUMNS_H
#define KILN_LIB_TARGET_CPU_MATMULTAILCOLUMNS_H

#include "MatmulKernel.h"

namespace kiln::matmul_tail {

/// At most this many tail columns take the tail kernel (each costs FMAs
/// and loads; a masked vector costs MR FMAs per depth whatever the count).
inline constexpr int64_t kMaxTailColumns = 4;

/// Whether the tail kernel applies: every depth block (`depth` K, blocks of
/// `tileK`) is whole chunks of lcm(`rows`, vector width) elements of a
/// packed A panel, the tail has 1 to kMaxTailColumns columns and its
/// accumulators fit the registers.
bool tailKernelApplies(int64_t vectorWidth, int64_t rows, int64_t depth, int64_t tileK,
                       int64_t tailColumns);

/// Brep[c][k * rows + r] = element(k, c) for k in [0, depth), c in
/// [0, count), r in [0, rows); `buffer` holds count x tileK x rows f32,
/// column c at c * tileK * rows.
void packTailColumns(mlir::OpBuilder &b, mlir::Location loc, mlir::Value buffer,
                     mlir::Value depth, int64_t tileK, int64_t rows, int64_t count,
                     llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Value, int64_t)> element);

/// C[ir:ir+rows, col:col+count] (+)= A's packed panel (src.a at src.aPanel,
/// src.depth deep) times Brep (`buffer`), with src.fresh, src.epilogue and
/// src.last as in emitKernel.
void emitTailKernel(mlir::OpBuilder &b, mlir::Location loc, mlir::Value c,
                    const matmul_kernel::KernelSource &src, mlir::Value buffer, int64_t tileK,
                    int64_t rows, int64_t count, int64_t vectorWidth, mlir::Value ir,
                    mlir::Value col);

} // namespace kiln::matmul_tail

#endif // KILN_LIB_TARGET_CPU_MATMULTAILCOLUMNS_H
