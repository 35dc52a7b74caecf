//===- NBitsMatmul.cpp - The kiln-cpu-nbits-matmul pass -------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// kiln.matmul_nbits_kernel on buffers (a small-M product with a
// block-quantized constant weight, MatMulNBits) as one vectorized kernel
// that streams the low-bit weight once:
//
//   C[m, n] = sum_k A[m, k] * (q[n, k] * s[n, k / bs] - z[n, k / bs] * s[n, k / bs])
//
// The weight is repacked at compile time into panels of P = 4 vectors of W
// columns (W f32 lanes of the CPU's vector unit), one depth pair p (k = 2p,
// 2p + 1) after the other:
//
//   4 bits: qpack[panel][p][c] = q[n][2p] | q[n][2p + 1] << 4   (P bytes)
//   8 bits: qpack[panel][k][c] = q[n][k]                        (P bytes)
//   spack[panel][blk][c] = s[n][blk], zpack[panel][blk][c] = -z[n][blk] * s[n][blk]
//
// with n = P panel + c, zeros past N. A k pair of one vector is a load of W
// bytes zero-extended to W i32 lanes (`vpmovzxbd`), its low and high
// nibbles (`and 15`, `shr 4`) converted to f32, dequantized with one FMA
// each (`q * s + (-z s)`) and multiplied into every row of the tile with
// A's element broadcast. Tiles are 4 rows x 2 vectors (each weight vector
// dequantized once for 4 rows), then 2 rows x 4 vectors, and for the last odd
// row 1 row x 4 vectors with the even and odd k in separate accumulators
// (8 independent FMA chains in each). Panels are the tasks of one
// `scf.parallel` on the thread pool; the depth runs block by block (the
// block's scales loaded once), the last block of a K that is not a multiple
// of the block size stopping at K.
//
//===----------------------------------------------------------------------===//

#include "MatmulConstants.h"
#include "MatmulKernel.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Target/CPU/Passes.h"
#include "kiln/Target/Host/ABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

#include <cstring>

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNCPUNBITSMATMULPASS
#include "kiln/Target/CPU/Passes.h.inc"

using namespace matmul_kernel;

namespace {

constexpr int64_t kVectors = 4; // vectors of columns per panel

/// The linalg.fill of a constant that writes `buffer` (a splat constant
/// after bufferization: symmetric zero points), or null.
linalg::FillOp constantFill(Value buffer) {
  for (Operation *user : buffer.getUsers())
    if (auto fill = dyn_cast<linalg::FillOp>(user))
      if (fill.getOutputs()[0] == buffer &&
          fill.getInputs()[0].getDefiningOp<arith::ConstantOp>())
        return fill;
  return {};
}

/// The raw bytes of a constant read by `value`: a constant global (a
/// get_global of identity layout) or a buffer filled with a constant; or
/// nullopt.
std::optional<std::vector<char>> constantBytes(Value value, int64_t elementBytes) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  if (linalg::FillOp fill = constantFill(value)) {
    auto attr = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>().getValue();
    std::vector<char> bytes(type.getNumElements() * elementBytes);
    for (size_t i = 0; i < bytes.size(); i += elementBytes) {
      if (auto f = dyn_cast<FloatAttr>(attr); f && elementBytes == 4) {
        float v = static_cast<float>(f.getValueAsDouble());
        std::memcpy(bytes.data() + i, &v, 4);
      } else if (auto n = dyn_cast<IntegerAttr>(attr); n && elementBytes == 1) {
        bytes[i] = static_cast<char>(n.getValue().getZExtValue());
      } else {
        return std::nullopt;
      }
    }
    return bytes;
  }
  auto getGlobal = value.getDefiningOp<memref::GetGlobalOp>();
  if (!getGlobal || !type.getLayout().isIdentity())
    return std::nullopt;
  auto global =
      SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(getGlobal, getGlobal.getNameAttr());
  if (!global || !global.getConstant() || !global.getInitialValue())
    return std::nullopt;
  size_t size = type.getNumElements() * elementBytes;
  Attribute init = *global.getInitialValue();
  if (auto dense = dyn_cast<DenseElementsAttr>(init)) {
    ArrayRef<char> raw = dense.getRawData();
    if (dense.isSplat() && raw.size() == static_cast<size_t>(elementBytes)) {
      std::vector<char> bytes(size);
      for (size_t i = 0; i < size; i += elementBytes)
        std::memcpy(bytes.data() + i, raw.data(), elementBytes);
      return bytes;
    }
    if (raw.size() == size)
      return std::vector<char>(raw.begin(), raw.end());
    return std::nullopt;
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(init)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (blob && blob->getData().size() == size)
      return std::vector<char>(blob->getData().begin(), blob->getData().end());
  }
  return std::nullopt;
}

