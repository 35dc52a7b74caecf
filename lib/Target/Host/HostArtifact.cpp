//===- HostArtifact.cpp - Writing artifacts from the lowered host module --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/HostArtifact.h"
#include "kiln/Target/Host/ABI.h"
#include "kiln/Target/Host/DispatchCost.h"
#include "kiln/Target/Host/MemoryPlan.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"

namespace kiln {

namespace {
/// Takes what the codegen passes recorded off the module (LLVM IR has no
/// place for it) into the layout the artifact writer follows.
ArtifactLayout takeLayout(mlir::ModuleOp module, WeightsMode mode) {
  ArtifactLayout layout;
  layout.weightsMode = mode;
  if (std::optional<MemoryPlanSummary> plan = readMemoryPlan(module)) {
    layout.hasArena = plan->buffers > 0;
    layout.arenaBytes = layout.hasArena ? static_cast<uint64_t>(plan->arenaBytes) : 0;
  }
  if (auto blob = module->getAttrOfType<mlir::DenseResourceElementsAttr>(kWeightsBlobAttr)) {
    if (mlir::AsmResourceBlob *data = blob.getRawHandle().getBlob()) {
      layout.hasWeights = true;
      layout.weights = data->getData();
    }
  }
  // Only a blob with 16-bit weights needs its element types recorded (an
  // all-f32 blob has no segments, as on the CPU).
  if (auto segments = module->getAttrOfType<mlir::DenseI64ArrayAttr>(kWeightsSegmentsAttr))
    if (layout.hasWeights && !(segments.size() == 3 && segments[2] == 1))
      layout.weightsSegments.assign(segments.asArrayRef().begin(), segments.asArrayRef().end());
  if (auto names = module->getAttrOfType<mlir::ArrayAttr>(kDispatchNamesAttr))
    for (auto name : names.getAsValueRange<mlir::StringAttr>())
      layout.dispatchNames.push_back(name.str());
  if (auto messages = module->getAttrOfType<mlir::ArrayAttr>(kCheckMessagesAttr))
    for (auto message : messages.getAsValueRange<mlir::StringAttr>())
      layout.checkMessages.push_back(message.str());
  for (llvm::StringRef attr : {kMemoryPlanAttr, kWeightsBlobAttr, kWeightsSegmentsAttr,
                               kDispatchNamesAttr, kDispatchCostsAttr, kMatmulISAAttr,
                               kCheckMessagesAttr})
    module->removeAttr(attr);
  return layout;
}

/// --weights=external: the blob goes to NAME.weights next to the artifact.
llvm::Error writeWeightsFile(ArtifactLayout &layout, llvm::StringRef outputPath) {
  if (outputPath == "-")
    return llvm::createStringError("--weights=external writes a file next to the output; "
                                   "it needs -o <file>");
  llvm::SmallString<128> path(outputPath);
  llvm::sys::path::replace_extension(path, ".weights");
  layout.weightsFile = llvm::sys::path::filename(path).str();
  std::error_code ec;
  llvm::ToolOutputFile file(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return llvm::createStringError("cannot write '" + path.str().str() + "': " + ec.message());
  file.os().write(layout.weights.data(), layout.weights.size());
  file.os().flush();
  if (file.os().has_error())
    return llvm::createStringError("cannot write '" + path.str().str() + "'");
  file.keep();
  return llvm::Error::success();
}
} // namespace

llvm::Error writeCPUArtifact(mlir::ModuleOp module, const ModelSignature &signature,
                             ArtifactKind kind, const CPUTargetOptions &options,
                             llvm::StringRef outputPath,
                             llvm::function_ref<llvm::Error(llvm::Module &)> addTargetCode) {
  ArtifactLayout layout = takeLayout(module, options.weights);
  layout.runtimeAllocations = options.runtimeAllocations;
  layout.cpuFeatures = cpuFeatureList(options.cpu);
  if (options.weights == WeightsMode::External)
    if (llvm::Error error = writeWeightsFile(layout, outputPath))
      return error;
  mlir::registerBuiltinDialectTranslation(*module.getContext());
  mlir::registerLLVMDialectTranslation(*module.getContext());
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, context, "kiln_model");
  if (!llvmModule)
    return llvm::createStringError("translation to LLVM IR failed");
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      createCPUTargetMachine(options);
  if (!machine)
    return machine.takeError();
  llvmModule->setDataLayout((*machine)->createDataLayout());
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  if (llvm::Error error = addArtifactABI(*llvmModule, signature, layout))
    return error;
  if (addTargetCode)
    if (llvm::Error error = addTargetCode(*llvmModule))
      return error;
  std::string verifierMessage;
  llvm::raw_string_ostream verifierStream(verifierMessage);
  if (llvm::verifyModule(*llvmModule, &verifierStream))
    return llvm::createStringError("generated LLVM IR is invalid: " + verifierMessage);

  std::error_code ec;
  if (kind == ArtifactKind::LLVMIR) {
    llvm::ToolOutputFile output(outputPath, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return llvm::createStringError("cannot write '" + outputPath.str() + "': " + ec.message());
    llvmModule->print(output.os(), nullptr);
    output.keep();
    return llvm::Error::success();
  }

  // Kernels are throughput loops: let the vectorizer use full AVX-512
  // registers (LLVM's x86 default prefers 256-bit vectors).
  if ((*machine)->getTargetFeatureString().contains("+avx512f"))
    for (llvm::Function &function : *llvmModule)
      if (!function.isDeclaration())
        function.addFnAttr("prefer-vector-width", "512");
  optimizeModule(*llvmModule, **machine);
  std::string objectPath = outputPath.str();
  if (kind == ArtifactKind::SharedLibrary) {
    llvm::SmallString<128> temporary;
    if ((ec = llvm::sys::fs::createTemporaryFile("kiln", "o", temporary)))
      return llvm::createStringError("cannot create a temporary object file: " + ec.message());
    objectPath = temporary.str().str();
  }
  {
    llvm::ToolOutputFile object(objectPath, ec, llvm::sys::fs::OF_None);
    if (ec)
      return llvm::createStringError("cannot write '" + objectPath + "': " + ec.message());
    if (llvm::Error error = emitObject(*llvmModule, **machine, object.os()))
      return error;
    object.keep();
  }
  if (kind == ArtifactKind::Object)
    return llvm::Error::success();
  llvm::Error linked = linkSharedLibrary(objectPath, outputPath);
  llvm::sys::fs::remove(objectPath);
  return linked;
}

} // namespace kiln
