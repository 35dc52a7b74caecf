//===- InstrumentDispatches.cpp - The kiln-instrument-dispatches pass ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Dispatch/FusionReport.h"
#include "kiln/Target/CPU/DispatchCost.h"
#include "kiln/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNINSTRUMENTDISPATCHESPASS
#include "kiln/Target/CPU/Passes.h.inc"

namespace {

/// "matmul fc1/Gemm,fc1/Relu": the op without its dialect, then the model
/// nodes fused into it; "#3 generic" when the nodes are unknown.
std::string dispatchName(linalg::LinalgOp op, size_t index) {
  std::string name = op->getName().stripDialect().str();
  std::vector<std::string> nodes = sourceNodeNames(op->getLoc());
  if (nodes.empty())
    return "#" + std::to_string(index) + " " + name;
  return name + " " + llvm::join(nodes, ",");
}

func::FuncOp declareHook(ModuleOp module, StringRef name) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  MLIRContext *context = module.getContext();
  auto type = b.getFunctionType({LLVM::LLVMPointerType::get(context), b.getI32Type()}, {});
  auto hook = func::FuncOp::create(b, module.getLoc(), name, type);
  hook.setPrivate();
  return hook;
}

struct KilnInstrumentDispatchesPass final
    : impl::KilnInstrumentDispatchesPassBase<KilnInstrumentDispatchesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto entry = module.lookupSymbol<func::FuncOp>(kEntryFunctionName);
    if (!entry || entry.isExternal() || entry.getNumArguments() == 0 ||
        !entry.getArgAttr(0, kHostArgAttr))
      return;
    Value host = entry.getArgument(0);
    SmallVector<linalg::LinalgOp> dispatches;
    for (Operation &op : entry.getBody().front())
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(&op))
        if (!isa<linalg::FillOp>(&op)) // fills are set-up, not kernels (as in --report=fusion)
          dispatches.push_back(linalgOp);
    if (dispatches.empty())
      return;
    func::FuncOp begin = declareHook(module, kTraceBeginName);
    func::FuncOp end = declareHook(module, kTraceEndName);
    SmallVector<Attribute> names;
    SmallVector<int64_t> costs; // (flops, bytes) per dispatch, for --report=cost
    for (auto [index, op] : llvm::enumerate(dispatches)) {
      names.push_back(StringAttr::get(&getContext(), dispatchName(op, index)));
      DispatchCost cost = estimateDispatchCost(op);
      costs.append({cost.flops, cost.bytes});
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value id = arith::ConstantIntOp::create(b, loc, static_cast<int64_t>(index), 32);
      func::CallOp::create(b, loc, begin, ValueRange{host, id});
      b.setInsertionPointAfter(op);
      func::CallOp::create(b, loc, end, ValueRange{host, id});
    }
    module->setAttr(kDispatchNamesAttr, ArrayAttr::get(&getContext(), names));
    module->setAttr(kDispatchCostsAttr, DenseI64ArrayAttr::get(&getContext(), costs));
  }
};

} // namespace
} // namespace kiln
