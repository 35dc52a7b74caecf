//===- ArtifactWriter.cpp - The kiln-c/abi.h descriptor and wrapper in LLVM IR ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===--------------------------------------------------------------------------===//

#include "kiln/Target/CPU/ArtifactWriter.h"
#include "kiln/Target/CPU/Passes.h"

#include "kiln-c/abi.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace kiln {

namespace {
/// FNV-1a 64, fed little-endian integers and raw bytes.
struct Fnv1a {
  uint64_t hash = 0xcbf29ce484222325ull;
  void bytes(const void *data, size_t size) {
    for (size_t i = 0; i < size; ++i) {
      hash ^= static_cast<const unsigned char *>(data)[i];
      hash *= 0x100000001b3ull;
    }
  }
  template <typename T> void integer(T value) {
    for (size_t i = 0; i < sizeof(T); ++i) {
      unsigned char byte = static_cast<uint64_t>(value) >> (8 * i);
      bytes(&byte, 1);
    }
  }
};
} // namespace

uint64_t descriptorChecksum(const ModelSignature &signature, uint64_t weightsBytes) {
  Fnv1a fnv;
  fnv.integer<uint32_t>(KILN_ABI_MAGIC);
  fnv.integer<uint32_t>(KILN_ABI_VERSION);
  fnv.integer<uint32_t>(signature.inputs.size());
  fnv.integer<uint32_t>(signature.outputs.size());
  for (const auto *list : {&signature.inputs, &signature.outputs})
    for (const TensorSignature &tensor : *list) {
      fnv.bytes(tensor.name.c_str(), tensor.name.size() + 1);
      fnv.integer<int32_t>(tensor.dtype);
      fnv.integer<int32_t>(tensor.dims.size());
      for (int64_t d : tensor.dims)
        fnv.integer<int64_t>(d);
    }
  fnv.integer<uint64_t>(weightsBytes);
  return fnv.hash;
}

namespace {

/// Builds the constant descriptor globals of kiln-c/abi.h.
class DescriptorBuilder {
public:
  explicit DescriptorBuilder(llvm::Module &module)
      : module(module), context(module.getContext()),
        ptrType(llvm::PointerType::getUnqual(context)),
        i32(llvm::Type::getInt32Ty(context)), i64(llvm::Type::getInt64Ty(context)),
        tensorType(llvm::StructType::create(
            context, {ptrType, i32, i32, ptrType, ptrType}, "kiln_abi_tensor")) {}

  llvm::Constant *string(llvm::StringRef text) {
    return makeGlobal(llvm::ConstantDataArray::getString(context, text), "kiln.str");
  }

  /// A `kiln_abi_tensor[]` for `tensors`, or null when empty.
  llvm::Constant *tensorArray(const std::vector<TensorSignature> &tensors) {
    if (tensors.empty())
      return llvm::ConstantPointerNull::get(ptrType);
    std::vector<llvm::Constant *> entries;
    for (const TensorSignature &tensor : tensors) {
      llvm::Constant *dims = makeGlobal(
          llvm::ConstantDataArray::get(context, llvm::ArrayRef<int64_t>(tensor.dims)),
          "kiln.dims");
      entries.push_back(llvm::ConstantStruct::get(
          tensorType, {string(tensor.name), llvm::ConstantInt::get(i32, tensor.dtype),
                       llvm::ConstantInt::get(i32, tensor.dims.size()), dims,
                       dimNames(tensor)}));
    }
    return makeGlobal(
        llvm::ConstantArray::get(llvm::ArrayType::get(tensorType, entries.size()), entries),
        "kiln.tensors");
  }

  llvm::Constant *makeGlobal(llvm::Constant *init, llvm::StringRef name) {
    return new llvm::GlobalVariable(module, init->getType(), /*isConstant=*/true,
                                    llvm::GlobalValue::PrivateLinkage, init, name);
  }

