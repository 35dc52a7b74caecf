//===- RowKernels.cpp - The kiln-cuda-row-kernels pass --------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Softmax and layer_norm reach the CUDA codegen as about six buffer ops over
// the same rows: fills of per-row statistics, two reductions over the last
// loop, elementwise passes through a full-size temporary. Mapped op by op
// they are six kernels, each a full pass over memory. Here such a row group
// becomes one kernel: a row gets a team of threads, each thread keeps its
// part of the row in registers (16-byte loads where the rows allow), the
// reductions combine lanes with shuffles and warps through shared memory,
// and each buffer is stored once, after its last write in the group.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dispatch/DispatchAttr.h"
#include "kiln/Target/Host/ABI.h"
#include "kiln/Target/CUDA/Passes.h"

#include "KernelAccess.h"
#include "WarpShuffle.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCUDAROWKERNELSPASS
#include "kiln/Target/CUDA/Passes.h.inc"

namespace {

using namespace mlir;
using namespace kiln::cuda;

/// Per thread and buffer: 16-byte chunks of a row, or single elements.
constexpr int64_t kMaxVectorChunks = 4;
constexpr int64_t kMaxScalarChunks = 16;
/// Rows shorter than a block's worth share a block.
constexpr int64_t kBlockThreads = 256;

struct Group {
  SmallVector<Operation *> ops;
  SmallVector<int64_t> outer;
  int64_t length = 0;
  /// Allocations only the group uses, first overwritten: never stored.
  llvm::DenseSet<Value> scratch;
};

int64_t outerRank(const Group &g) { return static_cast<int64_t>(g.outer.size()); }

/// (d0, ..., dr-1) over `dims` dims.
AffineMap leadingDims(int64_t r, int64_t dims, MLIRContext *context) {
  SmallVector<AffineExpr> results;
  for (int64_t i = 0; i < r; ++i)
    results.push_back(getAffineDimExpr(i, context));
  return AffineMap::get(dims, 0, results, context);
}

/// The kind of a combiner whose partial results may be combined in any
/// order (float, at most 32 bits: shuffles move 32 bits).
std::optional<arith::AtomicRMWKind> combiningKind(Operation *op) {
  auto type = dyn_cast<FloatType>(op->getResult(0).getType());
  if (!type || type.getWidth() > 32)
    return std::nullopt;
  return llvm::TypeSwitch<Operation *, std::optional<arith::AtomicRMWKind>>(op)
      .Case([](arith::AddFOp) { return arith::AtomicRMWKind::addf; })
      .Case([](arith::MulFOp) { return arith::AtomicRMWKind::mulf; })
      .Case([](arith::MaxNumFOp) { return arith::AtomicRMWKind::maxnumf; })
      .Case([](arith::MaximumFOp) { return arith::AtomicRMWKind::maximumf; })
      .Case([](arith::MinNumFOp) { return arith::AtomicRMWKind::minnumf; })
      .Case([](arith::MinimumFOp) { return arith::AtomicRMWKind::minimumf; })
      .Default([](Operation *) { return std::nullopt; });
}

/// The op of a reduction's body that folds into the accumulator.
Operation *combinerOf(linalg::GenericOp generic) {
  if (generic.getNumDpsInits() != 1)
    return nullptr;
  BlockArgument acc = generic.getMatchingBlockArgument(&generic.getDpsInitsMutable()[0]);
  Operation *combiner = generic.getBody()->getTerminator()->getOperand(0).getDefiningOp();
  if (!combiner || !acc.hasOneUse() || *acc.getUsers().begin() != combiner ||
      combiner->getNumOperands() != 2 || !combiningKind(combiner) ||
      combiner->getOperand(0) == combiner->getOperand(1))
    return nullptr;
  return combiner;
}

bool isMemberGeneric(linalg::GenericOp generic, ArrayRef<int64_t> outer, int64_t length) {
  int64_t k = outer.size(), loops = generic.getNumLoops();
  if (!generic.hasPureBufferSemantics() || (loops != k && loops != k + 1))
    return false;
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  if (ArrayRef<int64_t>(ranges).take_front(k) != outer || (loops == k + 1 && ranges[k] != length))
    return false;
  auto iterators = generic.getIteratorTypesArray();
  for (int64_t i = 0; i < k; ++i)
    if (iterators[i] != utils::IteratorType::parallel)
      return false;
  bool reduction = loops == k + 1 && iterators[k] == utils::IteratorType::reduction;
  if (reduction && !combinerOf(generic))
    return false;
  for (OpOperand &operand : generic->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    AffineMap map = generic.getMatchingIndexingMap(&operand);
    if (!type || !isLoadableElement(type.getElementType()) || !isRowAccess(map, k))
      return false;
    if (readsAlongLastLoop(map, k) && !hasUnitInnerStride(type))
      return false;
    bool aligned = map == leadingDims(map.getNumResults(), loops, map.getContext());
    if (!generic.isDpsInput(&operand) &&
        (!aligned || map.getNumResults() != (reduction ? k : loops)))
      return false;
  }
  return hasScalarBody(generic);
}

/// Whether a buffer of `type` is a row op's operand: the outer shape, or
/// the outer shape plus a unit-stride row.
bool hasRowShape(MemRefType type, ArrayRef<int64_t> outer, int64_t length) {
  ArrayRef<int64_t> shape = type.getShape();
  if (!isLoadableElement(type.getElementType()))
    return false;
  return shape == outer ||
         (shape.size() == outer.size() + 1 && shape.take_front(outer.size()) == outer &&
          shape.back() == length && hasUnitInnerStride(type));
}

bool isMember(Operation *op, ArrayRef<int64_t> outer, int64_t length) {
  if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    auto type = dyn_cast<MemRefType>(fill.getOutputs()[0].getType());
    return fill.hasPureBufferSemantics() && type &&
           fill.getInputs()[0].getType() == type.getElementType() &&
           hasRowShape(type, outer, length);
  }
  if (auto copy = dyn_cast<linalg::CopyOp>(op)) {
    auto source = dyn_cast<MemRefType>(copy.getInputs()[0].getType());
    auto target = dyn_cast<MemRefType>(copy.getOutputs()[0].getType());
    return copy.hasPureBufferSemantics() && source && target &&
           source.getShape() == target.getShape() &&
           source.getElementType() == target.getElementType() &&
           hasRowShape(source, outer, length) && hasRowShape(target, outer, length);
  }
  if (auto generic = dyn_cast<linalg::GenericOp>(op))
    return isMemberGeneric(generic, outer, length);
  return false;
}

