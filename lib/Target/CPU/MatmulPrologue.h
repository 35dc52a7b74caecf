//===- MatmulPrologue.h - B prologues of conv taps kernels -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// A conv taps contraction with a B prologue (kiln/Dispatch/Epilogue.h,
// convTapsLayout) computes each element of B from its x inputs, read at
// B's position, and its row inputs, read per input channel. kiln-cpu-matmul
// evaluates it while packing B: per B row the row inputs are loaded and
// the part of the body that depends only on them is computed as scalars
// (a squeeze-excite sigmoid once per channel), then per vector of columns
// the rest of the body runs on the x inputs' vectors.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_TARGET_CPU_MATMULPROLOGUE_H
#define KILN_LIB_TARGET_CPU_MATMULPROLOGUE_H

#include "kiln/Dispatch/Epilogue.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"

namespace kiln {

class BPrologue {
public:
  /// `generic`: a conv taps generic with a prologue, on buffers.
  explicit BPrologue(mlir::linalg::GenericOp generic);

  /// The x inputs (buffers shaped and read like B's source).
  llvm::ArrayRef<mlir::Value> xInputs() const { return xs; }

  /// Starts B row of input channel `channel`: loads the row inputs and
  /// computes the body's operations that depend only on them.
  void beginRow(mlir::OpBuilder &b, mlir::Location loc, mlir::Value channel);

  /// B's elements from the x inputs' vectors (in xInputs() order), after
  /// beginRow.
  mlir::Value evaluate(mlir::OpBuilder &b, mlir::Location loc, llvm::ArrayRef<mlir::Value> xVectors,
                       int64_t vectorWidth);

private:
  mlir::linalg::GenericOp generic;
  llvm::SmallVector<mlir::Value> xs;
  llvm::SmallVector<unsigned> xArgs, rowArgs;
  /// The body's value of B's element (the right operand of w * b).
  mlir::Value element;
  /// The body's w * element and out + w * element.
  mlir::Operation *product = nullptr, *sum = nullptr;
  /// Body operations that depend only on row inputs and constants.
  llvm::SmallPtrSet<mlir::Operation *, 8> perRow;
  mlir::IRMapping rowValues;
};

/// The columns [p0, p0 + vw) of conv taps whose layout has a width of at
/// least vw and a unit column step span at most two image rows: lanes
/// [0, first) read row y at x0 onwards, the others row y + 1 from column
/// 0, i.e. at the same offsets shifted by yStep - width. Two masked loads
/// read them, instead of a gather per vector.
struct RowWrap {
  /// The offset of lane 0 in X's row, and the shift of the second load.
  mlir::Value base, nextBase;
  mlir::Value firstMask, nextMask;
  /// i1: some valid lane is in the next row.
  mlir::Value wraps;
  /// X[row, shift + offset + lane] for each lane, zero where masked; one
  /// load where not `wrapped` (then no valid lane is in the next row).
  mlir::Value load(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value row,
                   mlir::Value shift, mlir::VectorType type, bool wrapped) const;
  /// load() of each of `xs`, twice only where this vector wraps (an
  /// scf.if on `wraps` yielding the vectors): inside a panel where some
  /// vector wraps, most do not.
  llvm::SmallVector<mlir::Value> loadEach(mlir::OpBuilder &b, mlir::Location loc,
                                          mlir::ValueRange xs, mlir::Value row, mlir::Value shift,
                                          mlir::VectorType type) const;
};

bool isRowWrapLayout(const ConvTapsLayout &layout, int64_t vectorWidth);

/// The RowWrap of the vector of columns from `p0`, `mask` its valid lanes.
RowWrap rowWrap(mlir::OpBuilder &b, mlir::Location loc, const ConvTapsLayout &layout,
                mlir::Value p0, mlir::Value mask, int64_t vectorWidth);

/// The offsets in X's rows of the pixels of columns [p0, p0 + vw):
/// (p / width)*yStep + (p % width)*xStep (p*xStep without a width), as i32
/// lanes (a gather's or TapWindows' offsets).
mlir::Value pixelOffsets(mlir::OpBuilder &b, mlir::Location loc, const ConvTapsLayout &layout,
                         mlir::Value p0, int64_t vectorWidth);

/// The columns [p0, p0 + vw) of conv taps whose pixels lie in few runs of
/// 2 vw consecutive elements of X's row (a strided or narrow-row layout on
/// AVX-512: a 3x3 conv at 14 columns in rows of 16, a stride-2 conv's 16
/// lanes over 31 elements): per window two masked vector loads and one
/// two-source permute (vpermi2ps) instead of a 16-lane gather per vector.
/// Windows are taken greedily from the first valid lane; the window count
/// is fixed per layout (tapWindowCount), an unused window loads nothing.
struct TapWindows {
  struct Window {
    /// The window's first offset in X's row (i32 lanes' base), the lanes'
    /// indices into the window, the lanes it supplies and its load masks.
    mlir::Value base, indices, lanes, lowMask, highMask;
  };
  llvm::SmallVector<Window, 2> windows;
  /// X[row, shift + offset(lane)] for each valid lane, zero elsewhere.
  mlir::Value load(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value row,
                   mlir::Value shift, mlir::VectorType type) const;
};

/// The windows of 2 vw elements that cover the columns of any vector
/// [p0, p0 + vw) of `columns` (p0 a multiple of vw) under `layout`, at
/// most `limit`; 0 where more are needed or vw is not 16 (AVX-512's
/// vpermi2ps).
int64_t tapWindowCount(const ConvTapsLayout &layout, int64_t columns, int64_t vectorWidth,
                       int64_t limit);

/// The TapWindows of one vector: `offsets` its lanes' pixel offsets in X's
/// row (i32), `mask` its valid lanes, `count` from tapWindowCount.
TapWindows tapWindows(mlir::OpBuilder &b, mlir::Location loc, mlir::Value offsets,
                      mlir::Value mask, int64_t count);

} // namespace kiln

#endif // KILN_LIB_TARGET_CPU_MATMULPROLOGUE_H