  llvm::Module &module;
  llvm::LLVMContext &context;
  llvm::PointerType *ptrType;
  llvm::IntegerType *i32, *i64;
  llvm::StructType *tensorType;

private:
  llvm::Constant *dimNames(const TensorSignature &tensor) {
    if (llvm::all_of(tensor.dimNames, [](const std::string &n) { return n.empty(); }))
      return llvm::ConstantPointerNull::get(ptrType);
    std::vector<llvm::Constant *> names;
    for (const std::string &name : tensor.dimNames)
      names.push_back(name.empty() ? llvm::ConstantPointerNull::get(ptrType)
                                   : string(name));
    return makeGlobal(
        llvm::ConstantArray::get(llvm::ArrayType::get(ptrType, names.size()), names),
        "kiln.dim_names");
  }
};

/// Bytes of constant data the lowered model embeds (its weights).
uint64_t embeddedConstantBytes(llvm::Module &module) {
  const llvm::DataLayout &layout = module.getDataLayout();
  uint64_t bytes = 0;
  for (llvm::GlobalVariable &global : module.globals())
    if (global.isConstant() && global.hasInitializer())
      bytes += layout.getTypeAllocSize(global.getValueType());
  return bytes;
}

/// `int32_t kiln_run(void *const *buffers, const int64_t *dims, host)`: builds
/// each tensor's memref descriptor (allocated, aligned, offset, sizes,
/// row-major strides) and calls the entry function.
llvm::Error buildRunWrapper(DescriptorBuilder &d, llvm::Function *entry,
                            const ModelSignature &signature, llvm::Function *run) {
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(d.context, "entry", run));
  llvm::Value *buffers = run->getArg(0), *dimsArg = run->getArg(1);
  std::vector<llvm::Value *> args = {run->getArg(2)}; // kiln_abi_host *
  unsigned tensorIndex = 0, dimIndex = 0;
  for (const auto *list : {&signature.inputs, &signature.outputs}) {
    for (const TensorSignature &tensor : *list) {
      llvm::Value *slot = b.CreateConstInBoundsGEP1_64(d.ptrType, buffers, tensorIndex++);
      llvm::Value *data = b.CreateLoad(d.ptrType, slot, tensor.name + ".data");
      std::vector<llvm::Value *> sizes;
      for (int64_t dim : tensor.dims) {
        if (dim >= 0) {
          sizes.push_back(llvm::ConstantInt::get(d.i64, dim));
        } else {
          llvm::Value *at = b.CreateConstInBoundsGEP1_64(d.i64, dimsArg, dimIndex);
          sizes.push_back(b.CreateLoad(d.i64, at));
        }
        ++dimIndex;
      }
      std::vector<llvm::Value *> strides(sizes.size());
      llvm::Value *stride = llvm::ConstantInt::get(d.i64, 1);
      for (size_t j = sizes.size(); j-- > 0;) {
        strides[j] = stride;
        stride = b.CreateMul(stride, sizes[j]);
      }
      args.insert(args.end(), {data, data, llvm::ConstantInt::get(d.i64, 0)});
      args.insert(args.end(), sizes.begin(), sizes.end());
      args.insert(args.end(), strides.begin(), strides.end());
    }
  }
  if (entry->arg_size() != args.size())
    return llvm::createStringError(
        "the lowered entry function takes " + std::to_string(entry->arg_size()) +
        " arguments, but the model signature implies " + std::to_string(args.size()));
  b.CreateCall(entry, args);
  b.CreateRet(llvm::ConstantInt::get(d.i32, 0));
  return llvm::Error::success();
}

/// Packs `value` into a 64-bit slot (pointers, integers, floats).
llvm::Value *toSlot(llvm::IRBuilder<> &b, llvm::Value *value) {
  llvm::Type *type = value->getType(), *i64 = b.getInt64Ty();
  if (type->isPointerTy())
    return b.CreatePtrToInt(value, i64);
  if (type->isIntegerTy())
    return b.CreateZExtOrTrunc(value, i64);
  if (type->isFloatTy())
    return b.CreateZExt(b.CreateBitCast(value, b.getInt32Ty()), i64);
  return b.CreateBitCast(value, i64); // double
}

