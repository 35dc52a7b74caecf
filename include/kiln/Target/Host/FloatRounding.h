//===- FloatRounding.h - f32 to f16 / bf16 bits at compile time -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Weights converted to 16-bit floats at compile time (the CUDA target's
// --precision=fp16|bf16 operands, the CPU's bf16 matmul panels), with bit
// arithmetic fast enough for BERT's 85 M weights; it agrees with APFloat
// (test/unit/ConstantWeightsTest.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGET_HOST_FLOATROUNDING_H
#define KILN_TARGET_HOST_FLOATROUNDING_H

#include <cstdint>

namespace kiln {

/// IEEE binary16 / bfloat16 bits of `value`, rounded to nearest even (as
/// APFloat and arith.truncf round); NaN stays a quiet NaN.
uint16_t roundToF16(float value);
uint16_t roundToBF16(float value);

} // namespace kiln

#endif // KILN_TARGET_HOST_FLOATROUNDING_H
