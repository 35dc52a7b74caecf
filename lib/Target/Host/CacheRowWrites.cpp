//===- CacheRowWrites.cpp - The kiln-cache-row-writes pass ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// kiln.kv_cache_write lowers to a linalg.generic over the whole cache whose
// init is the cache: each element is the new row's where its row index is
// the sequence's position, the cache's own elsewhere. In place after
// bufferization, it still reads and writes every cached element each decode
// step (2 x 453 MB for GPT-2 small at batch 32 and 384 rows). Here such a
// generic (on buffers, with whatever its dispatch fused into it: the rotary
// product, the cast to the cache's type) becomes an scf.parallel over the
// other dims that reads the position once per point and, when it lies in
// the cache, computes and stores that one element of the row: the new rows
// only. A position outside the cache writes nothing, as before.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNCACHEROWWRITESPASS
#include "kiln/Target/Host/Passes.h.inc"

namespace {

/// A row write: the yield is `select(index(row) == position, value, out)`
/// (either compare order, the index through an index_cast), `position` a
/// block argument of an input read independently of the row loop.
struct RowWrite {
  unsigned row;            // the loop of the cache's rows
  BlockArgument position;  // the input holding each sequence's position
  arith::SelectOp select;
};

/// The loop `value` (a linalg.index, possibly index_cast) stands for.
linalg::IndexOp indexOf(Value value) {
  if (auto cast = value.getDefiningOp<arith::IndexCastOp>())
    value = cast.getIn();
  return value.getDefiningOp<linalg::IndexOp>();
}

std::optional<RowWrite> matchRowWrite(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() > 0 || op.getNumLoops() == 0)
    return std::nullopt;
  OpOperand *init = op.getDpsInitOperand(0);
  if (!op.getMatchingIndexingMap(init).isIdentity() ||
      !cast<MemRefType>(init->get().getType()).hasStaticShape())
    return std::nullopt;
  Block *body = op.getBlock();
  auto select = body->getTerminator()->getOperand(0).getDefiningOp<arith::SelectOp>();
  BlockArgument out = op.getMatchingBlockArgument(init);
  if (!select || select.getFalseValue() != out || !out.hasOneUse())
    return std::nullopt;
  auto compare = select.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!compare || compare.getPredicate() != arith::CmpIPredicate::eq)
    return std::nullopt;
  for (auto [lhs, rhs] : {std::pair(compare.getLhs(), compare.getRhs()),
                          std::pair(compare.getRhs(), compare.getLhs())}) {
    linalg::IndexOp index = indexOf(lhs);
    auto position = dyn_cast<BlockArgument>(rhs);
    if (!index || !position || position.getOwner() != body ||
        position.getArgNumber() >= op.getNumDpsInputs())
      continue;
    RowWrite w{static_cast<unsigned>(index.getDim()), position, select};
    // The row loop is read by that index alone: no input map uses it, and
    // no other linalg.index asks for it.
    bool rowFree = llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *input) {
      return !op.getMatchingIndexingMap(input).isFunctionOfDim(w.row);
    });
    bool oneIndex = true;
    body->walk([&](linalg::IndexOp other) {
      if (other != index && other.getDim() == w.row)
        oneIndex = false;
    });
    if (rowFree && oneIndex)
      return w;
  }
  return std::nullopt;
}

/// `map`'s results at the loop values `loops`, as index values.
SmallVector<Value> applyMap(OpBuilder &b, Location loc, AffineMap map, ValueRange loops) {
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      indices.push_back(loops[dim.getPosition()]);
      continue;
    }
    if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
      indices.push_back(arith::ConstantIndexOp::create(b, loc, constant.getValue()));
      continue;
    }
    AffineMap one = AffineMap::get(map.getNumDims(), 0, expr);
    indices.push_back(affine::AffineApplyOp::create(b, loc, one, loops));
  }
  return indices;
}

void rewrite(linalg::GenericOp op, RowWrite &w) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value cache = op.getDpsInitOperand(0)->get();
  auto cacheType = cast<MemRefType>(cache.getType());
  int64_t rank = cacheType.getRank();
  // Every loop but the row's, over the cache's dims.
  SmallVector<Value> lower, upper, steps;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == w.row)
      continue;
    lower.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    upper.push_back(arith::ConstantIndexOp::create(b, loc, cacheType.getDimSize(d)));
    steps.push_back(arith::ConstantIndexOp::create(b, loc, 1));
  }
  auto loop = scf::ParallelOp::create(b, loc, lower, upper, steps);
  b.setInsertionPointToStart(loop.getBody());
  SmallVector<Value> loops;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  for (int64_t d = 0, i = 0; d < rank; ++d)
    loops.push_back(d == w.row ? zero : loop.getInductionVars()[i++]);
  // The position first (its map does not use the row loop).
  OpOperand *positions = op.getDpsInputOperand(w.position.getArgNumber());
  Value position = memref::LoadOp::create(
      b, loc, positions->get(),
      applyMap(b, loc, op.getMatchingIndexingMap(positions), loops));
  Value row = position;
  if (!row.getType().isIndex())
    row = arith::IndexCastOp::create(b, loc, b.getIndexType(), row);
  Value size = arith::ConstantIndexOp::create(b, loc, cacheType.getDimSize(w.row));
  // index >= 0 and index < size, as one unsigned compare.
  Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, size);
  auto ifInside = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifInside.thenBlock());
  loops[w.row] = row;
  IRMapping mapping;
  Block *body = op.getBlock();
  for (OpOperand *input : op.getDpsInputOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(input);
    if (arg == w.position) {
      mapping.map(arg, position);
      continue;
    }
    if (arg.use_empty())
      continue;
    mapping.map(arg, memref::LoadOp::create(b, loc, input->get(),
                                            applyMap(b, loc, op.getMatchingIndexingMap(input),
                                                     loops)));
  }
  for (Operation &inner : body->without_terminator()) {
    if (&inner == w.select.getOperation())
      continue;
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), loops[index.getDim()]);
      continue;
    }
    b.clone(inner, mapping);
  }
  memref::StoreOp::create(b, loc, mapping.lookupOrDefault(w.select.getTrueValue()), cache, loops);
  op.erase();
}

struct KilnCacheRowWritesPass final
    : impl::KilnCacheRowWritesPassBase<KilnCacheRowWritesPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, RowWrite>> found;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<RowWrite> w = matchRowWrite(op))
        found.emplace_back(op, *w);
    });
    for (auto &[op, w] : found)
      rewrite(op, w);
  }
};

} // namespace
} // namespace kiln
