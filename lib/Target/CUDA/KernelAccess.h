//===- KernelAccess.h - Buffer accesses of the vectorizing CUDA kernels -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// What kiln-cuda-row-kernels and kiln-cuda-vector-elementwise ask of a
// linalg.generic's operands before reading them in 16-byte vectors along
// their last loop (beyond the shared BufferAnalysis.h and RowLocality.h),
// and how they clone its scalar body per element.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_TARGET_CUDA_KERNELACCESS_H
#define KILN_LIB_TARGET_CUDA_KERNELACCESS_H

#include "kiln/Target/Host/BufferAnalysis.h"
#include "kiln/Target/Host/RowLocality.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

#include <optional>

namespace kiln::cuda {

inline constexpr int64_t kVectorBytes = 16;

/// Whether the last index of `map` is the loop dim `last`.
bool readsAlongLastLoop(mlir::AffineMap map, int64_t last);

/// When vectors of `width` elements along the last dim of `type` (unit
/// inner stride, a static last dim that is a multiple of `width`) are known
/// to start at multiples of `width` elements.
enum class VectorAlignment {
  Static,   ///< offset and outer strides static multiples of `width`
  AtRunTime ///< some of them dynamic (the static ones multiples of `width`)
};
std::optional<VectorAlignment> vectorAlignment(mlir::MemRefType type, int64_t width);

/// Whether vectorAlignment is Static.
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
