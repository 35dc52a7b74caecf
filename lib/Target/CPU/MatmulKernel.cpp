//===- MatmulKernel.cpp - The CPU matmul micro-kernel ---------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// See MatmulKernel.h; the loop nest around the kernel is in MatmulLoops.cpp.
//
//===----------------------------------------------------------------------===//

#include "MatmulKernel.h"
#include "MatmulEpilogue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"

#include <cstring>

using namespace mlir;

namespace kiln::matmul_kernel {

Value index(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value add(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value mul(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MulIOp::create(b, loc, x, y);
}

namespace {

/// Step k of the f32 kernel: `vectors` loads of B's packed row k, per row
/// one broadcast of A[row, k] and `vectors` FMAs.
SmallVector<Value> emitFMAStep(OpBuilder &nb, Location nl, const KernelSource &src,
                               const KernelShape &shape, ArrayRef<Value> rows, Value k,
                               ValueRange acc) {
  auto vectorType = VectorType::get({shape.vectorWidth}, nb.getF32Type());
  int64_t nr = shape.panelWidth ? shape.panelWidth : shape.vectors * shape.vectorWidth;
  Value bRow = add(nb, nl, src.bPanel, mul(nb, nl, k, index(nb, nl, nr)));
  SmallVector<Value> bVectors;
  for (int64_t v = 0; v < shape.vectors; ++v)
    bVectors.push_back(vector::LoadOp::create(
        nb, nl, vectorType, src.bPacked,
        ValueRange{add(nb, nl, bRow, index(nb, nl, v * shape.vectorWidth))}));
  Value aRow =
      src.aPanel ? add(nb, nl, src.aPanel, mul(nb, nl, k, index(nb, nl, shape.rows))) : Value();
  if (aRow && src.aPrefetch) {
    // Constant weights stream from memory once per column block: the next
    // row panel's row k, a kernel ahead.
    Value ahead = arith::MinUIOp::create(nb, nl, add(nb, nl, aRow, src.aPrefetch), src.aEnd);
    memref::PrefetchOp::create(nb, nl, src.a, ValueRange{ahead}, /*isWrite=*/false,
                               /*localityHint=*/3, /*isDataCache=*/true);
  }
  SmallVector<Value> next;
  for (int64_t r = 0; r < shape.rows; ++r) {
    Value a = src.aPanel
                  ? memref::LoadOp::create(nb, nl, src.a,
                                           ValueRange{add(nb, nl, aRow, index(nb, nl, r))})
                        .getResult()
                  : memref::LoadOp::create(nb, nl, src.a,
                                           ValueRange{rows[r], add(nb, nl, src.k0, k)})
                        .getResult();
    Value splat = vector::BroadcastOp::create(nb, nl, vectorType, a);
    for (int64_t v = 0; v < shape.vectors; ++v)
      next.push_back(
          vector::FMAOp::create(nb, nl, splat, bVectors[v], acc[r * shape.vectors + v]));
  }
  return next;
}

/// A pair of bf16 values (vector<2xbf16>) as one 32-bit lane repeated over
/// a vector of 2 x `lanes` bf16: the A operand of vdpbf16ps.
Value broadcastPair(OpBuilder &b, Location loc, Value pair, int64_t lanes) {
  Value word = vector::BitCastOp::create(b, loc, VectorType::get({1}, b.getI32Type()), pair);
  Value scalar = vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0});
  Value words = vector::BroadcastOp::create(b, loc, VectorType::get({lanes}, b.getI32Type()),
                                            scalar);
  return vector::BitCastOp::create(b, loc, VectorType::get({2 * lanes}, b.getBF16Type()), words);
}

/// Pair step kp of the bf16 kernel: `vectors` loads of B's packed pair row
/// ([column][2] bf16: k = 2kp and 2kp + 1 of 16 columns per vector), per
/// row the A pair broadcast and `vectors` dot products
/// acc[j] += a[2kp] b[2kp][j] + a[2kp+1] b[2kp+1][j] (vdpbf16ps).
SmallVector<Value> emitDotStep(OpBuilder &nb, Location nl, const KernelSource &src,
                               const KernelShape &shape, ArrayRef<Value> rows, Value kp,
                               ValueRange acc) {
  int64_t vw = shape.vectorWidth;
  auto pairsType = VectorType::get({2 * vw}, nb.getBF16Type());
  int64_t nr = shape.panelWidth ? shape.panelWidth : shape.vectors * vw;
  Value bRow = add(nb, nl, src.bPanel, mul(nb, nl, kp, index(nb, nl, 2 * nr)));
  SmallVector<Value> bVectors;
  for (int64_t v = 0; v < shape.vectors; ++v)
    bVectors.push_back(vector::LoadOp::create(
        nb, nl, pairsType, src.bPacked, ValueRange{add(nb, nl, bRow, index(nb, nl, 2 * v * vw))}));
  Value aRow =
      src.aPanel ? add(nb, nl, src.aPanel, mul(nb, nl, kp, index(nb, nl, 2 * shape.rows)))
                 : Value();
  auto pairType = VectorType::get({2}, nb.getBF16Type());
  SmallVector<Value> next;
  for (int64_t r = 0; r < shape.rows; ++r) {
    Value pair;
    if (src.aPanel) {
      pair = vector::LoadOp::create(nb, nl, pairType, src.a,
                                    ValueRange{add(nb, nl, aRow, index(nb, nl, 2 * r))});
    } else {
      // Unpacked f32 A (rows past the panels of a dynamic M): converted here.
      Value k = add(nb, nl, src.k0, mul(nb, nl, kp, index(nb, nl, 2)));
      pair = loadPairAsBF16(nb, nl, src.a, rows[r], k, add(nb, nl, src.k0, src.depth));
    }
    Value splat = broadcastPair(nb, nl, pair, vw);
    for (int64_t v = 0; v < shape.vectors; ++v)
      next.push_back(x86vector::DotBF16Op::create(nb, nl, acc[r * shape.vectors + v], splat,
                                                  bVectors[v]));
  }
  return next;
}

} // namespace

Value pairedDepth(OpBuilder &b, Location loc, Value depth) {
  return mul(b, loc, arith::CeilDivUIOp::create(b, loc, depth, index(b, loc, 2)),
             index(b, loc, 2));
}

Value loadPairAsBF16(OpBuilder &b, Location loc, Value matrix, Value row, Value k, Value end) {
  Value second = add(b, loc, k, index(b, loc, 1));
  Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, second, end);
  Value first = memref::LoadOp::create(b, loc, matrix, ValueRange{row, k});
  // Past an odd depth: read k again (in bounds), use zero.
  Value clamped = arith::SelectOp::create(b, loc, inside, second, k);
  Value next = memref::LoadOp::create(b, loc, matrix, ValueRange{row, clamped});
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  next = arith::SelectOp::create(b, loc, inside, next, zero);
  Value pair = vector::FromElementsOp::create(b, loc, VectorType::get({2}, b.getF32Type()),
                                              ValueRange{first, next});
  return arith::TruncFOp::create(b, loc, VectorType::get({2}, b.getBF16Type()), pair);
}

