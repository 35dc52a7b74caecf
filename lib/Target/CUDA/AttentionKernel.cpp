//===- AttentionKernel.cpp - The kiln-cuda-attention pass (flash attention) ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// One kernel per kiln.attention_kernel, in the structure of FlashAttention-2,
// for sm_80 and later (warp-level mma.sync, no Hopper-only instruction):
//
// - a block of 4 warps (128 threads) per (batch * head, block of 64 query
//   rows), grid (ceil(Sq / 64), B * H); warp w owns rows 16w..16w+15;
// - each lane loads its Q fragments (m16n8k16 A layout) once, straight from
//   global memory, rounded to the compute type (f16 or bf16);
// - key blocks of 64: the block's K and V rows are loaded 4 elements a
//   thread (16 bytes for f32) and stored rounded into shared memory, rows
//   padded by 8 elements (the fragment reads below hit 32 distinct banks);
//   rows past Sk read the last key (finite values whose scores are -inf);
// - S = Q K^T: 8 key tiles of n8, D/16 mma.sync each, B fragments (two
//   consecutive elements of a K row) read as 32-bit words;
// - S * scale + mask (in log2 units), -inf past Sk and above the diagonal;
//   the online softmax per row (row max over the quad by two xor shuffles,
//   the running sums kept per lane and combined at the end);
// - P rounded in registers is the A operand of O += P V directly: the
//   accumulators of key tiles 2j and 2j+1 are the A fragment of k step j;
//   V's B fragments are two elements of consecutive rows;
// - causal: key blocks above the block's last query are skipped;
// - O / l stored two elements (8 bytes for f32) at a time, rows past Sq not.
//
// Single-buffered shared memory; ldmatrix and cp.async double buffering are
// not used yet.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

