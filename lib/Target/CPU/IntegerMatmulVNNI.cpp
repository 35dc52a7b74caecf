//===- IntegerMatmulVNNI.cpp - The VNNI integer matmul kernel -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The i16 integer matmul (each operand an 8-bit integer minus a zero point)
// with `vpdpbusd` (llvm.x86.avx512.vpdpbusd.512, or .256 on ymm for
// AVX-VNNI without AVX-512): u8 x s8 products, four consecutive k summed
// into each i32 lane, 16 lanes per zmm (8 per ymm). The operands
// are shifted into bytes, a = A + oA (u8) and b = B + oB (s8), and the
// shifts are taken out of the sums after the depth loop:
//
//   sum_k A B = sum_k a b - oB sum_k a[m, k] - oA sum_k b[k, n] + K oA oB
//             = sum_k a b + rowTerm[m] + colTerm[n]
//
// all in wrapping i32 arithmetic, so exact wherever the i32 result is.
//
// - A: rows of u8 padded with zeros to a multiple of 4; a constant A (a
//   conv's weights) is packed at compile time, else by a loop over rows
//   before the product, which also sums each row (for rowTerm).
// - B: panels of 16 v columns (v vectors a tile row; 16 columns on ymm)
//   with each quad of k rows interleaved per column, `Bpack[panel][q][c][i]
//   = b[4q + i][16 v panel + c]`, zeros past K;
//   a constant B (the weights) at compile time, else by a parallel loop over
//   panels which also sums the columns (for colTerm).
// - A register tile is 6 rows x v vectors of 16 i32 accumulators (v = 4,
//   3 or 2, vectorsFor: up to 24 of 32 zmm; on ymm 6 x 2 of 8, 12 of 16
//   registers; one tile of M % 6 rows at the end), carried over the whole depth: a k quad loads the B
//   vectors, broadcasts each row's 4 bytes as one i32 and does one
//   vpdpbusd per accumulator. Then the terms are added and the marked epilogue (the
//   requantization) applied.
//
//===----------------------------------------------------------------------===//

#include "IntegerMatmul.h"
#include "MatmulEpilogue.h"
#include "MatmulKernel.h"

#include "kiln/Target/Host/ABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>
#include <limits>

using namespace mlir;

namespace kiln::integer_matmul {

using namespace matmul_kernel;

namespace {

constexpr int64_t kQuad = 4;                  // k per i32 lane
constexpr int64_t kTileRows = 6;
constexpr int64_t kMinTasks = 4;      // row groups split M below this many panels
constexpr int64_t kChunk = 32;        // elements per step of the packing loops
constexpr int64_t kParallelA = 1 << 15; // A elements from which its packing is parallel

/// The i32 value of `v` wrapped like the kernel's sums.
int32_t wrap(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }

template <typename T>
ArrayRef<char> bytesOf(const std::vector<T> &values) {
  return {reinterpret_cast<const char *>(values.data()), values.size() * sizeof(T)};
}

struct VNNIEmitter {
  OpBuilder &b;
  Location loc;
  VNNIWidth width;
  int64_t tileVectors; // vectors per tile row (vectorsFor)
  Value a, bMatrix, c;
  int64_t m, n, k, quads, panels, rowBytes;
  ByteOperand lhs, rhs;
  linalg::GenericOp epilogue;
  bool fresh;
  ModuleOp module;
  std::string name;
  // Packed operands; the terms are null when they are zero (oB = 0: no
  // rowTerm; oA = 0: no colTerm).
  Value aPacked, bPacked, rowTerms, colTerms;

