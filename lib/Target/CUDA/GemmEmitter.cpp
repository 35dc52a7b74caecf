//===- GemmEmitter.cpp - The Hopper GEMM kernel of kiln-cuda-gemm ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// See GemmEmitter.h; the parameters are GemmTemplate.cpp's.
//
//===----------------------------------------------------------------------===//

#include "GemmEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

namespace kiln::cuda_gemm {
namespace {

using namespace mlir;

constexpr int64_t kTileM = 128, kTileN = 128;
constexpr int64_t kThreads = 128; // one warpgroup

/// Emits the kernel for one gemm in place of `op`.
class GemmEmitter {
public:
  GemmEmitter(OpBuilder &b, Location loc, const Gemm &g, int64_t stages, bool accumulate,
              linalg::GenericOp consumer, Value enabled)
      : b(b), loc(loc), g(g), stages(stages), accumulate(accumulate), consumer(consumer),
        enabled(enabled),
        ctx(b.getContext()),
        smemSpace(gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup)) {}

  void emit();

private:
  /// Host code: the operands' 2-D views and tensor maps, the launch.
  gpu::LaunchOp emitLaunch();
  /// Kernel entry: the tile's coordinates, shared memory, the mbarriers,
  /// tensor map prefetches.
  void emitTileSetup();
  /// The pipelined k loop; returns the accumulators.
  Value emitMainLoop();
  /// One k step's product with an N-major B on stage `slot`, added to
  /// `acc` (nvgpu.warpgroup.mma).
  Value nMajorMma(Value acc, Value slot);
  /// The accumulators through shared memory to the output (C, or the
  /// epilogue's output through its body).
  void emitStoreTile(Value acc);

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  /// M: a constant, or A's first size read on the host (a symbolic M).
  Value rowCount() { return ShapedType::isDynamic(g.m) ? mSize : idx(g.m); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  MemRefType smemType(ArrayRef<int64_t> shape, Type element) {
    return MemRefType::get(shape, element, MemRefLayoutAttrInterface(), smemSpace);
  }
  nvgpu::TensorMapDescriptorType tensorMapType(int64_t rows) {
    auto box = MemRefType::get({rows, g.tileK()}, g.element, MemRefLayoutAttrInterface(),
                               b.getI64IntegerAttr(3));
    return nvgpu::TensorMapDescriptorType::get(
        ctx, box, nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
        nvgpu::TensorMapL2PromoKind::L2PROMO_NONE, nvgpu::TensorMapOOBKind::OOB_ZERO,
        nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
  }
  /// `value` as a 2-D memref (batch folded into the rows).
  Value as2D(Value value) {
    if (cast<MemRefType>(value.getType()).getRank() == 2)
      return value;
    SmallVector<ReassociationIndices> groups = {{0, 1}, {2}};
    return memref::CollapseShapeOp::create(b, loc, value, groups);
  }
  Value descriptor(Value matrix, int64_t rows) {
    auto unranked = UnrankedMemRefType::get(g.element, Attribute());
    Value cast = memref::CastOp::create(b, loc, unranked, matrix);
    return nvgpu::TmaCreateDescriptorOp::create(b, loc, tensorMapType(rows), cast,
                                                ValueRange{idx(rows), idx(g.tileK())});
  }
  /// A view of the dynamic shared memory at `byteOffset`.
  Value view(Value byteOffset, MemRefType type) {
    return memref::ViewOp::create(b, loc, type, smem, byteOffset, ValueRange{});
  }
  Value aOffset(Value slot) { return mul(slot, idx(aTileBytes())); }
  Value bOffset(Value slot) {
    return add(idx(stages * aTileBytes()), mul(slot, idx(bTileBytes())));
  }
  int64_t elementBytes() const { return g.elementBytes(); }
  int64_t aTileBytes() const { return kTileM * g.tileK() * elementBytes(); }
  int64_t bTileBytes() const { return g.tileK() * kTileN * elementBytes(); }
  /// TMA loads of k step `kStep` into stage `slot`, completing on its mbarrier.
  void load(Value slot, Value kStep, Value predicate);
  /// The consumer's body on the 4 products `v` at (`r`, `column`) of the
  /// tile, stored to its output.
  void storeThroughConsumer(Value v, Value r, Value column);
  /// Stores the 4 `values` at `at` (last index: their first column) one by
  /// one, each while its column is below N (N not a multiple of 4).
  void storeScalars(ArrayRef<Value> values, Value memref, ArrayRef<Value> at);
  /// One k step's product with a K-major B (tf32 or f16/bf16) on stage
  /// `slot`, added to `acc`.
  Value kMajorMma(Value acc, Value slot);
  /// The wgmma shared-memory descriptor of a K-major tile at byte `address`:
  /// 128-byte swizzle, 8-row groups 1024 bytes apart.
  Value kMajorDescriptor(Value address);

  OpBuilder &b;
  Location loc;
  const Gemm &g;
  int64_t stages;
  bool accumulate;
  linalg::GenericOp consumer;
  Value enabled;
  MLIRContext *ctx;
  Attribute smemSpace;
  // Kernel values.
  Value descA, descB, smem, barriers, mRow, aRow, nCol, kRow, nRow, batchIndex, mTile, smemAddress;
  // Host values: M when it is symbolic.
  Value mSize;
  Value tid, primary, c2;
};

Value GemmEmitter::kMajorDescriptor(Value address) {
  Type i64 = b.getI64Type();
  auto c = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, i64, v); };
  // Bits 0-13: address / 16; 16-29: leading byte offset / 16 (unused for
  // swizzled K-major tiles, 1 by convention); 32-45: stride byte offset / 16
  // (8 rows of 128 bytes); 62-63: swizzle mode (1 = 128 bytes).
  Value start = arith::ShRUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, address, c(0x3FFFF)), c(4));
  Value fixed = c((int64_t{1} << 16) | (int64_t{64} << 32) | (int64_t{1} << 62));
  return arith::OrIOp::create(b, loc, start, fixed);
}

