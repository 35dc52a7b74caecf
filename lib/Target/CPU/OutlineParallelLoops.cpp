//===- OutlineParallelLoops.cpp - The kiln-outline-parallel-loops pass ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNOUTLINEPARALLELLOOPSPASS
#include "kiln/Target/CPU/Passes.h.inc"

namespace {

/// The `{kiln.host}` argument of `func`, or null.
Value hostArgument(func::FuncOp func) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttr(i, kHostArgAttr))
      return func.getArgument(i);
  return nullptr;
}

struct Outliner {
  ModuleOp module;
  unsigned next = 0;

  void outline(scf::ParallelOp loop, Value host) {
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    // Values the body reads from outside; constants are cloned instead.
    llvm::SetVector<Value> used;
    getUsedValuesDefinedAbove(loop.getRegion(), used);
    SmallVector<Value> captured;
    SmallVector<Operation *> constants;
    for (Value value : used) {
      Operation *def = value.getDefiningOp();
      if (def && def->hasTrait<OpTrait::ConstantLike>())
        constants.push_back(def);
      else
        captured.push_back(value);
    }
    Value lb = loop.getLowerBound()[0], ub = loop.getUpperBound()[0];
    Value step = loop.getStep()[0];
    captured.append({lb, step});

    std::string id = std::to_string(next++);
    SmallVector<Type> taskInputs = {b.getIndexType()};
    for (Value value : captured)
      taskInputs.push_back(value.getType());
    OpBuilder moduleBuilder = OpBuilder::atBlockEnd(module.getBody());
    auto task = func::FuncOp::create(moduleBuilder, loc, (kTaskPrefix + id).str(),
                                     moduleBuilder.getFunctionType(taskInputs, {}));
    task.setPrivate();
    Block *entry = task.addEntryBlock();
    OpBuilder tb = OpBuilder::atBlockEnd(entry);
    IRMapping mapping;
    for (Operation *constant : constants)
      tb.clone(*constant, mapping);
    for (auto [value, arg] : llvm::zip(captured, entry->getArguments().drop_front()))
      mapping.map(value, arg);
    // iv = lb + i * step
    Value iv = arith::AddIOp::create(
        tb, loc, mapping.lookup(lb),
        arith::MulIOp::create(tb, loc, entry->getArgument(0), mapping.lookup(step)));
    mapping.map(loop.getInductionVars()[0], iv);
    for (Operation &op : loop.getBody()->without_terminator())
      tb.clone(op, mapping);
    func::ReturnOp::create(tb, loc);

    SmallVector<Type> launchInputs = {host.getType(), b.getIndexType()};
    for (Value value : captured)
      launchInputs.push_back(value.getType());
    auto launch = func::FuncOp::create(moduleBuilder, loc, (kLaunchPrefix + id).str(),
                                       moduleBuilder.getFunctionType(launchInputs, {}));
    launch.setPrivate();
    // count = ceil((ub - lb) / step)
    Value span = arith::SubIOp::create(b, loc, ub, lb);
    Value count = arith::CeilDivSIOp::create(b, loc, span, step);
    SmallVector<Value> operands = {host, count};
    operands.append(captured.begin(), captured.end());
    func::CallOp::create(b, loc, launch, operands);
    loop.erase();
  }
};

struct KilnOutlineParallelLoopsPass final
    : impl::KilnOutlineParallelLoopsPassBase<KilnOutlineParallelLoopsPass> {
  void runOnOperation() override {
    Outliner outliner{getOperation()};
    SmallVector<std::pair<scf::ParallelOp, Value>> loops;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      Value host = hostArgument(func);
      if (!host)
        continue;
      func.walk([&](scf::ParallelOp loop) {
        if (loop.getNumLoops() == 1 && !loop->getParentOfType<scf::ParallelOp>() &&
            loop.getNumResults() == 0)
          loops.push_back({loop, host});
      });
    }
    for (auto [loop, host] : loops)
      outliner.outline(loop, host);
    // The marker has done its job; LLVM IR has no such parameter attribute.
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (Value host = hostArgument(func))
        func.removeArgAttr(cast<BlockArgument>(host).getArgNumber(), kHostArgAttr);
  }
};

} // namespace
} // namespace kiln