/// Unpacks a 64-bit slot into `type` (the inverse of toSlot).
llvm::Value *fromSlot(llvm::IRBuilder<> &b, llvm::Value *slot, llvm::Type *type) {
  if (type->isPointerTy())
    return b.CreateIntToPtr(slot, type);
  if (type->isIntegerTy())
    return b.CreateTrunc(slot, type);
  if (type->isFloatTy())
    return b.CreateBitCast(b.CreateTrunc(slot, b.getInt32Ty()), type);
  return b.CreateBitCast(slot, type);
}

bool isSlotType(llvm::Type *type) {
  return type->isPointerTy() || (type->isIntegerTy() && type->getIntegerBitWidth() <= 64) ||
         type->isFloatTy() || type->isDoubleTy();
}

/// Defines `launch(host, count, captured...)` for `task(i, captured...)`:
/// packs the captured values into 64-bit slots and calls
/// host->parallel_for(host->context, 0, count, trampoline, slots), or runs
/// the iterations itself when there is no host.
llvm::Error defineLauncher(llvm::Module &module, llvm::Function *launch,
                           llvm::Function *task) {
  llvm::LLVMContext &context = module.getContext();
  unsigned captured = launch->arg_size() - 2;
  if (task->arg_size() != captured + 1)
    return llvm::createStringError("@" + launch->getName().str() +
                                   " does not match @" + task->getName().str());
  for (llvm::Argument &arg : launch->args())
    if (!isSlotType(arg.getType()))
      return llvm::createStringError("@" + launch->getName().str() +
                                     " captures a value that is not a scalar or pointer");
  auto *ptr = llvm::PointerType::getUnqual(context);
  auto *i64 = llvm::Type::getInt64Ty(context);
  launch->setLinkage(llvm::GlobalValue::InternalLinkage);

  // trampoline(slots, i): task(i, unpack(slots)...)
  auto *trampolineType = llvm::FunctionType::get(llvm::Type::getVoidTy(context), {ptr, i64}, false);
  auto *trampoline = llvm::Function::Create(trampolineType, llvm::GlobalValue::InternalLinkage,
                                            launch->getName() + ".trampoline", module);
  {
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", trampoline));
    std::vector<llvm::Value *> args = {trampoline->getArg(1)};
    for (unsigned j = 0; j < captured; ++j) {
      llvm::Value *slot = b.CreateLoad(i64, b.CreateConstInBoundsGEP1_64(i64, trampoline->getArg(0), j));
      args.push_back(fromSlot(b, slot, task->getArg(j + 1)->getType()));
    }
    b.CreateCall(task, args);
    b.CreateRetVoid();
  }

  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", launch));
  llvm::Value *host = launch->getArg(0), *count = launch->getArg(1);
  llvm::Value *slots = b.CreateAlloca(i64, b.getInt64(std::max(captured, 1u)));
  for (unsigned j = 0; j < captured; ++j)
    b.CreateStore(toSlot(b, launch->getArg(j + 2)),
                  b.CreateConstInBoundsGEP1_64(i64, slots, j));
  auto *pooled = llvm::BasicBlock::Create(context, "pooled", launch);
  auto *serial = llvm::BasicBlock::Create(context, "serial", launch);
  auto *done = llvm::BasicBlock::Create(context, "done", launch);
  b.CreateCondBr(b.CreateIsNull(host), serial, pooled);

  // kiln_abi_host: { void *context; parallel_for; int32_t num_threads; }
  b.SetInsertPoint(pooled);
  llvm::Value *hostContext = b.CreateLoad(ptr, host);
  llvm::Value *parallelFor = b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, host, 1));
  auto *parallelForType = llvm::FunctionType::get(
      b.getVoidTy(), {ptr, i64, i64, ptr, ptr}, false);
  b.CreateCall(parallelForType, parallelFor, {hostContext, b.getInt64(0), count, trampoline, slots});
  b.CreateBr(done);

  b.SetInsertPoint(serial);
  auto *loop = llvm::BasicBlock::Create(context, "loop", launch);
  auto *entryBlock = b.GetInsertBlock();
  b.CreateCondBr(b.CreateICmpSGT(count, b.getInt64(0)), loop, done);
  b.SetInsertPoint(loop);
  llvm::PHINode *i = b.CreatePHI(i64, 2);
  i->addIncoming(b.getInt64(0), entryBlock);
  b.CreateCall(trampoline, {slots, i});
  llvm::Value *nextI = b.CreateAdd(i, b.getInt64(1));
  i->addIncoming(nextI, loop);
  b.CreateCondBr(b.CreateICmpSLT(nextI, count), loop, done);

  b.SetInsertPoint(done);
  b.CreateRetVoid();
  return llvm::Error::success();
}

