//===- ModelFunction.h - The model function of a kiln module ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The passes that change a model's interface (its inputs' and outputs'
// types or count) find the model the way the runtime signature does.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_DIALECT_KILN_TRANSFORMS_MODELFUNCTION_H
#define KILN_LIB_DIALECT_KILN_TRANSFORMS_MODELFUNCTION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace kiln {

/// The model: @main, else the module's one public function with a body;
/// null when there is none or more than one.
inline mlir::func::FuncOp modelFunction(mlir::ModuleOp module) {
  mlir::func::FuncOp found;
  for (auto func : module.getOps<mlir::func::FuncOp>()) {
    if (func.getName() == "main")
      return func;
    if (func.isPublic() && !func.isExternal()) {
      if (found)
        return {};
      found = func;
    }
  }
  return found;
}

/// Whether input (or result) `i` of `func` is named `prefix...` by its
/// `kiln.name` attribute.
inline bool hasModelName(mlir::func::FuncOp func, unsigned i, bool result,
                         llvm::StringRef prefix) {
  auto name = result ? func.getResultAttrOfType<mlir::StringAttr>(i, "kiln.name")
                     : func.getArgAttrOfType<mlir::StringAttr>(i, "kiln.name");
  return name && name.getValue().starts_with(prefix);
}

} // namespace kiln

#endif // KILN_LIB_DIALECT_KILN_TRANSFORMS_MODELFUNCTION_H
