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
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

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

/// What every attention kernel needs: static rank-4 query, key and value
/// with one batch and head count, and a mask (if any) that is static, of
/// rank <= 4, of an element type `maskElement` accepts (`maskTypes` names
/// them), and varies along the keys. Returns why not, or an empty string.
std::string attentionLayoutProblem(AttentionOp op, llvm::function_ref<bool(mlir::Type)> maskElement,
                                   llvm::StringRef maskTypes);

/// The `kiln.attention` ops a target's attention kernel computes, as its
/// policy states them (kiln-decompose-attention keeps these as one op and
/// expands the rest). The default keeps none.
struct AttentionKernelShapes {
  /// Query, key and value of f32 elements.
  bool f32 = false;
  /// Query, key and value of f16 or bf16 elements; masks of those types too.
  bool halfFloats = false;
  /// The head dim: a multiple of this (0: nothing is kept) up to maxHeadDim.
  int64_t headDimMultiple = 0;
  int64_t maxHeadDim = 0;

  bool keepsAny() const { return (f32 || halfFloats) && headDimMultiple > 0; }
};

/// Whether a kernel of `shapes` computes `op`: attentionLayoutProblem finds
/// nothing (masks of f32, or also f16/bf16 with `halfFloats`), query, key
/// and value share an element type `shapes` accepts, and the head dim of
/// query and value is one of its head dims. Otherwise `why` says what is
/// missing.
bool hasAttentionKernel(AttentionOp op, const AttentionKernelShapes &shapes,
                        std::string *why = nullptr);
} // namespace kiln

#endif // KILN_DIALECT_KILN_IR_KILNOPS_H
