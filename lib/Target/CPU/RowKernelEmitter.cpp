//===- RowKernelEmitter.cpp - Vector code of kiln-cpu-row-kernels ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// One row group becomes
//
//   scf.parallel %r = 0 to rows {          // on the pool when big enough
//     %i0, ..., %ik-1 = delinearize %r
//     op 1 of the group for this row       // vector loop + masked tail
//     op 2 ...                             // per-row scratch stays in SSA
//   }
//
// A reduction over the row keeps several partial vector accumulators (one
// serial chain of adds per vector lane would be latency-bound) and reduces
// them horizontally once per row.
//
//===----------------------------------------------------------------------===//

#include "RowKernels.h"

#include "kiln/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace kiln::rows {

std::optional<Combiner> matchCombiner(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInits() != 1)
    return std::nullopt;
  Block *body = generic.getBody();
  BlockArgument acc = body->getArguments().back();
  Operation *combiner = body->getTerminator()->getOperand(0).getDefiningOp();
  if (!combiner || combiner->getNumOperands() != 2 || !acc.hasOneUse() ||
      *acc.getUsers().begin() != combiner)
    return std::nullopt;
  auto reassoc = [&] {
    auto fmf = dyn_cast<arith::ArithFastMathInterface>(combiner);
    return fmf && bitEnumContainsAll(fmf.getFastMathFlagsAttr().getValue(),
                                     arith::FastMathFlags::reassoc);
  };
  using Kind = vector::CombiningKind;
  std::optional<Kind> kind =
      llvm::TypeSwitch<Operation *, std::optional<Kind>>(combiner)
          .Case<arith::AddFOp>([&](auto) { return reassoc() ? std::optional(Kind::ADD) : std::nullopt; })
          .Case<arith::MulFOp>([&](auto) { return reassoc() ? std::optional(Kind::MUL) : std::nullopt; })
          .Case<arith::AddIOp>([](auto) { return Kind::ADD; })
          .Case<arith::MulIOp>([](auto) { return Kind::MUL; })
          .Case<arith::MaximumFOp>([](auto) { return Kind::MAXIMUMF; })
          .Case<arith::MinimumFOp>([](auto) { return Kind::MINIMUMF; })
          .Case<arith::MaxNumFOp>([](auto) { return Kind::MAXNUMF; })
          .Case<arith::MinNumFOp>([](auto) { return Kind::MINNUMF; })
          .Case<arith::MaxSIOp>([](auto) { return Kind::MAXSI; })
          .Case<arith::MinSIOp>([](auto) { return Kind::MINSI; })
          .Case<arith::MaxUIOp>([](auto) { return Kind::MAXUI; })
          .Case<arith::MinUIOp>([](auto) { return Kind::MINUI; })
          .Case<arith::AndIOp>([](auto) { return Kind::AND; })
          .Case<arith::OrIOp>([](auto) { return Kind::OR; })
          .Case<arith::XOrIOp>([](auto) { return Kind::XOR; })
          .Default([](Operation *) { return std::nullopt; });
  if (!kind || !arith::getNeutralElement(combiner))
    return std::nullopt;
  return Combiner{combiner, *kind};
}

bool hasVectorizableBody(Operation *op) {
  auto generic = cast<linalg::GenericOp>(op);
  for (Operation &inner : generic.getBody()->without_terminator()) {
    if (isa<linalg::IndexOp>(inner) || inner.hasTrait<OpTrait::ConstantLike>())
      continue;
    // Integer division by the zeros of masked-off lanes would trap.
    if (isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
            arith::CeilDivSIOp, arith::CeilDivUIOp, arith::FloorDivSIOp>(inner))
      return false;
    if (!isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()) ||
        !OpTrait::hasElementwiseMappableTraits(&inner) || inner.getNumRegions() != 0)
      return false;
    for (Type type : llvm::concat<const Type>(inner.getOperandTypes(), inner.getResultTypes()))
      if (!type.isIntOrIndexOrFloat())
        return false;
  }
  return true;
}

