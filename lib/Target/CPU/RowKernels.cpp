//===- RowKernels.cpp - The kiln-cpu-row-kernels pass ---------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Finds row groups: starting from a generic that reduces its last loop, the
// neighbouring fills, copies and generics over the same outer dims, as long
// as every buffer the group writes is only accessed row by row (then running
// the ops row after row equals running them op after op). Ops with no memory
// effects and allocations between them are stepped over; the group is
// emitted after its last op, where all of them dominate.
//
//===----------------------------------------------------------------------===//

#include "RowKernels.h"

#include "kiln/Dispatch/DispatchAttr.h"
#include "kiln/Target/CPU/Passes.h"
#include "kiln/Target/Host/BufferAnalysis.h"
#include "kiln/Target/Host/RowLocality.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNCPUROWKERNELSPASS
#include "kiln/Target/CPU/Passes.h.inc"

namespace {
using rows::RowGroup;
using rows::RowOp;

/// Whether a buffer of `type` is a row op's operand over `outer`: its shape
/// is `outer` (inner = false) or `outer` plus a unit-stride row.
std::optional<bool> rowShape(MemRefType type, ArrayRef<int64_t> outer) {
  if (!isLoadableElement(type.getElementType()))
    return std::nullopt;
  ArrayRef<int64_t> shape = type.getShape();
  if (shape == outer)
    return false;
  if (shape.size() == outer.size() + 1 && shape.take_front(outer.size()) == outer &&
      hasUnitInnerStride(type))
    return true;
  return std::nullopt;
}

std::optional<RowOp> classifyGeneric(linalg::GenericOp generic, ArrayRef<int64_t> outer) {
  int64_t k = outer.size(), n = generic.getNumLoops();
  if (!generic.hasPureBufferSemantics() || (n != k && n != k + 1))
    return std::nullopt;
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  if (ArrayRef<int64_t>(ranges).take_front(k) != outer)
    return std::nullopt;
  auto iterators = generic.getIteratorTypesArray();
  for (int64_t i = 0; i < k; ++i)
    if (iterators[i] != utils::IteratorType::parallel)
      return std::nullopt;
  bool reduction = n == k + 1 && iterators[k] == utils::IteratorType::reduction;
  if (reduction && !rows::matchCombiner(generic))
    return std::nullopt;
  for (OpOperand &operand : generic->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    AffineMap map = generic.getMatchingIndexingMap(&operand);
    if (!type || !isLoadableElement(type.getElementType()) || !isRowAccess(map, k))
      return std::nullopt;
    if (map.isFunctionOfDim(k) && !hasUnitInnerStride(type))
      return std::nullopt;
    // Outputs: a row's scalar for a reduction, the loop space otherwise.
    if (!generic.isDpsInput(&operand) &&
        (reduction ? !isRowAligned(map, k) || map.getNumResults() != k : !map.isIdentity()))
      return std::nullopt;
  }
  if (!rows::hasVectorizableBody(generic))
    return std::nullopt;
  return RowOp{generic, n == k + 1};
}

/// `op` as a member of a group over the outer dims `outer`, if it can be.
std::optional<RowOp> classify(Operation *op, ArrayRef<int64_t> outer) {
  if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    auto type = dyn_cast<MemRefType>(fill.getOutputs()[0].getType());
    if (!fill.hasPureBufferSemantics() || !type ||
        fill.getInputs()[0].getType() != type.getElementType())
      return std::nullopt;
    if (std::optional<bool> inner = rowShape(type, outer))
      return RowOp{op, *inner};
    return std::nullopt;
  }
  if (auto copy = dyn_cast<memref::CopyOp>(op)) {
    auto source = dyn_cast<MemRefType>(copy.getSource().getType());
    auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
    if (!source || !target || source.getShape() != target.getShape() ||
        source.getElementType() != target.getElementType())
      return std::nullopt;
    std::optional<bool> in = rowShape(source, outer), out = rowShape(target, outer);
    if (in && out)
      return RowOp{op, *out};
    return std::nullopt;
  }
  if (auto generic = dyn_cast<linalg::GenericOp>(op))
    return classifyGeneric(generic, outer);
  return std::nullopt;
}

