//===- MemoryPlan.cpp - The arena plan attribute and kilnc --report=memory -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/MemoryPlan.h"

#include "kiln/Target/Host/ABI.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;

namespace kiln {

LogicalResult collectBufferLifetime(Value value, Block &body,
                                    const DenseMap<Operation *, unsigned> &position,
                                    unsigned &first, unsigned &last,
                                    SmallVectorImpl<Operation *> &deallocs) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (isa<memref::DeallocOp>(user)) {
      if (user->getBlock() != &body)
        return failure();
      deallocs.push_back(user);
      continue;
    }
    Operation *ancestor = body.findAncestorOpInBlock(*user);
    if (!ancestor)
      return failure();
    unsigned at = position.lookup(ancestor);
    first = std::min(first, at);
    last = std::max(last, at);
    if (isa<ViewLikeOpInterface>(user)) {
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()) &&
            failed(collectBufferLifetime(result, body, position, first, last, deallocs)))
          return failure();
      continue;
    }
    // A call keeps the buffer only for its duration when the callee says
    // so (the shared matmul kernels of kiln-cpu-matmul).
    if (auto call = dyn_cast<func::CallOp>(user)) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (callee && !callee.isExternal() &&
          callee.getArgAttr(use.getOperandNumber(), kNoCaptureArgAttr))
        continue;
      return failure();
    }
    // Anything else that yields or passes on a buffer may make it escape.
    if (user->hasTrait<OpTrait::IsTerminator>() || isa<CallOpInterface>(user) ||
        llvm::any_of(user->getResultTypes(),
                     [](Type t) { return isa<BaseMemRefType>(t); }))
      return failure();
  }
  return success();
}


int64_t MemoryPlan::bufferBytes() const {
  int64_t total = 0;
  for (const PlannedBuffer &buffer : buffers)
    total += llvm::alignTo(buffer.bytes, kPlanAlignment);
  return total;
}

DictionaryAttr MemoryPlan::toAttr(MLIRContext *context) const {
  Builder b(context);
  return b.getDictionaryAttr({
      b.getNamedAttr("arena_bytes", b.getI64IntegerAttr(arenaBytes)),
      b.getNamedAttr("buffers", b.getI64IntegerAttr(static_cast<int64_t>(buffers.size()))),
      b.getNamedAttr("buffer_bytes", b.getI64IntegerAttr(bufferBytes())),
      b.getNamedAttr("heap_allocs", b.getI64IntegerAttr(heapAllocs)),
  });
}

std::optional<MemoryPlanSummary> readMemoryPlan(ModuleOp module) {
  auto dict = module->getAttrOfType<DictionaryAttr>(kMemoryPlanAttr);
  if (!dict)
    return std::nullopt;
  auto get = [&](llvm::StringRef name) -> int64_t {
    auto value = dict.getAs<IntegerAttr>(name);
    return value ? value.getInt() : 0;
  };
  return MemoryPlanSummary{get("arena_bytes"), get("buffers"), get("buffer_bytes"),
                           get("heap_allocs")};
}

void printMemoryReport(ModuleOp module, llvm::raw_ostream &os, bool json) {
  MemoryPlanSummary plan = readMemoryPlan(module).value_or(MemoryPlanSummary{});
  double saved = plan.bufferBytes
                     ? 100.0 * (1.0 - static_cast<double>(plan.arenaBytes) /
                                          static_cast<double>(plan.bufferBytes))
                     : 0.0;
  if (json) {
    os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                     {"arena_bytes", plan.arenaBytes},
                                     {"buffers", plan.buffers},
                                     {"buffer_bytes", plan.bufferBytes},
                                     {"heap_allocs", plan.heapAllocs}}))
       << "\n";
    return;
  }
  os << "memory report: " << plan.buffers << " intermediate buffers, "
     << plan.bufferBytes << " bytes in all (each 64-byte aligned); arena (peak) "
     << plan.arenaBytes << " bytes (" << llvm::format("%.1f", saved) << "% less)\n";
  os << "  heap allocations left to run time (dynamic sizes, per-task scratch): "
     << plan.heapAllocs << "\n";
}

} // namespace kiln
