//===- ArtifactWriter.cpp - The kiln-c/abi.h descriptor and wrapper in LLVM IR ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===--------------------------------------------------------------------------===//

#include "kiln/Target/Host/ArtifactWriter.h"
#include "kiln/Target/Host/ABI.h"

#include "kiln-c/checksum.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"

namespace kiln {

namespace {
/// The descriptor's weights_checksum: only external blobs are checked.
uint64_t weightsChecksum(const ArtifactLayout &layout) {
  return layout.weightsMode == WeightsMode::External ? blobChecksum(layout.weights) : 0;
}

/// ABI v6 output_aliases: one entry per output, or none when no output
/// aliases an input (the descriptor's pointer is then NULL).
std::vector<int32_t> outputAliases(const ModelSignature &signature) {
  std::vector<int32_t> aliases;
  for (const TensorSignature &output : signature.outputs)
    aliases.push_back(output.aliasesInput);
  if (llvm::all_of(aliases, [](int32_t i) { return i < 0; }))
    aliases.clear();
  return aliases;
}

/// The descriptor fields of `tensors` that the checksum reads.
std::vector<kiln_abi_tensor> checksummedTensors(const std::vector<TensorSignature> &tensors) {
  std::vector<kiln_abi_tensor> result;
  for (const TensorSignature &tensor : tensors)
    result.push_back({tensor.name.c_str(), tensor.dtype,
                      static_cast<int32_t>(tensor.dims.size()), tensor.dims.data(), nullptr});
  return result;
}
} // namespace

uint64_t descriptorChecksum(const ModelSignature &signature, uint64_t weightsBytes,
                            const ArtifactLayout &layout) {
  std::vector<kiln_abi_tensor> inputs = checksummedTensors(signature.inputs);
  std::vector<kiln_abi_tensor> outputs = checksummedTensors(signature.outputs);
  std::vector<const char *> dispatchNames;
  for (const std::string &name : layout.dispatchNames)
    dispatchNames.push_back(name.c_str());
  std::vector<kiln_abi_weights_segment> segments;
  for (size_t i = 0; i + 2 < layout.weightsSegments.size(); i += 3)
    segments.push_back({static_cast<uint64_t>(layout.weightsSegments[i]),
                        static_cast<uint64_t>(layout.weightsSegments[i + 1]),
                        static_cast<int32_t>(layout.weightsSegments[i + 2]), 0});
  kiln_abi_model model = {};
  model.magic = KILN_ABI_MAGIC;
  model.abi_version = KILN_ABI_VERSION;
  model.num_inputs = inputs.size();
  model.num_outputs = outputs.size();
  model.inputs = inputs.data();
  model.outputs = outputs.data();
  model.weights_bytes = weightsBytes;
  model.arena_bytes = layout.arenaBytes;
  model.weights_mode = static_cast<uint32_t>(layout.weightsMode);
  model.num_dispatches = dispatchNames.size();
  if (layout.weightsMode == WeightsMode::External)
    model.weights_file = layout.weightsFile.c_str();
  model.weights_checksum = weightsChecksum(layout);
  model.dispatch_names = dispatchNames.data();
  model.num_weights_segments = segments.size();
  model.weights_segments = segments.data();
  model.cpu_features = layout.cpuFeatures.c_str();
  std::vector<int32_t> aliases = outputAliases(signature);
  model.output_aliases = aliases.empty() ? nullptr : aliases.data();
  return kiln_abi_descriptor_checksum(&model);
}

uint64_t blobChecksum(llvm::ArrayRef<char> blob) {
  return kiln_abi_blob_checksum(blob.data(), blob.size());
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

/// kiln_abi_host as LLVM sees it (field numbers for the loads below).
enum HostField : unsigned {
  kHostArena = 3, kHostWeights = 4, kHostTrace = 5, kHostTraceBegin = 6, kHostTraceEnd = 7,
  kHostRunContext = 9, kHostFail = 10, kHostAlloc = 11, kHostFree = 12
};
llvm::StructType *hostType(llvm::LLVMContext &context) {
  auto *ptr = llvm::PointerType::getUnqual(context);
  return llvm::StructType::get(context, {ptr, ptr, llvm::Type::getInt32Ty(context), ptr,
                                         ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr});
}

/// Loads pointer field `field` of `host`.
llvm::Value *loadHostField(llvm::IRBuilder<> &b, llvm::Value *host, unsigned field) {
  return b.CreateLoad(b.getPtrTy(), b.CreateStructGEP(hostType(b.getContext()), host, field));
}

/// Defines the check hook of kiln-prepare-entry, `(host, i1 ok, i32 id,
/// i64 got, i64 expected)`: when `ok` is false, a cold call to
/// `kiln_check_failed`, which calls host->fail(host->run_context,
/// messages[id], got, expected), which does not return; without a host or
/// if it returns anyway, a trap. The common path is one branch.
void defineCheckHook(llvm::Module &module, llvm::Function *hook,
                     const std::vector<std::string> &messages) {
  llvm::LLVMContext &context = module.getContext();
  auto *ptr = llvm::PointerType::getUnqual(context);
  auto *i64 = llvm::Type::getInt64Ty(context);
  std::vector<llvm::Constant *> strings;
  for (const std::string &message : messages) {
    llvm::Constant *text = llvm::ConstantDataArray::getString(context, message);
    strings.push_back(new llvm::GlobalVariable(module, text->getType(), true,
                                               llvm::GlobalValue::PrivateLinkage, text,
                                               "kiln.check_message"));
  }
  if (strings.empty())
    strings.push_back(llvm::ConstantPointerNull::get(ptr));
  auto *tableType = llvm::ArrayType::get(ptr, strings.size());
  auto *table = new llvm::GlobalVariable(module, tableType, true,
                                         llvm::GlobalValue::PrivateLinkage,
                                         llvm::ConstantArray::get(tableType, strings),
                                         "kiln.check_messages");
  llvm::FunctionType *hookType = hook->getFunctionType();
  // kiln_check_failed(host, id, got, expected): the cold path.
  auto *failedType = llvm::FunctionType::get(
      llvm::Type::getVoidTy(context),
      {ptr, hookType->getParamType(2), hookType->getParamType(3), hookType->getParamType(4)},
      false);
  auto *failed = llvm::Function::Create(failedType, llvm::GlobalValue::InternalLinkage,
                                        "kiln_check_failed", module);
  failed->addFnAttr(llvm::Attribute::Cold);
  failed->addFnAttr(llvm::Attribute::NoInline);
  failed->addFnAttr(llvm::Attribute::NoReturn);
  {
    auto *entry = llvm::BasicBlock::Create(context, "entry", failed);
    auto *haveHost = llvm::BasicBlock::Create(context, "have_host", failed);
    auto *report = llvm::BasicBlock::Create(context, "report", failed);
    auto *trap = llvm::BasicBlock::Create(context, "trap", failed);
    llvm::IRBuilder<> b(entry);
    llvm::Value *host = failed->getArg(0);
    b.CreateCondBr(b.CreateIsNull(host), trap, haveHost);
    b.SetInsertPoint(haveHost);
    llvm::Value *fail = loadHostField(b, host, kHostFail);
    b.CreateCondBr(b.CreateIsNull(fail), trap, report);
    b.SetInsertPoint(report);
    llvm::Value *id = b.CreateZExt(failed->getArg(1), i64);
    llvm::Value *message =
        b.CreateLoad(ptr, b.CreateInBoundsGEP(tableType, table, {b.getInt64(0), id}));
    auto *failType = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, i64, i64}, false);
    b.CreateCall(failType, fail,
                 {loadHostField(b, host, kHostRunContext), message,
                  b.CreateSExtOrTrunc(failed->getArg(2), i64),
                  b.CreateSExtOrTrunc(failed->getArg(3), i64)});
    b.CreateBr(trap);
    b.SetInsertPoint(trap);
    b.CreateIntrinsic(llvm::Intrinsic::trap, {});
    b.CreateUnreachable();
  }
  hook->setLinkage(llvm::GlobalValue::InternalLinkage);
  hook->addFnAttr(llvm::Attribute::AlwaysInline);
  auto *entry = llvm::BasicBlock::Create(context, "entry", hook);
  auto *bad = llvm::BasicBlock::Create(context, "failed", hook);
  auto *done = llvm::BasicBlock::Create(context, "done", hook);
  llvm::IRBuilder<> b(entry);
  b.CreateCondBr(hook->getArg(1), done, bad,
                 llvm::MDBuilder(context).createLikelyBranchWeights());
  b.SetInsertPoint(bad);
  b.CreateCall(failed, {hook->getArg(0), hook->getArg(2), hook->getArg(3), hook->getArg(4)});
  b.CreateUnreachable();
  b.SetInsertPoint(done);
  b.CreateRetVoid();
}