SmallVector<BufferAccess> accessesOf(Operation *op, int64_t k) {
  MLIRContext *context = op->getContext();
  auto whole = [&](Value buffer, bool write) {
    int64_t rank = cast<MemRefType>(buffer.getType()).getRank();
    return BufferAccess{buffer, leadingDims(rank, k + 1, context), write};
  };
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return {whole(fill.getOutputs()[0], true)};
  if (auto copy = dyn_cast<linalg::CopyOp>(op))
    return {whole(copy.getInputs()[0], false), whole(copy.getOutputs()[0], true)};
  auto generic = cast<linalg::GenericOp>(op);
  SmallVector<BufferAccess> result;
  for (OpOperand &operand : generic->getOpOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(&operand);
    result.push_back({operand.get(), AffineMap::get(k + 1, 0, map.getResults(), context),
                      !generic.isDpsInput(&operand)});
  }
  return result;
}

/// Row after row equals op after op (the group's accesses, each map over
/// its k + 1 dims: outer dims d0..dk-1, the row dk).
bool keepsRowsApart(ArrayRef<Operation *> ops, int64_t k) {
  SmallVector<BufferAccess> all;
  for (Operation *op : ops)
    all.append(accessesOf(op, k));
  return isRowLocal(all, k);
}

/// Ops a group may be moved across.
bool isTransparent(Operation *op) {
  if (auto call = dyn_cast<func::CallOp>(op))
    return call.getCallee() == kTraceBeginName || call.getCallee() == kTraceEndName;
  return isa<memref::AllocOp>(op) || (op->getNumRegions() == 0 && isMemoryEffectFree(op));
}

