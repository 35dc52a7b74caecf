//===- KilnOps.h - Ops of the kiln dialect ----------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_IR_KILNOPS_H
#define KILN_DIALECT_KILN_IR_KILNOPS_H

#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "kiln/Dialect/Kiln/IR/ShapeUtils.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "kiln/Dialect/Kiln/IR/KilnEnums.h.inc"

#define GET_OP_CLASSES
#include "kiln/Dialect/Kiln/IR/KilnOps.h.inc"

namespace kiln {
/// Verifies an op with inferred result types by running its inference with
/// the op's location, so that inference failures carry their own message.
template <typename OpTy>
llvm::LogicalResult verifyByInference(OpTy op) {
  llvm::SmallVector<mlir::Type> types;
  mlir::Operation *operation = op.getOperation();
  return OpTy::inferReturnTypes(op.getContext(), op.getLoc(),
                                operation->getOperands(),
                                operation->getRawDictionaryAttrs(),
                                operation->getPropertiesStorage(),
                                operation->getRegions(), types);
}
} // namespace kiln

#endif // KILN_DIALECT_KILN_IR_KILNOPS_H
