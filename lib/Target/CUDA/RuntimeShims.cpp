//===- RuntimeShims.cpp - GPU runtime calls routed to kiln_abi_cuda -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Upstream lowering (gpu-to-llvm, the gpu.binary translation, generic memref
// allocation) leaves calls to MLIR's GPU runtime wrappers (mgpu*) and to
// _mlir_memref_to_llvm_alloc/free. An artifact must not need MLIR's runtime
// library, so they are defined here: each forwards to the kiln_abi_cuda table
// of the current run, which kiln_run keeps in a thread-local variable.
// Modules need no loading step: a "module" is the embedded image itself, and
// the runtime loads it on the first get_function.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/CUDA/CUDATarget.h"
#include "kiln/Target/CUDA/Passes.h"

#include "kiln-c/abi.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace kiln {
namespace {

/// Field indices of kiln_abi_cuda (kiln-c/abi.h), all pointers.
enum CUDAService : unsigned {
  Context, GetFunction, Launch, Alloc, Free, Constant, TensorMap, NumFields
};
/// Index of `cuda` in kiln_abi_host {context, parallel_for, num_threads,
/// arena, weights, trace, trace_begin, trace_end, cuda}.
constexpr unsigned kHostCUDAField = 8;

enum class Shim {
  ReturnFirstArg, // mgpuModuleLoad(image, ...) -> image
  ReturnNull,     // mgpuStreamCreate
  Nothing,        // mgpuModuleUnload, mgpuStreamSynchronize/Destroy
  GetFunction,
  Launch,
  Alloc,
  AlignedAlloc,
  Free,
  Constant,
  TensorMap, // mgpuTensorMapEncodeTiledMemref (nvgpu.tma.create.descriptor)
  Unknown
};

Shim shimFor(llvm::StringRef name) {
  return llvm::StringSwitch<Shim>(name)
      .Cases({"mgpuModuleLoad", "mgpuModuleLoadJIT"}, Shim::ReturnFirstArg)
      .Case("mgpuStreamCreate", Shim::ReturnNull)
      .Cases({"mgpuModuleUnload", "mgpuStreamSynchronize", "mgpuStreamDestroy"}, Shim::Nothing)
      .Case("mgpuModuleGetFunction", Shim::GetFunction)
      .Case("mgpuLaunchKernel", Shim::Launch)
      .Case("_mlir_memref_to_llvm_alloc", Shim::Alloc)
      .Case("_mlir_memref_to_llvm_aligned_alloc", Shim::AlignedAlloc)
      .Case("_mlir_memref_to_llvm_free", Shim::Free)
      .Case(kDeviceConstantFunction, Shim::Constant)
      .Case("mgpuTensorMapEncodeTiledMemref", Shim::TensorMap)
      .Default(Shim::Unknown);
}

class ShimBuilder {
public:
  explicit ShimBuilder(llvm::Module &module)
      : module(module), context(module.getContext()),
        ptr(llvm::PointerType::getUnqual(context)), i32(llvm::Type::getInt32Ty(context)),
        i64(llvm::Type::getInt64Ty(context)) {
    current = new llvm::GlobalVariable(module, ptr, /*isConstant=*/false,
                                       llvm::GlobalValue::InternalLinkage,
                                       llvm::ConstantPointerNull::get(ptr), "kiln.cuda",
                                       nullptr, llvm::GlobalValue::GeneralDynamicTLSModel);
  }

  llvm::Error define(llvm::Function *function, Shim shim);
  void wrapRun(llvm::Function *run);
  void exportChip(llvm::StringRef chip);
  void embeddedWeightsOnDevice();

private:
  /// Calls field `service` of the current kiln_abi_cuda with its context
  /// first, then `args`.
  llvm::Value *callService(llvm::IRBuilder<> &b, CUDAService service, llvm::Type *result,
                           llvm::ArrayRef<llvm::Value *> args) {
    llvm::Value *table = b.CreateLoad(ptr, current);
    llvm::Value *serviceContext = b.CreateLoad(ptr, table);
    llvm::Value *fn = b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, table, service));
    std::vector<llvm::Value *> all = {serviceContext};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<llvm::Type *> types;
    for (llvm::Value *v : all)
      types.push_back(v->getType());
    return b.CreateCall(llvm::FunctionType::get(result, types, false), fn, all);
  }

  llvm::Module &module;
  llvm::LLVMContext &context;
  llvm::PointerType *ptr;
  llvm::IntegerType *i32, *i64;
  llvm::GlobalVariable *current;
};