/// Whether `op` writes all of `buffer`'s row (or row scalar) without
/// reading what was there.
bool overwrites(Operation *op, Value buffer) {
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.getOutputs()[0] == buffer;
  if (auto copy = dyn_cast<linalg::CopyOp>(op))
    return copy.getOutputs()[0] == buffer && copy.getInputs()[0] != buffer;
  auto generic = cast<linalg::GenericOp>(op);
  if (generic.getNumReductionLoops() != 0)
    return false;
  for (OpOperand *input : generic.getDpsInputOperands())
    if (input->get() == buffer)
      return false;
  for (OpOperand &init : generic.getDpsInitsMutable())
    if (init.get() == buffer && !generic.getMatchingBlockArgument(&init).use_empty())
      return false;
  return llvm::is_contained(generic.getDpsInits(), buffer);
}

void findScratch(Group &group) {
  llvm::SmallPtrSet<Operation *, 8> members(llvm::from_range, group.ops);
  for (Operation *op : group.ops)
    for (const BufferAccess &access : accessesOf(op, outerRank(group))) {
      Value buffer = access.buffer;
      if (!buffer.getDefiningOp<memref::AllocOp>() || group.scratch.contains(buffer))
        continue;
      Operation *first = nullptr;
      for (Operation *member : group.ops)
        if (llvm::is_contained(member->getOperands(), buffer)) {
          first = member;
          break;
        }
      bool onlyGroup = llvm::all_of(buffer.getUsers(), [&](Operation *user) {
        return members.contains(user) || isa<memref::DeallocOp>(user);
      });
      if (onlyGroup && first == op && overwrites(op, buffer))
        group.scratch.insert(buffer);
    }
}

Group growGroup(linalg::GenericOp seed, const llvm::DenseSet<Operation *> &taken) {
  Group group;
  SmallVector<int64_t> ranges = seed.getStaticLoopRanges();
  group.length = ranges.back();
  ranges.pop_back();
  group.outer = ranges;
  group.ops.push_back(seed);
  auto member = [&](Operation *op) -> std::optional<Operation *> {
    if (isMember(op, group.outer, group.length))
      return op;
    return std::nullopt;
  };
  growRowGroup<Operation *>(
      seed, group.ops, taken, member,
      [&](ArrayRef<Operation *> candidate) {
        return inOneDispatch(candidate) && keepsRowsApart(candidate, outerRank(group));
      },
      isTransparent);
  findScratch(group);
  return group;
}

/// Elements per 16-byte access for every buffer the group reads or writes
/// along the row, or 1 when a row cannot be read in such vectors (a ragged
/// length, an unaligned view).
int64_t vectorWidth(const Group &group) {
  int64_t k = outerRank(group), widest = 1;
  SmallVector<MemRefType> rows;
  for (Operation *op : group.ops)
    for (const BufferAccess &access : accessesOf(op, k))
      if (readsAlongLastLoop(access.map, k)) {
        auto type = cast<MemRefType>(access.buffer.getType());
        rows.push_back(type);
        widest = std::max<int64_t>(widest, type.getElementTypeBitWidth() / 8);
      }
  if (kVectorBytes % widest != 0)
    return 1;
  int64_t width = kVectorBytes / widest;
  if (group.length % width != 0)
    return 1;
  for (MemRefType type : rows)
    if (!hasVectorLayout(type, width))
      return 1;
  return width;
}

/// Writes one group's kernel.
class Emitter {
public:
  Emitter(const Group &group, int64_t vector, int64_t threads, int64_t chunks)
      : g(group), b(group.ops.back()), loc(group.ops.back()->getLoc()), k(outerRank(group)),
        vec(vector), threads(threads), chunks(chunks),
        rowsPerBlock(std::max<int64_t>(1, kBlockThreads / threads)) {}