Value GemmEmitter::kMajorMma(Value acc, Value slot) {
  Type i64 = b.getI64Type();
  auto c = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, i64, v); };
  Value slot64 = arith::IndexCastUIOp::create(b, loc, i64, slot);
  Value aAddress = arith::AddIOp::create(
      b, loc, smemAddress, arith::MulIOp::create(b, loc, slot64, c(aTileBytes())));
  Value bAddress = arith::AddIOp::create(
      b, loc, smemAddress,
      arith::AddIOp::create(b, loc, c(stages * aTileBytes()),
                            arith::MulIOp::create(b, loc, slot64, c(bTileBytes()))));
  Value dA = kMajorDescriptor(aAddress), dB = kMajorDescriptor(bAddress);
  // The accumulator as its LLVM form (what convert-nvgpu-to-nvvm makes of
  // it): one struct of 64 f32 per 64-row half of the tile.
  Type f32 = b.getF32Type();
  auto half = LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(kTileN / 2, f32));
  auto whole = LLVM::LLVMStructType::getLiteral(ctx, {half, half});
  Value s = UnrealizedConversionCastOp::create(b, loc, TypeRange{whole}, acc).getResult(0);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  auto shape = NVVM::MMAShapeAttr::get(ctx, 64, kTileN, g.mmaK());
  auto inType = NVVM::WGMMATypesAttr::get(
      ctx, g.element.isF32()   ? NVVM::WGMMATypes::tf32
           : g.element.isF16() ? NVVM::WGMMATypes::f16
                               : NVVM::WGMMATypes::bf16);
  auto f32Type = NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32);
  auto one = NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one);
  for (int64_t h = 0; h < 2; ++h) {
    Value part = LLVM::ExtractValueOp::create(b, loc, s, h);
    for (int64_t kk = 0; kk < g.tileK() / g.mmaK(); ++kk) {
      // Descriptor offsets count 16 bytes: 64 rows of 128 bytes down, one
      // instruction's 32 bytes along K.
      Value a = arith::AddIOp::create(b, loc, dA, c((h * 64 * 128 + kk * 32) / 16));
      Value bk = arith::AddIOp::create(b, loc, dB, c(kk * 32 / 16));
      part = NVVM::WgmmaMmaAsyncOp::create(
          b, loc, half, part, a, bk, shape, inType, inType, f32Type,
          NVVM::WGMMAScaleOutAttr::get(ctx, NVVM::WGMMAScaleOut::one), one, one,
          NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::row),
          NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::col), NVVM::MMAIntOverflowAttr());
    }
    s = LLVM::InsertValueOp::create(b, loc, s, part, h);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  // As nvgpu.warpgroup.mma: at most this group pending, so the previous
  // step's stage is free to refill.
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(1));
  return UnrealizedConversionCastOp::create(b, loc, TypeRange{acc.getType()}, s).getResult(0);
}

