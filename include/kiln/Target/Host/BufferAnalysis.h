//===- BufferAnalysis.h - What codegen asks of a buffer ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Questions both targets' kernel generators ask of a memref after
// bufferization: which buffer a view reads, whether its rows are contiguous,
// whether a kernel can load its elements in vectors.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGET_HOST_BUFFERANALYSIS_H
#define KILN_TARGET_HOST_BUFFERANALYSIS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

namespace kiln {

/// The buffer `memref` views: through view-like ops to an allocation, a
/// global or a function argument.
mlir::Value rootOf(mlir::Value memref);

/// Whether `type` has unit stride along its last dim (a rank-0 buffer has).
bool hasUnitInnerStride(mlir::MemRefType type);

/// Memory a kernel can load in vectors: byte-sized or wider ints and floats
/// (i1 vectors are bit-packed in LLVM, i1 buffers are not).
bool isLoadableElement(mlir::Type type);

} // namespace kiln

#endif // KILN_TARGET_HOST_BUFFERANALYSIS_H
