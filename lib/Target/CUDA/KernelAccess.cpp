//===- KernelAccess.cpp - Buffer accesses of the vectorizing CUDA kernels -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "KernelAccess.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace kiln::cuda {

bool readsAlongLastLoop(AffineMap map, int64_t last) {
  return map.getNumResults() > 0 &&
         map.getResults().back() == getAffineDimExpr(last, map.getContext());
}

std::optional<VectorAlignment> vectorAlignment(MemRefType type, int64_t width) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (type.getRank() == 0 || failed(type.getStridesAndOffset(strides, offset)) ||
      strides.back() != 1 || ShapedType::isDynamic(type.getShape().back()) ||
      type.getShape().back() % width != 0)
    return std::nullopt;
  strides.back() = offset; // offset and outer strides alike
  VectorAlignment alignment = VectorAlignment::Static;
  for (int64_t value : strides) {
    if (ShapedType::isDynamic(value))
      alignment = VectorAlignment::AtRunTime;
    else if (value % width != 0)
      return std::nullopt;
  }
  return alignment;
}

bool hasVectorLayout(MemRefType type, int64_t width) {
  return vectorAlignment(type, width) == VectorAlignment::Static;
}

bool hasScalarBody(linalg::GenericOp generic) {
  for (Operation &op : generic.getBody()->without_terminator()) {
    if (isa<linalg::IndexOp>(op))
      continue;
    if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op) ||
        llvm::any_of(op.getResultTypes(), [](Type t) { return !t.isIntOrIndexOrFloat(); }))
      return false;
  }
  return true;
}

SmallVector<Value> cloneScalarBody(OpBuilder &b, linalg::GenericOp generic, IRMapping &mapping,
                                   llvm::function_ref<Value(int64_t)> index) {
  Block *body = generic.getBody();
  for (Operation &op : body->without_terminator()) {
    if (auto indexOp = dyn_cast<linalg::IndexOp>(op)) {
      mapping.map(indexOp.getResult(), index(indexOp.getDim()));
      continue;
    }
    b.clone(op, mapping);
  }
  SmallVector<Value> results;
  for (Value yielded : body->getTerminator()->getOperands())
    results.push_back(mapping.lookupOrDefault(yielded));
  return results;
}

} // namespace kiln::cuda
