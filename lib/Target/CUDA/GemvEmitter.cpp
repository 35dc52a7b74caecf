//===- GemvEmitter.cpp - The one-row product kernel of kiln-cuda-gemm -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// See GemvEmitter.h. A block of 128 threads owns 16 columns of B: thread t
// reads 8 of them (one 16-byte load: t % 2 picks which 8) from every 64th row
// starting at row t / 2, so the block reads whole 32-byte sectors of B and the
// grid (ceil(N / 16) blocks) keeps every SM streaming weights. Four rows are
// loaded before they are multiplied (more bytes in flight per thread). Each
// warp then sums its 16 row lanes by xor shuffles, the 4 warps' sums meet in
// shared memory, and 16 threads finish one column each: the epilogue's body
// (when the dispatch has one) and the store.
//
//===----------------------------------------------------------------------===//

#include "GemvEmitter.h"
#include "WarpShuffle.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

namespace kiln::cuda_gemm {
namespace {

using namespace mlir;

constexpr int64_t kThreads = 128, kWarps = kThreads / cuda::kWarp;
constexpr int64_t kColumnsPerThread = 8; // one 16-byte load of f16/bf16
constexpr int64_t kColumnGroups = 2;     // threads side by side along a row of B
constexpr int64_t kBlockColumns = kColumnsPerThread * kColumnGroups;
constexpr int64_t kRowLanes = kThreads / kColumnGroups; // rows of B read at once
constexpr int64_t kUnroll = 4;

class GemvEmitter {
public:
  GemvEmitter(OpBuilder &b, Location loc, const Gemm &g, bool accumulate,
              linalg::GenericOp consumer, Value enabled)
      : b(b), loc(loc), g(g), accumulate(accumulate), consumer(consumer), enabled(enabled) {}

  void emit();

private:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  /// Row k's operands: B[k, column .. column + 8) and A[0, k].
  std::pair<Value, Value> loadRow(Value k);
  /// acc + A[0, k] * B[k, column .. column + 8), from loadRow(k).
  Value multiplyAdd(Value acc, std::pair<Value, Value> row);
  Value step(Value acc, Value k) { return multiplyAdd(acc, loadRow(k)); }
  /// The thread's 8 partial sums over its rows of B (zeros past N).
  Value rowSums();
  /// Column `n`'s total `sum` through the epilogue (or added to C's value
  /// when accumulating) to the output.
  void store(Value sum, Value n);