namespace {

Value index(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// Elements a task of the pool should at least cover.
constexpr int64_t kMinTaskElements = 4096;

/// Writes the code of one group; `b` is inside the row loop.
class RowEmitter {
public:
  RowEmitter(OpBuilder &b, Location loc, const RowGroup &group, const EmitOptions &options)
      : b(b), loc(loc), group(group), lanes(options.vectorWidth),
        accumulators(options.accumulators) {}

  /// This task's stack rows for the row scratch buffers, reused by every
  /// row of the task (emitted before the loop over its rows).
  void allocateRowScratch() {
    for (Value buffer : group.rowScratch) {
      auto type = cast<MemRefType>(buffer.getType());
      rowScratch[buffer] = memref::AllocaOp::create(
          b, loc, MemRefType::get(type.getShape().back(), type.getElementType()),
          b.getI64IntegerAttr(64));
    }
  }

  /// The group's ops for the row `row` (row-major over the outer dims).
  void emit(Value row, ArrayRef<OpFoldResult> outerSizes) {
    outer.assign(outerSizes.size(), nullptr);
    for (int64_t i = static_cast<int64_t>(outerSizes.size()) - 1; i >= 0; --i) {
      Value size = getValueOrCreateConstantIndexOp(b, loc, outerSizes[i]);
      outer[i] = i == 0 ? row : arith::RemUIOp::create(b, loc, row, size).getResult();
      if (i > 0)
        row = arith::DivUIOp::create(b, loc, row, size);
    }
    for (const RowOp &rowOp : group.ops)
      if (!group.dropped.contains(rowOp.op))
        llvm::TypeSwitch<Operation *>(rowOp.op)
          .Case<linalg::FillOp>([&](auto fill) { emitFill(fill, rowOp.inner); })
          .Case<memref::CopyOp>([&](auto copy) { emitCopy(copy, rowOp.inner); })
          .Case<linalg::GenericOp>([&](auto generic) { emitGeneric(generic, rowOp.inner); });
  }

private:
  OpBuilder &b;
  Location loc;
  const RowGroup &group;
  int64_t lanes, accumulators;
  SmallVector<Value> outer;
  /// The current value of each scratch buffer for this row.
  DenseMap<Value, Value> scratch;
  /// This row's stack buffer for each row scratch buffer.
  DenseMap<Value, Value> rowScratch;

  VectorType vectorOf(Type element) { return VectorType::get({lanes}, element); }

  Value broadcast(Value scalar) {
    return vector::BroadcastOp::create(b, loc, vectorOf(scalar.getType()), scalar);
  }

  /// Indices of `map` applied to (outer ivs, j).
  SmallVector<Value> indices(AffineMap map, Value j) {
    SmallVector<Value> result;
    for (AffineExpr expr : map.getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(expr))
        result.push_back(dim.getPosition() < outer.size() ? outer[dim.getPosition()] : j);
      else
        result.push_back(index(b, loc, cast<AffineConstantExpr>(expr).getValue()));
    }
    return result;
  }

  /// Row elements [0, n) in full vectors, then one masked vector for the
  /// rest (zero lanes when n is a multiple of the width).
  void rowLoop(Value n, function_ref<void(Value j, Value mask)> body) {
    Value width = index(b, loc, lanes);
    Value full = arith::SubIOp::create(b, loc, n, arith::RemUIOp::create(b, loc, n, width));
    scf::ForOp::create(b, loc, index(b, loc, 0), full, width, {},
                       [&](OpBuilder &nb, Location, Value j, ValueRange) {
                         OpBuilder::InsertionGuard guard(b);
                         b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
                         body(j, nullptr);
                         scf::YieldOp::create(b, loc);
                       });
    if (isMultipleOf(n, lanes))
      return;
    if (getConstantIntValue(n)) {
      body(full, tailMask(n, full));
      return;
    }
    // A dynamic length (a symbolic sequence) that is a multiple of the
    // width at run time skips the masked tail, as a static one does.
    scf::IfOp::create(b, loc, hasTail(n, full), [&](OpBuilder &tb, Location) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(tb.getInsertionBlock(), tb.getInsertionPoint());
      body(full, tailMask(n, full));
      scf::YieldOp::create(b, loc);
    });
  }