/// MLIR's generic allocation functions (memref lowering with
/// use-generic-functions) as calls of the run's kiln_abi_host::alloc/free.
/// Only kiln_run knows the host: it keeps it in a thread-local variable for
/// the calls it makes (`kiln_run` is wrapped to set and restore it). Threads
/// without it (pool workers running parallel_for bodies) use malloc/free.
void routeAllocations(llvm::Module &module, llvm::Function *run) {
  llvm::LLVMContext &context = module.getContext();
  llvm::Function *alloc = module.getFunction("_mlir_memref_to_llvm_alloc");
  llvm::Function *alignedAlloc = module.getFunction("_mlir_memref_to_llvm_aligned_alloc");
  llvm::Function *free = module.getFunction("_mlir_memref_to_llvm_free");
  if ((!alloc || !alloc->isDeclaration()) && (!alignedAlloc || !alignedAlloc->isDeclaration()) &&
      (!free || !free->isDeclaration()))
    return;
  auto *ptr = llvm::PointerType::getUnqual(context);
  auto *i64 = llvm::Type::getInt64Ty(context);
  auto *current = new llvm::GlobalVariable(
      module, ptr, false, llvm::GlobalValue::InternalLinkage,
      llvm::ConstantPointerNull::get(ptr), "kiln.host", nullptr,
      llvm::GlobalValue::GeneralDynamicTLSModel);
  llvm::FunctionCallee libcMalloc = module.getOrInsertFunction("malloc", ptr, i64);
  llvm::FunctionCallee libcAligned = module.getOrInsertFunction("aligned_alloc", ptr, i64, i64);
  llvm::FunctionCallee libcFree =
      module.getOrInsertFunction("free", llvm::Type::getVoidTy(context), ptr);
  // if (host = current) return host->SERVICE(host->run_context, args...);
  // else return fallback(...).
  auto define = [&](llvm::Function *function, unsigned field, auto serviceArgs,
                    auto fallback) {
    if (!function || !function->isDeclaration())
      return;
    function->setLinkage(llvm::GlobalValue::InternalLinkage);
    auto *entry = llvm::BasicBlock::Create(context, "entry", function);
    auto *hosted = llvm::BasicBlock::Create(context, "runtime", function);
    auto *plain = llvm::BasicBlock::Create(context, "libc", function);
    llvm::IRBuilder<> b(entry);
    llvm::Value *host = b.CreateLoad(ptr, current);
    b.CreateCondBr(b.CreateIsNull(host), plain, hosted);
    b.SetInsertPoint(hosted);
    std::vector<llvm::Value *> args = {loadHostField(b, host, kHostRunContext)};
    for (llvm::Value *arg : serviceArgs(b))
      args.push_back(arg);
    std::vector<llvm::Type *> types;
    for (llvm::Value *arg : args)
      types.push_back(arg->getType());
    llvm::Type *result = function->getReturnType();
    llvm::Value *value = b.CreateCall(llvm::FunctionType::get(result, types, false),
                                      loadHostField(b, host, field), args);
    if (result->isVoidTy())
      b.CreateRetVoid();
    else
      b.CreateRet(value);
    b.SetInsertPoint(plain);
    llvm::Value *fallbackValue = fallback(b);
    if (result->isVoidTy())
      b.CreateRetVoid();
    else
      b.CreateRet(fallbackValue);
  };
  define(
      alloc, kHostAlloc,
      [&](llvm::IRBuilder<> &b) {
        // malloc's alignment: MLIR over-allocates and aligns the buffer itself.
        return std::vector<llvm::Value *>{b.CreateZExtOrTrunc(alloc->getArg(0), i64),
                                          b.getInt64(16)};
      },
      [&](llvm::IRBuilder<> &b) {
        return b.CreateCall(libcMalloc, {b.CreateZExtOrTrunc(alloc->getArg(0), i64)});
      });
  define(
      alignedAlloc, kHostAlloc,
      [&](llvm::IRBuilder<> &b) {
        return std::vector<llvm::Value *>{b.CreateZExtOrTrunc(alignedAlloc->getArg(1), i64),
                                          b.CreateZExtOrTrunc(alignedAlloc->getArg(0), i64)};
      },
      [&](llvm::IRBuilder<> &b) -> llvm::Value * {
        // aligned_alloc wants a multiple of the alignment.
        llvm::Value *align = b.CreateZExtOrTrunc(alignedAlloc->getArg(0), i64);
        llvm::Value *size = b.CreateZExtOrTrunc(alignedAlloc->getArg(1), i64);
        llvm::Value *mask = b.CreateSub(align, b.getInt64(1));
        llvm::Value *rounded = b.CreateAnd(b.CreateAdd(size, mask), b.CreateNot(mask));
        return b.CreateCall(libcAligned, {align, rounded});
      });
  define(
      free, kHostFree,
      [&](llvm::IRBuilder<> &) { return std::vector<llvm::Value *>{free->getArg(0)}; },
      [&](llvm::IRBuilder<> &b) -> llvm::Value * {
        b.CreateCall(libcFree, {free->getArg(0)});
        return nullptr;
      });

  // kiln_run: save the thread's host, set this run's, run, restore.
  run->setName("kiln_run.body");
  auto *wrapper = llvm::Function::Create(run->getFunctionType(),
                                         llvm::GlobalValue::InternalLinkage, "kiln_run", module);
  run->replaceAllUsesWith(wrapper);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", wrapper));
  llvm::Value *saved = b.CreateLoad(ptr, current);
  b.CreateStore(wrapper->getArg(2), current);
  llvm::Value *code =
      b.CreateCall(run, {wrapper->getArg(0), wrapper->getArg(1), wrapper->getArg(2)});
  b.CreateStore(saved, current);
  b.CreateRet(code);
}

