//===- ContractionMaps.h - The indexing maps of a product with a K-major B -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===--------------------------------------------------------------------------------===//
//
// convert-kiln-to-linalg gives a batched product whose B is a transpose the
// maps of C = A * B^T (kiln::TargetPolicy::kMajorBatchedRhs), and the CUDA
// passes make such products of their own; every pass that takes a product
// asks these helpers which form it has. Header-only: the dispatch stage
// reads it too.
//
//===--------------------------------------------------------------------------------===//

#ifndef KILN_CONVERSION_KILNTOLINALG_CONTRACTIONMAPS_H
#define KILN_CONVERSION_KILNTOLINALG_CONTRACTIONMAPS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace kiln {

/// The indexing maps of C = A * B^T, ([b,] m, n, k) -> A[[b,] m, k],
/// B[[b,] n, k], C[[b,] m, n]: what a (batch) matmul with a K-major B reads.
inline mlir::ArrayAttr transposedBIndexingMaps(mlir::MLIRContext *context, bool batched) {
  unsigned base = batched ? 1 : 0;
  auto d = [&](unsigned i) { return mlir::getAffineDimExpr(i, context); };
  auto map = [&](mlir::AffineExpr x, mlir::AffineExpr y) {
    llvm::SmallVector<mlir::AffineExpr> results;
    if (batched)
      results.push_back(d(0));
    results.append({x, y});
    return mlir::AffineMapAttr::get(mlir::AffineMap::get(base + 3, 0, results, context));
  };
  mlir::AffineExpr m = d(base), n = d(base + 1), k = d(base + 2);
  return mlir::ArrayAttr::get(context, {map(m, k), map(n, k), map(m, n)});
}

/// Whether `op` is a linalg.matmul or linalg.batch_matmul reading B K-major
/// (transposedBIndexingMaps).
inline bool hasKMajorB(mlir::Operation *op) {
  bool batched = mlir::isa<mlir::linalg::BatchMatmulOp>(op);
  if (!batched && !mlir::isa<mlir::linalg::MatmulOp>(op))
    return false;
  return mlir::cast<mlir::linalg::LinalgOp>(op).getIndexingMaps() ==
         transposedBIndexingMaps(op->getContext(), batched);
}

} // namespace kiln

#endif // KILN_CONVERSION_KILNTOLINALG_CONTRACTIONMAPS_H
