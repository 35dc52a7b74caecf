//===- MatmulTailColumns.cpp - The last few columns of a CPU matmul -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// See MatmulTailColumns.h; called from MatmulLoops.cpp's partial column
// panel.
//
//===----------------------------------------------------------------------===//

#include "MatmulTailColumns.h"
#include "MatmulEpilogue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <numeric>

using namespace mlir;

namespace kiln::matmul_tail {

using matmul_kernel::add;
using matmul_kernel::index;
using matmul_kernel::mul;

namespace {

/// Independent FMA chains per tail column in the main loop (FMA latency).
constexpr int64_t kChains = 4;
/// At most this many accumulators (chains x tail columns).
constexpr int64_t kMaxAccumulators = 24;

/// The tail kernel steps over chunks of lcm(rows, vw) elements of the A
/// panel: whole depths and whole vectors (rows 4: one vector of 4 depths;
/// rows 5: five vectors of 16 depths), each vector its own FMA chain, and
/// enough chunks per step for kChains chains.
struct Chunking {
  int64_t elements, vectors, depths, perStep;
};

Chunking chunking(int64_t vectorWidth, int64_t rows) {
  Chunking c;
  c.elements = std::lcm(rows, vectorWidth);
  c.vectors = c.elements / vectorWidth;
  c.depths = c.elements / rows;
  c.perStep = std::max<int64_t>(1, kChains / c.vectors);
  return c;
}

} // namespace

bool tailKernelApplies(int64_t vectorWidth, int64_t rows, int64_t depth, int64_t tileK,
                       int64_t tailColumns) {
  if (tailColumns < 1 || tailColumns > kMaxTailColumns || tailColumns >= vectorWidth ||
      rows < 1)
    return false;
  Chunking c = chunking(vectorWidth, rows);
  return c.perStep * c.vectors * tailColumns <= kMaxAccumulators && depth % c.depths == 0 &&
         tileK % c.depths == 0;
}

void packTailColumns(OpBuilder &b, Location loc, Value buffer, Value depth, int64_t tileK,
                     int64_t rows, int64_t count,
                     function_ref<Value(OpBuilder &, Value, int64_t)> element) {
  auto repeated = VectorType::get({rows}, b.getF32Type());
  matmul_kernel::forLoop(
      b, loc, index(b, loc, 0), depth, index(b, loc, 1), [&](OpBuilder &b2, Value k) {
        for (int64_t c = 0; c < count; ++c) {
          Value value = vector::BroadcastOp::create(b2, loc, repeated, element(b2, k, c));
          Value at = add(b2, loc, index(b2, loc, c * tileK * rows),
                         mul(b2, loc, k, index(b2, loc, rows)));
          vector::StoreOp::create(b2, loc, value, buffer, ValueRange{at});
        }
      });
}

namespace {

/// Lane r of the result: the sum of `acc`'s lanes r, r + rows, ... (its
/// lanes rows x a power of 2: halving keeps each lane's row).
Value sumRows(OpBuilder &b, Location loc, Value acc, int64_t rows) {
  int64_t lanes = cast<VectorType>(acc.getType()).getNumElements();
  while (lanes > rows) {
    lanes /= 2;
    auto low = vector::ExtractStridedSliceOp::create(b, loc, acc, ArrayRef<int64_t>{0},
                                                     ArrayRef<int64_t>{lanes},
                                                     ArrayRef<int64_t>{1});
    auto high = vector::ExtractStridedSliceOp::create(b, loc, acc, ArrayRef<int64_t>{lanes},
                                                      ArrayRef<int64_t>{lanes},
                                                      ArrayRef<int64_t>{1});
    acc = arith::AddFOp::create(b, loc, low, high);
  }
  return acc;
}

/// The tail kernel's FMA chains over the A panel's chunks: per vector j of a
/// chunk and tail column t, acc[j * count + t].
SmallVector<Value> accumulateChunks(OpBuilder &b, Location loc,
                                    const matmul_kernel::KernelSource &src, Value buffer,
                                    int64_t tileK, int64_t rows, int64_t count,
                                    int64_t vectorWidth) {
  auto vectorType = VectorType::get({vectorWidth}, b.getF32Type());
  Value zero = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(vectorType, b.getF32FloatAttr(0.0f)));
  Chunking chunks = chunking(vectorWidth, rows);
  int64_t perChunk = chunks.vectors * count; // accumulators of one chunk
  // The panel's depth x rows values: `steps` chunks.
  Value steps = arith::DivUIOp::create(b, loc, mul(b, loc, src.depth, index(b, loc, rows)),
                                       index(b, loc, chunks.elements));
  Value unrolled = mul(b, loc,
                       arith::DivUIOp::create(b, loc, steps, index(b, loc, chunks.perStep)),
                       index(b, loc, chunks.perStep));
  // acc[first + j * count + t] += A vector j of chunk q * the same vector of
  // column t's Brep.
  auto step = [&](OpBuilder &nb, Value q, ValueRange acc, int64_t first) {
    SmallVector<Value> next;
    for (int64_t j = 0; j < chunks.vectors; ++j) {
      Value offset = add(nb, loc, mul(nb, loc, q, index(nb, loc, chunks.elements)),
                         index(nb, loc, j * vectorWidth));
      Value a = vector::LoadOp::create(nb, loc, vectorType, src.a,
                                       ValueRange{add(nb, loc, src.aPanel, offset)});
      for (int64_t t = 0; t < count; ++t) {
        Value bRep = vector::LoadOp::create(
            nb, loc, vectorType, buffer,
            ValueRange{add(nb, loc, index(nb, loc, t * tileK * rows), offset)});
        next.push_back(
            vector::FMAOp::create(nb, loc, a, bRep, acc[first + j * count + t]));
      }
    }
    return next;
  };
  SmallVector<Value> init(chunks.perStep * perChunk, zero);
  auto main = scf::ForOp::create(
      b, loc, index(b, loc, 0), unrolled, index(b, loc, chunks.perStep), init,
      [&](OpBuilder &nb, Location, Value q, ValueRange acc) {
        SmallVector<Value> next;
        for (int64_t u = 0; u < chunks.perStep; ++u)
          llvm::append_range(next,
                             step(nb, add(nb, loc, q, index(nb, loc, u)), acc, u * perChunk));
        scf::YieldOp::create(nb, loc, next);
      });
  SmallVector<Value> partial(main.getResults().take_front(perChunk));
  for (int64_t u = 1; u < chunks.perStep; ++u)
    for (int64_t i = 0; i < perChunk; ++i)
      partial[i] = arith::AddFOp::create(b, loc, partial[i], main.getResult(u * perChunk + i));
  auto rest = scf::ForOp::create(b, loc, unrolled, steps, index(b, loc, 1), partial,
                                 [&](OpBuilder &nb, Location, Value q, ValueRange acc) {
                                   scf::YieldOp::create(nb, loc, step(nb, q, acc, 0));
                                 });
  return SmallVector<Value>(rest.getResults());
}

/// Per row of the tile a vector of its tail columns' sums (count lanes, the
/// others zero) from accumulateChunks' `acc`.
SmallVector<Value> rowTiles(OpBuilder &b, Location loc, ArrayRef<Value> acc, int64_t rows,
                            int64_t count, int64_t vectorWidth) {
  auto vectorType = VectorType::get({vectorWidth}, b.getF32Type());
  Chunking chunks = chunking(vectorWidth, rows);
  // Per tail column its chunk's vectors as one vector (lane e: row e mod
  // rows), the rows' sums (rows lanes), then per row a vector of its tail
  // columns (count lanes, the others masked).
  SmallVector<Value> sums;
  auto chunkType = VectorType::get({chunks.elements}, b.getF32Type());
  for (int64_t t = 0; t < count; ++t) {
    Value whole = acc[t];
    if (chunks.vectors > 1) {
      whole = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(chunkType, b.getF32FloatAttr(0.0f)));
      for (int64_t j = 0; j < chunks.vectors; ++j)
        whole = vector::InsertStridedSliceOp::create(b, loc, acc[j * count + t], whole,
                                                     ArrayRef<int64_t>{j * vectorWidth},
                                                     ArrayRef<int64_t>{1});
    }
    sums.push_back(sumRows(b, loc, whole, rows));
  }
  SmallVector<Value> tiles;
  Value zeroScalar = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  for (int64_t r = 0; r < rows; ++r) {
    SmallVector<Value> elements(vectorWidth, zeroScalar);
    for (int64_t t = 0; t < count; ++t)
      elements[t] = vector::ExtractOp::create(b, loc, sums[t], ArrayRef<int64_t>{r});
    tiles.push_back(vector::FromElementsOp::create(b, loc, vectorType, elements));
  }
  return tiles;
}

} // namespace

