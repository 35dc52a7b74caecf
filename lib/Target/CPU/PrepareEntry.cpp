//===- PrepareEntry.cpp - The kiln-prepare-entry pass ---------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Target/CPU/ModelSignature.h"
#include "kiln/Target/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace kiln {
#define GEN_PASS_DEF_KILNPREPAREENTRYPASS
#include "kiln/Target/CPU/Passes.h.inc"

namespace {
struct KilnPrepareEntryPass final
    : impl::KilnPrepareEntryPassBase<KilnPrepareEntryPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::func::FuncOp model = findModelFunction(module);
    if (!model)
      return signalPassFailure();
    if (failed(mlir::SymbolTable::replaceAllSymbolUses(
            model, mlir::StringAttr::get(&getContext(), kEntryFunctionName), module)))
      return signalPassFailure();
    model.setName(kEntryFunctionName);
    model.setPrivate();
    // The runtime's services (kiln_abi_host) for parallel loops.
    mlir::MLIRContext *context = &getContext();
    if (failed(model.insertArgument(
            0, mlir::LLVM::LLVMPointerType::get(context),
            mlir::DictionaryAttr::get(
                context, {mlir::NamedAttribute(mlir::StringAttr::get(context, kHostArgAttr),
                                               mlir::UnitAttr::get(context))}),
            model.getLoc())))
      return signalPassFailure();
  }
};
} // namespace
} // namespace kiln
