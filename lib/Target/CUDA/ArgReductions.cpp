//===- ArgReductions.cpp - The kiln-cuda-arg-reductions pass --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// ArgMax and ArgMin reach the CUDA codegen as a linalg.generic that folds a
// row into two accumulators, the best value and its index, with a compare
// and two selects. Neither the row kernels nor the warp reductions combine
// a pair, so the generic path ran one thread per row, serially over the
// row: a decoder's greedy pick over 50257 logits took a thread 50257
// dependent steps. Here each row gets a block: thread t folds elements
// t, t + T, ... from the initial value (eight loads in flight per trip),
// warps combine their (value, index) pairs with shuffles and the block
// through shared memory, and thread 0 folds the total into the initial
// pair and stores it.
//
// Combining two partial pairs repeats the generic's own step with the pair
// of the smaller index as the accumulator, so ties go the way the serial
// loop sends them (the first index for a strict compare, the last for a
// non-strict one) and NaNs are skipped exactly when the serial loop skips
// them. A thread that took no element carries index -1 and loses to any.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/CUDA/Passes.h"

#include "WarpShuffle.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCUDAARGREDUCTIONSPASS
#include "kiln/Target/CUDA/Passes.h.inc"

namespace {

using namespace mlir;
using namespace kiln::cuda;

/// Elements a thread loads per trip before folding them.
constexpr int64_t kUnroll = 8;

/// An arg reduction over the last loop: `better = cmpf pred(in, best)`,
/// `best' = select(better, in, best)`, `index' = select(better, j, index)`.
struct ArgReduction {
  linalg::GenericOp generic;
  arith::CmpFPredicate predicate;
  Value values, indices;         // the two output buffers
  linalg::FillOp valueFill, indexFill; // their initial fills, if erasable
  bool valuesUnused = false;     // an allocation only the reduction writes
};

/// The fill of `buffer` that last wrote it before `op` in `op`'s block,
/// with nothing in between touching the buffer; null if there is none.
linalg::FillOp fillBefore(Value buffer, Operation *op) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    bool touches = llvm::is_contained(prev->getOperands(), buffer);
    if (!touches)
      continue;
    auto fill = dyn_cast<linalg::FillOp>(prev);
    return fill && fill.getOutputs()[0] == buffer ? fill : linalg::FillOp();
  }
  return {};
}

/// Whether `buffer` is an allocation used only by `generic`, `fill` and
/// its deallocation.
bool onlyUsedBy(Value buffer, linalg::GenericOp generic, linalg::FillOp fill) {
  if (!buffer.getDefiningOp<memref::AllocOp>())
    return false;
  return llvm::all_of(buffer.getUsers(), [&](Operation *user) {
    return user == generic.getOperation() || (fill && user == fill.getOperation()) ||
           isa<memref::DeallocOp>(user);
  });
}

std::optional<ArgReduction> match(linalg::GenericOp generic) {
  if (!generic.hasPureBufferSemantics() || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 2)
    return std::nullopt;
  int64_t loops = generic.getNumLoops();
  auto iterators = generic.getIteratorTypesArray();
  for (int64_t d = 0; d < loops; ++d)
    if ((d + 1 == loops) != (iterators[d] == utils::IteratorType::reduction))
      return std::nullopt;
  auto maps = generic.getIndexingMapsArray();
  AffineMap kept = AffineMap::getMultiDimIdentityMap(loops, generic.getContext())
                       .getMajorSubMap(loops - 1);
  if (!maps[0].isIdentity() || maps[1] != kept || maps[2] != kept)
    return std::nullopt;
  auto inType = cast<MemRefType>(generic.getDpsInputs()[0].getType());
  auto floatType = dyn_cast<FloatType>(inType.getElementType());
  int64_t length = inType.getShape().back();
  // Shuffles move 32 bits: values of at most 32 bits, indices as i32.
  if (!floatType || floatType.getWidth() > 32 || ShapedType::isDynamic(length) ||
      length >= std::numeric_limits<int32_t>::max())
    return std::nullopt;
  Value values = generic.getDpsInits()[0], indices = generic.getDpsInits()[1];
  auto indexType = dyn_cast<IntegerType>(cast<MemRefType>(indices.getType()).getElementType());
  if (cast<MemRefType>(values.getType()).getElementType() != floatType || !indexType ||
      indexType.getWidth() < 32)
    return std::nullopt;

  // The body: exactly the compare, the index and the two selects.
  Block &body = generic.getRegion().front();
  Value in = body.getArgument(0), best = body.getArgument(1), bestIndex = body.getArgument(2);
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto pickValue = yield.getOperand(0).getDefiningOp<arith::SelectOp>();
  auto pickIndex = yield.getOperand(1).getDefiningOp<arith::SelectOp>();
  if (!pickValue || !pickIndex || pickValue.getCondition() != pickIndex.getCondition() ||
      pickValue.getTrueValue() != in || pickValue.getFalseValue() != best ||
      pickIndex.getFalseValue() != bestIndex)
    return std::nullopt;
  auto compare = pickValue.getCondition().getDefiningOp<arith::CmpFOp>();
  auto indexCast = pickIndex.getTrueValue().getDefiningOp<arith::IndexCastOp>();
  auto index = indexCast ? indexCast.getIn().getDefiningOp<linalg::IndexOp>() : linalg::IndexOp();
  if (!compare || compare.getLhs() != in || compare.getRhs() != best || !index ||
      static_cast<int64_t>(index.getDim()) != loops - 1 ||
      std::distance(body.begin(), body.end()) != 6)
    return std::nullopt;
  arith::CmpFPredicate predicate = compare.getPredicate();
  if (!llvm::is_contained({arith::CmpFPredicate::OGT, arith::CmpFPredicate::OGE,
                           arith::CmpFPredicate::OLT, arith::CmpFPredicate::OLE},
                          predicate))
    return std::nullopt;

  ArgReduction r{generic, predicate, values, indices, {}, {}, false};
  // A fill right before the generic is the initial pair: read as its
  // constant, and gone when nothing else reads what it wrote (the kernel
  // writes every row of the outputs).
  r.valueFill = fillBefore(values, generic);
  r.indexFill = fillBefore(indices, generic);
  r.valuesUnused = onlyUsedBy(values, generic, r.valueFill);
  return r;
}