  void emit();

private:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }

  SmallVector<Value> indices(AffineMap map, Value j);
  Value element(Value buffer, AffineMap map, int64_t c, int64_t e);
  Value scalar(Value buffer, AffineMap map);
  SmallVector<Value> loadChunk(Value buffer, AffineMap map, int64_t c);
  void setRow(size_t member, Value buffer, SmallVector<SmallVector<Value>> values);
  void setScalar(size_t member, Value buffer, Value value);
  bool needsStore(size_t member, Value buffer) const;
  void guarded(Value condition, llvm::function_ref<void()> body);
  Value clonedBody(linalg::GenericOp generic, IRMapping &mapping, Value j);
  Value combine(Operation *combiner, Value acc, Value other);
  Value blockReduce(Operation *combiner, Value partial);
  void emitMember(size_t member);

  const Group &g;
  OpBuilder b;
  Location loc;
  int64_t k, vec, threads, chunks, rowsPerBlock;
  int64_t reductions = 0, reductionsDone = 0;
  Value tx, ty, lane, warp, rowValid, shared;
  SmallVector<Value> outerIvs, chunkStart, chunkValid;
  DenseMap<std::pair<Value, AffineMap>, SmallVector<SmallVector<Value>>> rowValues;
  DenseMap<std::pair<Value, AffineMap>, Value> scalarValues;
};

SmallVector<Value> Emitter::indices(AffineMap map, Value j) {
  SmallVector<Value> result;
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      int64_t d = dim.getPosition();
      result.push_back(d == k ? j : outerIvs[d]);
    } else {
      result.push_back(idx(cast<AffineConstantExpr>(expr).getValue()));
    }
  }
  return result;
}

