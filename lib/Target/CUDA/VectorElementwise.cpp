//===- VectorElementwise.cpp - The kiln-cuda-vector-elementwise pass ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The generic path maps an elementwise linalg.generic to one thread per
// element with 4-byte accesses. Where the innermost dim is contiguous and
// divisible, each thread here handles 16 bytes of the widest operand per
// step (vector<4xf32>, vector<8xf16>): one vector load per operand read
// along the row, one scalar load per operand that is broadcast across it,
// the scalar body cloned per element, one vector store per result, in a
// grid-stride loop over a bounded grid.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/CUDA/Passes.h"

#include "KernelAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCUDAVECTORELEMENTWISEPASS
#include "kiln/Target/CUDA/Passes.h.inc"

namespace {

using namespace mlir;
using namespace kiln::cuda;

constexpr int64_t kThreads = 256;

/// A vector width for a generic, and whether its rows' alignment is only
/// known at run time (a view into a KV cache or a concatenation: checked on
/// the host, with a one-element-per-vector kernel as the other branch).
struct VectorPlan {
  int64_t width = 0;
  VectorAlignment alignment = VectorAlignment::Static;
};

/// Elements per vector for `generic` (width 0 when it keeps the generic
/// path): the last loop static and a multiple of the width, the others any.
VectorPlan vectorPlanOf(linalg::GenericOp generic) {
  int64_t loops = generic.getNumLoops();
  if (!generic.hasPureBufferSemantics() || loops == 0 || generic.getNumParallelLoops() != loops ||
      !hasScalarBody(generic))
    return {};
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  if (ShapedType::isDynamic(ranges.back()))
    return {};
  int64_t last = loops - 1, widest = 0;
  for (OpOperand &operand : generic->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    AffineMap map = generic.getMatchingIndexingMap(&operand);
    if (!type || !isLoadableElement(type.getElementType()) || !isRowAccess(map, last))
      return {};
    if (!generic.isDpsInput(&operand) && !map.isIdentity())
      return {};
    if (readsAlongLastLoop(map, last))
      widest = std::max<int64_t>(widest, type.getElementTypeBitWidth() / 8);
  }
  if (widest == 0 || kVectorBytes % widest != 0)
    return {};
  VectorPlan plan{kVectorBytes / widest, VectorAlignment::Static};
  if (plan.width == 1 || ranges.back() % plan.width != 0)
    return {};
  for (OpOperand &operand : generic->getOpOperands()) {
    if (!readsAlongLastLoop(generic.getMatchingIndexingMap(&operand), last))
      continue;
    std::optional<VectorAlignment> alignment =
        vectorAlignment(cast<MemRefType>(operand.get().getType()), plan.width);
    if (!alignment)
      return {};
    if (*alignment == VectorAlignment::AtRunTime)
      plan.alignment = VectorAlignment::AtRunTime;
  }
  return plan;
}

/// The loop ranges of `generic` at `b`: constants, and the dims of its
/// first output (read through the identity map) where dynamic.
SmallVector<OpFoldResult> loopRanges(OpBuilder &b, linalg::GenericOp generic) {
  Location loc = generic.getLoc();
  Value output = generic.getDpsInits()[0];
  SmallVector<OpFoldResult> ranges;
  for (auto [d, range] : llvm::enumerate(generic.getStaticLoopRanges()))
    ranges.push_back(ShapedType::isDynamic(range)
                         ? OpFoldResult(memref::DimOp::create(b, loc, output, d).getResult())
                         : OpFoldResult(b.getIndexAttr(range)));
  return ranges;
}

/// Whether every dynamic stride and offset of the operands read along the
/// row is a multiple of `width` (computed on the host).
Value rowsAligned(OpBuilder &b, linalg::GenericOp generic, int64_t width) {
  Location loc = generic.getLoc();
  int64_t last = generic.getNumLoops() - 1;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value widthValue = arith::ConstantIndexOp::create(b, loc, width);
  Value all = arith::ConstantIntOp::create(b, loc, 1, 1);
  for (OpOperand &operand : generic->getOpOperands()) {
    if (!readsAlongLastLoop(generic.getMatchingIndexingMap(&operand), last))
      continue;
    auto type = cast<MemRefType>(operand.get().getType());
    auto [strides, offset] = type.getStridesAndOffset();
    auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, operand.get());
    SmallVector<Value> dynamic;
    if (ShapedType::isDynamic(offset))
      dynamic.push_back(metadata.getOffset());
    for (auto [d, stride] : llvm::enumerate(ArrayRef<int64_t>(strides).drop_back()))
      if (ShapedType::isDynamic(stride))
        dynamic.push_back(metadata.getStrides()[d]);
    for (Value value : dynamic) {
      Value rest = arith::RemUIOp::create(b, loc, value, widthValue);
      Value aligned = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rest, zero);
      all = arith::AndIOp::create(b, loc, all, aligned);
    }
  }
  return all;
}

