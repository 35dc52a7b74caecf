//===- MatmulKernel.h - The CPU matmul micro-kernel -------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The register-blocked micro-kernel of kiln-cpu-matmul (MatmulLoops.cpp)
// and the small IR helpers it and the pass share: a rows x vectors block of
// f32 accumulators carried by the k loop (f32 FMAs, or bf16 pair dot
// products), masked at ragged column edges, with the dispatch's epilogue
// applied in the last depth block.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_TARGET_CPU_MATMULKERNEL_H
#define KILN_LIB_TARGET_CPU_MATMULKERNEL_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>
#include <vector>

namespace kiln::matmul_kernel {

/// Parameters of one kernel instance.
struct KernelShape {
  int64_t vectorWidth;
  int64_t vectors; // per row
  int64_t rows;
  int64_t panelWidth = 0; // columns per k row of the packed B panel; 0: vectors x width
  /// bf16 operands (pairs of k interleaved in the panels) and
  /// x86vector.avx512.dot instead of f32 FMAs.
  bool bf16 = false;
};

mlir::Value index(mlir::OpBuilder &b, mlir::Location loc, int64_t v);
mlir::Value add(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
mlir::Value mul(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);

/// Where a kernel reads its operands: A either from the matrix (one row at a
/// time) or from the packed MR-row panel, B always from the packed panel.
struct KernelSource {
  mlir::Value a;        // A (2-D) or the packed A panel buffer (1-D)
  mlir::Value aPanel;   // offset of this row panel in the packed A buffer, or null
  mlir::Value bPacked;  // packed B buffer (1-D)
  mlir::Value bPanel;   // offset of this column panel in the packed B buffer
  mlir::Value depth;    // k steps of the cache block
  mlir::Value k0;       // first k of the cache block (for unpacked A)
  mlir::Value fresh;    // i1: C holds nothing yet (its fill was dropped), or null
  mlir::linalg::GenericOp epilogue; // applied in the last depth block, or null
  mlir::Value last;     // i1: this is the last depth block (with an epilogue)
  /// Packed A only: each k step prefetches A's panel row this many
  /// elements ahead (the next row panel's), clamped to `aEnd` (A's last
  /// element); null: no prefetch.
  mlir::Value aPrefetch, aEnd;
};

/// C[ir:ir+rows, jr:jr+NR] += A[ir:ir+rows, k0:k0+depth] B[k0:k0+depth, jr:jr+NR]
/// with rows x vectors accumulators carried by the k loop; `masks` (one per
/// vector) when the columns do not fill the block.
void emitKernel(mlir::OpBuilder &b, mlir::Location loc, mlir::Value c, const KernelSource &src,
                const KernelShape &shape, mlir::Value ir, mlir::Value jr,
                llvm::ArrayRef<mlir::Value> masks);

/// depth rounded up to whole k pairs: the k rows a bf16 panel holds.
mlir::Value pairedDepth(mlir::OpBuilder &b, mlir::Location loc, mlir::Value depth);

/// (M[row, k], M[row, k + 1]) of the f32 matrix `matrix` as bf16 (rounded
/// to nearest even), the second zero when k + 1 is not below `end` (an odd
/// depth); never reads past `end`.
mlir::Value loadPairAsBF16(mlir::OpBuilder &b, mlir::Location loc, mlir::Value matrix,
                           mlir::Value row, mlir::Value k, mlir::Value end);

/// Masks for the `vectors` vectors of a column panel with `cols` valid columns.
llvm::SmallVector<mlir::Value> columnMasks(mlir::OpBuilder &b, mlir::Location loc,
                                           mlir::Value cols, int64_t vectorWidth,
                                           int64_t vectors);

/// An f32 2-D strided buffer; with `unitInner`, one the kernel can
/// vector-load rows from (A is only read one scalar at a time).
bool isKernelBuffer(mlir::Value value, bool unitInner);

/// Emits `for (i = lo; i < hi; i += step) body(i)`.
void forLoop(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lo, mlir::Value hi,
             mlir::Value step, llvm::function_ref<void(mlir::OpBuilder &, mlir::Value)> body);

/// Whether `matrix` (or the source of its collapse_shape) is a constant
/// global with an initial value, without reading the values.
bool isConstantMatrix(mlir::Value matrix);

/// The values of `matrix` when it is a constant global (a weight), row-major.
std::optional<std::vector<float>> constantValues(mlir::Value matrix);

} // namespace kiln::matmul_kernel

#endif // KILN_LIB_TARGET_CPU_MATMULKERNEL_H