  OpBuilder &b;
  Location loc;
  const Gemm &g;
  bool accumulate;
  linalg::GenericOp consumer;
  Value enabled;
  Value column, rowLane, zero;
};

std::pair<Value, Value> GemvEmitter::loadRow(Value k) {
  auto narrow = VectorType::get({kColumnsPerThread}, g.element);
  Value weights = vector::LoadOp::create(b, loc, narrow, g.b, ValueRange{k, column}, false,
                                         llvm::MaybeAlign(16));
  return {weights, memref::LoadOp::create(b, loc, g.a, ValueRange{zero, k})};
}

Value GemvEmitter::multiplyAdd(Value acc, std::pair<Value, Value> row) {
  auto wide = VectorType::get({kColumnsPerThread}, b.getF32Type());
  Value splat = vector::BroadcastOp::create(
      b, loc, wide, arith::ExtFOp::create(b, loc, b.getF32Type(), row.second));
  Value w = arith::ExtFOp::create(b, loc, wide, row.first);
  return vector::FMAOp::create(b, loc, w, splat, acc);
}

Value GemvEmitter::rowSums() {
  auto wide = VectorType::get({kColumnsPerThread}, b.getF32Type());
  Value zeros = arith::ConstantOp::create(b, loc, wide, b.getZeroAttr(wide));
  // Row steps of kRowLanes rows; the last one may pass K (K not a multiple
  // of 64): its rows past K are skipped.
  int64_t steps = llvm::divideCeil(g.k, kRowLanes);
  int64_t unrolled = (g.k / kRowLanes) / kUnroll; // whole steps only

  Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, column, idx(g.n));
  auto ifInside = scf::IfOp::create(b, loc, TypeRange{wide}, inside, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifInside.getThenRegion().front());
    Value acc = zeros;
    if (unrolled > 0) {
      auto loop = scf::ForOp::create(b, loc, idx(0), idx(unrolled), idx(1), ValueRange{acc});
      OpBuilder::InsertionGuard body(b);
      b.setInsertionPointToStart(loop.getBody());
      Value base = add(mul(loop.getInductionVar(), idx(kUnroll * kRowLanes)), rowLane);
      // All loads first, then the products: kUnroll loads in flight.
      SmallVector<std::pair<Value, Value>> rows;
      for (int64_t u = 0; u < kUnroll; ++u)
        rows.push_back(loadRow(add(base, idx(u * kRowLanes))));
      Value sum = loop.getRegionIterArgs()[0];
      for (const std::pair<Value, Value> &row : rows)
        sum = multiplyAdd(sum, row);
      scf::YieldOp::create(b, loc, sum);
      b.setInsertionPointAfter(loop);
      acc = loop.getResult(0);
    }
    for (int64_t s = unrolled * kUnroll; s < steps; ++s) {
      Value k = add(idx(s * kRowLanes), rowLane);
      if ((s + 1) * kRowLanes <= g.k) {
        acc = step(acc, k);
        continue;
      }
      Value inK = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, k, idx(g.k));
      auto ifK = scf::IfOp::create(b, loc, TypeRange{wide}, inK, /*withElseRegion=*/true);
      b.setInsertionPointToStart(&ifK.getThenRegion().front());
      scf::YieldOp::create(b, loc, step(acc, k));
      b.setInsertionPointToStart(&ifK.getElseRegion().front());
      scf::YieldOp::create(b, loc, acc);
      b.setInsertionPointAfter(ifK);
      acc = ifK.getResult(0);
    }
    scf::YieldOp::create(b, loc, acc);
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifInside.getElseRegion().front());
  scf::YieldOp::create(b, loc, zeros);
  return ifInside.getResult(0);
}

void GemvEmitter::store(Value sum, Value n) {
  if (!consumer) {
    Value stored = sum;
    if (accumulate)
      stored = arith::AddFOp::create(b, loc, stored,
                                     memref::LoadOp::create(b, loc, g.c, ValueRange{zero, n}));
    memref::StoreOp::create(b, loc, stored, g.c, ValueRange{zero, n});
    return;
  }
  // The consumer's body at loop indices (0, n), C's element being `sum`.
  SmallVector<Value> indices = {zero, n};
  IRMapping mapping;
  Block *body = consumer.getBlock();
  for (OpOperand *input : consumer.getDpsInputOperands()) {
    BlockArgument arg = body->getArgument(input->getOperandNumber());
    if (input->get() == g.c) {
      mapping.map(arg, sum);
      continue;
    }
    SmallVector<Value> at;
    for (AffineExpr expr : consumer.getMatchingIndexingMap(input).getResults())
      at.push_back(indices[cast<AffineDimExpr>(expr).getPosition()]);
    mapping.map(arg, memref::LoadOp::create(b, loc, input->get(), at).getResult());
  }
  for (Operation &op : body->without_terminator())
    b.clone(op, mapping);
  memref::StoreOp::create(b, loc, mapping.lookup(body->getTerminator()->getOperand(0)),
                          consumer.getDpsInits()[0], indices);
}

