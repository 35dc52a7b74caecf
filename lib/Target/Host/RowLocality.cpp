//===- RowLocality.cpp - When a group of ops may run row by row -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/RowLocality.h"
#include "kiln/Target/Host/BufferAnalysis.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
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

namespace {

/// The buffer whose rows `view` shows row for row: the source of a subview
/// that keeps the `outerRank` leading dims whole (offset 0, the full static
/// size, stride 1; a padded buffer's interior along the row), else `view`.
Value rowSource(Value view, int64_t outerRank) {
  auto subview = view.getDefiningOp<memref::SubViewOp>();
  if (!subview || subview.getSourceType().getRank() != subview.getType().getRank())
    return view;
  ArrayRef<int64_t> shape = subview.getSourceType().getShape();
  for (int64_t d = 0; d < outerRank; ++d)
    if (ShapedType::isDynamic(shape[d]) || subview.getStaticOffsets()[d] != 0 ||
        subview.getStaticSizes()[d] != shape[d] || subview.getStaticStrides()[d] != 1)
      return view;
  return subview.getSource();
}

/// Whether row r of `a` and row r of `b` lie in one row of one buffer (and
/// rows r and s in different ones): then ops accessing them aligned touch
/// only row r in the group's row r.
bool sameRows(Value a, Value b, int64_t outerRank) {
  return sameView(rowSource(a, outerRank), rowSource(b, outerRank));
}

} // namespace

bool isRowLocal(ArrayRef<BufferAccess> accesses, int64_t outerRank) {
  llvm::SmallDenseSet<Value> written;
  for (const BufferAccess &access : accesses)
    if (access.write)
      written.insert(access.buffer);
  for (const BufferAccess &access : accesses) {
    if (written.contains(access.buffer) && !isRowAligned(access.map, outerRank))
      return false;
    // Another view of a written buffer: disjoint from it, or the same rows
    // (an in-place op's two collapse_shapes, a padded buffer's fill and its
    // interior) accessed aligned.
    for (Value other : written)
      if (other != access.buffer && mayOverlap(other, access.buffer) &&
          !(sameRows(other, access.buffer, outerRank) && isRowAligned(access.map, outerRank)))
        return false;
  }
  return true;
}

} // namespace kiln