  /// Whether the row [0, n) has elements past its full vectors [0, full).
  Value hasTail(Value n, Value full) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, full, n);
  }

  /// Whether `n` is a constant multiple of `m` (no tail to emit).
  static bool isMultipleOf(Value n, int64_t m) {
    std::optional<int64_t> value = getConstantIntValue(n);
    return value && *value % m == 0;
  }

  /// Folds the lanes of `v` pairwise, halves at a time (a few vector ops,
  /// where LLVM expands a strict reduction of maxnum/minnum lane by lane).
  Value horizontal(vector::CombiningKind kind, Value v, bool isFloat) {
    if (!llvm::isPowerOf2_64(lanes))
      return vector::ReductionOp::create(
          b, loc, kind, v, isFloat ? arith::FastMathFlags::reassoc : arith::FastMathFlags::none);
    for (int64_t width = lanes; width > 1; width /= 2) {
      int64_t half = width / 2;
      Value low = vector::ExtractStridedSliceOp::create(b, loc, v, {0}, {half}, {1});
      Value high = vector::ExtractStridedSliceOp::create(b, loc, v, {half}, {half}, {1});
      v = vector::makeArithReduction(b, loc, kind, low, high);
    }
    return vector::ExtractOp::create(b, loc, v, 0);
  }

  Value tailMask(Value n, Value start) {
    Value left = arith::SubIOp::create(b, loc, n, start);
    return vector::CreateMaskOp::create(b, loc, VectorType::get({lanes}, b.getI1Type()),
                                        ValueRange{left});
  }

  /// The vector of `buffer` (read through `map`) at row position `j`; a
  /// row scratch buffer is this row's stack copy.
  Value loadVector(Value buffer, AffineMap map, Value j, Value mask) {
    Type element = cast<MemRefType>(buffer.getType()).getElementType();
    SmallVector<Value> at = locate(buffer, map, j);
    if (!mask)
      return vector::LoadOp::create(b, loc, vectorOf(element), buffer, at);
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(vectorOf(element)));
    return vector::MaskedLoadOp::create(b, loc, vectorOf(element), buffer, at, mask, zero);
  }

  void storeVector(Value value, Value buffer, AffineMap map, Value j, Value mask) {
    SmallVector<Value> at = locate(buffer, map, j);
    if (!mask)
      vector::StoreOp::create(b, loc, value, buffer, at);
    else
      vector::MaskedStoreOp::create(b, loc, buffer, at, mask, value);
  }

  /// Indices of `map` at `j`, or just `j` when `buffer` (updated in place)
  /// is a row scratch buffer.
  SmallVector<Value> locate(Value &buffer, AffineMap map, Value j) {
    if (Value row = rowScratch.lookup(buffer)) {
      buffer = row;
      return {j};
    }
    return indices(map, j);
  }

  /// A per-row scalar of `buffer` (outer shape): scratch value or load.
  Value loadScalar(Value buffer, AffineMap map) {
    if (group.scratch.contains(buffer))
      return scratch.lookup(buffer);
    return memref::LoadOp::create(b, loc, buffer, indices(map, nullptr));
  }

  void storeScalar(Value value, Value buffer) {
    if (group.scratch.contains(buffer)) {
      scratch[buffer] = value;
      return;
    }
    memref::StoreOp::create(b, loc, value, buffer, outer);
  }

  Value innerSize(Value buffer) {
    return memref::DimOp::create(b, loc, buffer, outer.size());
  }

  void emitFill(linalg::FillOp fill, bool inner) {
    Value value = fill.getInputs()[0], buffer = fill.getOutputs()[0];
    if (!inner)
      return storeScalar(value, buffer);
    Value splat = broadcast(value);
    rowLoop(innerSize(buffer), [&](Value j, Value mask) {
      storeVector(splat, buffer, b.getMultiDimIdentityMap(outer.size() + 1), j, mask);
    });
  }

  void emitCopy(memref::CopyOp copy, bool inner) {
    Value source = copy.getSource(), target = copy.getTarget();
    AffineMap map = b.getMultiDimIdentityMap(outer.size() + (inner ? 1 : 0));
    if (!inner)
      return storeScalar(loadScalar(source, map), target);
    rowLoop(innerSize(target), [&](Value j, Value mask) {
      storeVector(loadVector(source, map, j, mask), target, map, j, mask);
    });
  }

  /// Size of loop `dim` of `op`.
  Value loopSize(linalg::LinalgOp op, int64_t dim) {
    return getValueOrCreateConstantIndexOp(b, loc, op.createLoopRanges(b, loc)[dim].size);
  }

  /// Per-row values of the operands of an `inner` generic that do not depend
  /// on the row position (read once per row, broadcast); null for the rest.
  SmallVector<Value> rowInvariants(linalg::GenericOp generic) {
    SmallVector<Value> values;
    int64_t innerDim = outer.size();
    for (OpOperand &operand : generic->getOpOperands()) {
      AffineMap map = generic.getMatchingIndexingMap(&operand);
      bool used = !generic.getMatchingBlockArgument(&operand).use_empty();
      if (!used || !generic.isDpsInput(&operand) || map.isFunctionOfDim(innerDim))
        values.push_back(nullptr);
      else
        values.push_back(broadcast(loadScalar(operand.get(), map)));
    }
    return values;
  }

  /// Clones the body of `generic` for one position (vectors of `lanes` when
  /// `j` is set, scalars otherwise), skipping `skip` (a reduction's
  /// combiner). Returns the mapping of the body's values.
  IRMapping cloneBody(linalg::GenericOp generic, ArrayRef<Value> args, Value j,
                      Operation *skip) {
    IRMapping mapping;
    Block *body = generic.getBody();
    for (auto [arg, value] : llvm::zip(body->getArguments(), args))
      if (value)
        mapping.map(arg, value);
    // The row positions of the lanes, j + [0, 1, ..., lanes - 1].
    auto laneIndices = [&]() -> Value {
      SmallVector<int64_t> iota = llvm::to_vector(llvm::seq<int64_t>(0, lanes));
      Value steps = arith::ConstantOp::create(b, loc, b.getIndexVectorAttr(iota));
      return arith::AddIOp::create(b, loc, broadcast(j), steps);
    };
    for (Operation &op : body->without_terminator()) {
      if (&op == skip)
        continue;
      if (auto indexOp = dyn_cast<linalg::IndexOp>(op)) {
        uint64_t dim = indexOp.getDim();
        Value value = dim < outer.size() ? outer[dim] : j;
        mapping.map(indexOp.getResult(), !j ? value
                                            : dim < outer.size() ? broadcast(value)
                                                                 : laneIndices());
        continue;
      }
      if (!j || op.hasTrait<OpTrait::ConstantLike>()) {
        Operation *clone = b.clone(op, mapping);
        if (j)
          mapping.map(op.getResult(0), broadcast(clone->getResult(0)));
        continue;
      }
      for (Value operand : op.getOperands())
        if (!mapping.contains(operand))
          mapping.map(operand, broadcast(operand));
      Operation *clone = b.clone(op, mapping);
      for (Value result : clone->getResults())
        result.setType(vectorOf(result.getType()));
    }
    return mapping;
  }

  /// Block arguments for one position: with `j` the row invariants or
  /// vectors at `j` (a reduction's accumulator stays unmapped); without, the
  /// scalars of an op that runs once per row.
  SmallVector<Value> loadArguments(linalg::GenericOp generic, ArrayRef<Value> invariants,
                                   Value j, Value mask) {
    SmallVector<Value> args;
    bool reduction = generic.getNumReductionLoops() > 0;
    for (OpOperand &operand : generic->getOpOperands()) {
      AffineMap map = generic.getMatchingIndexingMap(&operand);
      if (generic.getMatchingBlockArgument(&operand).use_empty() ||
          (reduction && !generic.isDpsInput(&operand)))
        args.push_back(nullptr);
      else if (!j)
        args.push_back(loadScalar(operand.get(), map));
      else if (Value invariant = invariants[operand.getOperandNumber()])
        args.push_back(invariant);
      else
        args.push_back(loadVector(operand.get(), map, j, mask));
    }
    return args;
  }

  void emitGeneric(linalg::GenericOp generic, bool inner) {
    if (generic.getNumReductionLoops() > 0)
      return emitReduction(generic);
    auto yielded = [&](IRMapping &mapping) {
      SmallVector<Value> values;
      for (Value value : generic.getBody()->getTerminator()->getOperands())
        values.push_back(mapping.lookupOrDefault(value));
      return values;
    };
    if (!inner) {
      IRMapping mapping = cloneBody(generic, loadArguments(generic, {}, nullptr, nullptr),
                                    nullptr, nullptr);
      for (auto [value, buffer] : llvm::zip(yielded(mapping), generic.getOutputs()))
        storeScalar(value, buffer);
      return;
    }
    SmallVector<Value> invariants = rowInvariants(generic);
    rowLoop(loopSize(generic, outer.size()), [&](Value j, Value mask) {
      IRMapping mapping =
          cloneBody(generic, loadArguments(generic, invariants, j, mask), j, nullptr);
      for (auto [value, operand] : llvm::zip(yielded(mapping), generic.getDpsInitsMutable())) {
        Value stored = isa<VectorType>(value.getType()) ? value : broadcast(value);
        Value target = group.storeTo.lookup(generic);
        storeVector(stored, target ? target : operand.get(),
                    generic.getMatchingIndexingMap(&operand), j, mask);
      }
    });
  }

  /// f(row) folded with the combiner: partial accumulators over full
  /// vectors, a masked tail, one horizontal reduction, then the init.
  void emitReduction(linalg::GenericOp generic) {
    Combiner combiner = *matchCombiner(generic);
    Operation *op = combiner.op;
    Block *body = generic.getBody();
    BlockArgument accArg = body->getArguments().back();
    Value element = op->getOperand(0) == accArg ? op->getOperand(1) : op->getOperand(0);
    Type type = accArg.getType();
    auto neutral = cast<TypedAttr>(*arith::getNeutralElement(op));
    Value identity = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vectorOf(type), ArrayRef<Attribute>{neutral}));
    SmallVector<Value> invariants = rowInvariants(generic);

    // The combiner applied to vectors: clone it with (element, acc) swapped in.
    auto combine = [&](IRMapping &mapping, Value acc) {
      mapping.map(accArg, acc);
      Operation *clone = b.clone(*op, mapping);
      clone->getResult(0).setType(vectorOf(type));
      return clone->getResult(0);
    };
    auto step = [&](Value j, Value mask, Value acc) {
      IRMapping mapping = cloneBody(generic, loadArguments(generic, invariants, j, mask), j, op);
      if (!mapping.contains(element))
        mapping.map(element, broadcast(element));
      Value next = combine(mapping, acc);
      return mask ? arith::SelectOp::create(b, loc, mask, next, acc).getResult() : next;
    };

    Value n = loopSize(generic, outer.size());
    int64_t unroll = std::max<int64_t>(1, accumulators);
    Value wide = index(b, loc, lanes * unroll), width = index(b, loc, lanes);
    Value wideEnd = arith::SubIOp::create(b, loc, n, arith::RemUIOp::create(b, loc, n, wide));
    Value fullEnd = arith::SubIOp::create(b, loc, n, arith::RemUIOp::create(b, loc, n, width));
    SmallVector<Value> init(unroll, identity);
    auto loop = scf::ForOp::create(
        b, loc, index(b, loc, 0), wideEnd, wide, init,
        [&](OpBuilder &nb, Location, Value j, ValueRange accs) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          SmallVector<Value> next;
          for (int64_t u = 0; u < unroll; ++u) {
            Value at = u == 0 ? j : arith::AddIOp::create(b, loc, j, index(b, loc, u * lanes));
            next.push_back(step(at, nullptr, accs[u]));
          }
          scf::YieldOp::create(b, loc, next);
        });
    SmallVector<Value> accs = loop.getResults();
    auto rest = scf::ForOp::create(
        b, loc, wideEnd, fullEnd, width, ValueRange{accs[0]},
        [&](OpBuilder &nb, Location, Value j, ValueRange acc) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          scf::YieldOp::create(b, loc, step(j, nullptr, acc[0]));
        });
    accs[0] = rest.getResult(0);
    if (getConstantIntValue(n) && !isMultipleOf(n, lanes)) {
      accs[0] = step(fullEnd, tailMask(n, fullEnd), accs[0]);
    } else if (!getConstantIntValue(n)) {
      // The masked tail only where the run-time length has one.
      auto tail = scf::IfOp::create(
          b, loc, hasTail(n, fullEnd),
          [&](OpBuilder &tb, Location) {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPoint(tb.getInsertionBlock(), tb.getInsertionPoint());
            scf::YieldOp::create(b, loc, step(fullEnd, tailMask(n, fullEnd), accs[0]));
          },
          [&](OpBuilder &eb, Location) { scf::YieldOp::create(eb, loc, accs[0]); });
      accs[0] = tail.getResult(0);
    }
    Value total = accs[0];
    for (int64_t u = 1; u < unroll; ++u)
      total = vector::makeArithReduction(b, loc, combiner.kind, total, accs[u]);
    Value horizontal = this->horizontal(combiner.kind, total, isa<FloatType>(type));
    // init ⊕ horizontal, with the body's own scalar combiner.
    Value buffer = generic.getOutputs()[0];
    IRMapping mapping;
    mapping.map(element, horizontal);
    mapping.map(accArg, loadScalar(buffer, generic.getMatchingIndexingMap(
                                               generic.getDpsInitOperand(0))));
    storeScalar(b.clone(*op, mapping)->getResult(0), buffer);
  }
};