void GemvEmitter::emit() {
  int64_t partialBytes = kWarps * kBlockColumns * 4;
  Value blocks = idx(llvm::divideCeil(g.n, kBlockColumns));
  if (enabled)
    blocks = arith::SelectOp::create(b, loc, enabled, blocks, idx(0));
  auto launch = gpu::LaunchOp::create(
      b, loc, blocks, idx(1), idx(1), idx(kThreads), idx(1),
      idx(1), arith::ConstantIntOp::create(b, loc, b.getI32Type(), partialBytes));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  zero = idx(0);
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value group = arith::RemUIOp::create(b, loc, tid, idx(kColumnGroups));
  rowLane = arith::DivUIOp::create(b, loc, tid, idx(kColumnGroups));
  Value blockColumn = mul(block, idx(kBlockColumns));
  column = add(blockColumn, mul(group, idx(kColumnsPerThread)));
  Value sums = rowSums();

  // The warp's row lanes (lane / 2) summed per column group: xor shuffles
  // at offsets 16 .. 2 keep lane % 2.
  SmallVector<Value> totals;
  for (int64_t e = 0; e < kColumnsPerThread; ++e) {
    Value partial = vector::ExtractOp::create(b, loc, sums, e);
    for (int32_t offset = cuda::kWarp / 2; offset >= kColumnGroups; offset /= 2) {
      Value other = gpu::ShuffleOp::create(b, loc, partial, offset,
                                           static_cast<int32_t>(cuda::kWarp),
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      partial = arith::AddFOp::create(b, loc, partial, other);
    }
    totals.push_back(partial);
  }
  // Lanes 0 and 1 of each warp hold its sums: partial[warp][column in block].
  Attribute workgroup = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value smem = gpu::DynamicSharedMemoryOp::create(
      b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), MemRefLayoutAttrInterface(),
                              workgroup));
  Value partials = memref::ViewOp::create(
      b, loc,
      MemRefType::get({kWarps, kBlockColumns}, b.getF32Type(), MemRefLayoutAttrInterface(),
                      workgroup),
      smem, idx(0), ValueRange{});
  Value warp = arith::DivUIOp::create(b, loc, tid, idx(cuda::kWarp));
  Value lane = arith::RemUIOp::create(b, loc, tid, idx(cuda::kWarp));
  Value leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lane,
                                       idx(kColumnGroups));
  {
    auto ifLeader = scf::IfOp::create(b, loc, leader, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard body(b);
    b.setInsertionPointToStart(&ifLeader.getThenRegion().front());
    auto vec = VectorType::get({kColumnsPerThread}, b.getF32Type());
    Value packed = vector::FromElementsOp::create(b, loc, vec, totals);
    vector::StoreOp::create(b, loc, packed, partials,
                            ValueRange{warp, mul(lane, idx(kColumnsPerThread))});
  }
  gpu::BarrierOp::create(b, loc);
  // Threads 0..15: one column each, the 4 warps' sums.
  Value n = add(blockColumn, tid);
  Value finisher = arith::AndIOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid, idx(kBlockColumns)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, n, idx(g.n)));
  auto ifFinisher = scf::IfOp::create(b, loc, finisher, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&ifFinisher.getThenRegion().front());
  Value total = memref::LoadOp::create(b, loc, partials, ValueRange{idx(0), tid});
  for (int64_t w = 1; w < kWarps; ++w)
    total = arith::AddFOp::create(b, loc, total,
                                  memref::LoadOp::create(b, loc, partials, ValueRange{idx(w), tid}));
  store(total, n);
  b.setInsertionPointAfter(ifFinisher);
  gpu::TerminatorOp::create(b, loc);
}

} // namespace

bool gemvApplies(const Gemm &g) {
  auto a = cast<MemRefType>(g.a.getType());
  return a.getRank() == 2 && g.batch == 1 && !g.kMajorB && !g.broadcastA &&
         (g.element.isF16() || g.element.isBF16()) && g.n % kColumnsPerThread == 0 &&
         (ShapedType::isDynamic(g.m) || g.m == 1);
}

void emitGemvKernel(OpBuilder &b, Location loc, const Gemm &g, bool accumulate,
                    linalg::GenericOp epilogue, Value enabled) {
  GemvEmitter(b, loc, g, accumulate, epilogue, enabled).emit();
}

} // namespace kiln::cuda_gemm