void emitTailKernel(OpBuilder &b, Location loc, Value c, const matmul_kernel::KernelSource &src,
                    Value buffer, int64_t tileK, int64_t rows, int64_t count,
                    int64_t vectorWidth, Value ir, Value col) {
  auto vectorType = VectorType::get({vectorWidth}, b.getF32Type());
  Value zero = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(vectorType, b.getF32FloatAttr(0.0f)));
  SmallVector<Value> acc =
      accumulateChunks(b, loc, src, buffer, tileK, rows, count, vectorWidth);
  SmallVector<Value> tiles = rowTiles(b, loc, acc, rows, count, vectorWidth);
  Value mask = vector::CreateMaskOp::create(b, loc, VectorType::get({vectorWidth}, b.getI1Type()),
                                            ValueRange{index(b, loc, count)});
  SmallVector<Value> rowIndices;
  for (int64_t r = 0; r < rows; ++r)
    rowIndices.push_back(r == 0 ? ir : add(b, loc, ir, index(b, loc, r)));
  auto accumulate = [&](OpBuilder &ab) {
    SmallVector<Value> totals;
    for (int64_t r = 0; r < rows; ++r) {
      Value prior = vector::MaskedLoadOp::create(ab, loc, vectorType, c,
                                                 ValueRange{rowIndices[r], col}, mask, zero);
      totals.push_back(arith::AddFOp::create(ab, loc, prior, tiles[r]));
    }
    return totals;
  };
  SmallVector<Value> totals;
  if (src.fresh) {
    // The first depth block: C holds nothing yet.
    SmallVector<Type> types(rows, vectorType);
    auto start = scf::IfOp::create(
        b, loc, src.fresh,
        [&](OpBuilder &tb, Location) { scf::YieldOp::create(tb, loc, ValueRange(tiles)); },
        [&](OpBuilder &eb, Location) { scf::YieldOp::create(eb, loc, accumulate(eb)); });
    llvm::append_range(totals, start.getResults());
  } else {
    totals = accumulate(b);
  }
  auto store = [&](OpBuilder &sb) {
    for (int64_t r = 0; r < rows; ++r)
      vector::MaskedStoreOp::create(sb, loc, c, ValueRange{rowIndices[r], col}, mask, totals[r]);
  };
  if (!src.epilogue) {
    store(b);
    return;
  }
  scf::IfOp::create(
      b, loc, src.last,
      [&](OpBuilder &tb, Location) {
        Value cols[] = {col}, masks[] = {mask};
        applyEpilogue(tb, loc, src.epilogue, totals, rowIndices, cols, masks, vectorWidth);
        scf::YieldOp::create(tb, loc);
      },
      [&](OpBuilder &eb, Location) {
        store(eb);
        scf::YieldOp::create(eb, loc);
      });
}

} // namespace kiln::matmul_tail
