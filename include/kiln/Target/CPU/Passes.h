//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGET_CPU_PASSES_H
#define KILN_TARGET_CPU_PASSES_H

#include "kiln/Target/Host/ABI.h"
#include "kiln/Target/TargetOptions.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "kiln/Target/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Target/CPU/Passes.h.inc"

} // namespace kiln

#endif // KILN_TARGET_CPU_PASSES_H
