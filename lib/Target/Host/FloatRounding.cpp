//===- FloatRounding.cpp - f32 to f16 / bf16 bits, round to nearest even --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/FloatRounding.h"

#include <cstring>

namespace kiln {

namespace {

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

} // namespace

uint16_t roundToF16(float value) {
  // Round to nearest even through the f32 bits (F. Giesen's float_to_half).
  uint32_t bits = bitsOf(value);
  uint32_t sign = bits & 0x80000000u;
  bits ^= sign;
  uint16_t result;
  if (bits >= (127u + 16u) << 23) { // |value| >= 65536, Inf or NaN
    result = bits > 0x7f800000u ? 0x7e00 : 0x7c00;
  } else if (bits < (127u - 14u) << 23) { // below f16's smallest normal
    // Adding 0.5 aligns the f16 subnormal's bits at the bottom of the f32
    // mantissa, and the f32 addition rounds to nearest even.
    constexpr uint32_t magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    result = static_cast<uint16_t>(bitsOf(floatOf(bits) + floatOf(magic)) - magic);
  } else {
    uint32_t odd = (bits >> 13) & 1u;
    bits += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + odd;
    result = static_cast<uint16_t>(bits >> 13);
  }
  return result | static_cast<uint16_t>(sign >> 16);
}

uint16_t roundToBF16(float value) {
  uint32_t bits = bitsOf(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: keep it a quiet NaN
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

} // namespace kiln
