//===- BufferAnalysis.h - What codegen asks of a buffer ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Questions both targets' kernel generators ask of a memref after
// bufferization: which buffer a view reads, whether its rows are contiguous,
// whether a kernel can load its elements in vectors, whether two views may
// overlap, whether a fill or copy may trade places with a kernel's ops.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGET_HOST_BUFFERANALYSIS_H
#define KILN_TARGET_HOST_BUFFERANALYSIS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"

namespace kiln {

/// The buffer `memref` views: through view-like ops to an allocation, a
/// global or a function argument.
mlir::Value rootOf(mlir::Value memref);

/// Whether `type` has unit stride along its last dim (a rank-0 buffer has).
bool hasUnitInnerStride(mlir::MemRefType type);

/// Memory a kernel can load in vectors: byte-sized or wider ints and floats
/// (i1 vectors are bit-packed in LLVM, i1 buffers are not).
bool isLoadableElement(mlir::Type type);

/// The same buffer: one value, or two equivalent views of one source (two
/// identical subviews, two identical collapse_shapes of it).
bool sameView(mlir::Value x, mlir::Value y);

/// Whether two buffers may share memory where one of them is written: only
/// views of one root (rootOf) may. Distinct allocations are disjoint; what
/// the entry function receives is disjoint where it matters: inputs are
/// never written (caller memory, include/kiln-c/runtime.h), outputs are
/// fresh runtime allocations, globals are constants. Two subviews of one
/// buffer are disjoint when their slices provably do not overlap (a
/// concat's pieces).
bool mayOverlap(mlir::Value a, mlir::Value b);

/// Whether `op`, a fill or copy on buffers between the ops of one kernel,
/// may trade places with each of `others` (a row group is emitted after its
/// last member, a matmul moves down to its epilogue: ops between move past
/// them). True when it touches no memory they write and writes none they
/// read (mayOverlap).
bool commutesWith(mlir::Operation *op, llvm::ArrayRef<mlir::Operation *> others);

} // namespace kiln

#endif // KILN_TARGET_HOST_BUFFERANALYSIS_H
