//===- InstrumentDispatches.cpp - The kiln-instrument-dispatches pass ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Dispatch/FusionReport.h"
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

/// "matmul fc1/Gemm,fc1/Relu": the root op without its dialect, then the
/// model nodes fused into its kernel; "#3 generic" when they are unknown.
std::string dispatchName(ArrayRef<linalg::LinalgOp> ops, size_t index) {
  std::string name = ops.front()->getName().stripDialect().str();
  std::vector<std::string> nodes;
  for (linalg::LinalgOp op : ops)
    for (std::string &node : sourceNodeNames(op->getLoc()))
      if (!llvm::is_contained(nodes, node))
        nodes.push_back(std::move(node));
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
    // Each dispatch: its root op, then a matmul's marked epilogue.
    SmallVector<SmallVector<linalg::LinalgOp, 2>> dispatches;
    for (Operation &op : entry.getBody().front())
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(&op)) {
        if (isa<linalg::FillOp>(&op)) // fills are set-up, not kernels (as in --report=fusion)
          continue;
        Operation *root = dispatchRoot(linalgOp);
        if (root != &op && !dispatches.empty() && dispatches.back().front() == root)
          dispatches.back().push_back(linalgOp);
        else
          dispatches.push_back({linalgOp});
      }
    if (dispatches.empty())
      return;
    func::FuncOp begin = declareHook(module, kTraceBeginName);
    func::FuncOp end = declareHook(module, kTraceEndName);
    SmallVector<Attribute> names;
    for (auto [index, ops] : llvm::enumerate(dispatches)) {
      names.push_back(StringAttr::get(&getContext(), dispatchName(ops, index)));
      OpBuilder b(ops.front());
      Location loc = ops.front().getLoc();
      Value id = arith::ConstantIntOp::create(b, loc, static_cast<int64_t>(index), 32);
      func::CallOp::create(b, loc, begin, ValueRange{host, id});
      b.setInsertionPointAfter(ops.back());
      func::CallOp::create(b, loc, end, ValueRange{host, id});
    }
    module->setAttr(kDispatchNamesAttr, ArrayAttr::get(&getContext(), names));
  }
};

} // namespace
} // namespace kiln
