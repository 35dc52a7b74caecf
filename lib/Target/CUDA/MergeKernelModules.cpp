//===- MergeKernelModules.cpp - The kiln-cuda-merge-kernel-modules pass ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Target/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCUDAMERGEKERNELMODULESPASS
#include "kiln/Target/CUDA/Passes.h.inc"

namespace {

using namespace mlir;

struct KilnCUDAMergeKernelModulesPass final
    : impl::KilnCUDAMergeKernelModulesPassBase<KilnCUDAMergeKernelModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> kernelModules(module.getOps<gpu::GPUModuleOp>());
    if (kernelModules.empty())
      return;
    OpBuilder builder(kernelModules.front());
    auto merged = gpu::GPUModuleOp::create(builder, module.getLoc(), "kiln_kernels");
    SymbolTable symbols(merged);
    for (gpu::GPUModuleOp kernelModule : kernelModules) {
      for (Operation &op : llvm::make_early_inc_range(kernelModule.getBody()->without_terminator())) {
        op.remove();
        // The module names are unique; the kernels inside all share one name.
        if (auto kernel = dyn_cast<gpu::GPUFuncOp>(op))
          kernel.setName(kernelModule.getName());
        symbols.insert(&op);
      }
    }
    MLIRContext *context = &getContext();
    module.walk([&](gpu::LaunchFuncOp launch) {
      launch.setKernelAttr(SymbolRefAttr::get(
          context, merged.getName(),
          {FlatSymbolRefAttr::get(context, launch.getKernelModuleName())}));
    });
    for (gpu::GPUModuleOp kernelModule : kernelModules)
      kernelModule.erase();
  }
};

} // namespace
} // namespace kiln