void GemmEmitter::storeThroughConsumer(Value v, Value r, Value column) {
  auto outType = cast<MemRefType>(consumer.getDpsInits()[0].getType());
  SmallVector<Value> results;
  for (int64_t e = 0; e < 4; ++e) {
    // The consumer's loop indices of this element.
    SmallVector<Value> indices;
    if (g.batch != 1 || outType.getRank() == 3)
      indices.push_back(batchIndex);
    indices.push_back(add(mTile, r));
    indices.push_back(add(nCol, add(column, idx(e))));
    IRMapping mapping;
    Block *body = consumer.getBlock();
    for (OpOperand *input : consumer.getDpsInputOperands()) {
      BlockArgument arg = body->getArgument(input->getOperandNumber());
      if (input->get() == g.c) {
        mapping.map(arg, vector::ExtractOp::create(b, loc, v, e).getResult());
        continue;
      }
      AffineMap map = consumer.getMatchingIndexingMap(input);
      SmallVector<Value> at;
      for (AffineExpr expr : map.getResults())
        at.push_back(indices[cast<AffineDimExpr>(expr).getPosition()]);
      mapping.map(arg, memref::LoadOp::create(b, loc, input->get(), at).getResult());
    }
    for (Operation &op : body->without_terminator())
      b.clone(op, mapping);
    results.push_back(mapping.lookup(body->getTerminator()->getOperand(0)));
  }
  SmallVector<Value> at;
  if (outType.getRank() == 3)
    at.push_back(batchIndex);
  at.push_back(add(mTile, r));
  at.push_back(add(nCol, column));
  if (g.n % 4) {
    storeScalars(results, consumer.getDpsInits()[0], at);
    return;
  }
  auto vec = VectorType::get({4}, outType.getElementType());
  Value packed = vector::FromElementsOp::create(b, loc, vec, results);
  int64_t bytes = 4 * outType.getElementTypeBitWidth() / 8;
  vector::StoreOp::create(b, loc, packed, consumer.getDpsInits()[0], at, false,
                          llvm::MaybeAlign(bytes));
}

void GemmEmitter::storeScalars(ArrayRef<Value> values, Value memref, ArrayRef<Value> at) {
  for (auto [e, value] : llvm::enumerate(values)) {
    SmallVector<Value> indices(at);
    indices.back() = add(indices.back(), idx(e));
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, indices.back(),
                                         idx(g.n));
    auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard body(b);
    b.setInsertionPointToStart(&guard.getThenRegion().front());
    Value stored = value;
    if (accumulate && !consumer)
      stored = arith::AddFOp::create(b, loc, stored,
                                     memref::LoadOp::create(b, loc, memref, indices));
    memref::StoreOp::create(b, loc, stored, memref, indices);
  }
}

