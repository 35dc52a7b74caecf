//===- KernelAccess.h - Buffer accesses of the vectorizing CUDA kernels -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// What kiln-cuda-row-kernels and kiln-cuda-vector-elementwise ask of a
// linalg.generic's operands before reading them in 16-byte vectors along
// their last loop, and how they clone its scalar body per element.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_TARGET_CUDA_KERNELACCESS_H
#define KILN_LIB_TARGET_CUDA_KERNELACCESS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

namespace kiln::cuda {

inline constexpr int64_t kVectorBytes = 16;

/// Memory a kernel can load: byte-sized or wider ints and floats.
bool isLoadableElement(mlir::Type type);

/// Every index of `map` is a loop dim or a constant, and the loop dim
/// `last` (the innermost) appears only as the last index.
bool indexesWithLastLoopInside(mlir::AffineMap map, int64_t last);

/// Whether the last index of `map` is the loop dim `last`.
bool readsAlongLastLoop(mlir::AffineMap map, int64_t last);

bool hasUnitInnerStride(mlir::MemRefType type);

/// Whether vectors of `width` elements along the last dim of `type` start
/// at multiples of `width` elements (static offset and outer strides that
/// are multiples of it, unit inner stride).
bool hasVectorLayout(mlir::MemRefType type, int64_t width);

/// Whether every op of the generic's body is a scalar op without memory
/// effects or regions, or linalg.index.
bool hasScalarBody(mlir::linalg::GenericOp generic);

/// Clones the body of `generic` at `b` for one element (its block
/// arguments mapped in `mapping`); linalg.index d becomes `index(d)`.
/// Returns the yielded values.
llvm::SmallVector<mlir::Value> cloneScalarBody(mlir::OpBuilder &b, mlir::linalg::GenericOp generic,
                                               mlir::IRMapping &mapping,
                                               llvm::function_ref<mlir::Value(int64_t)> index);

} // namespace kiln::cuda

#endif // KILN_LIB_TARGET_CUDA_KERNELACCESS_H