  Value idx(int64_t v) { return index(b, loc, v); }
  /// i32 accumulators per vector (16 a zmm, 8 a ymm) and vectors per tile
  /// row (4 zmm of 32 registers, 2 ymm of 16).
  int64_t lanes() const { return width == VNNIWidth::zmm ? 16 : 8; }
  int64_t vectors() const { return tileVectors; }
  int64_t panel() const { return lanes() * vectors(); } // columns per B panel
  /// Columns per step of B's packing: a divisor of the panel (a multiple
  /// of 16 columns).
  int64_t bChunk() const { return panel() % kChunk == 0 ? kChunk : 16; }
  StringRef intrinsic() const {
    return width == VNNIWidth::zmm ? "llvm.x86.avx512.vpdpbusd.512"
                                   : "llvm.x86.avx512.vpdpbusd.256";
  }
  VectorType vec(int64_t lanes, Type element) { return VectorType::get({lanes}, element); }
  Type i8() { return b.getIntegerType(8); }
  Type i16() { return b.getIntegerType(16); }
  Type i32() { return b.getI32Type(); }
  Value splat(VectorType type, int64_t v) {
    return arith::ConstantOp::create(b, loc, SplatElementsAttr::get(
                                                 type, b.getIntegerAttr(type.getElementType(), v)));
  }
  Value alloc(Type element, int64_t count) {
    return memref::AllocOp::create(b, loc, MemRefType::get({count}, element),
                                   b.getI64IntegerAttr(64));
  }
  // With per-column offsets of B, rowTerms holds A's plain row sums and
  // colScales -oB[n], so that the row part is colScale[n] * rowSum[m]; with
  // per-row offsets of A, colTerms holds B's plain column sums and
  // rowScales -oA[m]. K oA oB joins rowTerm when A has per-row offsets,
  // else colTerm. (Not both per line: the pass keeps that case on vpmaddwd.)
  Value colScales, rowScales;
  bool packInTasks = false; // each compute task packs its panel of B first

  bool hasRowTerms() const { return rhs.shifted(); }
  bool hasColTerms() const { return lhs.shifted(); }
  /// What rowTerms (colTerms) holds per unit of A's row (B's column) sum.
  int64_t rowFactor() const { return rhs.perLine() ? 1 : -rhs.offset; }
  int64_t colFactor() const { return lhs.perLine() ? 1 : -lhs.offset; }
  /// K oA oB, in rowTerm[row] or colTerm[column] (the other gets 0).
  int64_t rowConstant(int64_t row) const {
    return lhs.perLine() ? k * lhs.offsetOf(row) * rhs.offset : 0;
  }
  int64_t colConstant(int64_t column) const {
    return lhs.perLine() ? 0 : k * lhs.offset * rhs.offsetOf(column);
  }

  /// A's bytes [M][rowBytes] and rowTerm [M] computed at compile time.
  void packConstantA() {
    std::vector<int8_t> bytes(m * rowBytes, 0);
    std::vector<int32_t> terms(m, 0), scales(m, 0);
    for (int64_t r = 0; r < m; ++r) {
      int64_t sum = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        int64_t v = (*lhs.values)[r * k + kk] + lhs.offsetOf(r);
        bytes[r * rowBytes + kk] = static_cast<int8_t>(static_cast<uint8_t>(v));
        sum += v;
      }
      terms[r] = wrap(rowFactor() * sum + rowConstant(r));
      scales[r] = wrap(-lhs.offsetOf(r));
    }
    aPacked = packedGlobal(b, loc, module, name + "_lhs_bytes", i8(), bytes.size(), bytesOf(bytes));
    if (hasRowTerms())
      rowTerms = packedGlobal(b, loc, module, name + "_row_terms", i32(), m, bytesOf(terms));
    if (lhs.perLine())
      rowScales = packedGlobal(b, loc, module, name + "_row_scales", i32(), m, bytesOf(scales));
  }

  /// B's quad panels and colTerm [panels * 64] computed at compile time.
  void packConstantB() {
    std::vector<int8_t> bytes(panels * quads * panel() * kQuad, 0);
    std::vector<int64_t> sums(panels * panel(), 0);
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < n; ++j) {
        int64_t v = (*rhs.values)[kk * n + j] + rhs.offsetOf(j);
        bytes[((j / panel()) * quads + kk / kQuad) * panel() * kQuad + (j % panel()) * kQuad +
              kk % kQuad] = static_cast<int8_t>(v);
        sums[j] += v;
      }
    std::vector<int32_t> terms(sums.size()), scales(sums.size(), 0);
    for (int64_t j = 0; j < n; ++j) {
      terms[j] = wrap(colFactor() * sums[j] + colConstant(j));
      scales[j] = wrap(-rhs.offsetOf(j));
    }
    bPacked = packedGlobal(b, loc, module, name + "_rhs_quads", i8(), bytes.size(), bytesOf(bytes));
    if (hasColTerms())
      colTerms = packedGlobal(b, loc, module, name + "_col_terms", i32(), terms.size(),
                              bytesOf(terms));
    if (rhs.perLine())
      colScales = packedGlobal(b, loc, module, name + "_col_scales", i32(), scales.size(),
                               bytesOf(scales));
  }

