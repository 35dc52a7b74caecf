//===- OutlineParallelLoops.cpp - The kiln-outline-parallel-loops pass ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
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
    // The bounds are captured too, unless constant: constants must stay
    // visible to the task (they give LLVM unit strides to vectorize with).
    Value lb = loop.getLowerBound()[0], ub = loop.getUpperBound()[0];
    Value step = loop.getStep()[0];
    for (Value bound : {lb, step}) {
      Operation *def = bound.getDefiningOp();
      bool constant = def && def->hasTrait<OpTrait::ConstantLike>();
      if (constant && !llvm::is_contained(constants, def))
        constants.push_back(def);
      else if (!constant && !llvm::is_contained(captured, bound))
        captured.push_back(bound);
    }

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

/// Static iteration count of `loop` and the loops nested in it, or nullopt
/// when some bound is dynamic.
std::optional<int64_t> staticIterations(scf::ParallelOp loop) {
  int64_t total = 1;
  WalkResult result = loop->walk([&](Operation *op) {
    auto count = [&](Value lb, Value ub, Value step) -> bool {
      std::optional<int64_t> l = getConstantIntValue(lb), u = getConstantIntValue(ub),
                             s = getConstantIntValue(step);
      if (!l || !u || !s || *s <= 0)
        return false;
      total *= std::max<int64_t>(0, llvm::divideCeil(*u - *l, *s));
      return true;
    };
    if (auto parallel = dyn_cast<scf::ParallelOp>(op)) {
      for (auto [lb, ub, step] : llvm::zip(parallel.getLowerBound(), parallel.getUpperBound(),
                                           parallel.getStep()))
        if (!count(lb, ub, step))
          return WalkResult::interrupt();
    } else if (auto serial = dyn_cast<scf::ForOp>(op)) {
      if (!count(serial.getLowerBound(), serial.getUpperBound(), serial.getStep()))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return std::nullopt;
  return total;
}

/// Whether dimension `d` of `loop` has exactly one iteration.
bool runsOnce(scf::ParallelOp loop, unsigned d) {
  std::optional<int64_t> l = getConstantIntValue(loop.getLowerBound()[d]),
                         u = getConstantIntValue(loop.getUpperBound()[d]),
                         s = getConstantIntValue(loop.getStep()[d]);
  return l && u && s && *s > 0 && llvm::divideCeil(*u - *l, *s) == 1;
}

/// Splits an N-D parallel loop into a 1-D loop over its first dimension that
/// runs more than once (a leading batch of 1 would leave the pool one task;
/// such dimensions become their lower bound) around an (N-1)-D one; returns
/// the outer loop.
scf::ParallelOp splitFirstDimension(scf::ParallelOp loop) {
  unsigned first = 0;
  while (first + 1 < loop.getNumLoops() && runsOnce(loop, first))
    ++first;
  if (loop.getNumLoops() == 1)
    return loop;
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  auto outer = scf::ParallelOp::create(
      b, loc, loop.getLowerBound().slice(first, 1), loop.getUpperBound().slice(first, 1),
      loop.getStep().slice(first, 1), [&](OpBuilder &ob, Location, ValueRange outerIvs) {
        IRMapping mapping;
        for (unsigned d = 0; d < first; ++d)
          mapping.map(loop.getInductionVars()[d], loop.getLowerBound()[d]);
        mapping.map(loop.getInductionVars()[first], outerIvs.front());
        auto cloneBody = [&](OpBuilder &ib) {
          for (Operation &op : loop.getBody()->without_terminator())
            ib.clone(op, mapping);
        };
        if (first + 1 == loop.getNumLoops()) {
          cloneBody(ob);
          return;
        }
        scf::ParallelOp::create(
            ob, loc, loop.getLowerBound().drop_front(first + 1),
            loop.getUpperBound().drop_front(first + 1), loop.getStep().drop_front(first + 1),
            [&](OpBuilder &ib, Location, ValueRange innerIvs) {
              // A named copy: a temporary in the range-for's zip would be
              // destroyed before the loop body reads it.
              SmallVector<Value> ivs(loop.getInductionVars());
              for (auto [from, to] : llvm::zip(ArrayRef<Value>(ivs).drop_front(first + 1), innerIvs))
                mapping.map(from, to);
              cloneBody(ib);
            });
      });
  loop.erase();
  return outer;
}

struct KilnOutlineParallelLoopsPass final
    : impl::KilnOutlineParallelLoopsPassBase<KilnOutlineParallelLoopsPass> {
  using KilnOutlineParallelLoopsPassBase::KilnOutlineParallelLoopsPassBase;

  bool worthDistributing(scf::ParallelOp loop) {
    if (loop->hasAttr(kHeavyLoopAttr))
      return true;
    std::optional<int64_t> iterations = staticIterations(loop);
    return !iterations || *iterations >= minIterations;
  }

  void runOnOperation() override {
    Outliner outliner{getOperation()};
    SmallVector<std::pair<scf::ParallelOp, Value>> loops;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      Value host = hostArgument(func);
      if (!host)
        continue;
      SmallVector<scf::ParallelOp> candidates;
      func.walk([&](scf::ParallelOp loop) {
        if (!loop->getParentOfType<scf::ParallelOp>() && loop.getNumResults() == 0 &&
            worthDistributing(loop))
          candidates.push_back(loop);
      });
      for (scf::ParallelOp loop : candidates)
        loops.push_back({splitFirstDimension(loop), host});
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