namespace kiln {
#define GEN_PASS_DEF_KILNCUDAATTENTIONPASS
#include "kiln/Target/CUDA/Passes.h.inc"

namespace {

using namespace mlir;

constexpr int64_t kRows = 64;    // query rows per block (4 warps x 16)
constexpr int64_t kKeys = 64;    // keys per step
constexpr int64_t kThreads = 128;
constexpr int64_t kPad = 8;      // elements of padding per shared-memory row

/// Emits the kernel of one bufferized attention_kernel in its place.
class AttentionEmitter {
public:
  AttentionEmitter(OpBuilder &b, AttentionKernelOp op, Type compute)
      : b(b), loc(op.getLoc()), op(op), compute(compute), f32(b.getF32Type()) {
    auto q = cast<MemRefType>(op.getQuery().getType());
    batch = q.getDimSize(0);
    heads = q.getDimSize(1);
    sq = q.getDimSize(2);
    d = q.getDimSize(3);
    sk = cast<MemRefType>(op.getKey().getType()).getDimSize(2);
  }
  void emit();

private:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f32c(double v) {
    return arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32), APFloat(float(v)));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value addf(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value mulf(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value maxf(Value x, Value y) { return arith::MaxNumFOp::create(b, loc, x, y); }
  Value exp2(Value x) { return math::Exp2Op::create(b, loc, x); }
  /// x combined with the 3 other lanes of its quad.
  Value quad(Value x, bool max) {
    for (int32_t offset : {1, 2}) {
      Value other = gpu::ShuffleOp::create(b, loc, x, offset, 32, gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      x = max ? maxf(x, other) : addf(x, other);
    }
    return x;
  }
  /// `v` (a vector of f32 or of the compute type) in the compute type.
  Value narrow(Value v) {
    auto type = cast<VectorType>(v.getType());
    if (type.getElementType() == compute)
      return v;
    return arith::TruncFOp::create(b, loc, VectorType::get(type.getShape(), compute), v);
  }
  /// A vector<2 x compute> as an mma.sync operand register: f16 pairs stay
  /// vectors, bf16 pairs travel as i32 (what nvvm.mma.sync expects).
  Value reg(Value pair) {
    if (compute.isF16())
      return pair;
    return LLVM::BitcastOp::create(b, loc, b.getI32Type(), pair);
  }
  Value pairOf(Value x, Value y) {
    Value v = vector::FromElementsOp::create(b, loc, VectorType::get({2}, f32),
                                             ValueRange{x, y});
    return reg(arith::TruncFOp::create(b, loc, VectorType::get({2}, compute), v));
  }
  /// d += a * b on one m16n8k16 tile: 4 A registers, 2 B, 4 f32.
  void mma(ArrayRef<Value> a, ArrayRef<Value> bReg, MutableArrayRef<Value> acc);
  /// Two consecutive elements of a global operand, as an mma register.
  Value globalPair(Value memref, Value row, Value col) {
    auto type = cast<MemRefType>(memref.getType());
    Type element = type.getElementType();
    auto vec = VectorType::get({2}, element);
    int64_t bytes = 2 * element.getIntOrFloatBitWidth() / 8;
    Value v = vector::LoadOp::create(b, loc, vec, memref, ValueRange{bIdx, hIdx, row, col},
                                     false, llvm::MaybeAlign(bytes));
    return reg(narrow(v));
  }
  Value smemPair(Value tile, Value row, Value col) {
    auto vec = VectorType::get({2}, compute);
    return reg(vector::LoadOp::create(b, loc, vec, tile, ValueRange{row, col}, false,
                                      llvm::MaybeAlign(4)));
  }
  /// The block's K or V rows (keys kb*64..) into `tile`, rounded.
  void loadTile(Value source, Value tile, Value keyBase);
  Value maskValue(Value key, Value row);

  // The steps of emit(), in order.
  /// One block per 64 query rows and (batch, head), K and V tiles in
  /// dynamic shared memory.
  mlir::gpu::LaunchOp launchKernel();
  /// tid, the (batch, head) of the block, the lane's quad g and index t,
  /// and the lane's two query rows.
  void computeThreadIndices();
  /// The K and V tiles as views of the dynamic shared memory.
  void allocateTiles();
  /// The lane's Q fragments for every k step, kept in registers.
  void loadQueryFragments();
  /// The loop over blocks of 64 keys carrying the online softmax state.
  mlir::scf::ForOp emitKeyBlockLoop();
  /// Tile n of S = Q K^T: 4 f32 accumulators per lane.
  using Scores = SmallVector<std::array<Value, 4>>;
  Scores computeScores();
  /// Scale (in log2 units), additive mask, ragged and causal masks.
  void maskScores(Scores &s, Value keyBase);
  /// New row max and sum; the scores become P; alpha rescales O.
  void updateRowStatistics(Scores &s, ValueRange state, MutableArrayRef<Value> next,
                           Value alpha[2]);
  /// O += P V with P reused as A fragments.
  void accumulateValues(const Scores &s, MutableArrayRef<Value> o);
  /// O / l into the output (merged heads or not), rows past Sq skipped.
  void storeOutput(mlir::scf::ForOp loop);

  OpBuilder &b;
  Location loc;
  AttentionKernelOp op;
  Type compute, f32;
  int64_t batch = 0, heads = 0, sq = 0, sk = 0, d = 0;
  // Kernel values.
  Value tid, qBlock, bIdx, hIdx, g, t, t2;
  Value rows[2], qRow[2];
  Value kTile, vTile;
  SmallVector<SmallVector<Value, 4>> qFrag;
  Value minusInf, zeroF;
};

void AttentionEmitter::mma(ArrayRef<Value> a, ArrayRef<Value> bReg, MutableArrayRef<Value> acc) {
  MLIRContext *ctx = b.getContext();
  auto result = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
  NVVM::MMATypes type = compute.isF16() ? NVVM::MMATypes::f16 : NVVM::MMATypes::bf16;
  Value s = NVVM::MmaOp::create(b, loc, result, a, bReg, acc, ArrayRef<int64_t>{16, 8, 16},
                                std::nullopt, std::nullopt,
                                std::array<NVVM::MMATypes, 2>{type, type},
                                std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                                               NVVM::MMALayout::col});
  for (int64_t e = 0; e < 4; ++e)
    acc[e] = LLVM::ExtractValueOp::create(b, loc, s, e);
}

void AttentionEmitter::loadTile(Value source, Value tile, Value keyBase) {
  Type element = cast<MemRefType>(source.getType()).getElementType();
  int64_t bytes = element.getIntOrFloatBitWidth() / 8;
  int64_t chunksPerRow = d / 4;
  for (int64_t it = 0; it < kKeys * chunksPerRow / kThreads; ++it) {
    Value c = add(tid, idx(it * kThreads));
    Value row = arith::DivUIOp::create(b, loc, c, idx(chunksPerRow));
    Value col = mul(arith::RemUIOp::create(b, loc, c, idx(chunksPerRow)), idx(4));
    Value key = arith::MinUIOp::create(b, loc, add(keyBase, row), idx(sk - 1));
    Value v = vector::LoadOp::create(b, loc, VectorType::get({4}, element), source,
                                     ValueRange{bIdx, hIdx, key, col}, false,
                                     llvm::MaybeAlign(4 * bytes));
    if (element != compute)
      v = arith::TruncFOp::create(b, loc, VectorType::get({4}, compute), v);
    vector::StoreOp::create(b, loc, v, tile, ValueRange{row, col}, false, llvm::MaybeAlign(8));
  }
}

Value AttentionEmitter::maskValue(Value key, Value row) {
  Value mask = op.getMask();
  auto type = cast<MemRefType>(mask.getType());
  Value zero = idx(0);
  Value at[4] = {type.getDimSize(0) == 1 ? zero : bIdx, type.getDimSize(1) == 1 ? zero : hIdx,
                 arith::MinUIOp::create(b, loc, key, idx(sk - 1)),
                 type.getDimSize(3) == 1 ? zero
                                         : arith::MinUIOp::create(b, loc, row, idx(sq - 1))};
  Value m = memref::LoadOp::create(b, loc, mask, at);
  if (!m.getType().isF32())
    m = arith::ExtFOp::create(b, loc, f32, m);
  return m;
}

void AttentionEmitter::emit() {
  auto launch = launchKernel();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  computeThreadIndices();
  allocateTiles();
  loadQueryFragments();
  scf::ForOp loop = emitKeyBlockLoop();
  storeOutput(loop);
  gpu::TerminatorOp::create(b, loc);
}

gpu::LaunchOp AttentionEmitter::launchKernel() {
  int64_t tileBytes = kKeys * (d + kPad) * 2;
  Value smemSize = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 2 * tileBytes);
  int64_t qBlocks = llvm::divideCeil(sq, kRows);
  return gpu::LaunchOp::create(b, loc, idx(qBlocks), idx(batch * heads), idx(1), idx(kThreads),
                               idx(1), idx(1), smemSize);
}

void AttentionEmitter::computeThreadIndices() {
  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  qBlock = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value bh = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  bIdx = arith::DivUIOp::create(b, loc, bh, idx(heads));
  hIdx = arith::RemUIOp::create(b, loc, bh, idx(heads));
  Value warp = arith::DivUIOp::create(b, loc, tid, idx(32));
  Value lane = arith::RemUIOp::create(b, loc, tid, idx(32));
  g = arith::DivUIOp::create(b, loc, lane, idx(4));
  t = arith::RemUIOp::create(b, loc, lane, idx(4));
  t2 = mul(t, idx(2));
  Value row0 = add(add(mul(qBlock, idx(kRows)), mul(warp, idx(16))), g);
  rows[0] = row0;
  rows[1] = add(row0, idx(8));
  // Rows past Sq read the last row (finite scores; never stored).
  for (int64_t r = 0; r < 2; ++r)
    qRow[r] = arith::MinUIOp::create(b, loc, rows[r], idx(sq - 1));
}

void AttentionEmitter::allocateTiles() {
  auto smemSpace = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto tileType =
      MemRefType::get({kKeys, d + kPad}, compute, MemRefLayoutAttrInterface(), smemSpace);
  int64_t tileBytes = kKeys * (d + kPad) * 2;
  Value smem = gpu::DynamicSharedMemoryOp::create(
      b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                              MemRefLayoutAttrInterface(), smemSpace));
  kTile = memref::ViewOp::create(b, loc, tileType, smem, idx(0), ValueRange{});
  vTile = memref::ViewOp::create(b, loc, tileType, smem, idx(tileBytes), ValueRange{});
}

void AttentionEmitter::loadQueryFragments() {
  // One A operand (4 registers) per k step of 16.
  for (int64_t kk = 0; kk < d / 16; ++kk) {
    Value lo = add(idx(kk * 16), t2), hi = add(idx(kk * 16 + 8), t2);
    qFrag.push_back({globalPair(op.getQuery(), qRow[0], lo),
                     globalPair(op.getQuery(), qRow[1], lo),
                     globalPair(op.getQuery(), qRow[0], hi),
                     globalPair(op.getQuery(), qRow[1], hi)});
  }
}

scf::ForOp AttentionEmitter::emitKeyBlockLoop() {
  // Loop state: row max (2), lane partial sums (2), O accumulators (D/8 x 4).
  int64_t oTiles = d / 8;
  minusInf = f32c(-INFINITY);
  zeroF = f32c(0.0);
  SmallVector<Value> init = {minusInf, minusInf, zeroF, zeroF};
  init.append(oTiles * 4, zeroF);
  Value upper = idx(llvm::divideCeil(sk, kKeys));
  if (op.getIsCausal())
    upper = arith::MinUIOp::create(b, loc, upper, add(qBlock, idx(1)));
  auto loop = scf::ForOp::create(b, loc, idx(0), upper, idx(1), init);
  OpBuilder::InsertionGuard body(b);
  b.setInsertionPointToStart(loop.getBody());
  Value keyBase = mul(loop.getInductionVar(), idx(kKeys));
  ValueRange state = loop.getRegionIterArgs();
  gpu::BarrierOp::create(b, loc); // the previous step's reads are done
  loadTile(op.getKey(), kTile, keyBase);
  loadTile(op.getValue(), vTile, keyBase);
  gpu::BarrierOp::create(b, loc);
  Scores s = computeScores();
  maskScores(s, keyBase);
  SmallVector<Value> next(state.begin(), state.end());
  Value alpha[2];
  updateRowStatistics(s, state, next, alpha);
  SmallVector<Value> o(state.begin() + 4, state.end());
  for (int64_t i = 0; i < oTiles; ++i)
    for (int64_t e = 0; e < 4; ++e)
      o[i * 4 + e] = mulf(o[i * 4 + e], alpha[e / 2]);
  accumulateValues(s, o);
  for (int64_t i = 0; i < oTiles * 4; ++i)
    next[4 + i] = o[i];
  scf::YieldOp::create(b, loc, next);
  return loop;
}

AttentionEmitter::Scores AttentionEmitter::computeScores() {
  // S = Q K^T, 8 tiles of 8 keys.
  Scores s(kKeys / 8);
  for (int64_t n = 0; n < int64_t(s.size()); ++n) {
    std::array<Value, 4> acc = {zeroF, zeroF, zeroF, zeroF};
    Value keyRow = add(idx(n * 8), g);
    for (int64_t kk = 0; kk < d / 16; ++kk) {
      Value bReg[2] = {smemPair(kTile, keyRow, add(idx(kk * 16), t2)),
                       smemPair(kTile, keyRow, add(idx(kk * 16 + 8), t2))};
      mma(qFrag[kk], bReg, acc);
    }
    s[n] = acc;
  }
  return s;
}

void AttentionEmitter::maskScores(Scores &s, Value keyBase) {
  // Scores in log2 units, masked; element e of tile n is row e / 2, key
  // n * 8 + 2t + e % 2.
  double log2e = 1.4426950408889634;
  Value scale = f32c(op.getScale().convertToDouble() * log2e);
  Value maskScale = f32c(log2e);
  bool ragged = sk % kKeys != 0;
  bool rowMask = op.getMask() && cast<MemRefType>(op.getMask().getType()).getDimSize(3) != 1;
  for (int64_t n = 0; n < int64_t(s.size()); ++n) {
    Value maskOf[2] = {};
    for (int64_t e = 0; e < 4; ++e) {
      Value key = add(add(keyBase, idx(n * 8 + e % 2)), t2);
      Value x = mulf(s[n][e], scale);
      if (op.getMask()) {
        Value m = (!rowMask && e >= 2) ? maskOf[e % 2] : maskValue(key, rows[e / 2]);
        maskOf[e % 2] = m;
        x = arith::AddFOp::create(b, loc, x, mulf(m, maskScale));
      }
      Value valid;
      auto andv = [&](Value c) { valid = valid ? arith::AndIOp::create(b, loc, valid, c) : c; };
      if (ragged)
        andv(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, key, idx(sk)));
      if (op.getIsCausal())
        andv(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, key, rows[e / 2]));
      if (valid)
        x = arith::SelectOp::create(b, loc, valid, x, minusInf);
      s[n][e] = x;
    }
  }
}