/// The kernel of `generic` in vectors of `width` (1: one element per
/// vector, any alignment), launched at `b`.
void emitKernel(OpBuilder &b, linalg::GenericOp generic, int64_t width, int64_t maxBlocks,
                ArrayRef<OpFoldResult> ranges) {
  Location loc = generic.getLoc();
  auto idx = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, loc, v); };
  auto value = [&](OpFoldResult range) -> Value {
    if (auto v = dyn_cast<Value>(range))
      return v;
    return idx(*getConstantIntValue(range));
  };
  int64_t lastRange = *getConstantIntValue(ranges.back());
  // Vectors and blocks: constants when every range is, else host arithmetic.
  Value vectors, blocks, stride;
  if (llvm::all_of(ranges, [](OpFoldResult r) { return getConstantIntValue(r).has_value(); })) {
    int64_t elements = 1;
    for (OpFoldResult range : ranges)
      elements *= *getConstantIntValue(range);
    vectors = idx(elements / width);
    int64_t grid = std::max<int64_t>(
        std::min<int64_t>(llvm::divideCeil(elements / width, kThreads), maxBlocks), 1);
    blocks = idx(grid);
    stride = idx(grid * kThreads);
  } else {
    vectors = idx(lastRange / width);
    for (OpFoldResult range : ranges.drop_back())
      vectors = arith::MulIOp::create(b, loc, vectors, value(range));
    Value wanted = arith::CeilDivUIOp::create(b, loc, vectors, idx(kThreads));
    blocks = arith::MaxUIOp::create(
        b, loc, arith::MinUIOp::create(b, loc, wanted, idx(maxBlocks)), idx(1));
    stride = arith::MulIOp::create(b, loc, blocks, idx(kThreads));
  }
  Value one = idx(1);
  auto launch = gpu::LaunchOp::create(b, loc, blocks, one, one, idx(kThreads), one, one);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value first = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, idx(kThreads)),
      launch.getThreadIds().x);
  auto loop = scf::ForOp::create(b, loc, first, vectors, stride);
  b.setInsertionPoint(loop.getBody()->getTerminator());

  // The loop indices of the vector's first element.
  int64_t last = ranges.size() - 1;
  SmallVector<Value> ivs(ranges.size());
  Value rest = loop.getInductionVar();
  ivs[last] = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, rest, idx(lastRange / width)), idx(width));
  rest = arith::DivUIOp::create(b, loc, rest, idx(lastRange / width));
  for (int64_t d = last - 1; d >= 0; --d) {
    ivs[d] = d == 0 ? rest : arith::RemUIOp::create(b, loc, rest, value(ranges[d])).getResult();
    if (d > 0)
      rest = arith::DivUIOp::create(b, loc, rest, value(ranges[d]));
  }
  auto indicesOf = [&](AffineMap map) {
    SmallVector<Value> at;
    for (AffineExpr expr : map.getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(expr))
        at.push_back(ivs[dim.getPosition()]);
      else
        at.push_back(idx(cast<AffineConstantExpr>(expr).getValue()));
    }
    return at;
  };
  auto vectorOf = [&](MemRefType type) { return VectorType::get({width}, type.getElementType()); };
  auto alignmentOf = [&](MemRefType type) {
    return llvm::MaybeAlign(width * type.getElementTypeBitWidth() / 8);
  };

  // Operands: per element for those read along the row, one value otherwise.
  SmallVector<SmallVector<Value>> operandValues;
  for (OpOperand &operand : generic->getOpOperands()) {
    SmallVector<Value> values;
    if (!generic.getMatchingBlockArgument(&operand).use_empty()) {
      AffineMap map = generic.getMatchingIndexingMap(&operand);
      auto type = cast<MemRefType>(operand.get().getType());
      if (readsAlongLastLoop(map, last)) {
        Value v = vector::LoadOp::create(b, loc, vectorOf(type), operand.get(), indicesOf(map),
                                         false, alignmentOf(type));
        for (int64_t e = 0; e < width; ++e)
          values.push_back(vector::ExtractOp::create(b, loc, v, e));
      } else {
        values.assign(width, memref::LoadOp::create(b, loc, operand.get(), indicesOf(map)));
      }
    }
    operandValues.push_back(std::move(values));
  }
  SmallVector<SmallVector<Value>> results(generic.getNumDpsInits());
  for (int64_t e = 0; e < width; ++e) {
    IRMapping mapping;
    for (OpOperand &operand : generic->getOpOperands())
      if (!operandValues[operand.getOperandNumber()].empty())
        mapping.map(generic.getMatchingBlockArgument(&operand),
                    operandValues[operand.getOperandNumber()][e]);
    Value inner = e == 0 ? ivs[last] : arith::AddIOp::create(b, loc, ivs[last], idx(e));
    SmallVector<Value> yielded =
        cloneScalarBody(b, generic, mapping, [&](int64_t d) { return d == last ? inner : ivs[d]; });
    for (auto [i, yieldedValue] : llvm::enumerate(yielded))
      results[i].push_back(yieldedValue);
  }
  for (auto [init, values] : llvm::zip(generic.getDpsInits(), results)) {
    auto type = cast<MemRefType>(init.getType());
    Value packed = vector::FromElementsOp::create(b, loc, vectorOf(type), values);
    vector::StoreOp::create(b, loc, packed, init, ivs, false, alignmentOf(type));
  }
}

