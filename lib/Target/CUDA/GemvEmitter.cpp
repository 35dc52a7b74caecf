//===- GemvEmitter.cpp - The one-row product kernel of kiln-cuda-gemm -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// See GemvEmitter.h. A block of 256 threads owns 16 columns of B: thread t
// reads 8 of them (one 16-byte load: t % 2 picks which 8) from every 128th
// row starting at row t / 2, so the block reads whole 32-byte sectors of B.
// Eight rows are loaded before they are multiplied: 32 KiB of B in flight
// per block. ptxas keeps them in flight only when it may spend the
// registers: left to itself (256 threads, aiming at full occupancy, 32
// registers) it moves each load next to its products and about two are in
// flight (seen in the SASS); the kernel therefore asks for 4 resident
// blocks per SM (PTX .minnctapersm 4: up to 64 registers, 8 loads issued
// before the first product). The request travels as the attribute
// kiln.min_blocks_per_sm on the kernel's barrier, which
// kiln-cuda-merge-kernel-modules makes the outlined kernel's nvvm.minctasm.
// Each warp then sums its 16 row lanes by xor shuffles, the 8 warps' sums
// meet in shared memory, and 16 threads finish one column each: the
// epilogue's body (when the dispatch has one) and the store.
//
// Split K. ceil(N / 16) blocks are too few when N is small (a 2048-column
// projection is 128 blocks on the H100's 132 SMs, Llama's 256-column
// key/value projections 16). The rows of B are then cut into S slices
// (grid y), the shape rule, with T = the pass's gemv-blocks (default 528:
// four 256-thread blocks per SM of a 132-SM H100):
//   S = the least power of two with ceil(N / 16) * S >= T, at most 8 and at
//       most R = ceil(K / 128) (the 128-row steps); each slice P =
//       ceil(R / S) row steps; while 8 < P < 16 (straight code of more than
//       8 rows, which ptxas spills) S doubles (at most 8, at most R), and
//       if that does not do, P = 16; then S = ceil(R / P) (no empty slice;
//       only the last one may be shorter or pass K).
// The S blocks of a column block form one thread-block cluster (1 x S x 1,
// compile-time cluster dims: kiln-cuda-merge-kernel-modules turns the
// launch's cluster operands into the kernel's nvvm.cluster_dim, so the
// runtime's plain launch runs clusters). Each block puts its 16 column sums
// (f32) into its shared memory; after a cluster barrier (release/acquire)
// slice 0's finishers read the S sums through distributed shared memory
// (mapa + ld.shared::cluster) in slice order, and apply the epilogue once to
// the full sum; a second cluster barrier keeps every block (and its shared
// memory) alive until then. No global scratch, counters or second kernel.
//
//===----------------------------------------------------------------------===//

#include "GemvEmitter.h"
#include "WarpShuffle.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

namespace kiln::cuda_gemm {
namespace {

using namespace mlir;

constexpr int64_t kThreads = 256, kWarps = kThreads / cuda::kWarp;
constexpr int64_t kColumnsPerThread = 8; // one 16-byte load of f16/bf16
constexpr int64_t kColumnGroups = 2;     // threads side by side along a row of B
constexpr int64_t kBlockColumns = kColumnsPerThread * kColumnGroups;
constexpr int64_t kRowLanes = kThreads / kColumnGroups; // rows of B read at once
constexpr int64_t kUnroll = 8;
/// Resident blocks per SM the kernel asks ptxas to allow (registers: 64).
constexpr int64_t kMinBlocksPerSM = 4;
/// The largest portable thread-block cluster.
constexpr int64_t kMaxSlices = 8;
/// Shared memory: partial[warp][column] (f32), then (split K) the block's
/// 16 column sums, which slice 0 reads.
constexpr int64_t kPartialBytes = kWarps * kBlockColumns * 4;
constexpr int64_t kSumBytes = kBlockColumns * 4;

/// The split of K: `slices` blocks per column block, `steps` row steps
/// (kRowLanes rows each) per slice.
struct KSplit {
  int64_t slices, steps;
};

KSplit splitK(const Gemm &g, int64_t targetBlocks) {
  int64_t columnBlocks = llvm::divideCeil(g.n, kBlockColumns);
  int64_t rowSteps = llvm::divideCeil(g.k, kRowLanes);
  int64_t slices = 1;
  while (slices < kMaxSlices && columnBlocks * slices < targetBlocks)
    slices *= 2;
  slices = std::min(slices, rowSteps);
  int64_t steps = llvm::divideCeil(rowSteps, slices);
  // Between kUnroll and 2 * kUnroll steps, LLVM unrolls the one-trip loop
  // and ptxas, loading every row first, spills: more slices, or two whole
  // groups.
  auto straight = [](int64_t s) { return s > kUnroll && s < 2 * kUnroll; };
  while (straight(steps) && slices < std::min(kMaxSlices, rowSteps)) {
    slices = std::min(2 * slices, rowSteps);
    steps = llvm::divideCeil(rowSteps, slices);
  }
  if (straight(steps))
    steps = 2 * kUnroll;
  return {static_cast<int64_t>(llvm::divideCeil(rowSteps, steps)), steps};
}

/// One row's operands: B[k, column .. column + 8) and A[0, k].
using Row = std::pair<Value, Value>;

class GemvEmitter {
public:
  GemvEmitter(OpBuilder &b, Location loc, const Gemm &g, int64_t targetBlocks, bool accumulate,
              linalg::GenericOp consumer, Value enabled)
      : b(b), loc(loc), g(g), split(splitK(g, targetBlocks)), accumulate(accumulate),
        consumer(consumer), enabled(enabled) {}

