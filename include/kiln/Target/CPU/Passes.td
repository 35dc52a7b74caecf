//===- Passes.td - CPU code generation passes -*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===---------------------------------------------------------===//

#ifndef KILN_TARGET_CPU_PASSES_TD
#define KILN_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnPrepareEntryPass : Pass<"kiln-prepare-entry", "mlir::ModuleOp"> {
  let summary = "Make the model's entry function the private @kiln_entry";
  let description = [{
    Codegen turns the model function into `@kiln_entry`, called only by the
    artifact's `kiln_run` wrapper (which the artifact writer adds after
    translation to LLVM IR). Making it private lets bufferization write the
    results straight into caller-provided buffers
    (`buffer-results-to-out-params` only rewrites private functions) and lets
    LLVM inline it into the wrapper.

    Pre-condition: the module has exactly one public `func.func` (the model),
    or one named `main`. Post-condition: it is `private @kiln_entry`.
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def KilnCopiesToLinalgPass : Pass<"kiln-copies-to-linalg", "mlir::func::FuncOp"> {
  let summary = "Rewrite memref.copy as linalg.copy";
  let description = [{
    Bufferization copies into strided views (padding, concatenation). The
    upstream LLVM lowering turns a non-contiguous `memref.copy` into a call to
    `memrefCopy` from MLIR's C runner library, which an artifact cannot
    assume. As `linalg.copy` it becomes loops like every other kernel (and
    LLVM recognizes contiguous ones as memcpy).

    Post-condition: no `memref.copy` is left.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

#endif // KILN_TARGET_CPU_PASSES_TD