  /// One row of A as bytes: a = A + oA, zeros past K up to rowBytes; its
  /// sum into rowTerms[row] as -oB sum.
  void packRowOfA(Value row) {
    VectorType wide = vec(kChunk, i16()), bytes = vec(kChunk, i8()), sums = vec(kChunk, i32());
    Value offset = splat(wide, lhs.offset);
    Value base = mul(b, loc, row, idx(rowBytes));
    auto chunk = [&](Value at, Value sum, int64_t valid) {
      Value x;
      Value loadMask, storeMask;
      if (valid == kChunk) {
        x = vector::LoadOp::create(b, loc, wide, a, ValueRange{row, at});
      } else {
        loadMask = vector::ConstantMaskOp::create(b, loc, vec(kChunk, b.getI1Type()),
                                                  ArrayRef<int64_t>{valid});
        x = vector::MaskedLoadOp::create(b, loc, wide, a, ValueRange{row, at}, loadMask,
                                         splat(wide, 0));
      }
      Value y = arith::TruncIOp::create(b, loc, bytes, arith::AddIOp::create(b, loc, x, offset));
      Value out = add(b, loc, base, at);
      if (valid == kChunk) {
        vector::StoreOp::create(b, loc, y, aPacked, ValueRange{out});
      } else {
        y = arith::SelectOp::create(b, loc, loadMask, y, splat(bytes, 0));
        storeMask = vector::ConstantMaskOp::create(
            b, loc, vec(kChunk, b.getI1Type()),
            ArrayRef<int64_t>{static_cast<int64_t>(llvm::alignTo(valid, kQuad))});
        vector::MaskedStoreOp::create(b, loc, aPacked, ValueRange{out}, storeMask, y);
      }
      if (!sum)
        return sum;
      return arith::AddIOp::create(b, loc, sum, arith::ExtUIOp::create(b, loc, sums, y))
          .getResult();
    };
    Value sum = hasRowTerms() ? splat(sums, 0) : Value();
    int64_t whole = k / kChunk;
    if (whole > 0) {
      auto loop = scf::ForOp::create(
          b, loc, idx(0), idx(whole * kChunk), idx(kChunk),
          sum ? ValueRange{sum} : ValueRange{},
          [&](OpBuilder &, Location, Value at, ValueRange carried) {
            Value next = chunk(at, carried.empty() ? Value() : carried[0], kChunk);
            scf::YieldOp::create(b, loc, next ? ValueRange{next} : ValueRange{});
          });
      if (sum)
        sum = loop.getResult(0);
    }
    if (k % kChunk)
      sum = chunk(idx(whole * kChunk), sum, k % kChunk);
    if (!sum)
      return;
    Value total = vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, sum);
    Value term = arith::MulIOp::create(
        b, loc, total, arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(wrap(rowFactor()))));
    memref::StoreOp::create(b, loc, term, rowTerms, ValueRange{row});
  }

  void emitPackingA() {
    aPacked = alloc(i8(), m * rowBytes);
    if (hasRowTerms())
      rowTerms = alloc(i32(), m);
    if (m * k < kParallelA) {
      forLoop(b, loc, idx(0), idx(m), idx(1), [&](OpBuilder &, Value row) { packRowOfA(row); });
      return;
    }
    auto loop = scf::ParallelOp::create(b, loc, ValueRange{idx(0)}, ValueRange{idx(m)},
                                        ValueRange{idx(1)},
                                        [&](OpBuilder &, Location, ValueRange ivs) {
                                          packRowOfA(ivs[0]);
                                        });
    loop->setAttr(kHeavyLoopAttr, b.getUnitAttr());
  }

  /// One panel of B: quads of rows as s8 (b = B + oB), interleaved per
  /// column, zeros past K; -oA (column sums) + K oA oB into colTerms.
  void packPanelOfB(Value panelIndex) {
    VectorType wide = vec(bChunk(), i16()), bytes = vec(bChunk(), i8()), sums = vec(bChunk(), i32());
    Value col = mul(b, loc, panelIndex, idx(panel()));
    Value valid = arith::SubIOp::create(b, loc, idx(n), col);
    SmallVector<Value> masks = columnMasks(b, loc, valid, bChunk(), panel() / bChunk());
    Value offset = splat(wide, rhs.offset), zero = splat(wide, 0), zeroBytes = splat(bytes, 0);
    Value base = mul(b, loc, panelIndex, idx(quads * panel() * kQuad));
    // Stores quad q (its rows from `row(i, half)`) and returns the sums.
    auto quad = [&](Value q, ValueRange carried, int64_t rows) {
      SmallVector<Value> next;
      for (int64_t h = 0; h < panel() / bChunk(); ++h) {
        SmallVector<Value> r;
        for (int64_t i = 0; i < kQuad; ++i) {
          if (i >= rows) {
            r.push_back(zeroBytes);
            continue;
          }
          Value kk = add(b, loc, mul(b, loc, q, idx(kQuad)), idx(i));
          Value x = vector::MaskedLoadOp::create(b, loc, wide, bMatrix,
                                                 ValueRange{kk, add(b, loc, col, idx(h * bChunk()))},
                                                 masks[h], zero);
          r.push_back(
              arith::TruncIOp::create(b, loc, bytes, arith::AddIOp::create(b, loc, x, offset)));
        }
        Value even = vector::InterleaveOp::create(b, loc, r[0], r[2]);
        Value odd = vector::InterleaveOp::create(b, loc, r[1], r[3]);
        Value joined = vector::InterleaveOp::create(b, loc, even, odd);
        Value at = add(b, loc, base,
                       add(b, loc, mul(b, loc, q, idx(panel() * kQuad)), idx(h * bChunk() * kQuad)));
        vector::StoreOp::create(b, loc, joined, bPacked, ValueRange{at});
        if (carried.empty())
          continue;
        Value sum = carried[h];
        for (int64_t i = 0; i < rows; ++i)
          sum = arith::AddIOp::create(b, loc, sum, arith::ExtSIOp::create(b, loc, sums, r[i]));
        next.push_back(sum);
      }
      return next;
    };
    SmallVector<Value> init;
    if (hasColTerms())
      init.assign(panel() / bChunk(), splat(sums, 0));
    auto loop = scf::ForOp::create(b, loc, idx(0), idx(k / kQuad), idx(1), init,
                                   [&](OpBuilder &, Location, Value q, ValueRange carried) {
                                     scf::YieldOp::create(b, loc, quad(q, carried, kQuad));
                                   });
    SmallVector<Value> total(loop.getResults());
    if (k % kQuad)
      total = quad(idx(k / kQuad), total, k % kQuad);
    for (int64_t h = 0; h < static_cast<int64_t>(total.size()); ++h) {
      Value term = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, total[h], splat(sums, wrap(colFactor()))),
          splat(sums, wrap(colConstant(0))));
      vector::StoreOp::create(b, loc, term, colTerms,
                              ValueRange{add(b, loc, col, idx(h * bChunk()))});
    }
  }

  /// emitCompute's row groups and rows per group: one group when there
  /// are enough panels, else the tiles split in up to kMinTasks.
  std::pair<int64_t, int64_t> rowGroups() const {
    int64_t tiles = llvm::divideCeil(m, kTileRows);
    int64_t groups = panels >= kMinTasks ? 1 : std::min(tiles, kMinTasks);
    int64_t groupRows = llvm::divideCeil(tiles, groups) * kTileRows;
    return {llvm::divideCeil(m, groupRows), groupRows};
  }

  /// Buffers for a run-time B; it is packed by the compute tasks, each its
  /// panel, when each panel is one task (no second pool launch), else by
  /// a parallel loop before them.
  void emitPackingB() {
    bPacked = alloc(i8(), panels * quads * panel() * kQuad);
    if (hasColTerms())
      colTerms = alloc(i32(), panels * panel());
    packInTasks = rowGroups().first == 1;
    if (packInTasks)
      return;
    auto loop = scf::ParallelOp::create(b, loc, ValueRange{idx(0)}, ValueRange{idx(panels)},
                                        ValueRange{idx(1)},
                                        [&](OpBuilder &, Location, ValueRange ivs) {
                                          packPanelOfB(ivs[0]);
                                        });
    loop->setAttr(kHeavyLoopAttr, b.getUnitAttr());
  }

  /// rows x 4 vectors of C at (row0, panel).
  void emitTile(Value row0, int64_t rows, Value panelIndex, ArrayRef<Value> masks) {
    VectorType acc32 = vec(lanes(), i32()), quadBytes = vec(lanes() * kQuad, i8());
    Value col = mul(b, loc, panelIndex, idx(panel()));
    SmallVector<Value> rowIndex, colIndex, rowBase;
    for (int64_t r = 0; r < rows; ++r) {
      rowIndex.push_back(add(b, loc, row0, idx(r)));
      rowBase.push_back(mul(b, loc, rowIndex.back(), idx(rowBytes)));
    }
    for (int64_t v = 0; v < vectors(); ++v)
      colIndex.push_back(add(b, loc, col, idx(v * lanes())));
    Value zero = splat(acc32, 0);
    SmallVector<Value> init;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t v = 0; v < vectors(); ++v) {
        ValueRange at{rowIndex[r], colIndex[v]};
        if (fresh)
          init.push_back(zero);
        else if (masks.empty())
          init.push_back(vector::LoadOp::create(b, loc, acc32, c, at));
        else
          init.push_back(vector::MaskedLoadOp::create(b, loc, acc32, c, at, masks[v], zero));
      }
    Value base = mul(b, loc, panelIndex, idx(quads * panel() * kQuad));
    auto loop = scf::ForOp::create(
        b, loc, idx(0), idx(quads), idx(1), init,
        [&](OpBuilder &, Location, Value q, ValueRange acc) {
          Value at = add(b, loc, base, mul(b, loc, q, idx(panel() * kQuad)));
          SmallVector<Value> bv;
          for (int64_t v = 0; v < vectors(); ++v)
            bv.push_back(vector::LoadOp::create(b, loc, quadBytes, bPacked,
                                                ValueRange{add(b, loc, at, idx(v * lanes() * kQuad))}));
          SmallVector<Value> next;
          for (int64_t r = 0; r < rows; ++r) {
            Value four = vector::LoadOp::create(
                b, loc, vec(kQuad, i8()), aPacked,
                ValueRange{add(b, loc, rowBase[r], mul(b, loc, q, idx(kQuad)))});
            Value word = vector::BitCastOp::create(b, loc, vec(1, i32()), four);
            Value splatWord = vector::BroadcastOp::create(b, loc, acc32, word);
            Value aBytes = vector::BitCastOp::create(b, loc, quadBytes, splatWord);
            for (int64_t v = 0; v < vectors(); ++v)
              next.push_back(LLVM::CallIntrinsicOp::create(
                                 b, loc, acc32, b.getStringAttr(intrinsic()),
                                 ValueRange{acc[r * vectors() + v], aBytes, bv[v]})
                                 .getResult(0));
          }
          scf::YieldOp::create(b, loc, next);
        });
    SmallVector<Value> acc(loop.getResults());
    addTerms(acc, rowIndex, colIndex);
    if (epilogue) {
      applyEpilogue(b, loc, epilogue, acc, rowIndex, colIndex, masks, lanes());
      return;
    }
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t v = 0; v < vectors(); ++v) {
        ValueRange at{rowIndex[r], colIndex[v]};
        if (masks.empty())
          vector::StoreOp::create(b, loc, acc[r * vectors() + v], c, at);
        else
          vector::MaskedStoreOp::create(b, loc, c, at, masks[v], acc[r * vectors() + v]);
      }
  }

  /// acc[r][v] += rowTerm[row r] + colTerm[column vector v], each times
  /// the other line's scale where one operand has per-line offsets.
  void addTerms(MutableArrayRef<Value> acc, ArrayRef<Value> rowIndex, ArrayRef<Value> colIndex) {
    VectorType acc32 = vec(lanes(), i32());
    SmallVector<Value> colTerm, colScale;
    if (colTerms)
      for (Value at : colIndex)
        colTerm.push_back(vector::LoadOp::create(b, loc, acc32, colTerms, ValueRange{at}));
    if (colScales)
      for (Value at : colIndex)
        colScale.push_back(vector::LoadOp::create(b, loc, acc32, colScales, ValueRange{at}));
    auto rowValue = [&](Value buffer, Value row) -> Value {
      return vector::BroadcastOp::create(b, loc, acc32,
                                         memref::LoadOp::create(b, loc, buffer, ValueRange{row}));
    };
    for (size_t r = 0; r < rowIndex.size(); ++r) {
      Value rowTerm, rowScale;
      if (rowTerms)
        rowTerm = rowValue(rowTerms, rowIndex[r]);
      if (rowScales)
        rowScale = rowValue(rowScales, rowIndex[r]);
      for (int64_t v = 0; v < vectors(); ++v) {
        Value &x = acc[r * vectors() + v];
        if (colTerms)
          x = arith::AddIOp::create(
              b, loc, x,
              rowScales ? arith::MulIOp::create(b, loc, rowScale, colTerm[v]).getResult()
                        : colTerm[v]);
        if (rowTerm)
          x = arith::AddIOp::create(
              b, loc, x,
              colScales ? arith::MulIOp::create(b, loc, colScale[v], rowTerm).getResult()
                        : rowTerm);
      }
    }
  }

  /// Rows [begin, end) of one panel: whole tiles, then one tile of the
  /// M % 6 rows left (row groups are whole tiles but the last, so those
  /// are the only rows left, and only in the last group).
  void emitRows(Value panelIndex, Value begin, Value end) {
    SmallVector<Value> masks;
    if (n % panel()) {
      Value valid = arith::SubIOp::create(b, loc, idx(n), mul(b, loc, panelIndex, idx(panel())));
      masks = columnMasks(b, loc, valid, lanes(), vectors());
    }
    Value rows = arith::SubIOp::create(b, loc, end, begin);
    Value whole =
        mul(b, loc, arith::DivUIOp::create(b, loc, rows, idx(kTileRows)), idx(kTileRows));
    Value wholeEnd = add(b, loc, begin, whole);
    forLoop(b, loc, begin, wholeEnd, idx(kTileRows),
            [&](OpBuilder &, Value row) { emitTile(row, kTileRows, panelIndex, masks); });
    if (m % kTileRows == 0)
      return;
    Value left = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, wholeEnd, end);
    scf::IfOp::create(b, loc, left, [&](OpBuilder &, Location) {
      emitTile(wholeEnd, m % kTileRows, panelIndex, masks);
      scf::YieldOp::create(b, loc);
    });
  }

  /// (panel, row group) tasks on the pool.
  void emitCompute() {
    auto [groups, groupRows] = rowGroups();
    auto loop = scf::ParallelOp::create(
        b, loc, ValueRange{idx(0)}, ValueRange{idx(panels * groups)}, ValueRange{idx(1)},
        [&](OpBuilder &, Location, ValueRange ivs) {
          Value panelIndex = arith::DivUIOp::create(b, loc, ivs[0], idx(groups));
          Value group = arith::RemUIOp::create(b, loc, ivs[0], idx(groups));
          Value begin = mul(b, loc, group, idx(groupRows));
          Value end = arith::MinSIOp::create(b, loc, add(b, loc, begin, idx(groupRows)), idx(m));
          if (packInTasks)
            packPanelOfB(panelIndex);
          emitRows(panelIndex, begin, end);
        });
    loop->setAttr(kHeavyLoopAttr, b.getUnitAttr());
  }
};

