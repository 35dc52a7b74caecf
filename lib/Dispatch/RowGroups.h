//===- RowGroups.h - Which row ops run as one row kernel --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Row groups: softmax, layer norm and other last-axis reductions with their
// elementwise neighbours over the same rows (the scale and mask before a
// softmax, the normalization after the statistics) are marked
// `kiln.row_group = N`; kiln-form-dispatch-regions makes each group one
// kiln.dispatch, and the targets' row kernels emit each as one loop over the
// rows. The rule lives here only: kiln-form-dispatches (with the CPU's
// epilogues) and kiln-form-row-groups (alone, for targets that take no
// matmul epilogues) both call it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_DISPATCH_ROWGROUPS_H
#define KILN_LIB_DISPATCH_ROWGROUPS_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"

namespace kiln {

/// What a target's row kernel takes into one kernel.
struct RowGroupRules {
  /// f16 and bf16 rows too (the kernel computes in f32), not only f32.
  bool halfFloats = false;
  /// Only rows of one length (the CUDA kernel gives a row one team of
  /// threads); the CPU kernel loops over each op's own row.
  bool oneRowLength = false;
};

/// Marks maximal runs of adjacent row members around each row reduction of
/// `block` (adjacent ops only; with dynamic outer sizes, a symbolic batch,
/// only ops that read one another) as `kiln.row_group`. First, an
/// elementwise op that reads a reduction's result through an expand_shape
/// adding only unit dims (an RMSNorm's mean read as [b, s, 1]) is rewritten
/// to read the result directly as a row scalar, so the two can be grouped.
void formRowGroups(mlir::Block &block, const RowGroupRules &rules = {});

/// A generic input that expands a reduction's result only by unit dims (a
/// global average pool's sum [N, C] read as [N, C, 1, 1] by its division):
/// collapsing the generic's loops reads the sums directly, so the division
/// can join the reduction's row group.
bool isReductionResultUnitExpand(mlir::OpOperand *operand);

} // namespace kiln

#endif // KILN_LIB_DISPATCH_ROWGROUPS_H
