//===- MemoryPlan.cpp - The arena plan attribute and kilnc --report=memory -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/MemoryPlan.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;

namespace kiln {

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