/// Emits the kernel of `r` in place of its generic (and erasable fills).
class Emitter {
public:
  Emitter(ArgReduction &r, int64_t threads) : r(r), threads(threads), b(r.generic) {}
  void emit();

private:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i32(int64_t v) { return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v); }
  /// The serial step: `candidate` replaces `acc` when the compare says so.
  Value better(Value candidate, Value acc) {
    return arith::CmpFOp::create(b, loc, r.predicate, candidate, acc);
  }
  /// Combines two partial pairs (index -1: none taken) as the serial loop
  /// would have met them: the smaller index first.
  std::pair<Value, Value> merge(std::pair<Value, Value> a, std::pair<Value, Value> c);

  ArgReduction &r;
  int64_t threads;
  OpBuilder b;
  Location loc = r.generic.getLoc();
};

std::pair<Value, Value> Emitter::merge(std::pair<Value, Value> a, std::pair<Value, Value> c) {
  auto select = [&](Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y).getResult();
  };
  Value aFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, a.second, c.second);
  Value firstV = select(aFirst, a.first, c.first), firstI = select(aFirst, a.second, c.second);
  Value secondV = select(aFirst, c.first, a.first), secondI = select(aFirst, c.second, a.second);
  Value take = better(secondV, firstV);
  Value v = select(take, secondV, firstV), i = select(take, secondI, firstI);
  Value zero = i32(0);
  Value aNone = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, a.second, zero);
  Value cNone = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, c.second, zero);
  v = select(aNone, c.first, select(cNone, a.first, v));
  i = select(aNone, c.second, select(cNone, a.second, i));
  return {v, i};
}

