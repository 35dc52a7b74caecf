//===- CUDATarget.h - Writing CUDA artifacts from the lowered module -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===--------------------------------------------------------------------------===//
//
// A CUDA artifact is a CPU artifact (x86-64 host code, kiln-c/abi.h
// descriptor, embedded weights) whose host code launches kernels embedded as
// cubins (or PTX, when no ptxas is found) through the runtime's CUDA
// services (kiln_abi_cuda).
//
//===--------------------------------------------------------------------------===//

#ifndef KILN_TARGET_CUDA_CUDATARGET_H
#define KILN_TARGET_CUDA_CUDATARGET_H

#include "kiln/Target/Host/ArtifactWriter.h"
#include "kiln/Target/Host/ModelSignature.h"
#include "kiln/Target/TargetOptions.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/Error.h"

#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace kiln {

struct CUDAArtifactOptions {
  /// The chip the kernels were compiled for (ptxas -arch).
  Chip chip;
  /// ptxas path; empty = search PATH, then /usr/local/cuda/bin.
  std::string ptxas;
  CPUTargetOptions host;
};

enum class CUDAOutput { HostLLVMIR, PTX, Object, SharedLibrary };

/// Writes `kind` for `module` (LLVM dialect host code plus gpu.binary ops
/// holding PTX) to `outputPath`. PTX is the kernels' assembly, one module
/// after another; the other kinds assemble the PTX with ptxas when found.
llvm::Error writeCUDAOutput(mlir::ModuleOp module, const ModelSignature &signature,
                            CUDAOutput kind, const CUDAArtifactOptions &options,
                            llvm::StringRef outputPath);

/// Defines, in the artifact's LLVM IR, the GPU runtime functions the lowered
/// host code calls (mgpu*, _mlir_memref_to_llvm_alloc/free,
/// kiln_cuda_constant) as calls through the runtime's kiln_abi_cuda table,
/// makes kiln_run install that table for the run, and exports
/// KILN_ABI_CUDA_SYMBOL. Fails if the host code calls anything else.
llvm::Error addCUDARuntimeShims(llvm::Module &module, llvm::StringRef chip);

/// The CUDA toolkit whose libdevice (nvvm/libdevice/libdevice.10.bc) the
/// kernels link for math functions: $CUDA_HOME, $CUDA_PATH or
/// /usr/local/cuda, the first that has it; empty if none does.
std::string findCUDAToolkit();

/// Dialects, target attributes and translations the CUDA stages need.
void registerCUDACodegenDialects(mlir::DialectRegistry &registry);

} // namespace kiln

#endif // KILN_TARGET_CUDA_CUDATARGET_H
