//===- ExternDynamicShared.cpp - kiln-cuda-extern-dynamic-shared ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// convert-gpu-to-nvvm lowers gpu.dynamic_shared_memory to an internal,
// zero-sized shared global. Used by one kernel, NVPTX demotes it into that
// kernel; used by several kernels of one module (kiln-cuda-merge-kernel-
// modules puts every kernel in one), it stays a module-scope *static* shared
// variable that ptxas places among the kernel's other static shared data
// (the GEMM template's mbarriers), so the buffers behind it start at an
// address that the TMA's 128-byte swizzle rejects (seen on an H200:
// CUDA_ERROR_MISALIGNED_ADDRESS in ResNet-50 and BERT, whose modules hold
// several GEMM kernels). Declared extern instead it is PTX's dynamic shared
// memory (`.extern .shared .align A .b8 name[]`): the block's dynamic
// allocation, after all static data, aligned to A = 1024 (one swizzle atom).
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/Support/MathExtras.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCUDAEXTERNDYNAMICSHAREDPASS
#include "kiln/Target/CUDA/Passes.h.inc"

namespace {

using namespace mlir;

/// NVPTX's shared address space.
constexpr unsigned kSharedAddressSpace = 3;

struct KilnCUDAExternDynamicSharedPass final
    : impl::KilnCUDAExternDynamicSharedPassBase<KilnCUDAExternDynamicSharedPass> {
  using Base::Base;

  void runOnOperation() override {
    if (alignment < 16 || !llvm::isPowerOf2_64(static_cast<uint64_t>(alignment))) {
      getOperation().emitError() << "kiln-cuda-extern-dynamic-shared: alignment="
                                 << static_cast<int64_t>(alignment)
                                 << ", expected a power of two of at least 16";
      return signalPassFailure();
    }
    getOperation().walk([&](LLVM::GlobalOp global) {
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      if (global.getAddrSpace() != kSharedAddressSpace || !array ||
          array.getNumElements() != 0 || global.getValueOrNull() ||
          global.getInitializerRegion().getBlocks().size() != 0)
        return;
      global.setLinkage(LLVM::Linkage::External);
      global.setAlignment(std::max<uint64_t>(global.getAlignment().value_or(1),
                                             static_cast<uint64_t>(alignment)));
    });
  }
};

} // namespace
} // namespace kiln