/// A new private constant global of `values` (element type `element`) and
/// a get_global of it (1-D) at `b`'s insertion point.
template <typename T>
Value newGlobal(OpBuilder &b, Location loc, ModuleOp module, StringRef base, Type element,
                ArrayRef<T> values) {
  std::string name = base.str();
  while (SymbolTable::lookupSymbolIn(module, name))
    name += "_";
  auto type = MemRefType::get({static_cast<int64_t>(values.size())}, element);
  OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
  auto global = memref::GlobalOp::create(
      top, loc, name, top.getStringAttr("private"), type,
      DenseResourceElementsAttr::get(RankedTensorType::get(type.getShape(), element), name,
                                     HeapAsmResourceBlob::allocateAndCopyInferAlign(values)),
      /*constant=*/true, top.getI64IntegerAttr(64));
  return memref::GetGlobalOp::create(b, loc, type, global.getSymName());
}

struct Emitter {
  OpBuilder &b;
  Location loc;
  int64_t w;     // f32 lanes per vector
  int64_t panel; // columns per panel (kVectors * w)
  int64_t m, n, k, bits, block, blocks, pairs, panels;
  Value a, c, qpack, spack, zpack;
  int64_t v0 = 0, nv = kVectors; // the vectors of the panel the current tile covers

  Value idx(int64_t v) { return index(b, loc, v); }
  VectorType f32x() { return VectorType::get({w}, b.getF32Type()); }

  /// One vector of dequantized weights for the k rows 2p (and 2p + 1 unless
  /// `lone`) of vector v of the panel at `panelBase` (byte offset).
  std::pair<Value, Value> weights(Value panelBase, Value p, int64_t v, Value s, Value nzs,
                                  bool lone) {
    auto bytes = [&](Value at) {
      Value raw = vector::LoadOp::create(b, loc, VectorType::get({w}, b.getI8Type()), qpack,
                                         ValueRange{at});
      return arith::ExtUIOp::create(b, loc, VectorType::get({w}, b.getI32Type()), raw)
          .getResult();
    };
    auto dequant = [&](Value ints) {
      Value f = arith::SIToFPOp::create(b, loc, f32x(), ints);
      return vector::FMAOp::create(b, loc, f, s, nzs).getResult();
    };
    Value at = add(b, loc, panelBase, idx(v * w));
    if (bits == 4) {
      Value x = bytes(add(b, loc, at, mul(b, loc, p, idx(panel))));
      Value low = arith::AndIOp::create(
          b, loc, x, arith::ConstantOp::create(b, loc, DenseElementsAttr::get(
                                                           cast<ShapedType>(x.getType()),
                                                           b.getI32IntegerAttr(15).getValue())));
      Value even = dequant(low);
      if (lone)
        return {even, Value()};
      Value high = arith::ShRUIOp::create(
          b, loc, x, arith::ConstantOp::create(b, loc, DenseElementsAttr::get(
                                                           cast<ShapedType>(x.getType()),
                                                           b.getI32IntegerAttr(4).getValue())));
      return {even, dequant(high)};
    }
    Value row = add(b, loc, at, mul(b, loc, p, idx(2 * panel)));
    Value even = dequant(bytes(row));
    if (lone)
      return {even, Value()};
    return {even, dequant(bytes(add(b, loc, row, idx(panel))))};
  }

