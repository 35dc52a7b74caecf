//===- InstrumentDispatches.cpp - The kiln-instrument-dispatches pass ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Dispatch/DispatchAttr.h"
#include "kiln/Dispatch/FusionReport.h"
#include "kiln/Target/Host/DispatchCost.h"
#include "kiln/Target/Host/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNINSTRUMENTDISPATCHESPASS
#include "kiln/Target/Host/Passes.h.inc"

namespace {

/// "matmul fc1/Gemm,fc1/Relu": the root op without its dialect, then the
/// model nodes of its dispatch; "#3 generic" when they are unknown.
std::string dispatchName(ArrayRef<Operation *> ops, size_t index) {
  Operation *root = ops.front();
  std::string name = root->getName().stripDialect().str();
  std::vector<std::string> nodes;
  if (dispatchId(root)) {
    for (Attribute node : dispatchNodes(root))
      nodes.push_back(cast<StringAttr>(node).str());
  } else {
    nodes = sourceNodeNames(root->getLoc());
  }
  if (nodes.empty())
    return "#" + std::to_string(index) + " " + name;
  return name + " " + llvm::join(nodes, ",");
}

/// The dispatches of `entry`, each its kernel ops in order: the runs of
/// consecutive kernel ops that came from one kiln.dispatch
/// (kiln-inline-dispatch-regions), and each kernel op without one.
SmallVector<SmallVector<Operation *, 2>> collectDispatches(func::FuncOp entry) {
  SmallVector<SmallVector<Operation *, 2>> dispatches;
  for (Operation &op : entry.getBody().front()) {
    if (!isDispatchKernelOp(&op))
      continue; // fills are set-up, not kernels (as in --report=fusion)
    std::optional<int64_t> id = dispatchId(&op);
    if (id && !dispatches.empty() && dispatchId(dispatches.back().front()) == id)
      dispatches.back().push_back(&op);
    else
      dispatches.push_back({&op});
  }
  return dispatches;
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
    // Each dispatch: its root op, then a matmul's epilogue or the rest of
    // a row group, as the dispatch stage grouped them.
    SmallVector<SmallVector<Operation *, 2>> dispatches = collectDispatches(entry);
    if (dispatches.empty())
      return;
    func::FuncOp begin = declareHook(module, kTraceBeginName);
    func::FuncOp end = declareHook(module, kTraceEndName);
    SmallVector<Attribute> names;
    SmallVector<int64_t> costs; // (flops, bytes) per dispatch, for --report=cost
    for (auto [index, ops] : llvm::enumerate(dispatches)) {
      names.push_back(StringAttr::get(&getContext(), dispatchName(ops, index)));
      // A group's cost is the sum of its ops' (bytes passed between them
      // inside the kernel count too: an overestimate of its traffic).
      DispatchCost cost{0, 0};
      for (Operation *op : ops) {
        DispatchCost one = estimateDispatchCost(op);
        cost.flops = (cost.flops < 0 || one.flops < 0) ? -1 : cost.flops + one.flops;
        cost.bytes = (cost.bytes < 0 || one.bytes < 0) ? -1 : cost.bytes + one.bytes;
      }
      costs.append({cost.flops, cost.bytes});
      OpBuilder b(ops.front());
      Location loc = ops.front()->getLoc();
      Value id = arith::ConstantIntOp::create(b, loc, static_cast<int64_t>(index), 32);
      func::CallOp::create(b, loc, begin, ValueRange{host, id});
      b.setInsertionPointAfter(ops.back());
      func::CallOp::create(b, loc, end, ValueRange{host, id});
    }
    module->setAttr(kDispatchNamesAttr, ArrayAttr::get(&getContext(), names));
    module->setAttr(kDispatchCostsAttr, DenseI64ArrayAttr::get(&getContext(), costs));
  }
};

} // namespace

} // namespace kiln