void AttentionEmitter::updateRowStatistics(Scores &s, ValueRange state,
                                           MutableArrayRef<Value> next, Value alpha[2]) {
  // Online softmax per row r (elements 2r, 2r + 1 of every tile).
  for (int64_t r = 0; r < 2; ++r) {
    Value mx = s[0][2 * r];
    for (int64_t n = 0; n < int64_t(s.size()); ++n)
      for (int64_t e = 2 * r; e < 2 * r + 2; ++e)
        if (n || e != 2 * r)
          mx = maxf(mx, s[n][e]);
    Value mNew = maxf(state[r], quad(mx, /*max=*/true));
    // A row with every key masked so far subtracts 0 (exp2(-inf) = 0).
    Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, mNew, minusInf);
    Value base = arith::SelectOp::create(b, loc, empty, zeroF, mNew);
    alpha[r] = exp2(arith::SubFOp::create(b, loc, state[r], base));
    Value sum = zeroF;
    for (int64_t n = 0; n < int64_t(s.size()); ++n)
      for (int64_t e = 2 * r; e < 2 * r + 2; ++e) {
        s[n][e] = exp2(arith::SubFOp::create(b, loc, s[n][e], base));
        sum = addf(sum, s[n][e]);
      }
    next[r] = mNew;
    next[2 + r] = addf(mulf(state[2 + r], alpha[r]), sum);
  }
}

