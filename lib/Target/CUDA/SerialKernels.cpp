//===- SerialKernels.cpp - The kiln-cuda-serial-kernels pass --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Host code on the CUDA target never dereferences a buffer: whatever would
// (a full reduction's scf.for, the store of an initial value) runs as a
// one-thread kernel instead.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/ABI.h"
#include "kiln/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCUDASERIALKERNELSPASS
#include "kiln/Target/CUDA/Passes.h.inc"

namespace {

using namespace mlir;

/// Whether `op` may stay in host code: it reads and writes no buffer
/// contents (allocation, deallocation, views, metadata, scalar math), or it
/// is already a kernel.
bool staysOnHost(Operation *op) {
  if (op->hasTrait<OpTrait::IsTerminator>() || isa<scf::ParallelOp>(op))
    return true;
  if (isa<memref::AllocOp, memref::DeallocOp, memref::GetGlobalOp>(op))
    return true;
  // The dispatch trace hooks of kiln-instrument-dispatches (host calls).
  if (auto call = dyn_cast<func::CallOp>(op))
    return call.getCallee() == kTraceBeginName || call.getCallee() == kTraceEndName ||
           call.getCallee() == kCheckHookName;
  // The GEMM template's launch and its tensor maps (kiln-cuda-gemm).
  if (isa<gpu::LaunchOp, nvgpu::TmaCreateDescriptorOp>(op))
    return true;
  if (isMemoryEffectFree(op))
    return true;
  // Conditional deallocations from the buffer deallocation pipeline, and
  // the host's choice between two launches (kiln-cuda-vector-elementwise):
  // a launch's body is device code.
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    WalkResult walk = ifOp->walk<WalkOrder::PreOrder>([&](Operation *nested) {
      if (isa<gpu::LaunchOp>(nested))
        return WalkResult::skip();
      if (nested == op || staysOnHost(nested))
        return WalkResult::advance();
      return WalkResult::interrupt();
    });
    return !walk.wasInterrupted();
  }
  return false;
}

/// Host allocas become device allocations freed before each return.
void allocasToAllocs(func::FuncOp func, IRRewriter &rewriter) {
  SmallVector<memref::AllocaOp> allocas;
  for (Operation &op : func.getBody().front())
    if (auto alloca = dyn_cast<memref::AllocaOp>(op))
      allocas.push_back(alloca);
  for (memref::AllocaOp alloca : allocas) {
    rewriter.setInsertionPoint(alloca);
    auto alloc = rewriter.replaceOpWithNewOp<memref::AllocOp>(
        alloca, alloca.getType(), alloca.getDynamicSizes(), alloca.getSymbolOperands(),
        alloca.getAlignmentAttr());
    func.walk([&](func::ReturnOp ret) {
      rewriter.setInsertionPoint(ret);
      memref::DeallocOp::create(rewriter, alloc.getLoc(), alloc.getResult());
    });
  }
}

/// A reshape to a static shape reads nothing: its shape operand (a device
/// buffer) is only needed for dynamic result shapes. It becomes the
/// equivalent reinterpret_cast of the (contiguous) source. A reshape to a
/// dynamic shape would load its sizes from that device buffer in host code
/// (kiln-cuda-host-shapes turned those whose shape the host can compute
/// into views): an error.
LogicalResult staticReshapesToCasts(func::FuncOp func, IRRewriter &rewriter) {
  SmallVector<memref::ReshapeOp> reshapes;
  WalkResult walk = func.walk([&](memref::ReshapeOp reshape) {
    auto type = reshape.getType();
    if (!type.hasStaticShape()) {
      reshape.emitError("a reshape to a computed shape on the CUDA target would read the "
                        "shape from device memory in host code");
      return WalkResult::interrupt();
    }
    if (type.getLayout().isIdentity())
      reshapes.push_back(reshape);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (memref::ReshapeOp reshape : reshapes) {
    auto type = reshape.getType();
    SmallVector<int64_t> strides(type.getRank(), 1);
    for (int64_t i = type.getRank() - 2; i >= 0; --i)
      strides[i] = strides[i + 1] * type.getDimSize(i + 1);
    rewriter.setInsertionPoint(reshape);
    rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(
        reshape, type, reshape.getSource(), /*offset=*/0, type.getShape(), strides);
  }
  return success();
}

/// Moves `run` (consecutive ops of one block) into a one-iteration
/// scf.parallel marked kiln.serial. Fails if a result escapes the run.
LogicalResult wrapRun(ArrayRef<Operation *> run, IRRewriter &rewriter) {
  llvm::SmallPtrSet<Operation *, 8> inRun(run.begin(), run.end());
  for (Operation *op : run)
    for (OpOperand &use : op->getUses())
      if (!inRun.contains(use.getOwner()->getBlock()->findAncestorOpInBlock(*use.getOwner())))
        return op->emitError("host code on the CUDA target would read a device buffer: "
                             "this op's result is used outside a kernel");
  // After the run's last op: the host ops interleaved with it (constants,
  // index arithmetic) then dominate the loop.
  Location loc = run.front()->getLoc();
  rewriter.setInsertionPointAfter(run.back());
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto loop = scf::ParallelOp::create(rewriter, loc, ValueRange{zero}, ValueRange{one},
                                      ValueRange{one});
  loop->setAttr(kSerialLoopAttr, rewriter.getUnitAttr());
  Operation *terminator = loop.getBody()->getTerminator();
  for (Operation *op : run)
    op->moveBefore(terminator);
  return success();
}

struct KilnCUDASerialKernelsPass final
    : impl::KilnCUDASerialKernelsPassBase<KilnCUDASerialKernelsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    IRRewriter rewriter(&getContext());
    // CUDA host code does not use the thread pool behind the host argument.
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      func.removeArgAttr(i, kHostArgAttr);
    allocasToAllocs(func, rewriter);
    if (failed(staticReshapesToCasts(func, rewriter)))
      return signalPassFailure();
    // A run ends at the next op that must stay on the host. Pure ops join
    // the run whose values they use and otherwise stay where they are
    // (index arithmetic, constants), without ending it.
    SmallVector<SmallVector<Operation *>> runs(1);
    llvm::SmallPtrSet<Operation *, 16> inRun;
    for (Operation &op : func.getBody().front()) {
      bool usesRun = llvm::any_of(op.getOperands(), [&](Value v) {
        return v.getDefiningOp() && inRun.contains(v.getDefiningOp());
      });
      if (isMemoryEffectFree(&op) && op.getNumRegions() == 0 && !usesRun)
        continue;
      bool pure = isMemoryEffectFree(&op) && op.getNumRegions() == 0;
      if (staysOnHost(&op) && !pure) {
        if (!runs.back().empty())
          runs.emplace_back();
        inRun.clear();
        continue;
      }
      runs.back().push_back(&op);
      inRun.insert(&op);
    }
    for (ArrayRef<Operation *> run : runs)
      if (!run.empty() && failed(wrapRun(run, rewriter)))
        return signalPassFailure();
  }
};

} // namespace
} // namespace kiln
