//===- WarpReductions.cpp - The kiln-cuda-warp-reductions pass ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Row reductions (softmax's max and sum, layernorm's statistics, reduce
// ops) arrive as `scf.parallel` over rows around an `scf.for` that folds one
// row into a register. Mapped one thread per row they read memory with a
// stride of a row between neighbouring threads and leave most of the chip
// idle. Here each row gets a warp instead: lane l folds elements l, l+32,
// ... (neighbouring lanes read neighbouring elements), the 32 partial
// results are combined with five xor shuffles, and lane 0 runs what followed
// the loop (the store of the result).
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/CUDA/Passes.h"

#include "WarpShuffle.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCUDAWARPREDUCTIONSPASS
#include "kiln/Target/CUDA/Passes.h.inc"

namespace {

using namespace mlir;
using namespace kiln::cuda;

/// The identity of a reduction's combining op, or null if it is not one
/// whose partial results may be combined in any order.
TypedAttr identityOf(Operation *combine, Type type) {
  auto floatType = dyn_cast<FloatType>(type);
  // A shuffle moves 32 bits: f16/bf16 partials travel as f32 (exactly);
  // f64 would need two shuffles and is left to one thread per row.
  if (!floatType || floatType.getWidth() > 32)
    return nullptr;
  const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
  if (isa<arith::AddFOp>(combine))
    return FloatAttr::get(floatType, llvm::APFloat::getZero(semantics));
  if (isa<arith::MulFOp>(combine))
    return FloatAttr::get(floatType, llvm::APFloat::getOne(semantics));
  if (isa<arith::MaxNumFOp, arith::MaximumFOp>(combine))
    return FloatAttr::get(floatType, llvm::APFloat::getInf(semantics, /*Negative=*/true));
  if (isa<arith::MinNumFOp, arith::MinimumFOp>(combine))
    return FloatAttr::get(floatType, llvm::APFloat::getInf(semantics, /*Negative=*/false));
  return nullptr;
}

/// Reads memory and writes none, with no regions: safe to run on every lane.
bool isReadOnlyLeaf(Operation *op) {
  if (op->getNumRegions() != 0)
    return false;
  return isMemoryEffectFree(op) || isa<memref::LoadOp>(op);
}

/// A load in the reduction loop that depends on its induction variable must
/// index the last (contiguous) dimension with it, so that adjacent lanes
/// read adjacent elements; a matmul's B[k, j] or a reduction over a middle
/// axis keeps one thread per output, whose neighbours already coalesce.
bool contiguousAlongLoop(Operation &op, scf::ForOp loop) {
  auto load = dyn_cast<memref::LoadOp>(op);
  if (!load)
    return true;
  Value k = loop.getInductionVar();
  auto indices = load.getIndices();
  for (auto [position, index] : llvm::enumerate(indices)) {
    if (index == k) {
      if (position + 1 != indices.size())
        return false;
      continue;
    }
    // An index computed inside the loop (from k, e.g. a conv's h + kh).
    if (Operation *def = index.getDefiningOp(); def && loop->isAncestor(def))
      return false;
  }
  return true;
}

/// What a row reduction loop nest is made of.
struct RowReduction {
  scf::ParallelOp rows;
  SmallVector<Operation *> before; // read-only leaves, run by every lane
  scf::ForOp loop;                 // one iter_arg, folded by `combine`
  Operation *combine = nullptr;
  Value folded;                    // the combine operand that is not the accumulator
  TypedAttr identity;
  SmallVector<Operation *> after; // run by lane 0 with the row's result
};

std::optional<RowReduction> match(scf::ParallelOp rows, int64_t minTrip) {
  if (rows->hasAttr(kSerialLoopAttr) || rows.getNumReductions() != 0)
    return std::nullopt;
  for (auto [lb, step] : llvm::zip(rows.getLowerBound(), rows.getStep()))
    if (getConstantIntValue(lb) != 0 || getConstantIntValue(step) != 1)
      return std::nullopt;
  RowReduction r;
  r.rows = rows;
  for (Operation &op : rows.getBody()->without_terminator()) {
    if (auto loop = dyn_cast<scf::ForOp>(op); loop && !r.loop) {
      r.loop = loop;
      continue;
    }
    if (!r.loop) {
      if (!isReadOnlyLeaf(&op))
        return std::nullopt;
      r.before.push_back(&op);
    } else {
      if (op.getNumRegions() != 0)
        return std::nullopt;
      r.after.push_back(&op);
    }
  }
  scf::ForOp loop = r.loop;
  if (!loop || loop.getNumRegionIterArgs() != 1)
    return std::nullopt;
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!step || *step <= 0 || (lb && ub && (*ub - *lb) / *step < minTrip))
    return std::nullopt;
  for (Operation &op : loop.getBody()->without_terminator())
    if (!isReadOnlyLeaf(&op) || !contiguousAlongLoop(op, loop))
      return std::nullopt;
  Value acc = loop.getRegionIterArgs()[0];
  if (!acc.hasOneUse())
    return std::nullopt;
  r.combine = *acc.getUsers().begin();
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  if (r.combine->getNumOperands() != 2 || r.combine->getNumResults() != 1 ||
      yield.getOperand(0) != r.combine->getResult(0) ||
      !r.combine->getResult(0).hasOneUse())
    return std::nullopt;
  r.folded = r.combine->getOperand(0) == acc ? r.combine->getOperand(1)
                                              : r.combine->getOperand(0);
  if (r.folded == acc)
    return std::nullopt;
  r.identity = identityOf(r.combine, acc.getType());
  if (!r.identity)
    return std::nullopt;
  return r;
}