void Emitter::guarded(Value condition, llvm::function_ref<void()> body) {
  if (!condition)
    return body();
  auto ifOp = scf::IfOp::create(b, loc, condition, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  body();
}

SmallVector<Value> Emitter::loadChunk(Value buffer, AffineMap map, int64_t c) {
  auto type = cast<MemRefType>(buffer.getType());
  Type element = type.getElementType();
  int64_t bytes = element.getIntOrFloatBitWidth() / 8;
  auto vectorType = VectorType::get({vec}, element);
  auto load = [&](OpBuilder &nb, Location) -> Value {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
    SmallVector<Value> at = indices(map, chunkStart[c]);
    if (vec == 1)
      return memref::LoadOp::create(b, loc, buffer, at);
    return vector::LoadOp::create(b, loc, vectorType, buffer, at, false,
                                  llvm::MaybeAlign(vec * bytes));
  };
  Value loaded;
  if (!chunkValid[c]) {
    loaded = load(b, loc);
  } else {
    // Past the row's end: zeros, which no store or fold uses.
    Type resultType = vec == 1 ? element : Type(vectorType);
    auto ifOp = scf::IfOp::create(
        b, loc, chunkValid[c],
        [&](OpBuilder &nb, Location l) { scf::YieldOp::create(nb, l, load(nb, l)); },
        [&](OpBuilder &nb, Location l) {
          scf::YieldOp::create(
              nb, l,
              arith::ConstantOp::create(nb, l, cast<TypedAttr>(nb.getZeroAttr(resultType)))
                  .getResult());
        });
    loaded = ifOp.getResult(0);
  }
  if (vec == 1)
    return {loaded};
  SmallVector<Value> elements;
  for (int64_t e = 0; e < vec; ++e)
    elements.push_back(vector::ExtractOp::create(b, loc, loaded, e));
  return elements;
}

Value Emitter::element(Value buffer, AffineMap map, int64_t c, int64_t e) {
  if (!readsAlongLastLoop(map, k))
    return scalar(buffer, map);
  auto &row = rowValues[{buffer, map}];
  if (row.empty())
    for (int64_t i = 0; i < chunks; ++i)
      row.push_back(loadChunk(buffer, map, i));
  return row[c][e];
}

Value Emitter::scalar(Value buffer, AffineMap map) {
  Value &value = scalarValues[{buffer, map}];
  if (!value)
    value = memref::LoadOp::create(b, loc, buffer, indices(map, nullptr));
  return value;
}

bool Emitter::needsStore(size_t member, Value buffer) const {
  if (g.scratch.contains(buffer))
    return false;
  for (Operation *later : ArrayRef<Operation *>(g.ops).drop_front(member + 1))
    for (const BufferAccess &access : accessesOf(later, k))
      if (access.write && access.buffer == buffer)
        return false;
  return true;
}

void Emitter::setRow(size_t member, Value buffer, SmallVector<SmallVector<Value>> values) {
  AffineMap map = leadingDims(k + 1, k + 1, b.getContext());
  if (needsStore(member, buffer)) {
    auto type = cast<MemRefType>(buffer.getType());
    int64_t bytes = type.getElementTypeBitWidth() / 8;
    for (int64_t c = 0; c < chunks; ++c) {
      Value valid = rowValid;
      if (chunkValid[c])
        valid = valid ? arith::AndIOp::create(b, loc, valid, chunkValid[c]) : chunkValid[c];
      guarded(valid, [&] {
        SmallVector<Value> at = indices(map, chunkStart[c]);
        if (vec == 1) {
          memref::StoreOp::create(b, loc, values[c][0], buffer, at);
          return;
        }
        Value packed = vector::FromElementsOp::create(
            b, loc, VectorType::get({vec}, type.getElementType()), values[c]);
        vector::StoreOp::create(b, loc, packed, buffer, at, false, llvm::MaybeAlign(vec * bytes));
      });
    }
  }
  rowValues[{buffer, map}] = std::move(values);
}

void Emitter::setScalar(size_t member, Value buffer, Value value) {
  AffineMap map = leadingDims(k, k + 1, b.getContext());
  if (needsStore(member, buffer)) {
    Value first = cmp(arith::CmpIPredicate::eq, tx, idx(0));
    Value valid = rowValid ? arith::AndIOp::create(b, loc, rowValid, first) : first;
    guarded(valid, [&] { memref::StoreOp::create(b, loc, value, buffer, indices(map, nullptr)); });
  }
  scalarValues[{buffer, map}] = value;
}

/// The generic's body for one element (its block arguments in `mapping`);
/// linalg.index is the row's indices and `j`.
Value Emitter::clonedBody(linalg::GenericOp generic, IRMapping &mapping, Value j) {
  return cloneScalarBody(b, generic, mapping, [&](int64_t d) { return d == k ? j : outerIvs[d]; })
      .front();
}

Value Emitter::combine(Operation *combiner, Value acc, Value other) {
  auto generic = cast<linalg::GenericOp>(combiner->getParentOp());
  BlockArgument accArg = generic.getMatchingBlockArgument(&generic.getDpsInitsMutable()[0]);
  Value folded =
      combiner->getOperand(0) == accArg ? combiner->getOperand(1) : combiner->getOperand(0);
  IRMapping mapping;
  mapping.map(accArg, acc);
  mapping.map(folded, other);
  return b.clone(*combiner, mapping)->getResult(0);
}

/// Every thread of the row's team gets the team's total.
Value Emitter::blockReduce(Operation *combiner, Value partial) {
  auto type = cast<FloatType>(partial.getType());
  Type f32 = b.getF32Type();
  auto widen = [&](Value v) -> Value {
    return type.getWidth() < 32 ? arith::ExtFOp::create(b, loc, f32, v).getResult() : v;
  };
  auto narrow = [&](Value v) -> Value {
    return type.getWidth() < 32 ? arith::TruncFOp::create(b, loc, type, v).getResult() : v;
  };
  partial = warpAllReduce(b, loc, partial, [&](Value mine, Value other) {
    return combine(combiner, mine, other);
  });
  int64_t warps = threads / kWarp;
  if (warps == 1)
    return partial;
  // Warp totals through shared memory: one slot per (reduction, row, warp).
  Value base = mul(add(idx(reductionsDone * rowsPerBlock), ty), idx(warps));
  ++reductionsDone;
  guarded(cmp(arith::CmpIPredicate::eq, lane, idx(0)),
          [&] { memref::StoreOp::create(b, loc, widen(partial), shared, add(base, warp)); });
  gpu::BarrierOp::create(b, loc);
  Value total = narrow(memref::LoadOp::create(b, loc, shared, base));
  for (int64_t w = 1; w < warps; ++w)
    total =
        combine(combiner, total, narrow(memref::LoadOp::create(b, loc, shared, add(base, idx(w)))));
  return total;
}

void Emitter::emitMember(size_t member) {
  Operation *op = g.ops[member];
  MLIRContext *context = b.getContext();
  if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    Value buffer = fill.getOutputs()[0];
    Value value = fill.getInputs()[0];
    if (cast<MemRefType>(buffer.getType()).getRank() == k)
      return setScalar(member, buffer, value);
    return setRow(member, buffer,
                  SmallVector<SmallVector<Value>>(chunks, SmallVector<Value>(vec, value)));
  }
  if (auto copy = dyn_cast<linalg::CopyOp>(op)) {
    Value source = copy.getInputs()[0], target = copy.getOutputs()[0];
    int64_t rank = cast<MemRefType>(source.getType()).getRank();
    AffineMap map = leadingDims(rank, k + 1, context);
    if (rank == k)
      return setScalar(member, target, scalar(source, map));
    SmallVector<SmallVector<Value>> values(chunks);
    for (int64_t c = 0; c < chunks; ++c)
      for (int64_t e = 0; e < vec; ++e)
        values[c].push_back(element(source, map, c, e));
    return setRow(member, target, std::move(values));
  }
  auto generic = cast<linalg::GenericOp>(op);
  auto mapOf = [&](OpOperand &operand) {
    return AffineMap::get(k + 1, 0, generic.getMatchingIndexingMap(&operand).getResults(), context);
  };
  auto bindOperands = [&](IRMapping &mapping, int64_t c, int64_t e, bool perRow) {
    for (OpOperand &operand : generic->getOpOperands()) {
      BlockArgument arg = generic.getMatchingBlockArgument(&operand);
      if (arg.use_empty())
        continue;
      AffineMap map = mapOf(operand);
      mapping.map(arg, perRow ? scalar(operand.get(), map) : element(operand.get(), map, c, e));
    }
  };
  Value out = generic.getDpsInits()[0];
  if (generic.getNumLoops() == k) {
    // Once per row, by every thread.
    IRMapping mapping;
    bindOperands(mapping, 0, 0, /*perRow=*/true);
    return setScalar(member, out, clonedBody(generic, mapping, nullptr));
  }
  auto jOf = [&](int64_t c, int64_t e) {
    return e == 0 ? chunkStart[c] : add(chunkStart[c], idx(e));
  };
  if (Operation *combiner = generic.getNumReductionLoops() ? combinerOf(generic) : nullptr) {
    auto kind = *combiningKind(combiner);
    Type type = combiner->getResult(0).getType();
    Value acc = arith::ConstantOp::create(b, loc, arith::getIdentityValueAttr(kind, type, b, loc));
    BlockArgument accArg = generic.getMatchingBlockArgument(&generic.getDpsInitsMutable()[0]);
    for (int64_t c = 0; c < chunks; ++c)
      for (int64_t e = 0; e < vec; ++e) {
        IRMapping mapping;
        for (OpOperand *input : generic.getDpsInputOperands())
          mapping.map(generic.getMatchingBlockArgument(input),
                      element(input->get(), mapOf(*input), c, e));
        mapping.map(accArg, acc);
        Value next = clonedBody(generic, mapping, jOf(c, e));
        acc = chunkValid[c] ? arith::SelectOp::create(b, loc, chunkValid[c], next, acc).getResult()
                            : next;
      }
    Value total = blockReduce(combiner, acc);
    Value init = scalar(out, leadingDims(k, k + 1, context));
    return setScalar(member, out, combine(combiner, init, total));
  }
  SmallVector<SmallVector<Value>> values(chunks);
  for (int64_t c = 0; c < chunks; ++c)
    for (int64_t e = 0; e < vec; ++e) {
      IRMapping mapping;
      bindOperands(mapping, c, e, /*perRow=*/false);
      values[c].push_back(clonedBody(generic, mapping, jOf(c, e)));
    }
  setRow(member, out, std::move(values));
}