/// Loads pointer field `field` of the host, returning `code` from `run` when
/// the host or the field is NULL.
llvm::Value *requireHostPointer(llvm::IRBuilder<> &b, llvm::Function *run, unsigned field,
                                int32_t code) {
  llvm::LLVMContext &context = run->getContext();
  llvm::Value *host = run->getArg(2);
  auto *fail = llvm::BasicBlock::Create(context, "missing_host_field", run);
  llvm::IRBuilder<>(fail).CreateRet(b.getInt32(code));
  auto *haveHost = llvm::BasicBlock::Create(context, "have_host", run);
  auto *ok = llvm::BasicBlock::Create(context, "have_field", run);
  b.CreateCondBr(b.CreateIsNull(host), fail, haveHost);
  b.SetInsertPoint(haveHost);
  llvm::Value *value =
      b.CreateLoad(b.getPtrTy(), b.CreateStructGEP(hostType(context), host, field));
  b.CreateCondBr(b.CreateIsNull(value), fail, ok);
  b.SetInsertPoint(ok);
  return value;
}

/// The five fields of a static 1-D memref<size x i8> at `data`.
void appendByteBuffer(std::vector<llvm::Value *> &args, llvm::IRBuilder<> &b,
                      llvm::Value *data, uint64_t size) {
  args.insert(args.end(),
              {data, data, b.getInt64(0), b.getInt64(size), b.getInt64(1)});
}

