//===- HostArtifact.h - Writing artifacts from the lowered host module -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------------===//

#ifndef KILN_TARGET_HOST_HOSTARTIFACT_H
#define KILN_TARGET_HOST_HOSTARTIFACT_H

#include "kiln/Target/Host/ArtifactWriter.h"
#include "kiln/Target/Host/ModelSignature.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

namespace kiln {

/// What `writeCPUArtifact` produces: the stages llvm, obj and lib.
enum class ArtifactKind { LLVMIR, Object, SharedLibrary };

/// Translates `module` (LLVM dialect, entry @kiln_entry) to LLVM IR, adds the
/// artifact ABI for `signature`, and writes `kind` to `outputPath` ("-" is
/// stdout, for LLVM IR only). Objects and libraries are optimized at O3 for
/// `options.cpu`. `addTargetCode`, when given, runs on the LLVM module after
/// the ABI is added (the CUDA target defines its runtime shims there).
llvm::Error writeCPUArtifact(
    mlir::ModuleOp module, const ModelSignature &signature, ArtifactKind kind,
    const CPUTargetOptions &options, llvm::StringRef outputPath,
    llvm::function_ref<llvm::Error(llvm::Module &)> addTargetCode = nullptr);

} // namespace kiln

#endif // KILN_TARGET_HOST_HOSTARTIFACT_H
