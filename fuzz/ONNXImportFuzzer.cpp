//===- ONNXImportFuzzer.cpp - Fuzz target: ONNX bytes -> importer -> verifier ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Each input is written as model.onnx into a private, otherwise empty
// directory and imported through the same entry point as `kilnc`, so
// external-data references resolve (and are confined) as they would for a
// real model file; a module that imports then goes through the verifier.
// Every failure must be a diagnostic; a crash, sanitizer report or hang is a
// bug.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "kiln/Import/ONNX/ONNXImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

static std::string modelPath;

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") +
                        "/kiln-fuzz-onnx-XXXXXX";
  if (!::mkdtemp(pattern.data())) {
    std::perror("mkdtemp");
    std::abort();
  }
  modelPath = pattern + "/model.onnx";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FILE *file = std::fopen(modelPath.c_str(), "wb");
  if (!file || std::fwrite(data, 1, size, file) != size || std::fclose(file))
    std::abort(); // the harness itself failed, not the importer
  mlir::DialectRegistry registry;
  registry.insert<kiln::KilnDialect, mlir::func::FuncDialect>();
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler quiet(&context,
                                      [](mlir::Diagnostic &) { return mlir::success(); });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      kiln::onnx_import::importModel(modelPath, context);
  if (module)
    (void)mlir::verify(*module);
  return 0;
}
