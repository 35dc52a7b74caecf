//===- PrepareEntry.cpp - The kiln-prepare-entry pass ---------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Target/Host/ModelSignature.h"
#include "kiln/Target/Host/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"

namespace kiln {
#define GEN_PASS_DEF_KILNPREPAREENTRYPASS
#include "kiln/Target/Host/Passes.h.inc"

namespace {
/// The run-time checks of the linalg stage get the host: each
/// `call @kiln_check(%ok, %got, %expected) {kiln.check_message}` becomes
/// `call @kiln_check_hook(%host, %ok, %id, %got, %expected)`, the messages
/// go into the module's kCheckMessagesAttr (id = position), and checks whose
/// condition folded to true are dropped.
mlir::LogicalResult lowerChecks(mlir::ModuleOp module, mlir::func::FuncOp entry) {
  mlir::MLIRContext *context = module.getContext();
  mlir::SmallVector<mlir::func::CallOp> checks;
  mlir::WalkResult walk = module.walk([&](mlir::func::CallOp call) {
    if (call.getCallee() != kCheckFunctionName)
      return mlir::WalkResult::advance();
    if (call->getParentOfType<mlir::func::FuncOp>() != entry || call.getNumOperands() != 3) {
      call.emitError("a run-time check outside the model function");
      return mlir::WalkResult::interrupt();
    }
    checks.push_back(call);
    return mlir::WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return mlir::failure();
  if (auto declaration = module.lookupSymbol<mlir::func::FuncOp>(kCheckFunctionName))
    declaration.erase();
  if (checks.empty())
    return mlir::success();
  mlir::OpBuilder b = mlir::OpBuilder::atBlockEnd(module.getBody());
  auto hookType = b.getFunctionType({mlir::LLVM::LLVMPointerType::get(context), b.getI1Type(),
                                     b.getI32Type(), b.getIndexType(), b.getIndexType()},
                                    {});
  auto hook = mlir::func::FuncOp::create(b, module.getLoc(), kCheckHookName, hookType);
  hook.setPrivate();
  mlir::SmallVector<mlir::Attribute> messages;
  llvm::StringMap<int32_t> ids;
  for (mlir::func::CallOp call : checks) {
    mlir::Value ok = call.getOperand(0);
    if (std::optional<int64_t> known = mlir::getConstantIntValue(ok); known && *known != 0) {
      call.erase();
      continue;
    }
    auto message = call->getAttrOfType<mlir::StringAttr>(kCheckMessageAttr);
    llvm::StringRef text = message ? message.getValue() : "run-time check failed";
    auto [it, inserted] = ids.try_emplace(text, static_cast<int32_t>(messages.size()));
    if (inserted)
      messages.push_back(mlir::StringAttr::get(context, text));
    b.setInsertionPoint(call);
    mlir::Value id = mlir::arith::ConstantIntOp::create(b, call.getLoc(), it->second, 32);
    mlir::func::CallOp::create(b, call.getLoc(), hook,
                               mlir::ValueRange{entry.getArgument(0), ok, id,
                                                call.getOperand(1), call.getOperand(2)});
    call.erase();
  }
  if (!messages.empty())
    module->setAttr(kCheckMessagesAttr, mlir::ArrayAttr::get(context, messages));
  else
    hook.erase();
  return mlir::success();
}

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
    if (failed(lowerChecks(module, model)))
      return signalPassFailure();
    // The caller's inputs are read only: bufferization copies rather than
    // write into one, except an input an output updates in place (a KV
    // cache, kiln.aliases_input; argument 0 is now the host).
    llvm::SmallDenseSet<int64_t> updatedInPlace;
    for (unsigned r = 0; r < model.getNumResults(); ++r)
      if (auto alias = model.getResultAttrOfType<mlir::IntegerAttr>(r, "kiln.aliases_input"))
        updatedInPlace.insert(alias.getInt() + 1);
    for (unsigned i = 1; i < model.getNumArguments(); ++i)
      if (mlir::isa<mlir::TensorType>(model.getArgument(i).getType()) &&
          !updatedInPlace.contains(i))
        model.setArgAttr(i, "bufferization.writable", mlir::BoolAttr::get(context, false));
  }
};
} // namespace
} // namespace kiln