void Emitter::emit() {
  b.setInsertionPointAfter(g.ops.back());
  int64_t rows = 1;
  for (int64_t size : g.outer)
    rows *= size;
  for (Operation *op : g.ops)
    if (auto generic = dyn_cast<linalg::GenericOp>(op); generic && generic.getNumReductionLoops())
      ++reductions;
  int64_t warps = threads / kWarp;
  SmallVector<Type> workgroup;
  if (warps > 1 && reductions > 0)
    workgroup.push_back(MemRefType::get(
        {reductions * rowsPerBlock * warps}, b.getF32Type(), MemRefLayoutAttrInterface{},
        gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup)));
  Value one = idx(1);
  Value grid = idx(llvm::divideCeil(rows, rowsPerBlock));
  auto launch = gpu::LaunchOp::create(b, loc, grid, one, one, idx(threads), idx(rowsPerBlock), one,
                                      nullptr, nullptr, {}, workgroup);
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&launch.getBody().front());
  if (!workgroup.empty())
    shared = launch.getWorkgroupAttributions()[0];
  tx = launch.getThreadIds().x;
  ty = launch.getThreadIds().y;
  lane = arith::RemUIOp::create(b, loc, tx, idx(kWarp));
  warp = arith::DivUIOp::create(b, loc, tx, idx(kWarp));
  Value row = add(mul(launch.getBlockIds().x, idx(rowsPerBlock)), ty);
  if (rows % rowsPerBlock != 0) {
    // The last block's spare rows redo the last row (every thread reaches
    // the barriers) and store nothing.
    rowValid = cmp(arith::CmpIPredicate::ult, row, idx(rows));
    row = arith::MinUIOp::create(b, loc, row, idx(rows - 1));
  }
  outerIvs.assign(k, Value());
  for (int64_t d = k - 1; d >= 0; --d) {
    outerIvs[d] = d == 0 ? row : arith::RemUIOp::create(b, loc, row, idx(g.outer[d])).getResult();
    if (d > 0)
      row = arith::DivUIOp::create(b, loc, row, idx(g.outer[d]));
  }
  for (int64_t c = 0; c < chunks; ++c) {
    chunkStart.push_back(mul(add(tx, idx(c * threads)), idx(vec)));
    bool whole = (c + 1) * threads * vec <= g.length;
    chunkValid.push_back(whole ? Value()
                               : cmp(arith::CmpIPredicate::ult, chunkStart.back(), idx(g.length)));
  }
  for (size_t member = 0; member < g.ops.size(); ++member)
    emitMember(member);

  for (Operation *op : llvm::reverse(g.ops))
    op->erase();
  for (Value buffer : g.scratch) {
    for (Operation *user : llvm::make_early_inc_range(buffer.getUsers()))
      user->erase(); // the deallocations
    buffer.getDefiningOp()->erase();
  }
}

