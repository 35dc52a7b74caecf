//===- IntegerMatmul.cpp - The kiln-cpu-integer-matmul pass ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Integer matmuls (an i16 kiln.matmul's lowering: linalg.matmul of i16
// operands into i32) as one vectorized kernel with pairs of k multiplied
// and added by `vpmaddwd`:
//
//   acc[j] += A[m, 2p] * B[2p][j] + A[m, 2p + 1] * B[2p + 1][j]   (i32)
//
// B is packed into panels of 16 columns, pair p of k rows
// interleaved per column (`[panel][p][column][2]`, zero past K and N), so
// one 32-byte load is 8 columns x 2 k (a constant B, the weights, at
// compile time into a new global; else at run time); A's pair (A[m, 2p], A[m, 2p + 1]) is
// one i32 broadcast to every lane. A register tile is 6 rows x 2 vectors of
// 8 i32 accumulators, carried over the whole depth; the matmul's marked
// epilogue (the requantization: scale, round, zero point, saturation) is
// applied to them before the store, so C is never written.
//
// `vpmaddwd` (llvm.x86.avx2.pmadd.wd) with AVX2; elsewhere the same pair sum
// in portable vector IR. The products of 9-bit values and their pair sums
// are exact in i32; the sums wrap like ONNX's int32 accumulation.
//
//===----------------------------------------------------------------------===//

#include "IntegerMatmul.h"
#include "MatmulConstants.h"
#include "MatmulEpilogue.h"
#include "MatmulKernel.h"

#include "kiln/Dialect/Kiln/IR/ByteOperands.h"
#include "kiln/Target/CPU/Passes.h"
#include "kiln/Target/Host/ABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"

#include <cstring>

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNCPUINTEGERMATMULPASS
#include "kiln/Target/CPU/Passes.h.inc"

using namespace matmul_kernel;
using namespace integer_matmul;

namespace integer_matmul {
std::optional<std::vector<int16_t>> constantValues16(Value matrix) {
  auto getGlobal = matrix.getDefiningOp<memref::GetGlobalOp>();
  auto type = dyn_cast<MemRefType>(matrix.getType());
  if (!getGlobal || !type || !type.getLayout().isIdentity())
    return std::nullopt;
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      getGlobal, getGlobal.getNameAttr());
  if (!global || !global.getConstant() || !global.getInitialValue())
    return std::nullopt;
  size_t count = type.getNumElements();
  Attribute init = *global.getInitialValue();
  if (auto dense = dyn_cast<DenseElementsAttr>(init)) {
    if (dense.isSplat())
      return std::vector<int16_t>(count, dense.getSplatValue<int16_t>());
    std::vector<int16_t> values(dense.getValues<int16_t>().begin(),
                                dense.getValues<int16_t>().end());
    return values.size() == count ? std::optional(values) : std::nullopt;
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(init)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || blob->getData().size() != count * sizeof(int16_t))
      return std::nullopt;
    std::vector<int16_t> values(count);
    std::memcpy(values.data(), blob->getData().data(), count * sizeof(int16_t));
    return values;
  }
  return std::nullopt;
}

Value packedGlobal(OpBuilder &b, Location loc, ModuleOp module, StringRef base, Type element,
                   int64_t count, ArrayRef<char> bytes) {
  std::string name = base.str();
  while (SymbolTable::lookupSymbolIn(module, name))
    name += "_";
  auto type = MemRefType::get({count}, element);
  OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
  auto global = memref::GlobalOp::create(
      top, loc, name, top.getStringAttr("private"), type,
      DenseResourceElementsAttr::get(
          RankedTensorType::get(type.getShape(), type.getElementType()), name,
          HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, 64)),
      /*constant=*/true, top.getI64IntegerAttr(64));
  return memref::GetGlobalOp::create(b, loc, type, global.getSymName());
}

} // namespace integer_matmul