/// `int32_t kiln_run(void *const *buffers, const int64_t *dims, host)`: passes
/// the host, the arena and weights buffers of `layout`, then builds each
/// tensor's memref descriptor (allocated, aligned, offset, sizes, row-major
/// strides) and calls the entry function.
llvm::Error buildRunWrapper(DescriptorBuilder &d, llvm::Function *entry,
                            const ModelSignature &signature, const ArtifactLayout &layout,
                            llvm::GlobalVariable *embeddedWeights, llvm::Function *run) {
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(d.context, "entry", run));
  llvm::Value *buffers = run->getArg(0), *dimsArg = run->getArg(1);
  std::vector<llvm::Value *> args = {run->getArg(2)}; // kiln_abi_host *
  // Return codes 3 and 4 of kiln-c/abi.h.
  // Empty buffers are never read: they need no pointer.
  llvm::Value *none = llvm::ConstantPointerNull::get(d.ptrType);
  if (layout.hasArena)
    appendByteBuffer(args, b,
                     layout.arenaBytes ? requireHostPointer(b, run, kHostArena, 3) : none,
                     layout.arenaBytes);
  if (layout.hasWeights)
    appendByteBuffer(args, b,
                     embeddedWeights    ? embeddedWeights
                     : layout.weights.empty() ? none
                                        : requireHostPointer(b, run, kHostWeights, 4),
                     layout.weights.size());
  // An input updated in place is read from its output's buffer (the
  // runtime put it there); that output has no argument of its own.
  std::vector<int64_t> slotOf;
  for (size_t i = 0; i < signature.inputs.size(); ++i)
    slotOf.push_back(static_cast<int64_t>(i));
  for (size_t o = 0; o < signature.outputs.size(); ++o)
    if (int32_t i = signature.outputs[o].aliasesInput; i >= 0)
      slotOf[i] = static_cast<int64_t>(signature.inputs.size() + o);
  unsigned tensorIndex = 0, dimIndex = 0;
  for (const auto *list : {&signature.inputs, &signature.outputs}) {
    for (const TensorSignature &tensor : *list) {
      unsigned index = tensorIndex++;
      if (list == &signature.outputs && tensor.aliasesInput >= 0) {
        dimIndex += tensor.dims.size();
        continue;
      }
      llvm::Value *slot = b.CreateConstInBoundsGEP1_64(
          d.ptrType, buffers, index < slotOf.size() ? slotOf[index] : index);
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

/// Defines a trace hook declared by kiln-instrument-dispatches:
/// `if (host && host->trace) host->trace_<which>(host->trace, dispatch)`,
/// the traced path marked unlikely so untraced runs fall straight through.
void defineTraceHook(llvm::Function *hook, unsigned field) {
  llvm::LLVMContext &context = hook->getContext();
  hook->setLinkage(llvm::GlobalValue::InternalLinkage);
  hook->addFnAttr(llvm::Attribute::AlwaysInline);
  auto *entry = llvm::BasicBlock::Create(context, "entry", hook);
  auto *checkTrace = llvm::BasicBlock::Create(context, "check_trace", hook);
  auto *traced = llvm::BasicBlock::Create(context, "traced", hook);
  auto *done = llvm::BasicBlock::Create(context, "done", hook);
  llvm::MDNode *unlikely = llvm::MDBuilder(context).createUnlikelyBranchWeights();
  llvm::IRBuilder<> b(entry);
  llvm::Value *host = hook->getArg(0);
  b.CreateCondBr(b.CreateIsNull(host), done, checkTrace, unlikely);
  b.SetInsertPoint(checkTrace);
  llvm::StructType *type = hostType(context);
  llvm::Value *trace = b.CreateLoad(b.getPtrTy(), b.CreateStructGEP(type, host, kHostTrace));
  b.CreateCondBr(b.CreateIsNull(trace), done, traced,
                 llvm::MDBuilder(context).createLikelyBranchWeights());
  b.SetInsertPoint(traced);
  llvm::Value *callback = b.CreateLoad(b.getPtrTy(), b.CreateStructGEP(type, host, field));
  auto *callbackType =
      llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getInt32Ty()}, false);
  b.CreateCall(callbackType, callback, {trace, hook->getArg(1)});
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
}

