//===- ArtifactWriter.h - The artifact ABI around a lowered model -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===-----------------------------------------------------------------------===//
//
// Turns the LLVM IR of a lowered model into a Kiln artifact module: adds the
// `kiln_run` wrapper (buffers + dims -> memref descriptors -> @kiln_entry),
// the constant model descriptor and its checksum, and the exported entry
// symbol of kiln-c/abi.h. Then optimizes, emits an object file and links the
// shared library.
//
//===-----------------------------------------------------------------------===//

#ifndef KILN_TARGET_HOST_ARTIFACTWRITER_H
#define KILN_TARGET_HOST_ARTIFACTWRITER_H

#include "kiln/Target/Host/ModelSignature.h"
#include "kiln/Target/TargetOptions.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
class raw_pwrite_stream;
} // namespace llvm

namespace kiln {

/// Where the weights blob goes (`kilnc --weights=`); the values are
/// kiln_abi_weights_mode's.
enum class WeightsMode { Embed = 0, External = 1, None = 2 };

/// What the codegen passes recorded on the module (arena plan, weights
/// blob, dispatch names) and where the weights go: the extra entry
/// arguments and descriptor fields of ABI v2.
struct ArtifactLayout {
  /// kiln-plan-arena added an arena argument of `arenaBytes`.
  bool hasArena = false;
  uint64_t arenaBytes = 0;
  /// kiln-pack-weights added a weights argument for this blob.
  bool hasWeights = false;
  llvm::ArrayRef<char> weights;
  WeightsMode weightsMode = WeightsMode::Embed;
  std::string weightsFile; // External: the side file's name
  /// The blob's runs of one element type (kiln.weights_segments: offset,
  /// bytes, kiln_dtype triples); empty when it is all f32.
  std::vector<int64_t> weightsSegments;
  std::vector<std::string> dispatchNames;
  /// The messages of the run-time checks (kCheckMessagesAttr), by id.
  std::vector<std::string> checkMessages;
  /// Heap allocations of generated code (MLIR's generic
  /// _mlir_memref_to_llvm_alloc/free) go to kiln_abi_host::alloc/free of the
  /// run (CPU artifacts; CUDA artifacts route them to the device instead).
  bool runtimeAllocations = false;
  /// The descriptor's cpu_features (ABI v5): cpuFeatureList of the target
  /// CPU; empty for baseline x86-64.
  std::string cpuFeatures;
};

/// FNV-1a 64 of a descriptor, exactly as kiln-c/abi.h specifies.
uint64_t descriptorChecksum(const ModelSignature &signature, uint64_t weightsBytes,
                            const ArtifactLayout &layout);

/// KILN_ABI_BLOB_CHECKSUM of kiln-c/abi.h (word-wise FNV-1a 64).
uint64_t blobChecksum(llvm::ArrayRef<char> blob);

/// Adds the ABI (wrapper, descriptor, entry symbol, trace hooks) to `module`,
/// whose `kiln_entry` function takes the host pointer, the arena and weights
/// memrefs of `layout` (when present), then one expanded memref descriptor
/// per input then per output.
llvm::Error addArtifactABI(llvm::Module &module, const ModelSignature &signature,
                           const ArtifactLayout &layout);

struct CPUTargetOptions {
  /// The compiling machine (default), or an LLVM CPU name such as
  /// "x86-64-v3" or "x86-64-v4".
  HostCPU cpu;
  WeightsMode weights = WeightsMode::Embed;
  /// See ArtifactLayout::runtimeAllocations.
  bool runtimeAllocations = true;
};

/// `native` or a CPU name of LLVM's x86 backend (`x86-64-v3`, `znver4`, ...);
/// nullopt for any other text.
std::optional<HostCPU> parseHostCPU(llvm::StringRef text);

/// What parseHostCPU accepts, for its callers' errors: "native, alderlake,
/// ..., znver5".
std::string hostCPUNames();

/// Whether `cpu` has the x86 feature `feature` as LLVM's x86 backend names
/// it ("avx512bf16", "amx-bf16"): the compiling machine's features for
/// native, the named CPU's otherwise.
bool hostCPUHasFeature(const HostCPU &cpu, llvm::StringRef feature);

/// The extensions of KILN_ABI_CPU_FEATURES (kiln-c/abi.h) that code for
/// `cpu` may use, comma separated in that list's order: what an artifact's
/// descriptor records so that the runtime can refuse it on a CPU without
/// them.
std::string cpuFeatureList(const HostCPU &cpu);

/// A target machine for x86-64 Linux shared objects (PIC) for `options.cpu`.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createCPUTargetMachine(const CPUTargetOptions &options);

/// Runs LLVM's O3 pipeline for `machine` on `module`, with
/// addPredicatedTailsPass before the loop vectorizer.
void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine);

/// Marks the innermost loops with a small constant trip count that is not a
/// multiple of the vector width, and only unit-stride accesses, for a masked
/// vector tail instead of a scalar epilogue (PredicatedTails.cpp).
void addPredicatedTailsPass(llvm::FunctionPassManager &passes);

/// Emits `module` as an ELF object.
llvm::Error emitObject(llvm::Module &module, llvm::TargetMachine &machine,
                       llvm::raw_pwrite_stream &os);

/// Links `objectPath` into the shared library `libraryPath` with ld.lld.
llvm::Error linkSharedLibrary(llvm::StringRef objectPath,
                              llvm::StringRef libraryPath);

} // namespace kiln

#endif // KILN_TARGET_HOST_ARTIFACTWRITER_H
