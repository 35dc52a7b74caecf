//===- BufferAnalysis.cpp - What codegen asks of a buffer -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/BufferAnalysis.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <optional>

using namespace mlir;

namespace kiln {

Value rootOf(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  return memref;
}

bool hasUnitInnerStride(MemRefType type) {
  if (type.getRank() == 0)
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) && strides.back() == 1;
}

bool isLoadableElement(Type type) {
  return type.isIntOrFloat() && type.getIntOrFloatBitWidth() >= 8;
}

namespace {

/// A buffer an op reads or writes.
struct BufferEffect {
  Value buffer;
  bool write;
};

/// Every buffer `op` reads or writes, or nothing if an effect names no
/// buffer (then nothing may be reordered across it).
std::optional<SmallVector<BufferEffect>> bufferEffectsOf(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return std::nullopt;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  SmallVector<BufferEffect> result;
  for (const MemoryEffects::EffectInstance &instance : instances) {
    Value buffer = instance.getValue();
    if (!buffer || !isa<MemRefType>(buffer.getType()))
      return std::nullopt;
    if (isa<MemoryEffects::Write>(instance.getEffect()))
      result.push_back({buffer, true});
    else if (isa<MemoryEffects::Read>(instance.getEffect()))
      result.push_back({buffer, false});
    else
      return std::nullopt;
  }
  return result;
}

} // namespace

bool sameView(Value x, Value y) {
  Operation *dx = x.getDefiningOp(), *dy = y.getDefiningOp();
  return x == y || (dx && dy && isa<ViewLikeOpInterface>(dx) &&
                    OperationEquivalence::isEquivalentTo(dx, dy,
                                                         OperationEquivalence::IgnoreLocations));
}

bool mayOverlap(Value a, Value b) {
  if (rootOf(a) != rootOf(b))
    return false;
  auto viewA = a.getDefiningOp<memref::SubViewOp>(), viewB = b.getDefiningOp<memref::SubViewOp>();
  if (!viewA || !viewB || viewA.getSource() != viewB.getSource())
    return true;
  FailureOr<bool> overlap = ValueBoundsConstraintSet::areOverlappingSlices(
      a.getContext(), HyperrectangularSlice(viewA), HyperrectangularSlice(viewB));
  return failed(overlap) || *overlap;
}

bool commutesWith(Operation *op, ArrayRef<Operation *> others) {
  // Only the buffer ops bufferization places between a kernel's ops: the
  // fill of a padded buffer, the copy of a concat's other pieces.
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  bool bufferOp = linalgOp ? isa<linalg::FillOp, linalg::CopyOp>(op) &&
                                 linalgOp.hasPureBufferSemantics()
                           : isa<memref::CopyOp>(op);
  if (!bufferOp)
    return false;
  std::optional<SmallVector<BufferEffect>> own = bufferEffectsOf(op);
  if (!own)
    return false;
  for (Operation *other : others) {
    std::optional<SmallVector<BufferEffect>> theirs = bufferEffectsOf(other);
    if (!theirs)
      return false;
    for (const BufferEffect &x : *own)
      for (const BufferEffect &y : *theirs)
        if ((x.write || y.write) && mayOverlap(x.buffer, y.buffer))
          return false;
  }
  return true;
}

} // namespace kiln
