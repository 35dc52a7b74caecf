//===- kiln-opt.cpp - Pass driver for Kiln's lit tests --------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// A thin MlirOptMain wrapper: the kiln dialect, the upstream dialects and
// passes Kiln's pipelines use, and every Kiln pass and pipeline.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "kiln/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  kiln::registerKilnPipelines();

  mlir::DialectRegistry registry;
  registry.insert<kiln::KilnDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Kiln pass driver\n", registry));
}