void GemmEmitter::load(Value slot, Value kStep, Value predicate) {
  int64_t kTileK = g.tileK(), kBoxCols = g.tileK();
  Value kCol = mul(kStep, idx(kTileK));
  Value aTile = view(aOffset(slot), smemType({kTileM, kTileK}, g.element));
  Value bOffsetBytes = bOffset(slot);
  if (g.kMajorB) {
    // B^T's 128 rows (n) by 32 columns (k), K-major like A.
    Value bTile = view(bOffsetBytes, smemType({kTileN, kTileK}, g.element));
    nvgpu::MBarrierArriveExpectTxOp::create(b, loc, barriers,
                                            idx(aTileBytes() + bTileBytes()), slot, predicate);
    nvgpu::TmaAsyncLoadOp::create(b, loc, aTile, barriers, descA, ValueRange{kCol, aRow}, slot,
                                  Value(), predicate);
    nvgpu::TmaAsyncLoadOp::create(b, loc, bTile, barriers, descB, ValueRange{kCol, nRow}, slot,
                                  Value(), predicate);
    return;
  }
  Value bLeft = view(bOffsetBytes, smemType({kTileK, kBoxCols}, g.element));
  Value bRight = view(add(bOffsetBytes, idx(kTileK * kBoxCols * elementBytes())),
                      smemType({kTileK, kBoxCols}, g.element));
  nvgpu::MBarrierArriveExpectTxOp::create(b, loc, barriers,
                                          idx(aTileBytes() + bTileBytes()), slot, predicate);
  // Coordinates are innermost first: (column, row).
  nvgpu::TmaAsyncLoadOp::create(b, loc, aTile, barriers, descA, ValueRange{kCol, aRow}, slot,
                                Value(), predicate);
  Value bRowIndex = add(kRow, kCol);
  nvgpu::TmaAsyncLoadOp::create(b, loc, bLeft, barriers, descB, ValueRange{nCol, bRowIndex},
                                slot, Value(), predicate);
  nvgpu::TmaAsyncLoadOp::create(b, loc, bRight, barriers, descB,
                                ValueRange{add(nCol, idx(kBoxCols)), bRowIndex}, slot, Value(),
                                predicate);
}

void GemmEmitter::emit() {
  gpu::LaunchOp launch = emitLaunch();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  emitTileSetup();
  Value acc = emitMainLoop();
  emitStoreTile(acc);
  gpu::TerminatorOp::create(b, loc);
}

gpu::LaunchOp GemmEmitter::emitLaunch() {
  // 2-D views (a batch folded into the rows), tensor maps, the launch.
  Value a2 = as2D(g.a), b2 = as2D(g.b);
  c2 = as2D(g.c);
  descA = descriptor(a2, kTileM);
  descB = descriptor(b2, g.kMajorB ? kTileN : g.tileK());
  int64_t smemBytes = std::max(stages * (aTileBytes() + bTileBytes()), kTileM * kTileN * 4);
  Value smemSize = arith::ConstantIntOp::create(b, loc, b.getI32Type(), smemBytes);
  // One grid z per batch; a symbolic batch (a convolution's images) is B's
  // first size at run time.
  Value batch = ShapedType::isDynamic(g.batch) ? memref::DimOp::create(b, loc, g.b, 0).getResult()
                                               : idx(g.batch);
  // Row tiles: ceil(M / 128), at run time for a symbolic M (A's rows: C
  // may be a temporary the kernel replaces).
  Value rowTiles;
  if (ShapedType::isDynamic(g.m)) {
    mSize = memref::DimOp::create(b, loc, g.a, 0);
    rowTiles = arith::DivUIOp::create(b, loc, add(mSize, idx(kTileM - 1)), idx(kTileM));
  } else {
    rowTiles = idx(llvm::divideCeil(g.m, kTileM));
  }
  if (enabled)
    rowTiles = arith::SelectOp::create(b, loc, enabled, rowTiles, idx(0));
  return gpu::LaunchOp::create(b, loc, rowTiles, idx(llvm::divideCeil(g.n, kTileN)), batch,
                               idx(kThreads), idx(1), idx(1), smemSize);
}