namespace {

constexpr int64_t kLanes = 8;      // i32 accumulators per vector (256 bits)
constexpr int64_t kVectors = 2;    // vectors per tile row
constexpr int64_t kPanel = kLanes * kVectors; // columns per B panel
constexpr int64_t kTileRows = 6;
constexpr int64_t kMinTasks = 4;   // row groups split M below this many panels

/// A static 2-D buffer of `element` with a unit inner stride.
bool isMatrix(Value v, Type element) {
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!type || type.getRank() != 2 || type.getElementType() != element || !type.hasStaticShape())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) && strides.back() == 1;
}

bool isIntegerMatmul(linalg::MatmulOp op) {
  if (!op.hasPureBufferSemantics() || op.hasUserDefinedMaps())
    return false;
  OpBuilder b(op.getContext());
  Type i16 = b.getIntegerType(16), i32 = b.getI32Type();
  return isMatrix(op.getDpsInputs()[0], i16) && isMatrix(op.getDpsInputs()[1], i16) &&
         isMatrix(op.getDpsInits()[0], i32) &&
         cast<MemRefType>(op.getDpsInputs()[0].getType()).getDimSize(1) > 0;
}

/// A constant B packed at compile time into the layout emitPacking writes
/// (a new private global), or null when B is not a constant global.
Value packConstantB(OpBuilder &b, Location loc, Value matrix, int64_t k, int64_t n,
                    int64_t pairs, int64_t panels) {
  std::optional<std::vector<int16_t>> values = constantValues16(matrix);
  if (!values)
    return {};
  std::vector<int16_t> packed(panels * pairs * 2 * kPanel, 0);
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t j = 0; j < n; ++j)
      packed[((j / kPanel) * pairs + kk / 2) * 2 * kPanel + 2 * (j % kPanel) + kk % 2] =
          (*values)[kk * n + j];
  auto module = matrix.getDefiningOp()->getParentOfType<ModuleOp>();
  std::string name =
      cast<memref::GetGlobalOp>(matrix.getDefiningOp()).getName().str() + "_pairs";
  return packedGlobal(b, loc, module, name, b.getIntegerType(16), packed.size(),
                      {reinterpret_cast<const char *>(packed.data()),
                       packed.size() * sizeof(int16_t)});
}

struct Emitter {
  OpBuilder &b;
  Location loc;
  bool avx2;
  Value a, bMatrix, c, packed;
  int64_t m, n, k, pairs, panels;
  linalg::GenericOp epilogue;
  bool fresh;

  Value idx(int64_t v) { return index(b, loc, v); }
  VectorType i16x(int64_t lanes) { return VectorType::get({lanes}, b.getIntegerType(16)); }
  VectorType i32x(int64_t lanes) { return VectorType::get({lanes}, b.getI32Type()); }

  /// acc + the pair sums of x * y (16 x i16 each, 8 x i32).
  Value pairDot(Value acc, Value x, Value y) {
    Value sum;
    if (avx2) {
      sum = LLVM::CallIntrinsicOp::create(b, loc, i32x(kLanes),
                                          b.getStringAttr("llvm.x86.avx2.pmadd.wd"),
                                          ValueRange{x, y})
                .getResult(0);
    } else {
      auto half = [&](Value v, int64_t first) {
        SmallVector<int64_t> lanes;
        for (int64_t i = 0; i < kLanes; ++i)
          lanes.push_back(2 * i + first);
        Value picked = vector::ShuffleOp::create(b, loc, v, v, lanes);
        return arith::ExtSIOp::create(b, loc, i32x(kLanes), picked).getResult();
      };
      Value even = arith::MulIOp::create(b, loc, half(x, 0), half(y, 0));
      Value odd = arith::MulIOp::create(b, loc, half(x, 1), half(y, 1));
      sum = arith::AddIOp::create(b, loc, even, odd);
    }
    return arith::AddIOp::create(b, loc, acc, sum);
  }

