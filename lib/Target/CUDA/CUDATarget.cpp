//===- CUDATarget.cpp - PTX, cubins and CUDA artifacts --------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Target/CUDA/CUDATarget.h"

#include "kiln/Target/Host/HostArtifact.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cctype>
#include <cstdlib>

namespace kiln {

void registerCUDACodegenDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::affine::AffineDialect, mlir::gpu::GPUDialect,
                  mlir::NVVM::NVVMDialect, mlir::nvgpu::NVGPUDialect,
                  mlir::vector::VectorDialect>();
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  // convert-gpu-to-nvvm lowers kernel bodies through each dialect's
  // ConvertToLLVMPatternInterface (cf, arith, math, memref, ...).
  mlir::registerConvertToLLVMDependentDialectLoading(registry);
  mlir::arith::registerConvertArithToLLVMInterface(registry);
  mlir::cf::registerConvertControlFlowToLLVMInterface(registry);
  mlir::registerConvertFuncToLLVMInterface(registry);
  mlir::index::registerConvertIndexToLLVMInterface(registry);
  mlir::registerConvertMathToLLVMInterface(registry);
  mlir::registerConvertMemRefToLLVMInterface(registry);
  mlir::NVVM::registerConvertGpuToNVVMInterface(registry);
  mlir::registerConvertNVVMToLLVMInterface(registry);
  mlir::vector::registerConvertVectorToLLVMInterface(registry);
  mlir::ub::registerConvertUBToLLVMInterface(registry);
  // gpu-module-to-binary translates kernels to LLVM IR in process.
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerNVVMDialectTranslation(registry);
  mlir::registerGPUDialectTranslation(registry);
  mlir::gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
}

std::string findCUDAToolkit() {
  std::vector<std::string> candidates;
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *value = std::getenv(variable); value && *value)
      candidates.push_back(value);
  candidates.push_back("/usr/local/cuda");
  for (const std::string &root : candidates) {
    llvm::SmallString<128> libdevice(root);
    llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
    if (llvm::sys::fs::exists(libdevice))
      return root;
  }
  return "";
}

namespace {

using mlir::gpu::BinaryOp;
using mlir::gpu::CompilationTarget;
using mlir::gpu::ObjectAttr;

/// The single object of each gpu.binary (gpu-module-to-binary makes one per
/// target and Kiln attaches one target).
llvm::Expected<ObjectAttr> onlyObject(BinaryOp binary) {
  if (binary.getObjectsAttr().size() != 1)
    return llvm::createStringError("kernel module @" + binary.getName().str() +
                                   " has " + std::to_string(binary.getObjectsAttr().size()) +
                                   " objects, expected 1");
  return llvm::cast<ObjectAttr>(binary.getObjectsAttr()[0]);
}

/// Math functions become libdevice calls (__nv_expf, ...) that only the
/// linked libdevice defines.
llvm::Error checkNoLibdeviceCalls(llvm::StringRef name, llvm::StringRef ptx) {
  size_t at = ptx.find(".extern .func");
  if (at == llvm::StringRef::npos)
    return llvm::Error::success();
  llvm::StringRef rest = ptx.drop_front(at);
  size_t nv = rest.find("__nv_");
  llvm::StringRef function = nv == llvm::StringRef::npos
                                 ? "a function"
                                 : rest.drop_front(nv).take_until([](char c) {
                                     return !(std::isalnum(c) || c == '_');
                                   });
  return llvm::createStringError(
      "kernel module @" + name.str() + " calls " + function.str() +
      " from CUDA's libdevice, but no CUDA toolkit with nvvm/libdevice/libdevice.10.bc "
      "was found (set CUDA_HOME)");
}

llvm::Error writePTX(mlir::ModuleOp module, llvm::StringRef outputPath) {
  std::error_code ec;
  llvm::ToolOutputFile output(outputPath, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return llvm::createStringError("cannot write '" + outputPath.str() + "': " + ec.message());
  for (BinaryOp binary : module.getOps<BinaryOp>()) {
    llvm::Expected<ObjectAttr> object = onlyObject(binary);
    if (!object)
      return object.takeError();
    if (object->getFormat() != CompilationTarget::Assembly)
      return llvm::createStringError("kernel module @" + binary.getName().str() +
                                     " holds no PTX");
    // PTX ends with a NUL for the driver's loader; the text stops before it.
    llvm::StringRef ptx = object->getObject().getValue();
    if (llvm::Error error = checkNoLibdeviceCalls(binary.getName(), ptx))
      return error;
    output.os() << "// kernel module @" << binary.getName() << "\n"
                << ptx.take_until([](char c) { return c == '\0'; }) << "\n";
  }
  output.keep();
  return llvm::Error::success();
}

/// ptxas from `configured`, PATH or /usr/local/cuda/bin; empty if none.
std::string findPtxas(llvm::StringRef configured) {
  if (!configured.empty())
    return configured.str();
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("ptxas"))
    return *found;
  if (llvm::ErrorOr<std::string> found =
          llvm::sys::findProgramByName("ptxas", {"/usr/local/cuda/bin"}))
    return *found;
  return "";
}

/// Runs ptxas on `ptx`; returns the cubin bytes.
llvm::Expected<std::string> assemble(llvm::StringRef ptxas, llvm::StringRef chip,
                                     llvm::StringRef name, llvm::StringRef ptx) {
  llvm::SmallString<128> ptxPath, cubinPath, logPath;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("kiln", "ptx", ptxPath))
    return llvm::createStringError("cannot create a temporary file: " + ec.message());
  llvm::FileRemover removePtx(ptxPath);
  (void)llvm::sys::fs::createTemporaryFile("kiln", "cubin", cubinPath);
  llvm::FileRemover removeCubin(cubinPath);
  (void)llvm::sys::fs::createTemporaryFile("kiln", "log", logPath);
  llvm::FileRemover removeLog(logPath);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(ptxPath, ec);
    if (ec)
      return llvm::createStringError("cannot write '" + ptxPath.str().str() + "'");
    os << ptx.take_until([](char c) { return c == '\0'; });
  }
  std::string arch = ("-arch=" + chip).str();
  llvm::SmallVector<llvm::StringRef> args = {ptxas, arch, "-O3", ptxPath, "-o", cubinPath};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logPath.str(), logPath.str()};
  std::string message;
  int code = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0, &message);
  if (code != 0) {
    auto log = llvm::MemoryBuffer::getFile(logPath);
    return llvm::createStringError(
        "ptxas failed on kernel module @" + name.str() + " (" + ptxas.str() + " " + arch +
        "): " + (log ? (*log)->getBuffer().trim().str() : message));
  }
  auto cubin = llvm::MemoryBuffer::getFile(cubinPath, /*IsText=*/false);
  if (!cubin)
    return llvm::createStringError("ptxas wrote no cubin for @" + name.str());
  return (*cubin)->getBuffer().str();
}