void GemmEmitter::emitTileSetup() {
  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value blockM = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value blockN = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  Value batch = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  batchIndex = batch;
  mTile = mul(blockM, idx(kTileM));
  mRow = add(mul(batch, rowCount()), mTile);
  aRow = g.broadcastA ? mTile : mRow;
  nCol = mul(blockN, idx(kTileN));
  kRow = mul(batch, idx(g.k));
  nRow = add(mul(batch, idx(g.n)), nCol);
  smem = gpu::DynamicSharedMemoryOp::create(
      b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                              MemRefLayoutAttrInterface(), smemSpace));
  if (g.kMajorB)
    smemAddress = arith::IndexCastUIOp::create(
        b, loc, b.getI64Type(), memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem));
  primary = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, idx(0));
  barriers = nvgpu::MBarrierCreateOp::create(
      b, loc, nvgpu::MBarrierGroupType::get(ctx, smemSpace, stages));
  for (int64_t s = 0; s < stages; ++s)
    nvgpu::MBarrierInitOp::create(b, loc, barriers, idx(1), idx(s), primary);
  gpu::BarrierOp::create(b, loc);
  nvgpu::TmaPrefetchOp::create(b, loc, descA, primary);
  nvgpu::TmaPrefetchOp::create(b, loc, descB, primary);
}

Value GemmEmitter::nMajorMma(Value acc, Value slot) {
  int64_t kTileK = g.tileK();
  Value aTile = view(aOffset(slot), smemType({kTileM, kTileK}, g.element));
  Value bTile = view(bOffset(slot), smemType({kTileK, kTileN}, g.element));
  auto descType = [&](ArrayRef<int64_t> shape) {
    return nvgpu::WarpgroupMatrixDescriptorType::get(ctx, smemType(shape, g.element));
  };
  Value dA = nvgpu::WarpgroupGenerateDescriptorOp::create(b, loc, descType({kTileM, kTileK}),
                                                          aTile, descA);
  Value dB = nvgpu::WarpgroupGenerateDescriptorOp::create(b, loc, descType({kTileK, kTileN}),
                                                          bTile, descB);
  return nvgpu::WarpgroupMmaOp::create(b, loc, acc.getType(), dA, dB, IntegerAttr(), UnitAttr(),
                                       b.getUnitAttr(), acc);
}

Value GemmEmitter::emitMainLoop() {
  // Prologue: the first stages-1 k steps in flight.
  int64_t kSteps = llvm::divideCeil(g.k, g.tileK());
  int64_t ahead = stages - 1;
  for (int64_t s = 0; s < std::min(ahead, kSteps); ++s)
    load(idx(s), idx(s), primary);

  // Main loop: wait for stage iv % stages, multiply, refill the stage the
  // previous step used (its wgmma group is complete: warpgroup.mma waits
  // until at most one group is pending).
  auto accType = nvgpu::WarpgroupAccumulatorType::get(
      ctx, VectorType::get({kTileM, kTileN}, b.getF32Type()));
  Value acc = nvgpu::WarpgroupMmaInitAccumulatorOp::create(b, loc, accType);
  Value parity0 = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
  auto loop = scf::ForOp::create(b, loc, idx(0), idx(kSteps), idx(1), ValueRange{acc, parity0});
  {
    OpBuilder::InsertionGuard body(b);
    b.setInsertionPointToStart(loop.getBody());
    Value iv = loop.getInductionVar();
    Value parity = loop.getRegionIterArgs()[1];
    Value slot = arith::RemUIOp::create(b, loc, iv, idx(stages));
    nvgpu::MBarrierTryWaitParityOp::create(b, loc, barriers, parity, idx(10000000), slot);
    Value next = g.kMajorB ? kMajorMma(loop.getRegionIterArgs()[0], slot)
                           : nMajorMma(loop.getRegionIterArgs()[0], slot);
    Value nextStep = add(iv, idx(ahead));
    // Nothing to refill when the prologue loaded every k step (a constant
    // false predicate would reach the PTX as `@0`, which ptxas rejects).
    if (kSteps > ahead) {
      Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, nextStep,
                                            idx(kSteps));
      Value refill = arith::AndIOp::create(b, loc, primary, inRange);
      load(arith::RemUIOp::create(b, loc, nextStep, idx(stages)), nextStep, refill);
    }
    Value lastSlot = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, slot,
                                           idx(stages - 1));
    Value one = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
    Value flipped = arith::XOrIOp::create(b, loc, parity, one);
    Value nextParity = arith::SelectOp::create(b, loc, lastSlot, flipped, parity);
    scf::YieldOp::create(b, loc, ValueRange{next, nextParity});
  }
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(0));
  return loop.getResult(0);
}

