//===- KilnOps.td - All ops of the kiln dialect -*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===-----------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_IR_KILNOPS_TD
#define KILN_DIALECT_KILN_IR_KILNOPS_TD

include "kiln/Dialect/Kiln/IR/KilnBase.td"
include "kiln/Dialect/Kiln/IR/KilnElementwiseOps.td"
include "kiln/Dialect/Kiln/IR/KilnNNOps.td"
include "kiln/Dialect/Kiln/IR/KilnShapeOps.td"
include "kiln/Dialect/Kiln/IR/KilnKernelOps.td"
include "kiln/Dialect/Kiln/IR/KilnDispatchOps.td"

#endif // KILN_DIALECT_KILN_IR_KILNOPS_TD