void AttentionEmitter::accumulateValues(const Scores &s, MutableArrayRef<Value> o) {
  // O += P V: k steps of 16 keys; P's A fragment from tiles 2j, 2j + 1.
  for (int64_t j = 0; j < kKeys / 16; ++j) {
    Value a[4] = {pairOf(s[2 * j][0], s[2 * j][1]), pairOf(s[2 * j][2], s[2 * j][3]),
                  pairOf(s[2 * j + 1][0], s[2 * j + 1][1]),
                  pairOf(s[2 * j + 1][2], s[2 * j + 1][3])};
    Value r0 = add(idx(j * 16), t2);
    for (int64_t i = 0; i < d / 8; ++i) {
      Value col = add(idx(i * 8), g);
      auto at = [&](Value row) {
        return memref::LoadOp::create(b, loc, vTile, ValueRange{row, col});
      };
      auto pair = [&](Value row) {
        Value v = vector::FromElementsOp::create(b, loc, VectorType::get({2}, compute),
                                                 ValueRange{at(row), at(add(row, idx(1)))});
        return reg(v);
      };
      Value bReg[2] = {pair(r0), pair(add(r0, idx(8)))};
      mma(a, bReg, o.slice(i * 4, 4));
    }
  }
}

void AttentionEmitter::storeOutput(scf::ForOp loop) {
  // O / l, two elements per row and tile; rows past Sq are not stored.
  Value out = op.getInit();
  Type outElement = cast<MemRefType>(out.getType()).getElementType();
  int64_t outBytes = outElement.getIntOrFloatBitWidth() / 8;
  for (int64_t r = 0; r < 2; ++r) {
    Value l = quad(loop.getResult(2 + r), /*max=*/false);
    Value inv = arith::DivFOp::create(b, loc, f32c(1.0), l);
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, rows[r], idx(sq));
    auto guarded = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard body(b);
    b.setInsertionPointToStart(&guarded.getThenRegion().front());
    for (int64_t i = 0; i < d / 8; ++i) {
      Value x = mulf(loop.getResult(4 + i * 4 + 2 * r), inv);
      Value y = mulf(loop.getResult(4 + i * 4 + 2 * r + 1), inv);
      Value v =
          vector::FromElementsOp::create(b, loc, VectorType::get({2}, f32), ValueRange{x, y});
      if (!outElement.isF32())
        v = arith::TruncFOp::create(b, loc, VectorType::get({2}, outElement), v);
      Value col = add(idx(i * 8), t2);
      SmallVector<Value> at = op.getMergeHeads() ? SmallVector<Value>{bIdx, rows[r], hIdx, col}
                                                 : SmallVector<Value>{bIdx, hIdx, rows[r], col};
      vector::StoreOp::create(b, loc, v, out, at, false, llvm::MaybeAlign(2 * outBytes));
    }
  }
}