/// Replaces each gpu.binary's PTX by the cubin ptxas makes of it.
llvm::Error assembleKernels(mlir::ModuleOp module, llvm::StringRef ptxas,
                            llvm::StringRef chip) {
  for (BinaryOp binary : module.getOps<BinaryOp>()) {
    llvm::Expected<ObjectAttr> object = onlyObject(binary);
    if (!object)
      return object.takeError();
    if (object->getFormat() != CompilationTarget::Assembly)
      continue;
    if (llvm::Error error =
            checkNoLibdeviceCalls(binary.getName(), object->getObject().getValue()))
      return error;
    llvm::Expected<std::string> cubin =
        assemble(ptxas, chip, binary.getName(), object->getObject().getValue());
    if (!cubin)
      return cubin.takeError();
    mlir::MLIRContext *context = module.getContext();
    auto assembled = ObjectAttr::get(context, object->getTarget(), CompilationTarget::Binary,
                                     mlir::StringAttr::get(context, *cubin),
                                     object->getProperties(), object->getKernels());
    binary.setObjectsAttr(mlir::ArrayAttr::get(context, {assembled}));
  }
  return llvm::Error::success();
}

} // namespace

llvm::Error writeCUDAOutput(mlir::ModuleOp module, const ModelSignature &signature,
                            CUDAOutput kind, const CUDAArtifactOptions &options,
                            llvm::StringRef outputPath) {
  if (kind == CUDAOutput::PTX)
    return writePTX(module, outputPath);
  if (kind != CUDAOutput::HostLLVMIR) {
    // Without ptxas the PTX stays, and the driver compiles it at load time.
    std::string ptxas = findPtxas(options.ptxas);
    if (!ptxas.empty())
      if (llvm::Error error = assembleKernels(module, ptxas, options.chip.str()))
        return error;
  }
  auto artifactKind = kind == CUDAOutput::HostLLVMIR ? ArtifactKind::LLVMIR
                      : kind == CUDAOutput::Object   ? ArtifactKind::Object
                                                     : ArtifactKind::SharedLibrary;
  CPUTargetOptions host = options.host;
  host.runtimeAllocations = false; // the CUDA shims route them to device memory
  return writeCPUArtifact(module, signature, artifactKind, host, outputPath,
                          [&](llvm::Module &llvmModule) {
                            return addCUDARuntimeShims(llvmModule, options.chip.str());
                          });
}

} // namespace kiln
