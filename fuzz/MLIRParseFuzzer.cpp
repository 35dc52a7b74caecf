//===- MLIRParseFuzzer.cpp - Fuzz target: kiln textual IR -> parse, verify, canonicalize ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Each input is parsed as a module of graph-level IR (the kiln, func, arith
// and tensor dialects; anything else is an unregistered op), verified, then
// canonicalized with a bounded number of rewrites and verified again: the
// kiln verifiers, type inference, folders and canonicalization patterns all
// see hostile IR. Every failure must be a diagnostic.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::DialectRegistry registry;
  registry.insert<kiln::KilnDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect>();
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler quiet(&context,
                                      [](mlir::Diagnostic &) { return mlir::success(); });
  // The lexer reads up to a NUL past the end, as MemoryBuffer guarantees:
  // a std::string provides it.
  std::string text(reinterpret_cast<const char *>(data), size);
  mlir::ParserConfig config(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, config);
  if (!module || mlir::failed(mlir::verify(*module)))
    return 0;
  mlir::GreedyRewriteConfig rewrites;
  rewrites.setMaxIterations(4).setMaxNumRewrites(4096);
  mlir::PassManager pm(&context);
  pm.addPass(mlir::createCanonicalizerPass(rewrites));
  (void)pm.run(*module); // the pass manager verifies after the pass
  return 0;
}