llvm::Error ShimBuilder::define(llvm::Function *function, Shim shim) {
  llvm::FunctionType *type = function->getFunctionType();
  // mgpuLaunchKernel(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra, n)
  if (shim == Shim::Launch && type->getNumParams() < 10)
    return llvm::createStringError("@mgpuLaunchKernel has an unexpected signature");
  // (rank, memref descriptor, dtype, interleave, swizzle, l2, oob, box dims)
  if (shim == Shim::TensorMap && type->getNumParams() != 8)
    return llvm::createStringError(
        "@mgpuTensorMapEncodeTiledMemref has an unexpected signature");
  function->setLinkage(llvm::GlobalValue::InternalLinkage);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", function));
  auto arg = [&](unsigned i) { return function->getArg(i); };
  switch (shim) {
  case Shim::ReturnFirstArg:
    b.CreateRet(arg(0));
    break;
  case Shim::ReturnNull:
    b.CreateRet(llvm::ConstantPointerNull::get(ptr));
    break;
  case Shim::Nothing:
    b.CreateRetVoid();
    break;
  case Shim::GetFunction:
    b.CreateRet(callService(b, GetFunction, ptr, {arg(0), arg(1)}));
    break;
  case Shim::Launch: {
    std::vector<llvm::Value *> args = {arg(0)};
    for (unsigned i = 1; i <= 6; ++i)
      args.push_back(b.CreateSExtOrTrunc(arg(i), i64));
    args.push_back(b.CreateSExtOrTrunc(arg(7), i32));
    args.push_back(arg(9));
    callService(b, Launch, b.getVoidTy(), args);
    b.CreateRetVoid();
    break;
  }
  case Shim::Alloc:
    b.CreateRet(callService(b, Alloc, ptr, {b.CreateZExtOrTrunc(arg(0), i64)}));
    break;
  case Shim::AlignedAlloc: // (alignment, size): device memory is 256-byte aligned
    b.CreateRet(callService(b, Alloc, ptr, {b.CreateZExtOrTrunc(arg(1), i64)}));
    break;
  case Shim::Free:
    callService(b, Free, b.getVoidTy(), {arg(0)});
    b.CreateRetVoid();
    break;
  case Shim::Constant:
    b.CreateRet(callService(b, Constant, ptr, {arg(0), b.CreateZExtOrTrunc(arg(1), i64)}));
    break;
  case Shim::TensorMap: {
    std::vector<llvm::Value *> args;
    for (unsigned i = 0; i < 8; ++i)
      args.push_back(i == 1 || i == 7 ? arg(i) : b.CreateSExtOrTrunc(arg(i), i64));
    b.CreateRet(callService(b, TensorMap, ptr, args));
    break;
  }
  case Shim::Unknown:
    llvm_unreachable("unknown shims are reported before");
  }
  return llvm::Error::success();
}

