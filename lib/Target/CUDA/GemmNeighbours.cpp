//===- GemmNeighbours.cpp - What kiln-cuda-gemm fuses around a GEMM ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// See GemmNeighbours.h.
//
//===----------------------------------------------------------------------===//

#include "GemmNeighbours.h"
#include "kiln/Dialect/Kiln/IR/ShapeUtils.h"
#include "kiln/Target/Host/ABI.h"
#include "kiln/Target/Host/BufferAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln::cuda_gemm {

using namespace mlir;

bool isDenseRowMajor(MemRefType type, bool symbolicBatch) {
  if (!type.hasStaticShape())
    return symbolicBatch && hasStaticShapeButBatch(type) && type.getLayout().isIdentity() &&
           type.getMemorySpace() == nullptr;
  if (!memref::isStaticShapeAndContiguousRowMajor(type))
    return false;
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  // The tensor map takes the buffer's aligned pointer: no offset into it.
  return succeeded(type.getStridesAndOffset(strides, offset)) && offset == 0 &&
         type.getMemorySpace() == nullptr;
}

/// The zero linalg.fill that initializes `gemm`'s output right before it
/// (nothing in between touches that buffer), or null: then the kernel adds
/// the output's initial value.
linalg::FillOp zeroFillBefore(Operation *gemm, Value output) {
  Value root = rootOf(output);
  for (Operation *op = gemm->getPrevNode(); op; op = op->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(op)) {
      if (fill.getDpsInits()[0] == output) {
        auto zero = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
        auto value = zero ? dyn_cast<FloatAttr>(zero.getValue()) : FloatAttr();
        return value && value.getValue().isPosZero() ? fill : linalg::FillOp();
      }
    }
    if (isMemoryEffectFree(op) && op->getNumRegions() == 0)
      continue;
    if (op->getNumRegions() != 0 && !isa<linalg::LinalgOp>(op))
      return {};
    for (Value operand : op->getOperands())
      if (isa<MemRefType>(operand.getType()) && rootOf(operand) == root)
        return {};
  }
  return {};
}

/// The linalg.copy into `gemm`'s output right before it (nothing in between
/// touches that buffer) whose source is a zero-filled buffer nothing wrote
/// since its fill (a zero tensor bufferized once and copied into each
/// product's output), or null: the product then starts from zero too.
linalg::CopyOp zeroCopyBefore(Operation *gemm, Value output) {
  Value root = rootOf(output);
  for (Operation *op = gemm->getPrevNode(); op; op = op->getPrevNode()) {
    if (auto copy = dyn_cast<linalg::CopyOp>(op); copy && copy.getDpsInits()[0] == output) {
      Value source = copy.getInputs()[0];
      if (!copy.hasPureBufferSemantics() || source.getType() != output.getType())
        return {};
      for (Operation *prev = copy->getPrevNode(); prev; prev = prev->getPrevNode()) {
        if (auto fill = dyn_cast<linalg::FillOp>(prev); fill && fill.getDpsInits()[0] == source) {
          auto zero = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
          auto value = zero ? dyn_cast<FloatAttr>(zero.getValue()) : FloatAttr();
          return value && value.getValue().isPosZero() ? copy : linalg::CopyOp();
        }
        if (prev->getNumRegions() != 0 && !isa<linalg::LinalgOp>(prev))
          return {};
        if (auto linalgOp = dyn_cast<linalg::LinalgOp>(prev))
          for (Value init : linalgOp.getDpsInits())
            if (rootOf(init) == rootOf(source))
              return {};
      }
      return {};
    }
    if (isMemoryEffectFree(op) && op->getNumRegions() == 0)
      continue;
    if (op->getNumRegions() != 0 && !isa<linalg::LinalgOp>(op))
      return {};
    for (Value operand : op->getOperands())
      if (isa<MemRefType>(operand.getType()) && rootOf(operand) == root)
        return {};
  }
  return {};
}

/// Ops between a product and its consumer that the search steps over:
/// allocations, pure ops, and the dispatch trace hooks of
/// kiln-instrument-dispatches (the consumer's span then holds the fused kernel
/// and the product's span is empty).
bool skippable(Operation *op) {
  if (isa<memref::AllocOp, memref::DeallocOp>(op))
    return true;
  if (auto call = dyn_cast<func::CallOp>(op))
    return call.getCallee() == kTraceBeginName || call.getCallee() == kTraceEndName;
  return isMemoryEffectFree(op) && op->getNumRegions() == 0;
}