/// Replaces `generic` by its vector kernel; where the rows' alignment is
/// only known at run time, the host picks it or a one-element kernel.
void rewrite(linalg::GenericOp generic, VectorPlan plan, int64_t maxBlocks) {
  OpBuilder b(generic);
  SmallVector<OpFoldResult> ranges = loopRanges(b, generic);
  if (plan.alignment == VectorAlignment::Static) {
    emitKernel(b, generic, plan.width, maxBlocks, ranges);
  } else {
    Location loc = generic.getLoc();
    auto choice = scf::IfOp::create(b, loc, rowsAligned(b, generic, plan.width),
                                    /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(choice.thenBlock()->getTerminator());
    emitKernel(b, generic, plan.width, maxBlocks, ranges);
    b.setInsertionPoint(choice.elseBlock()->getTerminator());
    emitKernel(b, generic, 1, maxBlocks, ranges);
  }
  generic.erase();
}

struct KilnCUDAVectorElementwisePass final
    : impl::KilnCUDAVectorElementwisePassBase<KilnCUDAVectorElementwisePass> {
  using Base::Base;
  void runOnOperation() override {
    if (maxBlocks < 1) {
      getOperation().emitError("kiln-cuda-vector-elementwise: max-blocks ")
          << static_cast<int64_t>(maxBlocks) << " is not positive";
      return signalPassFailure();
    }
    if (getOperation().isExternal())
      return;
    // Copies (what bufferization made of a concatenation's inserts: a KV
    // cache's past copied into the present) are generics like any other.
    SmallVector<linalg::CopyOp> copies;
    for (Operation &op : getOperation().getBody().front())
      if (auto copy = dyn_cast<linalg::CopyOp>(op); copy && copy.hasPureBufferSemantics())
        copies.push_back(copy);
    IRRewriter rewriter(&getContext());
    for (linalg::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      (void)linalg::generalizeNamedOp(rewriter, copy);
    }
    SmallVector<std::pair<linalg::GenericOp, VectorPlan>> found;
    for (Operation &op : getOperation().getBody().front())
      if (auto generic = dyn_cast<linalg::GenericOp>(op))
        if (VectorPlan plan = vectorPlanOf(generic); plan.width != 0)
          found.push_back({generic, plan});
    for (auto [generic, plan] : found)
      rewrite(generic, plan, maxBlocks);
  }
};

} // namespace
} // namespace kiln