  /// acc after the k rows of pair p (in block `blk`): `rows` rows from row0.
  SmallVector<Value> step(Value panelIndex, Value row0, int64_t rows, bool split, Value p,
                          ArrayRef<Value> s, ArrayRef<Value> nzs, ValueRange acc, bool lone) {
    Value panelBase = mul(b, loc, panelIndex, idx(bits == 4 ? pairs * panel : 2 * pairs * panel));
    Value k0 = mul(b, loc, p, idx(2));
    auto broadcast = [&](int64_t r, Value kk) {
      Value x = memref::LoadOp::create(b, loc, a, ValueRange{add(b, loc, row0, idx(r)), kk});
      return vector::BroadcastOp::create(b, loc, f32x(), x).getResult();
    };
    int64_t sets = split ? 2 : 1;
    SmallVector<Value> next(acc.begin(), acc.end());
    auto multiply = [&](int64_t r, int64_t v, Value evenA, Value oddA, Value even, Value odd) {
      int64_t at = (r * nv + v - v0) * sets;
      next[at] = vector::FMAOp::create(b, loc, evenA, even, next[at]);
      if (!lone)
        next[at + sets - 1] = vector::FMAOp::create(b, loc, oddA, odd, next[at + sets - 1]);
    };
    if (rows > 2) {
      // Tall tiles (4 rows x 2 vectors): the few weight vectors first, then
      // each row's pair of A, so that A's broadcasts are not all live.
      SmallVector<std::pair<Value, Value>> dequantized;
      for (int64_t v = v0; v < v0 + nv; ++v)
        dequantized.push_back(weights(panelBase, p, v, s[v - v0], nzs[v - v0], lone));
      for (int64_t r = 0; r < rows; ++r) {
        Value evenA = broadcast(r, k0);
        Value oddA = lone ? Value() : broadcast(r, add(b, loc, k0, idx(1)));
        for (int64_t v = v0; v < v0 + nv; ++v)
          multiply(r, v, evenA, oddA, dequantized[v - v0].first, dequantized[v - v0].second);
      }
      return next;
    }
    SmallVector<Value> evenA, oddA;
    for (int64_t r = 0; r < rows; ++r) {
      evenA.push_back(broadcast(r, k0));
      oddA.push_back(lone ? Value() : broadcast(r, add(b, loc, k0, idx(1))));
    }
    for (int64_t v = v0; v < v0 + nv; ++v) {
      auto [even, odd] = weights(panelBase, p, v, s[v - v0], nzs[v - v0], lone);
      for (int64_t r = 0; r < rows; ++r)
        multiply(r, v, evenA[r], oddA[r], even, odd);
    }
    return next;
  }

  /// The scales and -zero * scale vectors of block `blk` of a panel.
  void blockParameters(Value panelIndex, Value blk, SmallVector<Value> &s,
                       SmallVector<Value> &nzs) {
    Value base = mul(b, loc, add(b, loc, mul(b, loc, panelIndex, idx(blocks)), blk), idx(panel));
    s.clear();
    nzs.clear();
    for (int64_t v = v0; v < v0 + nv; ++v) {
      Value at = add(b, loc, base, idx(v * w));
      s.push_back(vector::LoadOp::create(b, loc, f32x(), spack, ValueRange{at}));
      nzs.push_back(vector::LoadOp::create(b, loc, f32x(), zpack, ValueRange{at}));
    }
  }

  /// Pairs [first, first + count) of block `blk`, accumulating into acc.
  SmallVector<Value> pairLoop(Value panelIndex, Value row0, int64_t rows, bool split, Value blk,
                              Value first, int64_t count, ValueRange acc) {
    SmallVector<Value> s, nzs;
    blockParameters(panelIndex, blk, s, nzs);
    auto loop = scf::ForOp::create(
        b, loc, first, add(b, loc, first, idx(count)), idx(1), acc,
        [&](OpBuilder &, Location, Value p, ValueRange inner) {
          scf::YieldOp::create(b, loc, step(panelIndex, row0, rows, split, p, s, nzs, inner,
                                            /*lone=*/false));
        });
    return SmallVector<Value>(loop.getResults());
  }