/// Defines every launcher declaration kiln-outline-parallel-loops left.
llvm::Error defineLaunchers(llvm::Module &module) {
  std::vector<llvm::Function *> launchers;
  for (llvm::Function &function : module)
    if (function.isDeclaration() && function.getName().starts_with(kLaunchPrefix))
      launchers.push_back(&function);
  for (llvm::Function *launch : launchers) {
    std::string taskName =
        (kTaskPrefix + launch->getName().drop_front(kLaunchPrefix.size())).str();
    llvm::Function *task = module.getFunction(taskName);
    if (!task)
      return llvm::createStringError("no @" + taskName + " for @" + launch->getName().str());
    task->setLinkage(llvm::GlobalValue::InternalLinkage);
    if (llvm::Error error = defineLauncher(module, launch, task))
      return error;
  }
  return llvm::Error::success();
}

} // namespace

llvm::Error addArtifactABI(llvm::Module &module, const ModelSignature &signature) {
  llvm::Function *entry = module.getFunction(kEntryFunctionName);
  if (!entry)
    return llvm::createStringError("the lowered module has no @" +
                                   kEntryFunctionName.str());
  // Only kiln_run calls the entry: internal linkage lets LLVM inline it.
  entry->setLinkage(llvm::GlobalValue::InternalLinkage);
  if (llvm::Error error = defineLaunchers(module))
    return error;
  uint64_t weightsBytes = embeddedConstantBytes(module);
  DescriptorBuilder d(module);

  auto *runType = llvm::FunctionType::get(d.i32, {d.ptrType, d.ptrType, d.ptrType}, false);
  auto *run = llvm::Function::Create(runType, llvm::GlobalValue::InternalLinkage,
                                     "kiln_run", module);
  if (llvm::Error error = buildRunWrapper(d, entry, signature, run))
    return error;

  auto *modelType = llvm::StructType::create(
      d.context,
      {d.i32, d.i32, d.i32, d.i32, d.ptrType, d.ptrType, d.ptrType, d.ptrType, d.i64, d.i64},
      "kiln_abi_model");
  llvm::Constant *model = llvm::ConstantStruct::get(
      modelType,
      {llvm::ConstantInt::get(d.i32, KILN_ABI_MAGIC),
       llvm::ConstantInt::get(d.i32, KILN_ABI_VERSION),
       llvm::ConstantInt::get(d.i32, signature.inputs.size()),
       llvm::ConstantInt::get(d.i32, signature.outputs.size()),
       d.tensorArray(signature.inputs), d.tensorArray(signature.outputs), run,
       d.string("kilnc 0.1.0"), llvm::ConstantInt::get(d.i64, weightsBytes),
       llvm::ConstantInt::get(d.i64, descriptorChecksum(signature, weightsBytes))});
  llvm::Constant *modelGlobal = d.makeGlobal(model, "kiln.model");

  auto *getterType = llvm::FunctionType::get(d.ptrType, {}, false);
  auto *getter = llvm::Function::Create(getterType, llvm::GlobalValue::ExternalLinkage,
                                        KILN_ABI_ENTRY_SYMBOL, module);
  getter->setVisibility(llvm::GlobalValue::DefaultVisibility);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(d.context, "entry", getter));
  b.CreateRet(modelGlobal);
  return llvm::Error::success();
}

} // namespace kiln