/// kiln_run becomes: check host->cuda, install it for this thread, run, clear.
void ShimBuilder::wrapRun(llvm::Function *run) {
  run->setName("kiln_run.body");
  auto *wrapper = llvm::Function::Create(run->getFunctionType(),
                                         llvm::GlobalValue::InternalLinkage, "kiln_run", module);
  run->replaceAllUsesWith(wrapper);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", wrapper));
  auto *noDevice = llvm::BasicBlock::Create(context, "no_device", wrapper);
  auto *hasHost = llvm::BasicBlock::Create(context, "has_host", wrapper);
  auto *go = llvm::BasicBlock::Create(context, "run", wrapper);
  llvm::Value *host = wrapper->getArg(2);
  b.CreateCondBr(b.CreateIsNull(host), noDevice, hasHost);
  b.SetInsertPoint(hasHost);
  auto *hostType = llvm::StructType::get(context, {ptr, ptr, i32, ptr, ptr, ptr, ptr, ptr, ptr});
  llvm::Value *table = b.CreateLoad(ptr, b.CreateStructGEP(hostType, host, kHostCUDAField));
  b.CreateCondBr(b.CreateIsNull(table), noDevice, go);
  b.SetInsertPoint(noDevice);
  b.CreateRet(b.getInt32(KILN_ABI_CUDA_NO_DEVICE));
  b.SetInsertPoint(go);
  b.CreateStore(table, current);
  llvm::Value *code = b.CreateCall(
      run, {wrapper->getArg(0), wrapper->getArg(1), wrapper->getArg(2)});
  b.CreateStore(llvm::ConstantPointerNull::get(ptr), current);
  b.CreateRet(code);
}

/// `const char *kiln_abi_cuda_v1(void)` returning the kernels' chip.
void ShimBuilder::exportChip(llvm::StringRef chip) {
  auto *text = new llvm::GlobalVariable(
      module, llvm::ArrayType::get(llvm::Type::getInt8Ty(context), chip.size() + 1), true,
      llvm::GlobalValue::PrivateLinkage, llvm::ConstantDataArray::getString(context, chip),
      "kiln.cuda.chip");
  auto *getter = llvm::Function::Create(llvm::FunctionType::get(ptr, false),
                                        llvm::GlobalValue::ExternalLinkage,
                                        KILN_ABI_CUDA_SYMBOL, module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", getter));
  b.CreateRet(text);
}

/// --weights=embed: the wrapper hands the entry the artifact's own
/// `kiln.weights` blob, a host address; kernels get its device copy
/// (uploaded once per session by the constant service) instead.
void ShimBuilder::embeddedWeightsOnDevice() {
  llvm::GlobalVariable *blob = module.getGlobalVariable("kiln.weights", /*AllowInternal=*/true);
  if (!blob)
    return;
  uint64_t bytes = module.getDataLayout().getTypeAllocSize(blob->getValueType());
  llvm::SetVector<llvm::Instruction *> users; // a call passes it twice (allocated, aligned)
  for (llvm::User *user : blob->users())
    if (auto *instruction = llvm::dyn_cast<llvm::Instruction>(user))
      users.insert(instruction);
  for (llvm::Instruction *user : users) {
    llvm::IRBuilder<> b(user);
    llvm::Value *device = callService(b, Constant, ptr, {blob, b.getInt64(bytes)});
    user->replaceUsesOfWith(blob, device);
  }
}

} // namespace

llvm::Error addCUDARuntimeShims(llvm::Module &module, llvm::StringRef chip) {
  llvm::Function *run = module.getFunction("kiln_run");
  if (!run)
    return llvm::createStringError("the artifact has no @kiln_run to wrap");
  std::vector<std::pair<llvm::Function *, Shim>> shims;
  for (llvm::Function &function : module) {
    if (!function.isDeclaration())
      continue;
    llvm::StringRef name = function.getName();
    if (function.isIntrinsic()) {
      // A memory intrinsic in host code would dereference device pointers.
      if (name.starts_with("llvm.memcpy") || name.starts_with("llvm.memmove") ||
          name.starts_with("llvm.memset"))
        return llvm::createStringError("the CUDA host code copies memory itself (" +
                                       name.str() + "); copies must run as kernels");
      continue;
    }
    Shim shim = shimFor(name);
    if (shim == Shim::Unknown)
      return llvm::createStringError("the CUDA host code calls '@" + name.str() +
                                     "', which the Kiln runtime does not provide");
    shims.emplace_back(&function, shim);
  }
  ShimBuilder builder(module);
  for (auto [function, shim] : shims)
    if (llvm::Error error = builder.define(function, shim))
      return error;
  builder.embeddedWeightsOnDevice();
  builder.wrapRun(run);
  builder.exportChip(chip);
  return llvm::Error::success();
}

} // namespace kiln