/// C[ir:ir+rows, jr:jr+NR] += A[ir:ir+rows, k0:k0+depth] B[k0:k0+depth, jr:jr+NR]
/// with rows x vectors accumulators carried by the k loop; `masks` (one per
/// vector) when the columns do not fill the block.
void emitKernel(OpBuilder &b, Location loc, Value c, const KernelSource &src,
                const KernelShape &shape, Value ir, Value jr, ArrayRef<Value> masks) {
  auto vectorType = VectorType::get({shape.vectorWidth}, b.getF32Type());
  Value zero = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(vectorType, b.getF32FloatAttr(0.0f)));
  SmallVector<Value> rows, cols;
  for (int64_t r = 0; r < shape.rows; ++r)
    rows.push_back(r == 0 ? ir : add(b, loc, ir, index(b, loc, r)));
  for (int64_t v = 0; v < shape.vectors; ++v)
    cols.push_back(v == 0 ? jr : add(b, loc, jr, index(b, loc, v * shape.vectorWidth)));
  auto loadC = [&](OpBuilder &lb) {
    SmallVector<Value> values;
    for (int64_t r = 0; r < shape.rows; ++r)
      for (int64_t v = 0; v < shape.vectors; ++v) {
        Value at[] = {rows[r], cols[v]};
        values.push_back(
            masks.empty()
                ? vector::LoadOp::create(lb, loc, vectorType, c, at).getResult()
                : vector::MaskedLoadOp::create(lb, loc, vectorType, c, at, masks[v], zero)
                      .getResult());
      }
    return values;
  };
  SmallVector<Value> accumulators;
  if (src.fresh) {
    // The first depth block starts from zero instead of a zero-filled C.
    SmallVector<Type> types(shape.rows * shape.vectors, vectorType);
    auto start = scf::IfOp::create(
        b, loc, src.fresh,
        [&](OpBuilder &tb, Location) {
          scf::YieldOp::create(tb, loc, SmallVector<Value>(types.size(), zero));
        },
        [&](OpBuilder &eb, Location) { scf::YieldOp::create(eb, loc, loadC(eb)); });
    llvm::append_range(accumulators, start.getResults());
  } else {
    accumulators = loadC(b);
  }

  // bf16: one step per pair of k (the panels hold pairs interleaved).
  Value steps = shape.bf16 ? arith::CeilDivUIOp::create(b, loc, src.depth, index(b, loc, 2))
                           : src.depth;
  auto loop = scf::ForOp::create(
      b, loc, index(b, loc, 0), steps, index(b, loc, 1), accumulators,
      [&](OpBuilder &nb, Location nl, Value k, ValueRange acc) {
        SmallVector<Value> next =
            shape.bf16 ? emitDotStep(nb, nl, src, shape, rows, k, acc)
                       : emitFMAStep(nb, nl, src, shape, rows, k, acc);
        scf::YieldOp::create(nb, nl, next);
      });

  auto storeC = [&](OpBuilder &sb) {
    for (int64_t r = 0; r < shape.rows; ++r)
      for (int64_t v = 0; v < shape.vectors; ++v) {
        Value result = loop.getResult(r * shape.vectors + v);
        Value at[] = {rows[r], cols[v]};
        if (masks.empty())
          vector::StoreOp::create(sb, loc, result, c, at);
        else
          vector::MaskedStoreOp::create(sb, loc, c, at, masks[v], result);
      }
  };
  if (!src.epilogue) {
    storeC(b);
    return;
  }
  // The last depth block writes the epilogue's output, the others C.
  scf::IfOp::create(
      b, loc, src.last,
      [&](OpBuilder &tb, Location) {
        applyEpilogue(tb, loc, src.epilogue, SmallVector<Value>(loop.getResults()), rows, cols,
                      masks, shape.vectorWidth);
        scf::YieldOp::create(tb, loc);
      },
      [&](OpBuilder &eb, Location) {
        storeC(eb);
        scf::YieldOp::create(eb, loc);
      });
}

