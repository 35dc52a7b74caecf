//===- DeviceConstants.cpp - The kiln-cuda-device-constants pass ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Weights stay in the artifact as host globals (kernels cannot embed 100 MB
// of PTX initializers); kernels get the device copy the runtime made.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCUDADEVICECONSTANTSPASS
#include "kiln/Target/CUDA/Passes.h.inc"

namespace {

using namespace mlir;

/// `llvm.func @kiln_cuda_constant(!llvm.ptr, i64) -> !llvm.ptr`.
LLVM::LLVMFuncOp getOrDeclareConstantFunction(ModuleOp module, OpBuilder &builder) {
  if (auto func = module.lookupSymbol<LLVM::LLVMFuncOp>(kDeviceConstantFunction))
    return func;
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  MLIRContext *context = module.getContext();
  auto ptr = LLVM::LLVMPointerType::get(context);
  auto type = LLVM::LLVMFunctionType::get(ptr, {ptr, IntegerType::get(context, 64)});
  return LLVM::LLVMFuncOp::create(builder, module.getLoc(), kDeviceConstantFunction, type);
}

struct KilnCUDADeviceConstantsPass final
    : impl::KilnCUDADeviceConstantsPassBase<KilnCUDADeviceConstantsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    DataLayout layout(module);
    OpBuilder builder(&getContext());
    LLVM::LLVMFuncOp callee;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
      if (func.isExternal())
        continue;
      func.walk([&](LLVM::AddressOfOp address) {
        auto global = dyn_cast_or_null<LLVM::GlobalOp>(
            SymbolTable::lookupSymbolIn(module, address.getGlobalNameAttr()));
        if (!global || !global.getConstant() ||
            (!global.getValueOrNull() && global.getInitializerRegion().empty()))
          return;
        if (!callee)
          callee = getOrDeclareConstantFunction(module, builder);
        builder.setInsertionPointAfter(address);
        Location loc = address.getLoc();
        Value bytes = LLVM::ConstantOp::create(
            builder, loc, builder.getI64Type(),
            static_cast<int64_t>(layout.getTypeSize(global.getType())));
        auto call = LLVM::CallOp::create(builder, loc, callee,
                                         ValueRange{address.getResult(), bytes});
        address.getResult().replaceAllUsesExcept(call.getResult(), call);
      });
    }
  }
};

} // namespace
} // namespace kiln
