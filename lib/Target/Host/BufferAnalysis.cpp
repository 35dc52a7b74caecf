//===- BufferAnalysis.cpp - What codegen asks of a buffer -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/BufferAnalysis.h"

#include "mlir/Interfaces/ViewLikeInterface.h"

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

} // namespace kiln
