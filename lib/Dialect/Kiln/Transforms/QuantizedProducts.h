//===- QuantizedProducts.h - Matching QDQ products for integer kernels ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// What kiln-recognize-integer-matmul's patterns share: the QDQ operands they
// accept, the constants they read, onnxruntime's requantization of i32 sums
// into a quantize_linear's 8-bit result (RecognizeIntegerMatmul.cpp), and the
// depthwise conv's pattern (IntegerDepthwiseConv.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_TRANSFORMS_QUANTIZEDPRODUCTS_H
#define KILN_DIALECT_KILN_TRANSFORMS_QUANTIZEDPRODUCTS_H

#include "ConstantEval.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/IR/PatternMatch.h"

#include <optional>
#include <utility>

namespace kiln::quantized {

mlir::RankedTensorType tensorOf(mlir::Value v);
bool isOneElement(mlir::Value v);
/// `v` cast to `element` (itself when it has that element type).
mlir::Value castTo(mlir::PatternRewriter &b, mlir::Location loc, mlir::Value v,
                   mlir::Type element);
/// The 8-bit range of quantize_linear `q`'s result.
std::pair<float, float> outputRange(QuantizeLinearOp q);
/// onnxruntime's requantization of the i32 `acc` into `q`'s result:
/// f32(acc) * factor (f32), rounded half to even, plus the zero point,
/// clamped to `range`, cast.
mlir::Value requantize(mlir::PatternRewriter &b, mlir::Location loc, mlir::Value acc,
                       mlir::Value factor, QuantizeLinearOp q, std::pair<float, float> range);
/// sx * sw / sy in f32 (per tensor, or per output channel with w's scale).
mlir::Value requantizationFactor(mlir::PatternRewriter &b, mlir::Location loc,
                                 DequantizeLinearOp x, DequantizeLinearOp w, QuantizeLinearOp q);
/// dequantize_linear(x) and dequantize_linear(w) as a quantized product's
/// operands: f32 scales, 8-bit values, x per tensor, w per tensor or per
/// output channel along `channelAxis`.
bool isDequantizedPair(DequantizeLinearOp x, DequantizeLinearOp w, int64_t channelAxis = 1);
/// A quantize_linear to 8 bits with a per-tensor f32 scale.
bool isPerTensorQuantize(QuantizeLinearOp op);
/// The values of a constant `v` (dense or a resource blob).
std::optional<consteval::Literal> constantValues(mlir::Value v);
/// quantize_static's int32 bias of a conv, dequantize_linear(b, sx * sw, 0),
/// reshaped to `shape` (the i32 values to add to the sums), or null.
mlir::Value integerBias(mlir::PatternRewriter &b, mlir::Location loc, mlir::Value bias,
                        DequantizeLinearOp x, DequantizeLinearOp w, int64_t channels,
                        llvm::ArrayRef<int64_t> shape);
/// The range of `q`'s result left by a Relu or Clip between a conv and q,
/// or nothing; sets `conv` to the conv read.
std::optional<std::pair<float, float>> activationRange(QuantizeLinearOp q, mlir::Value input,
                                                       ConvOp &conv);

/// QDQ depthwise convs as i32 sums of the 8-bit input's taps, requantized.
void populateIntegerDepthwiseConvPatterns(mlir::RewritePatternSet &patterns);

} // namespace kiln::quantized

#endif // KILN_DIALECT_KILN_TRANSFORMS_QUANTIZEDPRODUCTS_H