  /// packed[panel][p][c][h] = B[2p + h][16 panel + c], zero outside B.
  void emitPacking() {
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(i16x(kPanel)));
    auto loop = scf::ParallelOp::create(
        b, loc, ValueRange{idx(0)}, ValueRange{idx(panels)}, ValueRange{idx(1)},
        [&](OpBuilder &, Location, ValueRange ivs) {
          Value panel = ivs[0];
          Value col = mul(b, loc, panel, idx(kPanel));
          Value valid = arith::MinSIOp::create(
              b, loc, arith::SubIOp::create(b, loc, idx(n), col), idx(kPanel));
          Value mask = vector::CreateMaskOp::create(
              b, loc, VectorType::get({kPanel}, b.getI1Type()), ValueRange{valid});
          Value base = mul(b, loc, panel, idx(pairs * 2 * kPanel));
          auto row = [&](Value kk) {
            return vector::MaskedLoadOp::create(b, loc, i16x(kPanel), bMatrix,
                                                ValueRange{kk, col}, mask, zero)
                .getResult();
          };
          auto store = [&](Value p, Value first, Value second) {
            Value pair = vector::InterleaveOp::create(b, loc, first, second);
            Value at = add(b, loc, base, mul(b, loc, p, idx(2 * kPanel)));
            vector::StoreOp::create(b, loc, pair, packed, ValueRange{at});
          };
          forLoop(b, loc, idx(0), idx(k / 2), idx(1), [&](OpBuilder &, Value p) {
            Value k0 = mul(b, loc, p, idx(2));
            store(p, row(k0), row(add(b, loc, k0, idx(1))));
          });
          if (k % 2)
            store(idx(k / 2), row(idx(k - 1)), zero);
        });
    loop->setAttr(kHeavyLoopAttr, b.getUnitAttr());
  }

  /// A's pair at (row, p) broadcast: 16 x i16, (a0, a1) in every i32 lane.
  Value broadcastPair(Value row, Value p, bool last) {
    Value pair;
    if (!last) {
      pair = vector::LoadOp::create(b, loc, i16x(2), a,
                                    ValueRange{row, mul(b, loc, p, idx(2))});
    } else { // odd depth: (A[row, K - 1], 0)
      Value x = memref::LoadOp::create(b, loc, a, ValueRange{row, idx(k - 1)});
      Value zero = arith::ConstantOp::create(b, loc, b.getI16IntegerAttr(0));
      pair = vector::FromElementsOp::create(b, loc, i16x(2), ValueRange{x, zero});
    }
    Value word = vector::BitCastOp::create(b, loc, i32x(1), pair);
    Value splat = vector::BroadcastOp::create(b, loc, i32x(kLanes), word);
    return vector::BitCastOp::create(b, loc, i16x(2 * kLanes), splat);
  }

  /// rows x 2 vectors of C at (row0, panel).
  void emitTile(Value row0, int64_t rows, Value panel, ArrayRef<Value> masks) {
    Value col = mul(b, loc, panel, idx(kPanel));
    SmallVector<Value> rowIndex, colIndex;
    for (int64_t r = 0; r < rows; ++r)
      rowIndex.push_back(add(b, loc, row0, idx(r)));
    for (int64_t v = 0; v < kVectors; ++v)
      colIndex.push_back(add(b, loc, col, idx(v * kLanes)));
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(i32x(kLanes)));
    SmallVector<Value> init;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t v = 0; v < kVectors; ++v) {
        if (fresh)
          init.push_back(zero);
        else if (masks.empty())
          init.push_back(vector::LoadOp::create(b, loc, i32x(kLanes), c,
                                                ValueRange{rowIndex[r], colIndex[v]}));
        else
          init.push_back(vector::MaskedLoadOp::create(b, loc, i32x(kLanes), c,
                                                      ValueRange{rowIndex[r], colIndex[v]},
                                                      masks[v], zero));
      }
    Value base = mul(b, loc, panel, idx(pairs * 2 * kPanel));
    auto step = [&](Value p, ValueRange acc, bool last) {
      Value at = add(b, loc, base, mul(b, loc, p, idx(2 * kPanel)));
      SmallVector<Value> bv;
      for (int64_t v = 0; v < kVectors; ++v)
        bv.push_back(vector::LoadOp::create(b, loc, i16x(2 * kLanes), packed,
                                            ValueRange{add(b, loc, at, idx(v * 2 * kLanes))}));
      SmallVector<Value> next;
      for (int64_t r = 0; r < rows; ++r) {
        Value pair = broadcastPair(rowIndex[r], p, last);
        for (int64_t v = 0; v < kVectors; ++v)
          next.push_back(pairDot(acc[r * kVectors + v], pair, bv[v]));
      }
      return next;
    };
    auto loop = scf::ForOp::create(
        b, loc, idx(0), idx(k / 2), idx(1), init,
        [&](OpBuilder &, Location, Value p, ValueRange acc) {
          scf::YieldOp::create(b, loc, step(p, acc, false));
        });
    SmallVector<Value> acc(loop.getResults());
    if (k % 2)
      acc = step(idx(k / 2), acc, true);
    if (epilogue) {
      applyEpilogue(b, loc, epilogue, acc, rowIndex, colIndex, masks, kLanes);
      return;
    }
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t v = 0; v < kVectors; ++v) {
        ValueRange at{rowIndex[r], colIndex[v]};
        if (masks.empty())
          vector::StoreOp::create(b, loc, acc[r * kVectors + v], c, at);
        else
          vector::MaskedStoreOp::create(b, loc, c, at, masks[v], acc[r * kVectors + v]);
      }
  }

  /// Rows [begin, end) of one panel: whole tiles, then one-row tiles.
  void emitRows(Value panel, Value begin, Value end) {
    SmallVector<Value> masks;
    if (n % kPanel) {
      Value valid = arith::SubIOp::create(b, loc, idx(n), mul(b, loc, panel, idx(kPanel)));
      masks = columnMasks(b, loc, valid, kLanes, kVectors);
    }
    Value rows = arith::SubIOp::create(b, loc, end, begin);
    Value whole = mul(b, loc, arith::DivUIOp::create(b, loc, rows, idx(kTileRows)),
                      idx(kTileRows));
    Value wholeEnd = add(b, loc, begin, whole);
    forLoop(b, loc, begin, wholeEnd, idx(kTileRows),
            [&](OpBuilder &, Value row) { emitTile(row, kTileRows, panel, masks); });
    forLoop(b, loc, wholeEnd, end, idx(1),
            [&](OpBuilder &, Value row) { emitTile(row, 1, panel, masks); });
  }

  /// (panel, row group) tasks on the pool.
  void emitCompute() {
    int64_t tiles = llvm::divideCeil(m, kTileRows);
    int64_t groups = panels >= kMinTasks ? 1 : std::min(tiles, kMinTasks);
    int64_t groupRows = llvm::divideCeil(tiles, groups) * kTileRows;
    groups = llvm::divideCeil(m, groupRows);
    auto loop = scf::ParallelOp::create(
        b, loc, ValueRange{idx(0)}, ValueRange{idx(panels * groups)}, ValueRange{idx(1)},
        [&](OpBuilder &, Location, ValueRange ivs) {
          Value panel = arith::DivUIOp::create(b, loc, ivs[0], idx(groups));
          Value group = arith::RemUIOp::create(b, loc, ivs[0], idx(groups));
          Value begin = mul(b, loc, group, idx(groupRows));
          Value end = arith::MinSIOp::create(b, loc, add(b, loc, begin, idx(groupRows)), idx(m));
          emitRows(panel, begin, end);
        });
    loop->setAttr(kHeavyLoopAttr, b.getUnitAttr());
  }
};