SmallVector<BufferAccess> accessesOf(Operation *op) {
  SmallVector<BufferAccess> result;
  auto identity = [&](Value buffer) {
    return AffineMap::getMultiDimIdentityMap(cast<MemRefType>(buffer.getType()).getRank(),
                                             op->getContext());
  };
  if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    result.push_back({fill.getOutputs()[0], identity(fill.getOutputs()[0]), true});
  } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
    result.push_back({copy.getSource(), identity(copy.getSource()), false});
    result.push_back({copy.getTarget(), identity(copy.getTarget()), true});
  } else {
    auto generic = cast<linalg::GenericOp>(op);
    for (OpOperand &operand : generic->getOpOperands())
      result.push_back({operand.get(), generic.getMatchingIndexingMap(&operand),
                        !generic.isDpsInput(&operand)});
  }
  return result;
}

/// Whether running `ops` row by row equals running them one after another.
bool isRowLocal(ArrayRef<RowOp> ops, int64_t outerRank) {
  SmallVector<BufferAccess> all;
  for (const RowOp &op : ops)
    all.append(accessesOf(op.op));
  return kiln::isRowLocal(all, outerRank);
}

/// Ops a group may be moved across: no memory effects, or a fresh buffer.
bool isTransparent(Operation *op) {
  return isa<memref::AllocOp>(op) || (op->getNumRegions() == 0 && isMemoryEffectFree(op));
}

/// A generic reducing exactly its last loop; its other loops are the rows.
std::optional<SmallVector<int64_t>> seedRows(linalg::GenericOp generic) {
  int64_t n = generic.getNumLoops();
  if (n == 0 || generic.getNumReductionLoops() != 1 ||
      generic.getIteratorTypesArray().back() != utils::IteratorType::reduction)
    return std::nullopt;
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  ranges.pop_back();
  return ranges;
}

/// Whether `access` of `op` writes whole rows (or a row's scalar) without
/// reading the old contents first.
bool overwrites(Operation *op, const BufferAccess &access) {
  if (!access.write)
    return false;
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic)
    return true; // fill, copy target
  if (generic.getNumReductionLoops() > 0)
    return false;
  for (OpOperand &init : generic.getDpsInitsMutable())
    if (init.get() == access.buffer && !generic.getMatchingBlockArgument(&init).use_empty())
      return false;
  return true;
}

/// Fresh buffers that only the group uses and that it first overwrites:
/// per-row values (outer shape) or per-row stack buffers (one more dim).
void findScratch(RowGroup &group, ArrayRef<int64_t> outer) {
  llvm::SmallPtrSet<Operation *, 8> members;
  for (const RowOp &op : group.ops)
    members.insert(op.op);
  llvm::SmallDenseSet<Value> seen;
  for (const RowOp &op : group.ops)
    for (const BufferAccess &access : accessesOf(op.op)) {
      Value buffer = access.buffer;
      if (!seen.insert(buffer).second)
        continue;
      auto alloc = buffer.getDefiningOp<memref::AllocOp>();
      if (!alloc || !overwrites(op.op, access) ||
          !llvm::all_of(buffer.getUsers(),
                        [&](Operation *user) { return members.contains(user); }))
        continue;
      MemRefType type = alloc.getType();
      ArrayRef<int64_t> shape = type.getShape();
      if (shape == outer) {
        group.scratch.insert(buffer);
      } else if (shape.size() == outer.size() + 1 && shape.drop_back() == outer &&
                 !ShapedType::isDynamic(shape.back()) &&
                 shape.back() * type.getElementTypeBitWidth() / 8 <= rows::kMaxRowScratchBytes) {
        group.rowScratch.insert(buffer);
      }
    }
}

/// `generic(..) -> S; copy S to T` at the end of S's life in the group, T
/// used by nothing else in it: the generic stores to T, the copy goes.
void forwardFinalCopies(RowGroup &group) {
  for (size_t i = 1; i < group.ops.size(); ++i) {
    auto copy = dyn_cast<memref::CopyOp>(group.ops[i].op);
    auto generic = dyn_cast<linalg::GenericOp>(group.ops[i - 1].op);
    if (!copy || !generic || !group.ops[i].inner || !group.rowScratch.contains(copy.getSource()) ||
        generic.getNumReductionLoops() > 0 || generic.getNumDpsInits() != 1 ||
        generic.getDpsInits()[0] != copy.getSource())
      continue;
    auto usedElsewhere = [&](Value buffer, Operation *except) {
      for (const RowOp &op : group.ops)
        if (op.op != except && llvm::is_contained(op.op->getOperands(), buffer))
          return true;
      return false;
    };
    bool laterUse = llvm::any_of(ArrayRef<RowOp>(group.ops).drop_front(i + 1), [&](const RowOp &op) {
      return llvm::is_contained(op.op->getOperands(), copy.getSource());
    });
    if (laterUse || usedElsewhere(copy.getTarget(), copy))
      continue;
    group.storeTo[generic] = copy.getTarget();
    group.dropped.insert(copy);
  }
}

