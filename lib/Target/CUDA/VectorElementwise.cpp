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
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCUDAVECTORELEMENTWISEPASS
#include "kiln/Target/CUDA/Passes.h.inc"

namespace {

using namespace mlir;
using namespace kiln::cuda;

constexpr int64_t kThreads = 256;

/// Elements per vector for `generic`, or 0 when it keeps the generic path.
int64_t vectorWidthOf(linalg::GenericOp generic) {
  int64_t loops = generic.getNumLoops();
  if (!generic.hasPureBufferSemantics() || loops == 0 || generic.getNumParallelLoops() != loops ||
      !hasScalarBody(generic))
    return 0;
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  if (llvm::is_contained(ranges, ShapedType::kDynamic))
    return 0;
  int64_t last = loops - 1, widest = 0;
  for (OpOperand &operand : generic->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    AffineMap map = generic.getMatchingIndexingMap(&operand);
    if (!type || !isLoadableElement(type.getElementType()) || !isRowAccess(map, last))
      return 0;
    if (!generic.isDpsInput(&operand) && !map.isIdentity())
      return 0;
    if (readsAlongLastLoop(map, last))
      widest = std::max<int64_t>(widest, type.getElementTypeBitWidth() / 8);
  }
  if (widest == 0 || kVectorBytes % widest != 0)
    return 0;
  int64_t width = kVectorBytes / widest;
  if (width == 1 || ranges.back() % width != 0)
    return 0;
  for (OpOperand &operand : generic->getOpOperands())
    if (readsAlongLastLoop(generic.getMatchingIndexingMap(&operand), last) &&
        !hasVectorLayout(cast<MemRefType>(operand.get().getType()), width))
      return 0;
  return width;
}

void rewrite(linalg::GenericOp generic, int64_t width, int64_t maxBlocks) {
  Location loc = generic.getLoc();
  OpBuilder b(generic);
  auto idx = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, loc, v); };
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  int64_t elements = 1;
  for (int64_t range : ranges)
    elements *= range;
  int64_t vectors = elements / width;
  int64_t blocks = std::min<int64_t>(llvm::divideCeil(vectors, kThreads), maxBlocks);
  Value one = idx(1);
  auto launch = gpu::LaunchOp::create(b, loc, idx(blocks), one, one, idx(kThreads), one, one);
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value first = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, idx(kThreads)),
      launch.getThreadIds().x);
  auto loop = scf::ForOp::create(b, loc, first, idx(vectors), idx(blocks * kThreads));
  b.setInsertionPoint(loop.getBody()->getTerminator());

  // The loop indices of the vector's first element.
  int64_t last = ranges.size() - 1;
  SmallVector<Value> ivs(ranges.size());
  Value rest = loop.getInductionVar();
  ivs[last] = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, rest, idx(ranges[last] / width)), idx(width));
  rest = arith::DivUIOp::create(b, loc, rest, idx(ranges[last] / width));
  for (int64_t d = last - 1; d >= 0; --d) {
    ivs[d] = d == 0 ? rest : arith::RemUIOp::create(b, loc, rest, idx(ranges[d])).getResult();
    if (d > 0)
      rest = arith::DivUIOp::create(b, loc, rest, idx(ranges[d]));
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
    for (auto [i, value] : llvm::enumerate(yielded))
      results[i].push_back(value);
  }
  for (auto [init, values] : llvm::zip(generic.getDpsInits(), results)) {
    auto type = cast<MemRefType>(init.getType());
    Value packed = vector::FromElementsOp::create(b, loc, vectorOf(type), values);
    vector::StoreOp::create(b, loc, packed, init, ivs, false, alignmentOf(type));
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
    SmallVector<std::pair<linalg::GenericOp, int64_t>> found;
    for (Operation &op : getOperation().getBody().front())
      if (auto generic = dyn_cast<linalg::GenericOp>(op))
        if (int64_t width = vectorWidthOf(generic))
          found.push_back({generic, width});
    for (auto [generic, width] : found)
      rewrite(generic, width, maxBlocks);
  }
};

} // namespace
} // namespace kiln