/// `combine` applied to (a, b), keeping its attributes (fastmath).
Value combineValues(OpBuilder &b, RowReduction &r, Value a, Value c) {
  IRMapping map;
  map.map(r.loop.getRegionIterArgs()[0], a);
  map.map(r.folded, c);
  return b.clone(*r.combine, map)->getResult(0);
}

void rewrite(RowReduction &r, int64_t blockSize) {
  scf::ParallelOp rows = r.rows;
  Location loc = rows.getLoc();
  OpBuilder b(rows);
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v).getResult(); };
  Value one = index(1);
  Value count = one;
  for (Value ub : rows.getUpperBound())
    count = arith::MulIOp::create(b, loc, count, ub);
  int64_t warpsPerBlock = blockSize / kWarp;
  Value blocks = arith::CeilDivUIOp::create(b, loc, count, index(warpsPerBlock));
  auto launch = gpu::LaunchOp::create(b, loc, blocks, one, one, index(blockSize), one, one);
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&launch.getBody().front());

  Value thread = launch.getThreadIds().x, block = launch.getBlockIds().x;
  Value warpSize = index(kWarp);
  Value lane = arith::RemUIOp::create(b, loc, thread, warpSize);
  Value warp = arith::DivUIOp::create(b, loc, thread, warpSize);
  Value row = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, block, index(warpsPerBlock)), warp);
  // Uniform per warp: every lane of a warp works on the same row.
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, count);
  auto ifRow = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifRow.thenBlock());

  IRMapping map;
  Value rest = row;
  SmallVector<Value> ivs(rows.getNumLoops());
  for (int64_t d = rows.getNumLoops() - 1; d >= 0; --d) {
    Value ub = rows.getUpperBound()[d];
    ivs[d] = d == 0 ? rest : arith::RemUIOp::create(b, loc, rest, ub).getResult();
    if (d > 0)
      rest = arith::DivUIOp::create(b, loc, rest, ub);
  }
  for (auto [iv, value] : llvm::zip(rows.getInductionVars(), ivs))
    map.map(iv, value);
  for (Operation *op : r.before)
    b.clone(*op, map);

  // Lane l folds elements lb + l*step, lb + (l+32)*step, ...
  scf::ForOp loop = r.loop;
  Value step = map.lookupOrDefault(loop.getStep());
  Value start = arith::AddIOp::create(b, loc, map.lookupOrDefault(loop.getLowerBound()),
                                      arith::MulIOp::create(b, loc, lane, step));
  Value stride = arith::MulIOp::create(b, loc, step, warpSize);
  Value identity = arith::ConstantOp::create(b, loc, r.identity);
  auto strided = scf::ForOp::create(
      b, loc, start, map.lookupOrDefault(loop.getUpperBound()), stride, ValueRange{identity},
      [&](OpBuilder &nb, Location, Value k, ValueRange args) {
        map.map(loop.getInductionVar(), k);
        map.map(loop.getRegionIterArgs()[0], args[0]);
        for (Operation &op : loop.getBody()->without_terminator())
          nb.clone(op, map);
        scf::YieldOp::create(nb, loc, map.lookup(r.combine->getResult(0)));
      });
  Value partial = warpAllReduce(b, loc, strided.getResult(0), [&](Value mine, Value other) {
    return combineValues(b, r, mine, other);
  });
  Value total = combineValues(b, r, map.lookupOrDefault(loop.getInitArgs()[0]), partial);

  Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, index(0));
  auto ifFirst = scf::IfOp::create(b, loc, isFirst, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifFirst.thenBlock());
  map.map(loop.getResult(0), total);
  for (Operation *op : r.after)
    b.clone(*op, map);
  rows.erase();
}

struct KilnCUDAWarpReductionsPass final
    : impl::KilnCUDAWarpReductionsPassBase<KilnCUDAWarpReductionsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (blockSize < kWarp || blockSize % kWarp != 0 || blockSize > 1024) {
      getOperation().emitError("kiln-cuda-warp-reductions: block-size ")
          << static_cast<int64_t>(blockSize) << " is not a multiple of 32 in [32, 1024]";
      return signalPassFailure();
    }
    if (getOperation().isExternal())
      return;
    SmallVector<RowReduction> found;
    for (Operation &op : getOperation().getBody().front())
      if (auto rows = dyn_cast<scf::ParallelOp>(op))
        if (std::optional<RowReduction> r = match(rows, minRowLength))
          found.push_back(*r);
    for (RowReduction &r : found)
      rewrite(r, blockSize);
  }
};

} // namespace
} // namespace kiln
