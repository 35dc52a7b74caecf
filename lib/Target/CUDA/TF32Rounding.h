//===- TF32Rounding.h - f32 values rounded to tf32 --------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// tf32 wgmma reads f32 operands from shared memory and drops their low 13
// mantissa bits: it truncates. Truncation errs one way (toward zero) on
// every operand, and over a deep network the bias adds up: the small zoo's
// EfficientNet with only its weights truncated is 8.7e-3 (of max|ref|) off
// onnxruntime, with them rounded to nearest 1.1e-3. So Kiln rounds the
// operands it can before the tensor cores see them: weights at compile time,
// convolution inputs in the im2col kernel (and 3xTF32's split halves, which
// are exact tf32 values).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_TARGET_CUDA_TF32ROUNDING_H
#define KILN_LIB_TARGET_CUDA_TF32ROUNDING_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace kiln {

/// `x` rounded to the nearest tf32 value (ties away from zero, as
/// cvt.rna.tf32.f32); an infinity stays one (a NaN may become one).
float roundToTF32(float x);

/// The same rounding on an f32 value, emitted as integer arithmetic on its
/// bits (a kernel body or a generic's region).
mlir::Value emitRoundToTF32(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);

} // namespace kiln

#endif // KILN_LIB_TARGET_CUDA_TF32ROUNDING_H