/// Vectors per tile row for N columns: on zmm 2 to 4 (8 to 24 of 32
/// registers, at least 12 accumulators to cover vpdpbusd's latency), the
/// fewest vector columns in all (the last panel's columns past N are
/// computed too: N = 196 takes 7 panels of 32, 224 columns, not 4 of 64,
/// 256), the widest among equals; on ymm 2 (12 of 16 registers).
int64_t vectorsFor(VNNIWidth width, int64_t n) {
  if (width == VNNIWidth::ymm)
    return 2;
  int64_t best = 4;
  for (int64_t v : {3, 2})
    if (llvm::divideCeil(n, 16 * v) * v < llvm::divideCeil(n, 16 * best) * best)
      best = v;
  return best;
}

/// The name new globals are derived from: the weights' global, or "vnni".
std::string baseName(Value lhs, Value rhs) {
  for (Value v : {rhs, lhs})
    if (auto global = v.getDefiningOp<memref::GetGlobalOp>())
      return global.getName().str();
  return "vnni";
}

} // namespace

std::optional<ByteOperand> byteOperand(Value matrix, bool isLhs,
                                       std::optional<int64_t> window) {
  int64_t low = isLhs ? 0 : -128, high = low + 255;
  ByteOperand result;
  result.values = constantValues16(matrix);
  if (!result.values) {
    if (!window)
      return std::nullopt;
    result.offset = low - *window;
    return result;
  }
  // The shift that brings [lo, hi] into [low, high]: 0 if it is inside.
  auto shift = [&](int64_t lo, int64_t hi) { return lo >= low && hi <= high ? 0 : low - lo; };
  const std::vector<int16_t> &values = *result.values;
  if (values.empty())
    return result;
  auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  if (*hi - *lo <= 255) {
    result.offset = shift(*lo, *hi);
    return result;
  }
  // Line by line: A's rows ([M, K], line i / K), B's columns ([K, N], i % N).
  auto type = cast<MemRefType>(matrix.getType());
  int64_t lines = type.getDimSize(isLhs ? 0 : 1), inner = type.getDimSize(1);
  std::vector<int64_t> lineLow(lines, std::numeric_limits<int64_t>::max()),
      lineHigh(lines, std::numeric_limits<int64_t>::min());
  for (size_t i = 0; i < values.size(); ++i) {
    int64_t line = isLhs ? i / inner : i % inner;
    lineLow[line] = std::min<int64_t>(lineLow[line], values[i]);
    lineHigh[line] = std::max<int64_t>(lineHigh[line], values[i]);
  }
  for (int64_t line = 0; line < lines; ++line) {
    if (lineHigh[line] - lineLow[line] > 255)
      return std::nullopt;
    result.lineOffsets.push_back(shift(lineLow[line], lineHigh[line]));
  }
  return result;
}