/// Whether `type` is a static row-major buffer without offset (the kernel's
/// vector accesses assume aligned, contiguous rows). A strided layout that
/// is row-major up to the strides of unit dims (a view that moved them: a
/// decode step's head split) is one.
bool isPlainBuffer(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape() ||
      !memref::isStaticShapeAndContiguousRowMajor(memref))
    return false;
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  return succeeded(memref.getStridesAndOffset(strides, offset)) && offset == 0;
}

struct KilnCUDAAttentionPass final : impl::KilnCUDAAttentionPassBase<KilnCUDAAttentionPass> {
  using KilnCUDAAttentionPassBase::KilnCUDAAttentionPassBase;

  void runOnOperation() override {
    if (!isHalfPrecision(precision)) {
      getOperation().emitError() << "kiln-cuda-attention: precision must be fp16 or bf16, got '"
                                 << precisionName(precision) << "'";
      return signalPassFailure();
    }
    SmallVector<AttentionKernelOp> kernels;
    getOperation().walk([&](AttentionKernelOp op) { kernels.push_back(op); });
    for (AttentionKernelOp op : kernels) {
      if (!llvm::all_of(op->getOperandTypes(), isPlainBuffer)) {
        op.emitError("kiln-cuda-attention expects a bufferized kiln.attention_kernel on static "
                     "row-major buffers without offsets");
        return signalPassFailure();
      }
      auto q = cast<MemRefType>(op.getQuery().getType());
      int64_t d = q.getDimSize(3);
      if (d != 64 && d != 128) {
        op.emitError() << "kiln-cuda-attention supports head dims 64 and 128, got " << d;
        return signalPassFailure();
      }
      Type element = q.getElementType();
      Type compute = element;
      if (element.isF32()) {
        OpBuilder builder(op);
        compute = precision == Precision::FP16 ? Type(builder.getF16Type())
                                               : Type(builder.getBF16Type());
      }
      OpBuilder b(op);
      AttentionEmitter(b, op, compute).emit();
      op.erase();
    }
  }
};

} // namespace
} // namespace kiln