/// The weights blob as one byte array: LLVM emits it with one directive.
llvm::GlobalVariable *embedWeights(llvm::Module &module, llvm::ArrayRef<char> blob) {
  llvm::Constant *data = llvm::ConstantDataArray::getRaw(
      llvm::StringRef(blob.data(), blob.size()), blob.size(),
      llvm::Type::getInt8Ty(module.getContext()));
  auto *global = new llvm::GlobalVariable(module, data->getType(), /*isConstant=*/true,
                                          llvm::GlobalValue::PrivateLinkage, data,
                                          "kiln.weights");
  global->setAlignment(llvm::Align(64));
  return global;
}

/// `const char *const[]` of the dispatch names, or null when there are none.
llvm::Constant *dispatchNameArray(DescriptorBuilder &d, const std::vector<std::string> &names) {
  if (names.empty())
    return llvm::ConstantPointerNull::get(d.ptrType);
  std::vector<llvm::Constant *> strings;
  for (const std::string &name : names)
    strings.push_back(d.string(name));
  return d.makeGlobal(
      llvm::ConstantArray::get(llvm::ArrayType::get(d.ptrType, strings.size()), strings),
      "kiln.dispatch_names");
}

/// The kiln_abi_weights_segment array of `segments` (offset, bytes, dtype
/// triples), or null.
llvm::Constant *weightsSegmentArray(DescriptorBuilder &d, llvm::ArrayRef<int64_t> segments) {
  if (segments.empty())
    return llvm::ConstantPointerNull::get(d.ptrType);
  auto *segmentType = llvm::StructType::get(d.context, {d.i64, d.i64, d.i32, d.i32});
  std::vector<llvm::Constant *> entries;
  for (size_t i = 0; i < segments.size(); i += 3)
    entries.push_back(llvm::ConstantStruct::get(
        segmentType, {llvm::ConstantInt::get(d.i64, segments[i]),
                      llvm::ConstantInt::get(d.i64, segments[i + 1]),
                      llvm::ConstantInt::get(d.i32, segments[i + 2]),
                      llvm::ConstantInt::get(d.i32, 0)}));
  return d.makeGlobal(
      llvm::ConstantArray::get(llvm::ArrayType::get(segmentType, entries.size()), entries),
      "kiln.weights_segments");
}

