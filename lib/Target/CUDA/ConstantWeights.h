//===- ConstantWeights.h - Weights rewritten at compile time ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// kiln-cuda-lower-precision converts, transposes and pads constant matmul
// and convolution operands (weights) now, whatever form the constant takes:
// an inline `dense<...>`, a `dense_resource` blob (what the ONNX importer
// makes of initializers), or either seen through reshapes and transposes.
// The results are `dense_resource` blobs, which kiln-pack-weights moves into
// the weights blob like any other weight.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_TARGET_CUDA_CONSTANTWEIGHTS_H
#define KILN_LIB_TARGET_CUDA_CONSTANTWEIGHTS_H

#include "kiln/Target/Host/FloatRounding.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace kiln {

/// The row-major f32 elements of `value` when it is known now: an
/// arith.constant (dense or dense_resource, static shape), possibly through
/// tensor.collapse_shape, tensor.expand_shape and linalg.transpose ops.
std::optional<std::vector<float>> foldableF32Elements(mlir::Value value);

/// `value` converted to `type` (f16 or bf16) now, as a dense_resource
/// constant; null when `value` is not foldable.
mlir::Value foldConversion(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                           mlir::FloatType type);

/// `value` ([batch x] K x N, f32) transposed to [batch x] N x K now, and
/// with `roundToTF32` each element rounded to the nearest tf32 value; null
/// when it is not foldable.
mlir::Value foldTranspose(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                          bool roundToTF32 = false);

/// `value` (f32) with each element rounded to the nearest tf32 value
/// (TF32Rounding.h), now; null when it is not foldable.
mlir::Value foldTF32Rounding(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value);

/// Filters `value` (F x C x KH x KW, f32) with zero channels added up to
/// `channels`, now; null when it is not foldable.
mlir::Value foldChannelPad(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                           int64_t channels);

} // namespace kiln

#endif // KILN_LIB_TARGET_CUDA_CONSTANTWEIGHTS_H
