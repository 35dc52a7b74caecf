//===- InstrumentDispatches.cpp - The kiln-instrument-dispatches pass ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dispatch/FusionReport.h"
#include "kiln/Target/Host/DispatchCost.h"
#include "kiln/Target/Host/DispatchCheck.h"
#include "kiln/Target/Host/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNINSTRUMENTDISPATCHESPASS
#include "kiln/Target/Host/Passes.h.inc"

namespace {

/// "matmul fc1/Gemm,fc1/Relu": the root op without its dialect, then the
/// model nodes fused into its kernel; "#3 generic" when they are unknown.
std::string dispatchName(ArrayRef<Operation *> ops, size_t index) {
  std::string name = ops.front()->getName().stripDialect().str();
  std::vector<std::string> nodes;
  for (Operation *op : ops)
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
    // Each dispatch: its root op, then a matmul's marked epilogue or the
    // rest of a row group.
    SmallVector<SmallVector<Operation *, 2>> dispatches;
    for (Operation &op : entry.getBody().front()) {
      if (isa<AttentionKernelOp>(&op)) { // one kernel of its own
        dispatches.push_back({&op});
        continue;
      }
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(&op)) {
        if (isa<linalg::FillOp>(&op)) // fills are set-up, not kernels (as in --report=fusion)
          continue;
        auto previous = dispatches.empty()
                            ? linalg::LinalgOp()
                            : dyn_cast<linalg::LinalgOp>(dispatches.back().front());
        if (previous && joinsDispatch(linalgOp, previous))
          dispatches.back().push_back(linalgOp);
        else
          dispatches.push_back({linalgOp});
      }
    }
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
      auto beginCall = func::CallOp::create(b, loc, begin, ValueRange{host, id});
      // A group the fusion stage formed (epilogue, row group) must stay one
      // kernel; verifyOneKernelPerDispatch checks the marked ones.
      if (ops.size() > 1)
        beginCall->setAttr(kDispatchGroupAttr, UnitAttr::get(&getContext()));
      b.setInsertionPointAfter(ops.back());
      func::CallOp::create(b, loc, end, ValueRange{host, id});
    }
    module->setAttr(kDispatchNamesAttr, ArrayAttr::get(&getContext(), names));
    module->setAttr(kDispatchCostsAttr, DenseI64ArrayAttr::get(&getContext(), costs));
  }
};

} // namespace

/// A top-level op of the entry that is a kernel: a parallel loop (row
/// kernels, matmul tasks), a call (shared matmul kernels), a linalg op
/// other than fills and copies, or a sequential loop around one of these
/// (the batches of a batch_matmul). The sequential loops of a row kernel
/// without outer dims (main loop, remainder) are one kernel and not
/// counted apart.
bool isKernel(Operation *op) {
  if (auto call = dyn_cast<func::CallOp>(op))
    return call.getCallee() != kCheckHookName; // a run-time check is no kernel
  if (isa<scf::ParallelOp>(op))
    return true;
  if (isa<linalg::LinalgOp>(op))
    return !isa<linalg::FillOp, linalg::CopyOp>(op);
  if (!isa<scf::ForOp>(op))
    return false;
  WalkResult inner = op->walk([](Operation *nested) {
    return isa<scf::ParallelOp, func::CallOp, linalg::LinalgOp>(nested) ? WalkResult::interrupt()
                                                                         : WalkResult::advance();
  });
  return inner.wasInterrupted();
}

LogicalResult verifyOneKernelPerDispatch(ModuleOp module) {
  auto entry = module.lookupSymbol<func::FuncOp>(kEntryFunctionName);
  if (!entry || entry.isExternal())
    return success();
  bool ok = true, inside = false, grouped = false;
  int64_t kernels = 0;
  for (Operation &op : entry.getBody().front()) {
    auto call = dyn_cast<func::CallOp>(&op);
    if (call && (call.getCallee() == kTraceBeginName || call.getCallee() == kTraceEndName)) {
      inside = call.getCallee() == kTraceBeginName;
      // Only groups are checked: a single-op dispatch's span may also hold
      // ops of other dispatches that bufferization moved there (e.g. with
      // dynamic shapes, the producers of a concat's buffer), which are
      // counted as their own dispatches.
      if (inside)
        grouped = call->hasAttr(kDispatchGroupAttr);
      if (!inside && grouped && kernels > 1) {
        op.emitError() << "dispatch " << getConstantIntValue(call.getOperand(1)).value_or(-1)
                       << " became " << kernels << " kernels in the generated code";
        ok = false;
      }
      kernels = 0;
      continue;
    }
    if (inside && isKernel(&op))
      ++kernels;
  }
  return success(ok);
}

} // namespace kiln
