//===- RowKernels.h - Row groups of kiln-cpu-row-kernels ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// A row group is a run of buffer ops (linalg.fill, memref.copy,
// linalg.generic) over the same outer "row" dims that the pass emits as one
// loop over rows; RowKernels.cpp finds groups, RowKernelEmitter.cpp writes
// their vector code.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_TARGET_CPU_ROWKERNELS_H
#define KILN_LIB_TARGET_CPU_ROWKERNELS_H

#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>

namespace kiln::rows {

/// One op of a group. `inner`: the op iterates the row (its rank is the
/// group's outer rank + 1); otherwise it runs once per row.
struct RowOp {
  mlir::Operation *op;
  bool inner;
};

/// How a reduction generic combines: `combiner` is the op of its body that
/// folds the mapped element into the accumulator, `kind` its vector form.
struct Combiner {
  mlir::Operation *op;
  mlir::vector::CombiningKind kind;
};

struct RowGroup {
  llvm::SmallVector<RowOp> ops;
  /// The outer (row) dims; the group's rows are their product.
  int64_t outerRank = 0;
  /// Buffers of the outer shape written and read only inside the group,
  /// first written by a fill or copy: they become per-row values.
  llvm::DenseSet<mlir::Value> scratch;
  /// Buffers of the outer shape plus a static row (at most kMaxRowScratchBytes)
  /// written and read only inside the group, first written whole: each row
  /// uses a stack buffer instead.
  llvm::DenseSet<mlir::Value> rowScratch;
  /// Generics that store straight into the target of the copy that follows
  /// them (which is dropped): y = f(row scratch); copy scratch to out.
  llvm::DenseMap<mlir::Operation *, mlir::Value> storeTo;
  llvm::DenseSet<mlir::Operation *> dropped;
};

inline constexpr int64_t kMaxRowScratchBytes = 64 * 1024;

struct EmitOptions {
  int64_t vectorWidth;
  int64_t accumulators;
  int64_t minParallelElements;
};

/// The combiner of a generic that reduces its last loop, if the pass can
/// vectorize it (float add/mul only with the `reassoc` flag).
std::optional<Combiner> matchCombiner(mlir::Operation *generic);

/// Whether every op of a generic's body has a vector form the emitter can
/// write (elementwise arith/math, linalg.index, constants).
bool hasVectorizableBody(mlir::Operation *generic);

/// Replaces `group` by one scf.parallel over its rows, inserted after its
/// last op; erases the ops and the scratch allocations.
void emitRowGroup(const RowGroup &group, const EmitOptions &options);

} // namespace kiln::rows

#endif // KILN_LIB_TARGET_CPU_ROWKERNELS_H
