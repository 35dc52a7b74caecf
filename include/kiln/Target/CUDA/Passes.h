//===- Passes.h - CUDA code generation passes -------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGET_CUDA_PASSES_H
#define KILN_TARGET_CUDA_PASSES_H

#include "kiln/Target/TargetOptions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

/// Marks an scf.parallel that kiln-cuda-serial-kernels made from host code.
inline constexpr llvm::StringLiteral kSerialLoopAttr = "kiln.serial";
/// The host function the artifact defines to fetch a constant's device copy.
inline constexpr llvm::StringLiteral kDeviceConstantFunction = "kiln_cuda_constant";
/// Marks kiln-cuda-lower-precision's im2col generic of a convolution, with
/// its strides and dilations [sh, sw, dh, dw], for kiln-cuda-gemm's kernel.
inline constexpr llvm::StringLiteral kIm2colAttrName = "kiln.im2col";

#define GEN_PASS_DECL
#include "kiln/Target/CUDA/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Target/CUDA/Passes.h.inc"

} // namespace kiln

#endif // KILN_TARGET_CUDA_PASSES_H
