//===- ConstantWeightsTest.cpp - Compile-time weight rounding -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// kiln-cuda-lower-precision and the CPU's bf16 matmul panels round weights
// with their own bit arithmetic (FloatRounding.h, fast enough for BERT's 85 M
// weights); it must agree with APFloat, which arith.truncf's folder uses.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/FloatRounding.h"

#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

namespace {

uint16_t reference(float value, const llvm::fltSemantics &semantics) {
  llvm::APFloat converted(value);
  bool lost = false;
  converted.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &lost);
  return static_cast<uint16_t>(converted.bitcastToAPInt().getZExtValue());
}

float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

uint32_t toBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

void expectAgrees(uint32_t bits) {
  float value = fromBits(bits);
  uint16_t half = kiln::roundToF16(value), brain = kiln::roundToBF16(value);
  if (value != value) { // NaN: any quiet NaN with the sign
    EXPECT_EQ(half & 0x7e00, 0x7e00) << std::hex << bits;
    EXPECT_EQ(brain & 0x7fc0, 0x7fc0) << std::hex << bits;
    EXPECT_EQ(half >> 15, bits >> 31);
    EXPECT_EQ(brain >> 15, bits >> 31);
    return;
  }
  EXPECT_EQ(half, reference(value, llvm::APFloat::IEEEhalf())) << std::hex << bits;
  EXPECT_EQ(brain, reference(value, llvm::APFloat::BFloat())) << std::hex << bits;
}

TEST(ConstantWeights, RoundingMatchesAPFloat) {
  // Every exponent with mantissas around each rounding boundary, both signs.
  for (uint32_t sign : {0u, 0x80000000u})
    for (uint32_t exponent = 0; exponent < 256; ++exponent)
      for (uint32_t mantissa : {0u, 1u, 0xfffu, 0x1000u, 0x1001u, 0x2000u, 0x3000u, 0x7fffu,
                                0x8000u, 0x8001u, 0x18000u, 0x7fe000u, 0x7ff000u, 0x7fffffu})
        expectAgrees(sign | exponent << 23 | mantissa);
  // Subnormal f16 results and the f16 overflow boundary (65504, 65520).
  for (float value : {5.96e-8f, 2.98e-8f, 2.99e-8f, 6.1e-5f, 6.09e-5f, 65504.0f, 65519.0f,
                      65520.0f, 65536.0f, 1e-45f})
    expectAgrees(toBits(value));
  std::mt19937 random(7);
  for (int i = 0; i < 2000000; ++i)
    expectAgrees(random());
}

} // namespace