  void emit();

private:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value ult(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  Row loadRow(Value k);
  /// loadRow(k) when k < K, else zeros (which add nothing).
  Row loadRowInK(Value k);
  /// acc + A[0, k] * B[k, column .. column + 8), from loadRow(k).
  Value multiplyAdd(Value acc, Row row);
  /// acc plus the products of the first `groups` groups of kUnroll steps
  /// of the thread's slice (rows from `start`), in a loop; `guarded`: rows
  /// past K skipped.
  Value groupSums(Value acc, Value start, int64_t groups, bool guarded);
  /// The thread's 8 partial sums over its rows of B in its slice (zeros
  /// past N).
  Value rowSums();
  /// Column `n`'s total `sum` through the epilogue (or added to C's value
  /// when accumulating) to the output.
  void store(Value sum, Value n);
  /// Both halves of a cluster barrier (release, then acquire), by every
  /// thread of the cluster.
  void clusterBarrier();
  /// Split K: each finisher's block sum `total` to its shared memory;
  /// slice 0's finishers add the S slices' sums and store them.
  void combineSlices(Value smem, Value finisher, Value total, Value n);

  OpBuilder &b;
  Location loc;
  const Gemm &g;
  KSplit split;
  bool accumulate;
  linalg::GenericOp consumer;
  Value enabled;
  Value column, rowLane, firstRow, tid, zero;
};

Row GemvEmitter::loadRow(Value k) {
  auto narrow = VectorType::get({kColumnsPerThread}, g.element);
  Value weights = vector::LoadOp::create(b, loc, narrow, g.b, ValueRange{k, column}, false,
                                         llvm::MaybeAlign(16));
  return {weights, memref::LoadOp::create(b, loc, g.a, ValueRange{zero, k})};
}

Row GemvEmitter::loadRowInK(Value k) {
  auto narrow = VectorType::get({kColumnsPerThread}, g.element);
  auto ifK = scf::IfOp::create(b, loc, TypeRange{narrow, g.element}, ult(k, idx(g.k)),
                               /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifK.getThenRegion().front());
  Row row = loadRow(k);
  scf::YieldOp::create(b, loc, ValueRange{row.first, row.second});
  b.setInsertionPointToStart(&ifK.getElseRegion().front());
  scf::YieldOp::create(
      b, loc,
      ValueRange{arith::ConstantOp::create(b, loc, narrow, b.getZeroAttr(narrow)),
                 arith::ConstantOp::create(b, loc, g.element, b.getZeroAttr(g.element))});
  return {ifK.getResult(0), ifK.getResult(1)};
}

Value GemvEmitter::multiplyAdd(Value acc, Row row) {
  auto wide = VectorType::get({kColumnsPerThread}, b.getF32Type());
  Value splat = vector::BroadcastOp::create(
      b, loc, wide, arith::ExtFOp::create(b, loc, b.getF32Type(), row.second));
  Value w = arith::ExtFOp::create(b, loc, wide, row.first);
  return vector::FMAOp::create(b, loc, w, splat, acc);
}

Value GemvEmitter::groupSums(Value acc, Value start, int64_t groups, bool guarded) {
  auto loop = scf::ForOp::create(b, loc, idx(0), idx(groups), idx(1), ValueRange{acc});
  OpBuilder::InsertionGuard body(b);
  b.setInsertionPointToStart(loop.getBody());
  Value base = add(mul(loop.getInductionVar(), idx(kUnroll * kRowLanes)), start);
  // All loads first, then the products: kUnroll loads in flight.
  SmallVector<Row> rows;
  for (int64_t u = 0; u < kUnroll; ++u) {
    Value k = add(base, idx(u * kRowLanes));
    rows.push_back(guarded ? loadRowInK(k) : loadRow(k));
  }
  Value sum = loop.getRegionIterArgs()[0];
  for (const Row &row : rows)
    sum = multiplyAdd(sum, row);
  scf::YieldOp::create(b, loc, sum);
  return loop.getResult(0);
}

Value GemvEmitter::rowSums() {
  auto wide = VectorType::get({kColumnsPerThread}, b.getF32Type());
  Value zeros = arith::ConstantOp::create(b, loc, wide, b.getZeroAttr(wide));
  // Step j of slice s reads rows (s * P + j) * 128 + [0, 128). Steps before
  // `inK` lie inside K in every slice (only the last slice can pass K); the
  // later ones guard their rows. Whole groups of kUnroll steps run in one
  // loop (every row guarded if one group has a step past `inK`: two loops
  // could each be one trip, which LLVM unrolls into one straight run), the
  // last P % kUnroll steps straight: never more than kUnroll rows loaded at
  // once (more would not fit in 64 registers: ptxas would spill; splitK
  // keeps P <= kUnroll or P >= 2 * kUnroll).
  int64_t inK = std::clamp(g.k / kRowLanes - (split.slices - 1) * split.steps, int64_t(0),
                           split.steps);
  int64_t unguardedGroups = inK / kUnroll, groups = split.steps / kUnroll;

  auto ifInside = scf::IfOp::create(b, loc, TypeRange{wide}, ult(column, idx(g.n)),
                                    /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifInside.getThenRegion().front());
    Value acc = zeros;
    Value start = add(firstRow, rowLane);
    if (groups > 0)
      acc = groupSums(acc, start, groups, /*guarded=*/groups > unguardedGroups);
    SmallVector<Row> rows;
    for (int64_t j = groups * kUnroll; j < split.steps; ++j) {
      Value k = add(start, idx(j * kRowLanes));
      rows.push_back(j < inK ? loadRow(k) : loadRowInK(k));
    }
    for (const Row &row : rows)
      acc = multiplyAdd(acc, row);
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

void GemvEmitter::clusterBarrier() {
  NVVM::ClusterArriveOp::create(b, loc, /*aligned=*/b.getUnitAttr());
  NVVM::ClusterWaitOp::create(b, loc, /*aligned=*/b.getUnitAttr());
}

void GemvEmitter::combineSlices(Value smem, Value finisher, Value total, Value n) {
  Attribute workgroup = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value sums = memref::ViewOp::create(
      b, loc,
      MemRefType::get({kBlockColumns}, b.getF32Type(), MemRefLayoutAttrInterface(), workgroup),
      smem, idx(kPartialBytes), ValueRange{});
  {
    auto ifFinisher = scf::IfOp::create(b, loc, finisher, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard body(b);
    b.setInsertionPointToStart(&ifFinisher.getThenRegion().front());
    memref::StoreOp::create(b, loc, total, sums, ValueRange{tid});
  }
  // Every slice's sums written (release) and seen by slice 0 (acquire).
  clusterBarrier();
  Value slice = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, slice, idx(0));
  {
    auto ifFirst = scf::IfOp::create(b, loc, arith::AndIOp::create(b, loc, finisher, first),
                                     /*withElseRegion=*/false);
    OpBuilder::InsertionGuard body(b);
    b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
    // sums[tid] of block `rank` of the cluster (its slice: the cluster is
    // 1 x S x 1 and the grid's y is S): the address in this block's shared
    // window, mapped into the other block's (the raw dynamic shared memory's
    // address plus the offset: a view's pointer may fold to its source's).
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem);
    Value address = add(base, add(idx(kPartialBytes), mul(tid, idx(4))));
    auto shared = LLVM::LLVMPointerType::get(b.getContext(), 3);
    auto cluster = LLVM::LLVMPointerType::get(b.getContext(), 7);
    Value local = LLVM::IntToPtrOp::create(
        b, loc, shared, arith::IndexCastOp::create(b, loc, b.getI64Type(), address).getResult());
    Value sum;
    for (int64_t rank = 0; rank < split.slices; ++rank) {
      Value remote = NVVM::MapaOp::create(
          b, loc, cluster, local,
          arith::ConstantIntOp::create(b, loc, b.getI32Type(), rank).getResult());
      Value part = LLVM::LoadOp::create(b, loc, b.getF32Type(), remote, /*alignment=*/4);
      sum = sum ? arith::AddFOp::create(b, loc, sum, part).getResult() : part;
    }
    store(sum, n);
  }
  // No block leaves (freeing its shared memory) before slice 0 read it.
  clusterBarrier();
}

void GemvEmitter::emit() {
  bool splitting = split.slices > 1;
  int64_t sharedBytes = kPartialBytes + (splitting ? kSumBytes : 0);
  Value blocks = idx(llvm::divideCeil(g.n, kBlockColumns));
  if (enabled)
    blocks = arith::SelectOp::create(b, loc, enabled, blocks, idx(0));
  Value one = idx(1), slices = idx(split.slices);
  // Split K: the slices of a column block are one cluster (1 x S x 1).
  Value clusterY = splitting ? slices : Value();
  auto launch = gpu::LaunchOp::create(
      b, loc, blocks, slices, one, idx(kThreads), one, one,
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), sharedBytes),
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/ValueRange{},
      /*workgroupAttributions=*/TypeRange{}, /*privateAttributions=*/TypeRange{},
      splitting ? one : Value(), clusterY, splitting ? one : Value());
  // The builder leaves out the body's cluster ids and sizes (arguments 12 to
  // 17, which the parser and the verifier expect): added here.
  if (splitting)
    for (int i = 0; i < 6; ++i)
      launch.getBody().front().addArgument(b.getIndexType(), loc);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  zero = idx(0);
  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value group = arith::RemUIOp::create(b, loc, tid, idx(kColumnGroups));
  rowLane = arith::DivUIOp::create(b, loc, tid, idx(kColumnGroups));
  firstRow = zero;
  if (splitting)
    firstRow = mul(gpu::BlockIdOp::create(b, loc, gpu::Dimension::y),
                   idx(split.steps * kRowLanes));
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
  {
    auto ifLeader = scf::IfOp::create(b, loc, ult(lane, idx(kColumnGroups)),
                                      /*withElseRegion=*/false);
    OpBuilder::InsertionGuard body(b);
    b.setInsertionPointToStart(&ifLeader.getThenRegion().front());
    auto vec = VectorType::get({kColumnsPerThread}, b.getF32Type());
    Value packed = vector::FromElementsOp::create(b, loc, vec, totals);
    vector::StoreOp::create(b, loc, packed, partials,
                            ValueRange{warp, mul(lane, idx(kColumnsPerThread))});
  }
  gpu::BarrierOp::create(b, loc)->setAttr(kMinBlocksPerSMAttrName,
                                          b.getI32IntegerAttr(kMinBlocksPerSM));
  // Threads 0..15: one column each, the 8 warps' sums.
  Value n = add(blockColumn, tid);
  Value finisher = arith::AndIOp::create(b, loc, ult(tid, idx(kBlockColumns)), ult(n, idx(g.n)));
  Value total;
  {
    auto ifFinisher = scf::IfOp::create(b, loc, TypeRange{b.getF32Type()}, finisher,
                                        /*withElseRegion=*/true);
    OpBuilder::InsertionGuard body(b);
    b.setInsertionPointToStart(&ifFinisher.getThenRegion().front());
    Value sum = memref::LoadOp::create(b, loc, partials, ValueRange{idx(0), tid});
    for (int64_t w = 1; w < kWarps; ++w)
      sum = arith::AddFOp::create(b, loc, sum,
                                  memref::LoadOp::create(b, loc, partials, ValueRange{idx(w), tid}));
    if (!splitting)
      store(sum, n);
    scf::YieldOp::create(b, loc, sum);
    b.setInsertionPointToStart(&ifFinisher.getElseRegion().front());
    scf::YieldOp::create(
        b, loc,
        arith::ConstantOp::create(b, loc, b.getF32Type(), b.getF32FloatAttr(0.0)).getResult());
    total = ifFinisher.getResult(0);
  }
  if (splitting)
    combineSlices(smem, finisher, total, n);
  gpu::TerminatorOp::create(b, loc);
}

} // namespace

bool gemvApplies(const Gemm &g) {
  auto a = cast<MemRefType>(g.a.getType());
  return a.getRank() == 2 && g.batch == 1 && !g.kMajorB && !g.broadcastA &&
         (g.element.isF16() || g.element.isBF16()) && g.n % kColumnsPerThread == 0 &&
         (ShapedType::isDynamic(g.m) || g.m == 1);
}

void emitGemvKernel(OpBuilder &b, Location loc, const Gemm &g, int64_t targetBlocks,
                    bool accumulate, linalg::GenericOp epilogue, Value enabled) {
  GemvEmitter(b, loc, g, targetBlocks, accumulate, epilogue, enabled).emit();
}

} // namespace kiln::cuda_gemm
