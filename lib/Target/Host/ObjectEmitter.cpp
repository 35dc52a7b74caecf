//===- ObjectEmitter.cpp - x86-64 target machine, O3, object file, link ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/ArtifactWriter.h"
#include "kiln-c/abi.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"

namespace kiln {

static const llvm::Triple kHostTriple("x86_64-unknown-linux-gnu");

/// LLVM's x86-64 target, or null with `error` set.
static const llvm::Target *lookupX86Target(std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  return llvm::TargetRegistry::lookupTarget(kHostTriple, error);
}

/// The CPU names of LLVM's x86 backend, sorted (empty without the target).
static std::vector<std::string> x86CPUNames() {
  std::string error;
  const llvm::Target *target = lookupX86Target(error);
  if (!target)
    return {};
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(kHostTriple, "", ""));
  std::vector<std::string> names;
  for (const llvm::SubtargetSubTypeKV &cpu : info->getAllProcessorDescriptions())
    names.push_back(cpu.Key);
  llvm::sort(names);
  return names;
}

std::optional<HostCPU> parseHostCPU(llvm::StringRef text) {
  if (text == "native")
    return HostCPU{};
  std::vector<std::string> names = x86CPUNames();
  if (!llvm::is_contained(names, text))
    return std::nullopt;
  return HostCPU{text.str()};
}

std::string hostCPUNames() {
  std::string list = "native";
  for (const std::string &name : x86CPUNames())
    list += ", " + name;
  return list;
}

bool hostCPUHasFeature(const HostCPU &cpu, llvm::StringRef feature) {
  if (cpu.isNative()) {
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    auto it = features.find(feature);
    return it != features.end() && it->second;
  }
  std::string error;
  const llvm::Target *target = lookupX86Target(error);
  if (!target)
    return false;
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(kHostTriple, cpu.name, ""));
  return info && info->checkFeatures(("+" + feature).str());
}

std::string cpuFeatureList(const HostCPU &cpu) {
  std::string list;
#define KILN_ADD_FEATURE(name)                                                 \
  if (hostCPUHasFeature(cpu, name))                                            \
    list += list.empty() ? name : "," name;
  KILN_ABI_CPU_FEATURES(KILN_ADD_FEATURE)
#undef KILN_ADD_FEATURE
  return list;
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createCPUTargetMachine(const CPUTargetOptions &options) {
  std::string error;
  const llvm::Target *target = lookupX86Target(error);
  if (!target)
    return llvm::createStringError("no x86-64 target in this LLVM: " + error);
  llvm::Triple triple = kHostTriple;
  std::string cpu = options.cpu.name;
  llvm::SubtargetFeatures features;
  if (options.cpu.isNative()) {
    cpu = llvm::sys::getHostCPUName().str();
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      features.AddFeature(feature.getKey(), feature.getValue());
  }
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, features.getString(), targetOptions, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return llvm::createStringError("cannot create a target machine for CPU '" + cpu + "'");
  return machine;
}

void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine) {
  module.setDataLayout(machine.createDataLayout());
  module.setTargetTriple(machine.getTargetTriple());
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgscc;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgscc);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgscc, modules);
  builder.registerVectorizerStartEPCallback(
      [](llvm::FunctionPassManager &passes, llvm::OptimizationLevel) {
        addPredicatedTailsPass(passes);
      });
  llvm::ModulePassManager pipeline =
      builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  pipeline.run(module, modules);
}

llvm::Error emitObject(llvm::Module &module, llvm::TargetMachine &machine,
                       llvm::raw_pwrite_stream &os) {
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError("the target cannot emit object files");
  passes.run(module);
  return llvm::Error::success();
}

/// compiler-rt's builtins archive (libclang-rt-22-dev), else libgcc's;
/// empty when neither is installed.
static std::string findCompilerBuiltins() {
  for (const char *path : {"/usr/lib/llvm-22/lib/clang/22/lib/linux/libclang_rt.builtins-x86_64.a",
                           "/usr/lib/llvm-22/lib/clang/22/lib/x86_64-pc-linux-gnu/"
                           "libclang_rt.builtins.a",
                           "/usr/lib/gcc/x86_64-linux-gnu/12/libgcc.a"})
    if (llvm::sys::fs::exists(path))
      return path;
  return "";
}

llvm::Error linkSharedLibrary(llvm::StringRef objectPath, llvm::StringRef libraryPath) {
  llvm::ErrorOr<std::string> linker =
      llvm::sys::findProgramByName("ld.lld", {"/usr/lib/llvm-22/bin"});
  if (!linker)
    linker = llvm::sys::findProgramByName("ld.lld");
  if (!linker)
    return llvm::createStringError(
        "cannot find ld.lld (install lld-22) to link the shared library");
  // libm for the math calls LLVM leaves (expf, erff, ...): recorded as a
  // DT_NEEDED dependency so that any process can dlopen the artifact.
  llvm::SmallVector<llvm::StringRef> args = {
      *linker, "-shared", "--gc-sections", "-z", "now",
      "-L/lib/x86_64-linux-gnu", "-L/usr/lib/x86_64-linux-gnu", "-o", libraryPath,
      objectPath};
  // The compiler builtins LLVM calls for conversions the CPU has no
  // instruction for (f64 -> f16 is __truncdfhf2 even with AVX-512 FP16),
  // linked in statically: no process has them loaded for the artifact.
  std::string builtins = findCompilerBuiltins();
  if (!builtins.empty())
    args.push_back(builtins);
  args.append({"--as-needed", "-lm"});
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*linker, args, std::nullopt, {}, 0, 0, &message);
  if (status != 0)
    return llvm::createStringError("linking '" + libraryPath.str() + "' failed" +
                                   (message.empty() ? "" : ": " + message));
  return llvm::Error::success();
}

} // namespace kiln
