//===- MemoryPlan.h - The arena plan of kiln-plan-arena and its report -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===-----------------------------------------------------------------------------===//

#ifndef KILN_TARGET_HOST_MEMORYPLAN_H
#define KILN_TARGET_HOST_MEMORYPLAN_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <vector>

namespace kiln {

/// The module attribute kiln-plan-arena leaves: a dictionary with
/// arena_bytes, buffers, buffer_bytes and heap_allocs (i64 each).
inline constexpr llvm::StringLiteral kMemoryPlanAttr = "kiln.memory_plan";
/// Every planned buffer starts at a multiple of this (as their allocs had).
inline constexpr int64_t kPlanAlignment = 64;

/// One intermediate buffer placed in the arena; first/last are the
/// positions of its first and last use in the entry block.
struct PlannedBuffer {
  int64_t bytes = 0;
  unsigned first = 0, last = 0;
  int64_t offset = 0;
};

struct MemoryPlan {
  std::vector<PlannedBuffer> buffers;
  int64_t arenaBytes = 0;
  /// Allocations left to malloc at run time: dynamic sizes, allocations
  /// inside loops (per-task scratch), buffers that may escape.
  int64_t heapAllocs = 0;
  /// Bytes the planned buffers would take if none shared memory (each
  /// rounded up to kPlanAlignment, as separate aligned allocations).
  int64_t bufferBytes() const;

  mlir::DictionaryAttr toAttr(mlir::MLIRContext *context) const;
};

/// Extends [first, last] to cover every use of the buffer `value` and of the
/// views derived from it, as positions (`position`) of their ancestors in
/// `body`, and collects its deallocs. Fails if the buffer may escape (a
/// terminator, a call that may capture it, an op returning a buffer) or a
/// dealloc of it is not a plain memref.dealloc in `body`. Shared by
/// kiln-plan-arena and kiln-free-after-last-use.
mlir::LogicalResult
collectBufferLifetime(mlir::Value value, mlir::Block &body,
                      const llvm::DenseMap<mlir::Operation *, unsigned> &position,
                      unsigned &first, unsigned &last,
                      llvm::SmallVectorImpl<mlir::Operation *> &deallocs);

/// The summary kiln-plan-arena recorded on `module`, if it ran: arena
/// bytes, buffer count, their total bytes, heap allocations.
struct MemoryPlanSummary {
  int64_t arenaBytes = 0, buffers = 0, bufferBytes = 0, heapAllocs = 0;
};
std::optional<MemoryPlanSummary> readMemoryPlan(mlir::ModuleOp module);

/// `kilnc --report=memory`: peak arena bytes against the sum of all
/// intermediate buffers, as text or JSON.
void printMemoryReport(mlir::ModuleOp module, llvm::raw_ostream &os, bool json);

} // namespace kiln

#endif // KILN_TARGET_HOST_MEMORYPLAN_H