/// Static product of `sizes`, or nullopt when one is dynamic.
std::optional<int64_t> staticProduct(ArrayRef<OpFoldResult> sizes) {
  int64_t product = 1;
  for (OpFoldResult size : sizes) {
    std::optional<int64_t> value = getConstantIntValue(size);
    if (!value)
      return std::nullopt;
    product *= *value;
  }
  return product;
}

} // namespace

void emitRowGroup(const RowGroup &group, const EmitOptions &options) {
  Operation *last = group.ops.back().op;
  OpBuilder b(last->getContext());
  b.setInsertionPointAfter(last);
  Location loc = last->getLoc();
  // Row sizes from a reduction (every group has one): its outer loop ranges.
  auto root = cast<linalg::LinalgOp>(
      llvm::find_if(group.ops, [](const RowOp &op) {
        auto generic = dyn_cast<linalg::GenericOp>(op.op);
        return generic && generic.getNumReductionLoops() > 0;
      })->op);
  SmallVector<Range> ranges = root.createLoopRanges(b, loc);
  SmallVector<OpFoldResult> outerSizes;
  for (int64_t i = 0; i < group.outerRank; ++i)
    outerSizes.push_back(ranges[i].size);
  SmallVector<OpFoldResult> allSizes = outerSizes;
  allSizes.push_back(ranges.back().size);
  Value rows;
  for (OpFoldResult size : outerSizes) {
    Value value = getValueOrCreateConstantIndexOp(b, loc, size);
    rows = rows ? arith::MulIOp::create(b, loc, rows, value).getResult() : value;
  }
  if (!rows)
    rows = index(b, loc, 1);

  // Short rows are handed to the pool in blocks, so that a task is worth
  // its call; a dynamic row length (a symbolic sequence) sizes the blocks
  // at run time the same way.
  int64_t block = 1;
  Value blockSize;
  if (std::optional<int64_t> length = getConstantIntValue(allSizes.back())) {
    if (*length > 0)
      block = std::max<int64_t>(1, kMinTaskElements / *length);
    blockSize = index(b, loc, block);
  } else {
    Value one = index(b, loc, 1);
    Value nonzero = arith::MaxUIOp::create(
        b, loc, getValueOrCreateConstantIndexOp(b, loc, allSizes.back()), one);
    blockSize = arith::MaxUIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, index(b, loc, kMinTaskElements), nonzero), one);
  }
  Value blocks = arith::CeilDivUIOp::create(b, loc, rows, blockSize);
  auto loop = scf::ParallelOp::create(
      b, loc, ValueRange{index(b, loc, 0)}, ValueRange{blocks}, ValueRange{index(b, loc, 1)},
      [&](OpBuilder &nb, Location nl, ValueRange ivs) {
        RowEmitter emitter(nb, nl, group, options);
        emitter.allocateRowScratch();
        Value first = arith::MulIOp::create(nb, nl, ivs[0], blockSize);
        Value last = arith::MinUIOp::create(nb, nl, arith::AddIOp::create(nb, nl, first, blockSize),
                                            rows);
        scf::ForOp::create(nb, nl, first, last, index(nb, nl, 1), {},
                           [&](OpBuilder &fb, Location fl, Value row, ValueRange) {
                             emitter.emit(row, outerSizes);
                             scf::YieldOp::create(fb, fl);
                           });
      });
  // Row scratch lives on the stack of the outlined task (one row per call):
  // such groups are always outlined.
  std::optional<int64_t> elements = staticProduct(allSizes);
  std::optional<int64_t> rowCount = staticProduct(outerSizes);
  if (!group.rowScratch.empty() ||
      ((!rowCount || *rowCount > block) &&
       (!elements || *elements * static_cast<int64_t>(group.ops.size()) >=
                         options.minParallelElements)))
    loop->setAttr(kHeavyLoopAttr, b.getUnitAttr());

  for (const RowOp &op : llvm::reverse(group.ops))
    op.op->erase();
  for (Value buffer : llvm::concat<const Value>(group.scratch, group.rowScratch))
    buffer.getDefiningOp()->erase();
}

} // namespace kiln::rows
