//===- IntegerMatmul.h - Integer matmul kernels of the CPU ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// What kiln-cpu-integer-matmul's two kernels share: reading constant i16
// operands (the weights) and writing packed constants, and the VNNI
// kernel's entry point (IntegerMatmulVNNI.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_TARGET_CPU_INTEGERMATMUL_H
#define KILN_LIB_TARGET_CPU_INTEGERMATMUL_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <optional>
#include <vector>

namespace kiln::integer_matmul {

/// The values of a constant i16 global `matrix` (row-major), or nullopt.
std::optional<std::vector<int16_t>> constantValues16(mlir::Value matrix);

/// A new private constant global holding `bytes` as `count` elements of
/// `element` (named after `base`, made unique), read at `b`.
mlir::Value packedGlobal(mlir::OpBuilder &b, mlir::Location loc, mlir::ModuleOp module,
                         llvm::StringRef base, mlir::Type element, int64_t count,
                         llvm::ArrayRef<char> bytes);

/// How the VNNI kernel shifts an i16 operand into bytes: `offset` added to
/// every element gives u8 (A) or s8 (B) values, or `lineOffsets[i]` to the
/// elements of line i (a constant operand only: A's rows, B's columns, the
/// lines along M and N that per-channel zero points follow); `values`
/// holds the operand when it is a constant (packed at compile time).
struct ByteOperand {
  int64_t offset = 0;
  std::vector<int64_t> lineOffsets;
  std::optional<std::vector<int16_t>> values;

  bool perLine() const { return !lineOffsets.empty(); }
  int64_t offsetOf(int64_t line) const { return perLine() ? lineOffsets[line] : offset; }
  bool shifted() const { return offset != 0 || perLine(); }
};

/// The 8-bit form of the i16 operand `matrix` for the VNNI kernel: A as u8
/// (`isLhs`), B as s8. A constant is shifted by 0 when its values fit, else
/// by what brings its smallest to the range's bottom, if its values span at
/// most 256, else line by line (A's rows, B's columns) if each spans at
/// most 256; a run-time operand needs `window` (the recognition's
/// kiln.lhs_bytes / kiln.rhs_bytes: every element lies in [window, window +
/// 255]). nullopt when neither.
std::optional<ByteOperand> byteOperand(mlir::Value matrix, bool isLhs,
                                       std::optional<int64_t> window);

/// The vectors of the VNNI kernel: zmm (AVX-512 VNNI) or ymm (AVX-VNNI,
/// the VEX form of CPUs without AVX-512).
enum class VNNIWidth { ymm, zmm };

/// Rewrites `op` (an i16 x i16 -> i32 linalg.matmul on static buffers,
/// M, N > 0) into the VNNI kernel (`vpdpbusd`, u8 x s8, 4 k per i32 lane)
/// on `width` vectors with `epilogue` (or null) applied to its
/// accumulators; `fresh`: C's zero fill was dropped. Leaves `op` and
/// `epilogue` for the caller to erase.
void emitVNNIMatmul(mlir::OpBuilder &b, mlir::linalg::MatmulOp op,
                    mlir::linalg::GenericOp epilogue, bool fresh, const ByteOperand &lhs,
                    const ByteOperand &rhs, VNNIWidth width);

} // namespace kiln::integer_matmul

#endif // KILN_LIB_TARGET_CPU_INTEGERMATMUL_H