/// Masks for the `vectors` vectors of a column panel with `cols` valid columns.
SmallVector<Value> columnMasks(OpBuilder &b, Location loc, Value cols, int64_t vectorWidth,
                               int64_t vectors) {
  SmallVector<Value> masks;
  for (int64_t v = 0; v < vectors; ++v) {
    Value left = arith::SubIOp::create(b, loc, cols, index(b, loc, v * vectorWidth));
    Value lanes = arith::MaxSIOp::create(
        b, loc, index(b, loc, 0), arith::MinSIOp::create(b, loc, left, index(b, loc, vectorWidth)));
    masks.push_back(vector::CreateMaskOp::create(
        b, loc, VectorType::get({vectorWidth}, b.getI1Type()), ValueRange{lanes}));
  }
  return masks;
}

/// An f32 2-D strided buffer; with `unitInner`, one the kernel can
/// vector-load rows from (A is only read one scalar at a time).
bool isKernelBuffer(Value value, bool unitInner) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || type.getRank() != 2 || !type.getElementType().isF32())
    return false;
  if (type.getLayout().isIdentity())
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         (!unitInner || strides.back() == 1);
}

/// Emits `for (i = lo; i < hi; i += step) body(i)`.
void forLoop(OpBuilder &b, Location loc, Value lo, Value hi, Value step,
             function_ref<void(OpBuilder &, Value)> body) {
  scf::ForOp::create(b, loc, lo, hi, step, {},
                     [&](OpBuilder &nb, Location nl, Value i, ValueRange) {
                       body(nb, i);
                       scf::YieldOp::create(nb, nl);
                     });
}

bool isConstantMatrix(Value matrix) {
  if (auto collapse = matrix.getDefiningOp<memref::CollapseShapeOp>())
    matrix = collapse.getSrc();
  auto getGlobal = matrix.getDefiningOp<memref::GetGlobalOp>();
  auto type = dyn_cast<MemRefType>(matrix.getType());
  if (!getGlobal || !type || !type.hasStaticShape() || !type.getLayout().isIdentity())
    return false;
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      getGlobal, getGlobal.getNameAttr());
  return global && global.getConstant() && global.getInitialValue();
}

/// The values of `matrix` when it is a constant global (a weight), row-major.
std::optional<std::vector<float>> constantValues(Value matrix) {
  auto getGlobal = matrix.getDefiningOp<memref::GetGlobalOp>();
  auto type = dyn_cast<MemRefType>(matrix.getType());
  if (!getGlobal || !type || !type.hasStaticShape() || !type.getLayout().isIdentity())
    return std::nullopt;
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      getGlobal, getGlobal.getNameAttr());
  if (!global || !global.getConstant() || !global.getInitialValue())
    return std::nullopt;
  Attribute init = *global.getInitialValue();
  size_t count = type.getNumElements();
  if (auto dense = dyn_cast<DenseElementsAttr>(init)) {
    std::vector<float> values(dense.getValues<float>().begin(), dense.getValues<float>().end());
    if (dense.isSplat())
      values.assign(count, dense.getSplatValue<float>());
    return values.size() == count ? std::optional(values) : std::nullopt;
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(init)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || blob->getData().size() != count * sizeof(float))
      return std::nullopt;
    std::vector<float> values(count);
    std::memcpy(values.data(), blob->getData().data(), count * sizeof(float));
    return values;
  }
  return std::nullopt;
}

} // namespace kiln::matmul_kernel