void emitVNNIMatmul(OpBuilder &b, linalg::MatmulOp op, linalg::GenericOp epilogue, bool fresh,
                    const ByteOperand &lhs, const ByteOperand &rhs, VNNIWidth width) {
  Location loc = op.getLoc();
  auto aType = cast<MemRefType>(op.getDpsInputs()[0].getType());
  auto bType = cast<MemRefType>(op.getDpsInputs()[1].getType());
  VNNIEmitter e{b, loc, width, vectorsFor(width, bType.getDimSize(1))};
  e.a = op.getDpsInputs()[0];
  e.bMatrix = op.getDpsInputs()[1];
  e.c = op.getDpsInits()[0];
  e.m = aType.getDimSize(0);
  e.k = aType.getDimSize(1);
  e.n = bType.getDimSize(1);
  e.quads = llvm::divideCeil(e.k, kQuad);
  e.rowBytes = e.quads * kQuad;
  e.panels = llvm::divideCeil(e.n, e.panel());
  e.lhs = lhs;
  e.rhs = rhs;
  e.epilogue = epilogue;
  e.fresh = fresh;
  e.module = op->getParentOfType<ModuleOp>();
  e.name = baseName(e.a, e.bMatrix);
  SmallVector<Value> scratch;
  if (lhs.values) {
    e.packConstantA();
  } else {
    e.emitPackingA();
    scratch.push_back(e.aPacked);
    if (e.rowTerms)
      scratch.push_back(e.rowTerms);
  }
  if (rhs.values) {
    e.packConstantB();
  } else {
    e.emitPackingB();
    scratch.push_back(e.bPacked);
    if (e.colTerms)
      scratch.push_back(e.colTerms);
  }
  e.emitCompute();
  for (Value buffer : scratch)
    memref::DeallocOp::create(b, loc, buffer);
}

} // namespace kiln::integer_matmul