/// The byte window `attr` (kiln/Dialect/Kiln/IR/ByteOperands.h) on `op`.
std::optional<int64_t> byteWindow(linalg::MatmulOp op, StringRef attr) {
  if (auto value = op->getAttrOfType<IntegerAttr>(attr))
    return value.getInt();
  return std::nullopt;
}

/// The VNNI kernel for `op` when both operands are bytes shifted (not both
/// per line); false, emitting nothing, otherwise.
bool emitVNNI(OpBuilder &b, linalg::MatmulOp op, linalg::GenericOp epilogue, bool fresh,
              VNNIWidth width) {
  std::optional<ByteOperand> lhs =
      byteOperand(op.getDpsInputs()[0], /*isLhs=*/true, byteWindow(op, kLhsBytesAttr));
  std::optional<ByteOperand> rhs =
      byteOperand(op.getDpsInputs()[1], /*isLhs=*/false, byteWindow(op, kRhsBytesAttr));
  if (!lhs || !rhs || (lhs->perLine() && rhs->perLine()))
    return false;
  emitVNNIMatmul(b, op, epilogue, fresh, *lhs, *rhs, width);
  return true;
}

/// The vpmaddwd (or portable) kernel for `op`.
void emitPairs(OpBuilder &b, linalg::MatmulOp op, linalg::GenericOp epilogue, bool fresh,
               bool avx2) {
  Location loc = op.getLoc();
  auto aType = cast<MemRefType>(op.getDpsInputs()[0].getType());
  auto bType = cast<MemRefType>(op.getDpsInputs()[1].getType());
  Emitter e{b, loc, avx2};
  e.a = op.getDpsInputs()[0];
  e.bMatrix = op.getDpsInputs()[1];
  e.c = op.getDpsInits()[0];
  e.m = aType.getDimSize(0);
  e.k = aType.getDimSize(1);
  e.n = bType.getDimSize(1);
  e.pairs = llvm::divideCeil(e.k, 2);
  e.panels = llvm::divideCeil(e.n, kPanel);
  e.epilogue = epilogue;
  e.fresh = fresh;
  e.packed = packConstantB(b, loc, e.bMatrix, e.k, e.n, e.pairs, e.panels);
  if (e.packed) {
    e.emitCompute();
    return;
  }
  auto type = MemRefType::get({e.panels * e.pairs * 2 * kPanel}, b.getIntegerType(16));
  e.packed = memref::AllocOp::create(b, loc, type, b.getI64IntegerAttr(64));
  e.emitPacking();
  e.emitCompute();
  memref::DeallocOp::create(b, loc, e.packed);
}