/// The int32_t output_aliases array (ABI v6), or null when no output is an
/// input updated in place.
llvm::Constant *outputAliasArray(DescriptorBuilder &d, const ModelSignature &signature) {
  std::vector<int32_t> aliases = outputAliases(signature);
  if (aliases.empty())
    return llvm::ConstantPointerNull::get(d.ptrType);
  std::vector<llvm::Constant *> entries;
  for (int32_t alias : aliases)
    entries.push_back(llvm::ConstantInt::get(d.i32, alias, /*isSigned=*/true));
  return d.makeGlobal(
      llvm::ConstantArray::get(llvm::ArrayType::get(d.i32, entries.size()), entries),
      "kiln.output_aliases");
}

} // namespace

llvm::Error addArtifactABI(llvm::Module &module, const ModelSignature &signature,
                           const ArtifactLayout &layout) {
  llvm::Function *entry = module.getFunction(kEntryFunctionName);
  if (!entry)
    return llvm::createStringError("the lowered module has no @" +
                                   kEntryFunctionName.str());
  // Only kiln_run calls the entry: internal linkage lets LLVM inline it.
  entry->setLinkage(llvm::GlobalValue::InternalLinkage);
  if (llvm::Error error = defineLaunchers(module))
    return error;
  if (llvm::Function *begin = module.getFunction(kTraceBeginName))
    defineTraceHook(begin, kHostTraceBegin);
  if (llvm::Function *end = module.getFunction(kTraceEndName))
    defineTraceHook(end, kHostTraceEnd);
  llvm::GlobalVariable *embedded = nullptr;
  if (layout.hasWeights && layout.weightsMode == WeightsMode::Embed)
    embedded = embedWeights(module, layout.weights);
  // Embedded: every constant byte in the artifact. Otherwise exactly the
  // blob the runtime maps or generates.
  uint64_t weightsBytes = layout.weightsMode == WeightsMode::Embed
                              ? embeddedConstantBytes(module)
                              : layout.weights.size();
  DescriptorBuilder d(module);

  auto *runType = llvm::FunctionType::get(d.i32, {d.ptrType, d.ptrType, d.ptrType}, false);
  llvm::Function *run = llvm::Function::Create(runType, llvm::GlobalValue::InternalLinkage,
                                               "kiln_run", module);
  if (llvm::Error error = buildRunWrapper(d, entry, signature, layout, embedded, run))
    return error;
  if (llvm::Function *hook = module.getFunction(kCheckHookName))
    defineCheckHook(module, hook, layout.checkMessages);
  if (layout.runtimeAllocations) {
    routeAllocations(module, run);
    run = module.getFunction("kiln_run");
  }

  auto *modelType = llvm::StructType::create(
      d.context,
      {d.i32, d.i32, d.i32, d.i32, d.ptrType, d.ptrType, d.ptrType, d.ptrType, d.i64, d.i64,
       d.i64, d.i32, d.i32, d.ptrType, d.i64, d.ptrType, d.i32, d.ptrType, d.ptrType,
       d.ptrType},
      "kiln_abi_model");
  llvm::Constant *model = llvm::ConstantStruct::get(
      modelType,
      {llvm::ConstantInt::get(d.i32, KILN_ABI_MAGIC),
       llvm::ConstantInt::get(d.i32, KILN_ABI_VERSION),
       llvm::ConstantInt::get(d.i32, signature.inputs.size()),
       llvm::ConstantInt::get(d.i32, signature.outputs.size()),
       d.tensorArray(signature.inputs), d.tensorArray(signature.outputs), run,
       d.string("kilnc 0.1.0"), llvm::ConstantInt::get(d.i64, weightsBytes),
       llvm::ConstantInt::get(d.i64, descriptorChecksum(signature, weightsBytes, layout)),
       llvm::ConstantInt::get(d.i64, layout.arenaBytes),
       llvm::ConstantInt::get(d.i32, static_cast<uint32_t>(layout.weightsMode)),
       llvm::ConstantInt::get(d.i32, layout.dispatchNames.size()),
       layout.weightsMode == WeightsMode::External
           ? d.string(layout.weightsFile)
           : llvm::ConstantPointerNull::get(d.ptrType),
       llvm::ConstantInt::get(d.i64, weightsChecksum(layout)),
       dispatchNameArray(d, layout.dispatchNames),
       llvm::ConstantInt::get(d.i32, layout.weightsSegments.size() / 3),
       weightsSegmentArray(d, layout.weightsSegments), d.string(layout.cpuFeatures),
       outputAliasArray(d, signature)});
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
