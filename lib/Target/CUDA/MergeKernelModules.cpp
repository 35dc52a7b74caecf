//===- MergeKernelModules.cpp - The kiln-cuda-merge-kernel-modules pass ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "GemvEmitter.h"
#include "kiln/Target/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/SymbolTable.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCUDAMERGEKERNELMODULESPASS
#include "kiln/Target/CUDA/Passes.h.inc"

namespace {

using namespace mlir;

/// A launch in clusters of constant sizes: the sizes become the kernel's
/// compile-time cluster dims (PTX .reqnctapercluster), which the runtime's
/// plain cuLaunchKernel honours, and the launch loses its cluster operands.
LogicalResult fixClusterDims(gpu::LaunchFuncOp launch) {
  if (!launch.hasClusterSize())
    return success();
  SmallVector<int32_t> dims;
  for (Value size : {launch.getClusterSizeX(), launch.getClusterSizeY(),
                     launch.getClusterSizeZ()}) {
    std::optional<int64_t> constant = getConstantIntValue(size);
    if (!constant)
      return launch.emitError("kiln-cuda-merge-kernel-modules: a cluster size is not a constant");
    dims.push_back(static_cast<int32_t>(*constant));
  }
  auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(launch, launch.getKernel());
  if (!kernel)
    return launch.emitError("kiln-cuda-merge-kernel-modules: no kernel ") << launch.getKernel();
  kernel->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                  DenseI32ArrayAttr::get(launch.getContext(), dims));
  launch.getClusterSizeXMutable().clear();
  launch.getClusterSizeYMutable().clear();
  launch.getClusterSizeZMutable().clear();
  return success();
}

/// An op of `kernel` marked with the resident blocks per SM it needs: the
/// kernel's nvvm.minctasm (PTX .minnctapersm), the mark dropped.
void setMinBlocksPerSM(gpu::GPUFuncOp kernel) {
  kernel.walk([&](Operation *op) {
    auto blocks = op->getAttrOfType<IntegerAttr>(cuda_gemm::kMinBlocksPerSMAttrName);
    if (!blocks)
      return;
    kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(), blocks);
    op->removeAttr(cuda_gemm::kMinBlocksPerSMAttrName);
  });
}

struct KilnCUDAMergeKernelModulesPass final
    : impl::KilnCUDAMergeKernelModulesPassBase<KilnCUDAMergeKernelModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    WalkResult clusters = module.walk([](gpu::LaunchFuncOp launch) {
      return failed(fixClusterDims(launch)) ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (clusters.wasInterrupted())
      return signalPassFailure();
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
        if (auto kernel = dyn_cast<gpu::GPUFuncOp>(op)) {
          kernel.setName(kernelModule.getName());
          setMinBlocksPerSM(kernel);
        }
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
