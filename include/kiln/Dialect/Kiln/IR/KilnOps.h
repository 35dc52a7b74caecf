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

/// Whether the CPU attention kernel (`kiln.attention_kernel`) computes `op`:
/// static f32 rank-4 Q/K/V of equal batch and head dims, a head dim that is
/// a multiple of 16 up to 256, and no mask or an f32 additive one that
/// broadcasts to [B, H, Sq, Sk] along its leading three dims. Otherwise
/// `why` says what is missing.
bool hasCPUAttentionKernel(AttentionOp op, std::string *why = nullptr);
/// Whether the CUDA attention kernel (`kiln-cuda-attention`) computes `op`:
/// static rank-4 Q/K/V of equal batch and head dims and one element type, a
/// head dim of 64 or 128, no mask or an additive float one of rank <= 4 that
/// varies along the keys. f16 and bf16 elements are computed as they are;
/// f32 ones only when `f32As` is fp16 or bf16 (the precision they are
/// rounded to while loading). Otherwise `why` says what is missing.
bool hasCUDAAttentionKernel(AttentionOp op, llvm::StringRef f32As,
                            std::string *why = nullptr);
} // namespace kiln

#endif // KILN_DIALECT_KILN_IR_KILNOPS_H
