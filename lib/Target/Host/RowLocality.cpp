//===- RowLocality.cpp - When a group of ops may run row by row -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/RowLocality.h"
#include "kiln/Target/Host/BufferAnalysis.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace kiln {

bool isRowAligned(AffineMap map, int64_t outerRank) {
  int64_t n = map.getNumResults();
  if (n != outerRank && n != outerRank + 1)
    return false;
  for (int64_t i = 0; i < n; ++i)
    if (map.getResult(i) != getAffineDimExpr(i, map.getContext()))
      return false;
  return true;
}

bool isRowLocal(ArrayRef<BufferAccess> accesses, int64_t outerRank) {
  llvm::SmallDenseSet<Value> written;
  for (const BufferAccess &access : accesses)
    if (access.write)
      written.insert(access.buffer);
  for (const BufferAccess &access : accesses) {
    if (written.contains(access.buffer) && !isRowAligned(access.map, outerRank))
      return false;
    for (Value other : written)
      if (other != access.buffer && rootOf(other) == rootOf(access.buffer))
        return false;
  }
  return true;
}

} // namespace kiln