void Emitter::emit() {
  linalg::GenericOp generic = r.generic;
  Value input = generic.getDpsInputs()[0];
  auto inType = cast<MemRefType>(input.getType());
  auto valueType = cast<FloatType>(inType.getElementType());
  Type f32 = b.getF32Type();
  int64_t outerRank = inType.getRank() - 1;
  int64_t length = inType.getShape().back();

  SmallVector<Value> outerSizes;
  Value rows = idx(1);
  for (int64_t d = 0; d < outerRank; ++d) {
    outerSizes.push_back(memref::DimOp::create(b, loc, input, d));
    rows = arith::MulIOp::create(b, loc, rows, outerSizes.back());
  }
  int64_t warps = threads / kWarp;
  auto space = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  SmallVector<Type> workgroup{
      MemRefType::get({warps}, f32, MemRefLayoutAttrInterface{}, space),
      MemRefType::get({warps}, b.getI32Type(), MemRefLayoutAttrInterface{}, space)};
  Value one = idx(1);
  auto launch = gpu::LaunchOp::create(b, loc, rows, one, one, idx(threads), one, one, nullptr,
                                      nullptr, {}, workgroup);
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value sharedValues = launch.getWorkgroupAttributions()[0];
  Value sharedIndices = launch.getWorkgroupAttributions()[1];
  Value tx = launch.getThreadIds().x;
  Value lane = arith::RemUIOp::create(b, loc, tx, idx(kWarp));
  Value warp = arith::DivUIOp::create(b, loc, tx, idx(kWarp));

  // The row's outer indices, row-major over the input's outer dims.
  SmallVector<Value> outer(outerRank);
  Value rest = launch.getBlockIds().x;
  for (int64_t d = outerRank - 1; d >= 0; --d) {
    outer[d] = d == 0 ? rest : arith::RemUIOp::create(b, loc, rest, outerSizes[d]).getResult();
    if (d > 0)
      rest = arith::DivUIOp::create(b, loc, rest, outerSizes[d]);
  }
  auto widen = [&](Value v) -> Value {
    return valueType.getWidth() < 32 ? arith::ExtFOp::create(b, loc, f32, v).getResult() : v;
  };
  Value initValue = widen(r.valueFill ? r.valueFill.getInputs()[0]
                                      : memref::LoadOp::create(b, loc, r.values, outer));

  // Thread t folds elements t, t + T, ... from the initial value, kUnroll
  // of them per trip: their loads (indices clamped into the row) are all
  // issued before the first compare, so the trip waits for memory once.
  auto fold = scf::ForOp::create(
      b, loc, tx, idx(length), idx(threads * kUnroll), ValueRange{initValue, i32(-1)},
      [&](OpBuilder &nb, Location, Value j, ValueRange acc) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(nb.getInsertionBlock());
        SmallVector<Value> loaded, valid, positions;
        for (int64_t u = 0; u < kUnroll; ++u) {
          Value ju = arith::AddIOp::create(b, loc, j, idx(u * threads));
          Value inRow = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, ju, idx(length));
          SmallVector<Value> at(outer);
          at.push_back(arith::SelectOp::create(b, loc, inRow, ju, idx(length - 1)));
          loaded.push_back(widen(memref::LoadOp::create(b, loc, input, at)));
          valid.push_back(inRow);
          positions.push_back(arith::IndexCastOp::create(b, loc, b.getI32Type(), ju));
        }
        Value best = acc[0], at = acc[1];
        for (int64_t u = 0; u < kUnroll; ++u) {
          Value take = arith::AndIOp::create(b, loc, valid[u], better(loaded[u], best));
          best = arith::SelectOp::create(b, loc, take, loaded[u], best);
          at = arith::SelectOp::create(b, loc, take, positions[u], at);
        }
        scf::YieldOp::create(b, loc, ValueRange{best, at});
      });
  std::pair<Value, Value> partial{fold.getResult(0), fold.getResult(1)};
  // Lanes: xor shuffles of both halves of the pair.
  for (int32_t offset = kWarp / 2; offset > 0; offset /= 2) {
    auto shuffle = [&](Value v) {
      return gpu::ShuffleOp::create(b, loc, v, offset, static_cast<int32_t>(kWarp),
                                    gpu::ShuffleMode::XOR)
          .getShuffleResult();
    };
    partial = merge(partial, {shuffle(partial.first), shuffle(partial.second)});
  }
  Value zero = idx(0);
  Value isLaneZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, zero);
  auto ifLane = scf::IfOp::create(b, loc, isLaneZero, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifLane.thenBlock());
    memref::StoreOp::create(b, loc, partial.first, sharedValues, warp);
    memref::StoreOp::create(b, loc, partial.second, sharedIndices, warp);
  }
  gpu::BarrierOp::create(b, loc);
  Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tx, zero);
  auto ifFirst = scf::IfOp::create(b, loc, isFirst, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifFirst.thenBlock());
  std::pair<Value, Value> total{memref::LoadOp::create(b, loc, sharedValues, zero),
                                memref::LoadOp::create(b, loc, sharedIndices, zero)};
  for (int64_t w = 1; w < warps; ++w)
    total = merge(total, {memref::LoadOp::create(b, loc, sharedValues, idx(w)),
                          memref::LoadOp::create(b, loc, sharedIndices, idx(w))});
  // The initial pair keeps its place unless the row had a better element.
  auto indexType = cast<MemRefType>(r.indices.getType()).getElementType();
  Value initIndex = r.indexFill ? r.indexFill.getInputs()[0]
                                : memref::LoadOp::create(b, loc, r.indices, outer).getResult();
  Value none = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, total.second, i32(0));
  Value index = total.second;
  if (indexType != index.getType())
    index = arith::ExtSIOp::create(b, loc, indexType, index);
  index = arith::SelectOp::create(b, loc, none, initIndex, index);
  memref::StoreOp::create(b, loc, index, r.indices, outer);
  if (!r.valuesUnused) {
    Value value = arith::SelectOp::create(b, loc, none, initValue, total.first);
    if (valueType.getWidth() < 32)
      value = arith::TruncFOp::create(b, loc, valueType, value);
    memref::StoreOp::create(b, loc, value, r.values, outer);
  }

  // What the kernel replaces: the generic, the fills it reads as constants,
  // and the value buffer nothing else reads.
  generic.erase();
  if (r.indexFill)
    r.indexFill.erase();
  if (r.valueFill)
    r.valueFill.erase();
  if (r.valuesUnused) {
    for (Operation *user : llvm::make_early_inc_range(r.values.getUsers()))
      user->erase(); // the deallocation
    r.values.getDefiningOp()->erase();
  }
}

struct KilnCUDAArgReductionsPass final
    : impl::KilnCUDAArgReductionsPassBase<KilnCUDAArgReductionsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (threads < kWarp || threads % kWarp != 0 || threads > 1024) {
      getOperation().emitError("kiln-cuda-arg-reductions: threads ")
          << static_cast<int64_t>(threads) << " is not a multiple of 32 in [32, 1024]";
      return signalPassFailure();
    }
    SmallVector<ArgReduction> found;
    getOperation().walk([&](linalg::GenericOp generic) {
      if (std::optional<ArgReduction> r = match(generic))
        found.push_back(*r);
    });
    for (ArgReduction &r : found)
      Emitter(r, threads).emit();
  }
};

} // namespace
} // namespace kiln