/// See GemmNeighbours.h.
linalg::GenericOp collapseOntoProduct(linalg::GenericOp consumer, memref::ExpandShapeOp expand,
                                      IRRewriter &rewriter) {
  Value output = expand.getSrc();
  if (!consumer.hasPureBufferSemantics() || consumer.getNumDpsInits() != 1 ||
      consumer.getNumParallelLoops() != consumer.getNumLoops() ||
      !consumer.getBody()->getOps<linalg::IndexOp>().empty())
    return {};
  SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
  int64_t rank = static_cast<int64_t>(groups.size());
  SmallVector<int64_t> groupOf(consumer.getNumLoops());
  for (auto [g, group] : llvm::enumerate(groups))
    for (int64_t d : group)
      groupOf[d] = static_cast<int64_t>(g);
  MLIRContext *context = consumer.getContext();
  rewriter.setInsertionPoint(consumer);
  SmallVector<Value> inputs, inits;
  SmallVector<AffineMap> maps;
  for (OpOperand &operand : consumer->getOpOperands()) {
    Value value = operand.get();
    AffineMap map = consumer.getMatchingIndexingMap(&operand);
    auto type = dyn_cast<MemRefType>(value.getType());
    if (!type)
      return {};
    if (map.isIdentity()) {
      if (value == expand.getResult()) {
        value = output;
      } else {
        if (!memref::CollapseShapeOp::isGuaranteedCollapsible(type, groups))
          return {};
        value = memref::CollapseShapeOp::create(rewriter, consumer.getLoc(), value, groups);
      }
      maps.push_back(AffineMap::getMultiDimIdentityMap(rank, context));
    } else {
      if (!map.isProjectedPermutation())
        return {};
      SmallVector<AffineExpr> results;
      for (AffineExpr expr : map.getResults()) {
        int64_t d = cast<AffineDimExpr>(expr).getPosition();
        if (groups[groupOf[d]].size() != 1)
          return {};
        results.push_back(getAffineDimExpr(groupOf[d], context));
      }
      maps.push_back(AffineMap::get(rank, 0, results, context));
    }
    (consumer.isDpsInit(&operand) ? inits : inputs).push_back(value);
  }
  auto collapsed = linalg::GenericOp::create(
      rewriter, consumer.getLoc(), TypeRange{}, inputs, inits, maps,
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel));
  rewriter.inlineRegionBefore(consumer.getRegion(), collapsed.getRegion(),
                              collapsed.getRegion().end());
  // Still the dispatch's epilogue (kiln.dispatch, kiln.epilogue).
  collapsed->setDiscardableAttrs(consumer->getDiscardableAttrDictionary());
  rewriter.eraseOp(consumer);
  if (expand->use_empty())
    rewriter.eraseOp(expand);
  return collapsed;
}

/// When `result` (the buffer the kernel writes, produced by `producer`) is an
/// allocation whose only other readers are one copy into a function
/// argument, the next op after `producer` that touches memory, and its
/// deallocations: that copy, and returns its target so that the kernel
/// writes the argument (the model's output) directly.
Operation *finalCopyOf(Value result, Operation *producer, Operation *gemm) {
  // A convolution's epilogue writes its [N, F, OH, OW] buffer collapsed.
  Value buffer = result;
  if (auto collapse = result.getDefiningOp<memref::CollapseShapeOp>())
    buffer = collapse.getSrc();
  if (!buffer.getDefiningOp<memref::AllocOp>())
    return nullptr;
  Operation *next = producer->getNextNode();
  while (next && skippable(next))
    next = next->getNextNode();
  if (!next || !isa<linalg::CopyOp, memref::CopyOp>(next))
    return nullptr;
  Value source = next->getOperand(0), target = next->getOperand(1);
  if (source != buffer || !isa<BlockArgument>(target) || target.getType() != buffer.getType())
    return nullptr;
  for (Operation *user : buffer.getUsers())
    if (user != producer && user != gemm && user != next && user != result.getDefiningOp() &&
        !isa<memref::DeallocOp>(user))
      return nullptr;
  return next;
}

/// Whether `op` writes every element of the buffer `buffer` without reading
/// it: a linalg.copy into it, or an all-parallel generic whose only output
/// is `buffer` or a reshape of it (identity map, its value unused) and whose
/// inputs do not alias it.
bool overwrites(Operation *op, Value buffer) {
  Value root = rootOf(buffer);
  if (auto copy = dyn_cast<linalg::CopyOp>(op))
    return copy.hasPureBufferSemantics() && copy.getDpsInits()[0] == buffer &&
           rootOf(copy.getInputs()[0]) != root;
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || !generic.hasPureBufferSemantics() || generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return false;
  OpOperand *init = generic.getDpsInitOperand(0);
  Value target = init->get();
  while (target != buffer && (target.getDefiningOp<memref::ExpandShapeOp>() ||
                              target.getDefiningOp<memref::CollapseShapeOp>()))
    target = target.getDefiningOp()->getOperand(0);
  if (target != buffer || !generic.getMatchingIndexingMap(init).isIdentity() ||
      generic.payloadUsesValueFromOperand(init))
    return false;
  return llvm::none_of(generic.getDpsInputs(),
                       [&](Value input) { return rootOf(input) == root; });
}

/// Drops each linalg.fill of a buffer that the next op touching it
/// overwrites entirely (a convolution's initial value, once its epilogue or
/// bias generic writes the whole buffer): otherwise a kernel of its own.
void eraseDeadFills(func::FuncOp func, IRRewriter &rewriter) {
  SmallVector<linalg::FillOp> dead;
  func.walk([&](linalg::FillOp fill) {
    if (!fill.hasPureBufferSemantics())
      return;
    Value target = fill.getDpsInits()[0], root = rootOf(target);
    for (Operation *op = fill->getNextNode(); op; op = op->getNextNode()) {
      if (overwrites(op, target)) {
        dead.push_back(fill);
        return;
      }
      if (skippable(op))
        continue;
      if (op->getNumRegions() != 0 && !isa<linalg::LinalgOp>(op))
        return;
      for (Value operand : op->getOperands())
        if (isa<MemRefType>(operand.getType()) && rootOf(operand) == root)
          return;
    }
  });
  for (linalg::FillOp fill : dead)
    rewriter.eraseOp(fill);
}

} // namespace kiln::cuda_gemm