/// Whether the members are connected through buffers the group writes.
/// isRowLocal makes every access of such a buffer row-aligned, so each
/// member's outer loops run over the buffer's leading sizes: connected
/// members run over the same rows even where the sizes are dynamic.
bool connectedThroughWrites(ArrayRef<RowOp> ops) {
  llvm::SmallDenseSet<Value> written;
  for (const RowOp &op : ops)
    for (const BufferAccess &access : accessesOf(op.op))
      if (access.write)
        written.insert(access.buffer);
  auto shares = [&](Operation *a, Operation *b) {
    return llvm::any_of(accessesOf(a), [&](const BufferAccess &x) {
      return written.contains(x.buffer) &&
             llvm::any_of(accessesOf(b), [&](const BufferAccess &y) { return y.buffer == x.buffer; });
    });
  };
  SmallVector<Operation *> reached = {ops.front().op};
  for (size_t i = 0; i < reached.size(); ++i)
    for (const RowOp &op : ops)
      if (!llvm::is_contained(reached, op.op) && shares(reached[i], op.op))
        reached.push_back(op.op);
  return reached.size() == ops.size();
}

/// The largest group around `seed` (whose rows are `outer`). With dynamic
/// outer sizes (a symbolic batch) equal types do not show equal rows;
/// connectedThroughWrites does.
RowGroup growGroup(linalg::GenericOp seed, ArrayRef<int64_t> outer,
                   const llvm::DenseSet<Operation *> &taken) {
  RowGroup group;
  group.outerRank = outer.size();
  group.ops.push_back(RowOp{seed.getOperation(), true});
  bool dynamicRows = llvm::is_contained(outer, ShapedType::kDynamic);
  growRowGroup<RowOp>(
      seed, group.ops, taken, [&](Operation *op) { return classify(op, outer); },
      [&](ArrayRef<RowOp> candidate) {
        return inOneDispatch(llvm::map_to_vector(candidate, [](const RowOp &op) { return op.op; })) &&
               isRowLocal(candidate, group.outerRank) &&
               (!dynamicRows || connectedThroughWrites(candidate));
      },
      isTransparent);
  findScratch(group, outer);
  forwardFinalCopies(group);
  return group;
}

struct KilnCPURowKernelsPass final
    : impl::KilnCPURowKernelsPassBase<KilnCPURowKernelsPass> {
  using KilnCPURowKernelsPassBase::KilnCPURowKernelsPassBase;

  LogicalResult checkOptions() {
    auto inRange = [&](StringRef name, int64_t value, int64_t low,
                       int64_t high) -> LogicalResult {
      if (value >= low && value <= high)
        return success();
      return getOperation().emitError()
             << "kiln-cpu-row-kernels: '" << name << "' value is " << value
             << ", accepted range is [" << low << ", " << high << "]";
    };
    return success(succeeded(inRange("vector-width", vectorWidth, 1, 64)) &&
                   succeeded(inRange("accumulators", accumulators, 1, 16)));
  }

  void runOnOperation() override {
    if (failed(checkOptions()))
      return signalPassFailure();
    llvm::DenseSet<Operation *> taken;
    SmallVector<RowGroup> groups;
    getOperation().walk([&](linalg::GenericOp generic) {
      std::optional<SmallVector<int64_t>> outer = seedRows(generic);
      if (taken.contains(generic) || !outer || !classify(generic, *outer) ||
          !isRowLocal(RowOp{generic.getOperation(), true}, outer->size()))
        return;
      groups.push_back(growGroup(generic, *outer, taken));
      for (const RowOp &op : groups.back().ops)
        taken.insert(op.op);
    });
    rows::EmitOptions options{vectorWidth, accumulators, minParallelElements};
    for (const RowGroup &group : groups)
      rows::emitRowGroup(group, options);
  }
};

} // namespace
} // namespace kiln