  /// One register tile: `rows` rows from row0 of `vectors` vectors of the
  /// panel from `first`.
  void emitTile(Value panelIndex, Value row0, int64_t rows, bool split, int64_t first,
                int64_t vectors, ArrayRef<Value> masks) {
    v0 = first;
    nv = vectors;
    int64_t sets = split ? 2 : 1;
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(f32x()));
    SmallVector<Value> acc(rows * nv * sets, zero);
    int64_t full = k / block, rest = k % block;
    int64_t perBlock = block / 2;
    if (full > 0) {
      auto loop = scf::ForOp::create(
          b, loc, idx(0), idx(full), idx(1), acc,
          [&](OpBuilder &, Location, Value blk, ValueRange inner) {
            scf::YieldOp::create(b, loc,
                                 pairLoop(panelIndex, row0, rows, split, blk,
                                          mul(b, loc, blk, idx(perBlock)), perBlock, inner));
          });
      acc.assign(loop.getResults().begin(), loop.getResults().end());
    }
    if (rest > 0) {
      Value blk = idx(full);
      if (rest / 2 > 0)
        acc = pairLoop(panelIndex, row0, rows, split, blk, idx(full * perBlock), rest / 2, acc);
      if (rest % 2) {
        SmallVector<Value> s, nzs;
        blockParameters(panelIndex, blk, s, nzs);
        acc = step(panelIndex, row0, rows, split, idx(full * perBlock + rest / 2), s, nzs, acc,
                   /*lone=*/true);
      }
    }
    Value col0 = mul(b, loc, panelIndex, idx(panel));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t v = v0; v < v0 + nv; ++v) {
        int64_t at = (r * nv + v - v0) * sets;
        Value sum = split ? arith::AddFOp::create(b, loc, acc[at], acc[at + 1]).getResult()
                          : acc[at];
        SmallVector<Value, 2> where = {add(b, loc, row0, idx(r)), add(b, loc, col0, idx(v * w))};
        if (masks.empty())
          vector::StoreOp::create(b, loc, sum, c, where);
        else
          vector::MaskedStoreOp::create(b, loc, c, where, masks[v], sum);
      }
  }

  void emit() {
    auto loop = scf::ParallelOp::create(
        b, loc, ValueRange{idx(0)}, ValueRange{idx(panels)}, ValueRange{idx(1)},
        [&](OpBuilder &, Location, ValueRange ivs) {
          Value panelIndex = ivs[0];
          SmallVector<Value> masks;
          if (n % panel) {
            Value valid = arith::SubIOp::create(b, loc, idx(n), mul(b, loc, panelIndex, idx(panel)));
            masks = columnMasks(b, loc, valid, w, kVectors);
          }
          // 4 rows x 2 vectors (twice per panel), then 2 x 4, then 1 x 4.
          forLoop(b, loc, idx(0), idx(m / 4 * 4), idx(4), [&](OpBuilder &, Value row) {
            emitTile(panelIndex, row, 4, /*split=*/false, 0, kVectors / 2, masks);
            emitTile(panelIndex, row, 4, /*split=*/false, kVectors / 2, kVectors / 2, masks);
          });
          if (m % 4 >= 2)
            emitTile(panelIndex, idx(m / 4 * 4), 2, /*split=*/false, 0, kVectors, masks);
          if (m % 2)
            emitTile(panelIndex, idx(m - 1), 1, /*split=*/true, 0, kVectors, masks);
        });
    loop->setAttr(kHeavyLoopAttr, b.getUnitAttr());
  }
};