void GemmEmitter::emitStoreTile(Value acc) {
  // Accumulators -> shared memory (the stage buffers are free) -> the
  // output, a row of 128 floats per warp and step, 16 bytes a thread.
  gpu::BarrierOp::create(b, loc);
  Value tile = view(idx(0), smemType({kTileM, kTileN}, b.getF32Type()));
  nvgpu::WarpgroupMmaStoreOp::create(b, loc, acc, tile);
  gpu::BarrierOp::create(b, loc);
  Value warp = arith::DivUIOp::create(b, loc, tid, idx(32));
  Value column = mul(arith::RemUIOp::create(b, loc, tid, idx(32)), idx(4));
  auto rows = scf::ForOp::create(b, loc, warp, idx(kTileM), idx(kThreads / 32));
  OpBuilder::InsertionGuard body(b);
  b.setInsertionPointToStart(rows.getBody());
  Value r = rows.getInductionVar();
  auto vec = VectorType::get({4}, b.getF32Type());
  // Partial tiles: rows past M and columns past N (4 at a time when N is
  // a multiple of 4, else one by one) are not stored.
  bool scalar = g.n % 4;
  if (ShapedType::isDynamic(g.m) || g.m % kTileM || g.n % kTileN) {
    Value in = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, add(mTile, r),
                                     rowCount());
    if (!scalar)
      in = arith::AndIOp::create(
          b, loc, in,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, add(nCol, column),
                                idx(g.n)));
    auto inside = scf::IfOp::create(b, loc, in, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&inside.getThenRegion().front());
  }
  Value v = vector::LoadOp::create(b, loc, vec, tile, ValueRange{r, column}, false,
                                   llvm::MaybeAlign(16));
  if (consumer) {
    storeThroughConsumer(v, r, column);
  } else if (scalar) {
    SmallVector<Value> values;
    for (int64_t e = 0; e < 4; ++e)
      values.push_back(vector::ExtractOp::create(b, loc, v, e));
    storeScalars(values, c2, {add(mRow, r), add(nCol, column)});
  } else {
    SmallVector<Value> global = {add(mRow, r), add(nCol, column)};
    if (accumulate) {
      Value old = vector::LoadOp::create(b, loc, vec, c2, global, false, llvm::MaybeAlign(16));
      v = arith::AddFOp::create(b, loc, v, old);
    }
    vector::StoreOp::create(b, loc, v, c2, global, false, llvm::MaybeAlign(16));
  }
}
} // namespace

void emitGemmKernel(OpBuilder &b, Location loc, const Gemm &g, int64_t stages, bool accumulate,
                    linalg::GenericOp epilogue, Value enabled) {
  GemmEmitter(b, loc, g, stages, accumulate, epilogue, enabled).emit();
}

} // namespace kiln::cuda_gemm