/// A generic reducing exactly its last loop over static shapes.
bool isSeed(linalg::GenericOp generic) {
  int64_t loops = generic.getNumLoops();
  if (loops == 0 || generic.getNumReductionLoops() != 1 ||
      generic.getIteratorTypesArray().back() != utils::IteratorType::reduction)
    return false;
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  if (llvm::is_contained(ranges, ShapedType::kDynamic))
    return false;
  SmallVector<int64_t> outer(ArrayRef<int64_t>(ranges).drop_back());
  return isMemberGeneric(generic, outer, ranges.back()) &&
         keepsRowsApart({generic.getOperation()}, outer.size());
}

struct KilnCUDARowKernelsPass final : impl::KilnCUDARowKernelsPassBase<KilnCUDARowKernelsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (maxThreads < kWarp || maxThreads % kWarp != 0 || maxThreads > 1024) {
      getOperation().emitError("kiln-cuda-row-kernels: max-threads ")
          << static_cast<int64_t>(maxThreads) << " is not a multiple of 32 in [32, 1024]";
      return signalPassFailure();
    }
    if (getOperation().isExternal())
      return;
    llvm::DenseSet<Operation *> taken;
    SmallVector<Group> groups;
    for (Operation &op : getOperation().getBody().front()) {
      auto generic = dyn_cast<linalg::GenericOp>(op);
      if (!generic || taken.contains(generic) || !isSeed(generic))
        continue;
      Group group = growGroup(generic, taken);
      for (Operation *member : group.ops)
        taken.insert(member);
      groups.push_back(std::move(group));
    }
    for (const Group &group : groups) {
      int64_t vec = vectorWidth(group);
      int64_t pieces = llvm::divideCeil(group.length, vec);
      int64_t perThread = vec > 1 ? kMaxVectorChunks : kMaxScalarChunks;
      // Threads for about four pieces each, at least a warp.
      int64_t threads =
          std::clamp<int64_t>(llvm::alignTo(llvm::divideCeil(pieces, 4), kWarp), kWarp, maxThreads);
      int64_t chunks = llvm::divideCeil(pieces, threads);
      if (chunks > perThread)
        continue; // Longer rows stay on the generic path.
      Emitter(group, vec, threads, chunks).emit();
    }
  }
};

} // namespace
} // namespace kiln
