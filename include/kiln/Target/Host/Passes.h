//===- Passes.h - Passes every target's host side runs ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGET_HOST_PASSES_H
#define KILN_TARGET_HOST_PASSES_H

#include "kiln/Target/Host/ABI.h"

#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "kiln/Target/Host/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Target/Host/Passes.h.inc"

} // namespace kiln

#endif // KILN_TARGET_HOST_PASSES_H