/// The packed weight, scales and -zero * scale of `op` as new globals.
LogicalResult packWeights(OpBuilder &b, MatmulNBitsKernelOp op, Emitter &e) {
  std::optional<std::vector<char>> q = constantBytes(op.getQ(), 1),
                                   s = constantBytes(op.getScales(), 4),
                                   z = constantBytes(op.getZeroPoints(), 4);
  if (!q || !s || !z)
    return op.emitOpError("needs constant q, scales and zero_points (weights)");
  int64_t kp = e.blocks * e.block;
  std::vector<int8_t> packed(e.panels * 2 * e.pairs * e.panel / (e.bits == 4 ? 2 : 1), 0);
  std::vector<float> spack(e.panels * e.blocks * e.panel, 0.0f), zpack(spack.size(), 0.0f);
  for (int64_t col = 0; col < e.n; ++col) {
    int64_t pn = col / e.panel, c = col % e.panel;
    const uint8_t *row = reinterpret_cast<const uint8_t *>(q->data()) + col * kp;
    for (int64_t kk = 0; kk < kp; ++kk) {
      uint8_t value = row[kk];
      if (e.bits == 4)
        packed[(pn * e.pairs + kk / 2) * e.panel + c] |=
            static_cast<int8_t>((value & 15) << (4 * (kk % 2)));
      else
        packed[(pn * kp + kk) * e.panel + c] = static_cast<int8_t>(value);
    }
    for (int64_t blk = 0; blk < e.blocks; ++blk) {
      float scale, zero;
      std::memcpy(&scale, s->data() + 4 * (col * e.blocks + blk), 4);
      std::memcpy(&zero, z->data() + 4 * (col * e.blocks + blk), 4);
      spack[(pn * e.blocks + blk) * e.panel + c] = scale;
      zpack[(pn * e.blocks + blk) * e.panel + c] = -(zero * scale);
    }
  }
  auto module = op->getParentOfType<ModuleOp>();
  std::string base =
      op.getQ().getDefiningOp<memref::GetGlobalOp>().getName().str() + "_nbits";
  e.qpack = newGlobal<int8_t>(b, op.getLoc(), module, base, b.getI8Type(), packed);
  e.spack = newGlobal<float>(b, op.getLoc(), module, base + "_scales", b.getF32Type(), spack);
  e.zpack = newGlobal<float>(b, op.getLoc(), module, base + "_zero", b.getF32Type(), zpack);
  return success();
}

/// A buffer that only a constant fill writes and nothing reads any more
/// (the packed parameters replace it): the fill, its deallocation and, when
/// it is an allocation, the buffer go.
void eraseFilledBuffer(Value buffer) {
  for (Operation *user : buffer.getUsers())
    if (!isa<linalg::FillOp, memref::DeallocOp>(user))
      return;
  for (Operation *user : llvm::make_early_inc_range(buffer.getUsers()))
    user->erase();
  if (auto alloc = buffer.getDefiningOp<memref::AllocOp>())
    alloc.erase();
}

struct KilnCPUNBitsMatmulPass final
    : impl::KilnCPUNBitsMatmulPassBase<KilnCPUNBitsMatmulPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<MatmulNBitsKernelOp> ops;
    getOperation()->walk([&](MatmulNBitsKernelOp op) { ops.push_back(op); });
    for (MatmulNBitsKernelOp op : ops) {
      auto aType = dyn_cast<MemRefType>(op.getA().getType());
      auto cType = dyn_cast<MemRefType>(op.getInit().getType());
      if (!aType || !cType || !aType.hasStaticShape() || !isKernelBuffer(op.getInit(), true)) {
        op.emitOpError("needs static buffers with a unit inner stride for the CPU kernel");
        return signalPassFailure();
      }
      OpBuilder b(op);
      Emitter e{b, op.getLoc(), vectorWidth, kVectors * vectorWidth};
      e.m = aType.getDimSize(0);
      e.k = aType.getDimSize(1);
      e.n = cType.getDimSize(1);
      e.bits = op.getBits();
      e.block = op.getBlockSize();
      e.blocks = cast<MemRefType>(op.getScales().getType()).getDimSize(1);
      e.pairs = e.blocks * e.block / 2;
      e.panels = llvm::divideCeil(e.n, e.panel);
      e.a = op.getA();
      e.c = op.getInit();
      if (failed(packWeights(b, op, e)))
        return signalPassFailure();
      if (e.m > 0 && e.n > 0)
        e.emit();
      // Once each: scales and zero points may be one value.
      llvm::SetVector<Value> weights;
      weights.insert(op.getQ());
      weights.insert(op.getScales());
      weights.insert(op.getZeroPoints());
      op.erase();
      for (Value weight : weights) {
        if (auto global = weight.getDefiningOp<memref::GetGlobalOp>())
          eraseIfUnread(global);
        else
          eraseFilledBuffer(weight);
      }
    }
  }
};

} // namespace

} // namespace kiln