/// An empty C (M or N zero): nothing to compute.
bool isEmptyProduct(linalg::MatmulOp op) {
  return cast<MemRefType>(op.getDpsInits()[0].getType()).getNumElements() == 0;
}

struct KilnCPUIntegerMatmulPass final
    : impl::KilnCPUIntegerMatmulPassBase<KilnCPUIntegerMatmulPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<linalg::MatmulOp> matmuls;
    getOperation()->walk([&](linalg::MatmulOp op) {
      if (isIntegerMatmul(op))
        matmuls.push_back(op);
    });
    for (linalg::MatmulOp op : matmuls) {
      bool fresh = dropZeroFill(op);
      linalg::GenericOp epilogue = takeEpilogue(op);
      OpBuilder b(op);
      bool done = isEmptyProduct(op) ||
                  (vnni && emitVNNI(b, op, epilogue, fresh, VNNIWidth::zmm)) ||
                  (avxvnni && emitVNNI(b, op, epilogue, fresh, VNNIWidth::ymm));
      if (!done)
        emitPairs(b, op, epilogue, fresh, avx2);
      SmallVector<Value> operands(op.getDpsInputs());
      if (epilogue)
        epilogue.erase();
      op.erase();
      for (Value operand : operands)
        if (auto weights = operand.getDefiningOp<memref::GetGlobalOp>())
          eraseIfUnread(weights);
    }
  }
};

} // namespace

} // namespace kiln
