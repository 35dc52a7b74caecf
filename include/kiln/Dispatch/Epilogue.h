//===- Epilogue.h - Elementwise epilogues of matmul dispatches -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// A matmul epilogue is the elementwise `linalg.generic` right after a
// `linalg.matmul` that reads its result C (bias add, activation, residual
// add, cast). The dispatch stage (kiln-form-dispatches) marks it with
// `kEpilogueAttr` = the index of the input that is C; the CPU matmul kernel
// (kiln-cpu-matmul) then applies it to each output tile while the tile is
// in registers and writes the generic's output instead of C, so matmul and
// epilogue are one kernel. Both stages check the same conditions here.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DISPATCH_EPILOGUE_H
#define KILN_DISPATCH_EPILOGUE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/StringRef.h"

namespace kiln {

/// On a `linalg.generic`: it is the epilogue of the matmul whose result is
/// its input number N (an i64 attribute).
inline constexpr llvm::StringLiteral kEpilogueAttr = "kiln.epilogue";

/// Whether the matmul kernel can apply `generic` per output tile, with its
/// input `cIndex` being the matmul result C [M, N]: two parallel loops, one
/// output and C read through identity maps, every other input indexed by
/// (d0, d1), (d1), (d0), (d0, 0)... with d1 only last (a vector load along
/// the tile's columns, or a scalar broadcast); a body of elementwise arith
/// and math operations (no integer division, which could trap in the masked
/// lanes) on block arguments and scalar constants, not reading the output.
bool isMatmulEpilogue(mlir::linalg::GenericOp generic, unsigned cIndex);

/// The epilogue `kEpilogueAttr` marks on `generic` and its C input index.
std::optional<unsigned> epilogueInput(mlir::linalg::GenericOp generic);

/// On the generics of a row group (softmax, a norm, and their elementwise
/// neighbours over the same rows): they are one dispatch, group N of the
/// function (an i64 attribute). kiln-cpu-row-kernels emits each group as
/// one loop over the rows; kiln-cpu-matmul, which runs after it, rejects a
/// marked generic left over.
inline constexpr llvm::StringLiteral kRowGroupAttr = "kiln.row_group";

/// The body test of epilogues and row groups: every op is elementwise
/// arith/math on scalars (no integer division) and takes block arguments,
/// body results or scalar constants.
bool hasVectorizableScalarBody(mlir::linalg::GenericOp generic);

/// Marked dispatch groups still present as separate linalg ops after
/// codegen formed its kernels: emits an error on each, fails if any.
mlir::LogicalResult verifyDispatchGroupsFused(mlir::Operation *root);

} // namespace kiln

#endif // KILN_DISPATCH_EPILOGUE_H
