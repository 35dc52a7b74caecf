//===- Elements.cpp - Element conversions, printing and random fill --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "Elements.h"

#include "kiln-c/runtime.h"

#include <cmath>
#include <cstring>
#include <fmt/format.h>

namespace kilnrun {
namespace {

template <typename T> T load(const void *data, size_t i) {
  T value;
  std::memcpy(&value, static_cast<const char *>(data) + i * sizeof(T), sizeof(T));
  return value;
}

template <typename T> void store(void *data, size_t i, T value) {
  std::memcpy(static_cast<char *>(data) + i * sizeof(T), &value, sizeof(T));
}

uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

float bitsFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

} // namespace

float halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1F, mantissa = bits & 0x3FF;
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) // infinity or NaN
    return bitsFloat(sign | 0x7F800000u | (mantissa << 13));
  return bitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t floatToHalf(float value) {
  uint32_t bits = floatBits(value);
  auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7FFFFFFF;
  if (magnitude >= 0x7F800000) // infinity or NaN (kept quiet)
    return sign | 0x7C00 | (magnitude > 0x7F800000 ? 0x200 : 0);
  if (magnitude >= 0x477FF000) // rounds to >= 65520: infinity
    return sign | 0x7C00;
  if (magnitude < 0x38800000) { // below 2^-14: a half subnormal, or zero
    // Scaling by 2^24 is exact; nearbyint rounds to nearest even.
    float scaled = std::nearbyint(bitsFloat(magnitude) * 16777216.0f);
    return sign | static_cast<uint16_t>(scaled);
  }
  uint32_t half = ((magnitude >> 23) - 112) << 10 | ((magnitude >> 13) & 0x3FF);
  uint32_t rest = magnitude & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half; // a carry into the exponent is still correct
  return sign | static_cast<uint16_t>(half);
}

double float8ToDouble(int32_t dtype, uint8_t bits) {
  bool e4m3 = dtype == KILN_DTYPE_F8E4M3FN || dtype == KILN_DTYPE_F8E4M3FNUZ;
  bool fnuz = dtype == KILN_DTYPE_F8E4M3FNUZ || dtype == KILN_DTYPE_F8E5M2FNUZ;
  int mantissaBits = e4m3 ? 3 : 2;
  int bias = (e4m3 ? 7 : 15) + (fnuz ? 1 : 0);
  int exponent = (bits & 0x7F) >> mantissaBits;
  int mantissa = bits & ((1 << mantissaBits) - 1);
  int allOnes = 0x7F >> mantissaBits;
  bool negative = bits & 0x80;
  if (fnuz ? bits == 0x80
           : exponent == allOnes &&
                 (e4m3 ? mantissa == (1 << mantissaBits) - 1 : mantissa != 0))
    return std::nan("");
  if (!e4m3 && !fnuz && exponent == allOnes)
    return negative ? -INFINITY : INFINITY;
  double magnitude =
      exponent == 0
          ? std::ldexp(mantissa, 1 - bias - mantissaBits)
          : std::ldexp(mantissa + (1 << mantissaBits), exponent - bias - mantissaBits);
  return negative ? -magnitude : magnitude;
}

float bf16ToFloat(uint16_t bits) { return bitsFloat(static_cast<uint32_t>(bits) << 16); }

uint16_t floatToBf16(float value) {
  uint32_t bits = floatBits(value);
  if ((bits & 0x7FFFFFFF) > 0x7F800000) // NaN: keep it a (quiet) NaN
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7FFF + ((bits >> 16) & 1); // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

double narrowToDouble(int32_t dtype, uint8_t bits) {
  switch (dtype) {
  case KILN_DTYPE_I4: return (bits & 7) - (bits & 8);
  case KILN_DTYPE_I2: return (bits & 1) - (bits & 2);
  case KILN_DTYPE_U4: return bits & 15;
  case KILN_DTYPE_U2: return bits & 3;
  case KILN_DTYPE_F4E2M1: {
    // 1 sign, 2 exponent (bias 1), 1 mantissa bit; no infinity or NaN.
    int exponent = (bits >> 1) & 3, mantissa = bits & 1;
    double magnitude = exponent == 0 ? mantissa * 0.5
                                     : std::ldexp(2 + mantissa, exponent - 2);
    return bits & 8 ? -magnitude : magnitude;
  }
  case KILN_DTYPE_F8E8M0: return bits == 0xFF ? std::nan("") : std::ldexp(1.0, bits - 127);
  default: return std::nan("");
  }
}

int32_t rawBitsDtype(int32_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_BF16: return KILN_DTYPE_U16;
  case KILN_DTYPE_F8E4M3FN:
  case KILN_DTYPE_F8E4M3FNUZ:
  case KILN_DTYPE_F8E5M2:
  case KILN_DTYPE_F8E5M2FNUZ:
  case KILN_DTYPE_I4:
  case KILN_DTYPE_U4:
  case KILN_DTYPE_I2:
  case KILN_DTYPE_U2:
  case KILN_DTYPE_F4E2M1:
  case KILN_DTYPE_F8E8M0: return KILN_DTYPE_U8;
  default: return 0;
  }
}

double elementAsDouble(int32_t dtype, const void *data, size_t i) {
  switch (dtype) {
  case KILN_DTYPE_F32: return load<float>(data, i);
  case KILN_DTYPE_F16: return halfToFloat(load<uint16_t>(data, i));
  case KILN_DTYPE_BF16: return bf16ToFloat(load<uint16_t>(data, i));
  case KILN_DTYPE_F64: return load<double>(data, i);
  case KILN_DTYPE_I8: return load<int8_t>(data, i);
  case KILN_DTYPE_U8: return load<uint8_t>(data, i);
  case KILN_DTYPE_I16: return load<int16_t>(data, i);
  case KILN_DTYPE_I32: return load<int32_t>(data, i);
  case KILN_DTYPE_I64: return static_cast<double>(load<int64_t>(data, i));
  case KILN_DTYPE_BOOL: return load<uint8_t>(data, i) ? 1.0 : 0.0;
  case KILN_DTYPE_U16: return load<uint16_t>(data, i);
  case KILN_DTYPE_U32: return load<uint32_t>(data, i);
  case KILN_DTYPE_U64: return static_cast<double>(load<uint64_t>(data, i));
  case KILN_DTYPE_F8E4M3FN:
  case KILN_DTYPE_F8E4M3FNUZ:
  case KILN_DTYPE_F8E5M2:
  case KILN_DTYPE_F8E5M2FNUZ: return float8ToDouble(dtype, load<uint8_t>(data, i));
  case KILN_DTYPE_I4:
  case KILN_DTYPE_U4:
  case KILN_DTYPE_I2:
  case KILN_DTYPE_U2:
  case KILN_DTYPE_F4E2M1:
  case KILN_DTYPE_F8E8M0: return narrowToDouble(dtype, load<uint8_t>(data, i));
  default: return std::nan("");
  }
}

std::string formatElement(int32_t dtype, const void *data, size_t i) {
  switch (dtype) {
  case KILN_DTYPE_F32: return fmt::format("{}", load<float>(data, i));
  case KILN_DTYPE_F16: return fmt::format("{}", halfToFloat(load<uint16_t>(data, i)));
  case KILN_DTYPE_BF16: return fmt::format("{}", bf16ToFloat(load<uint16_t>(data, i)));
  case KILN_DTYPE_F64: return fmt::format("{}", load<double>(data, i));
  case KILN_DTYPE_I64: return fmt::format("{}", load<int64_t>(data, i));
  case KILN_DTYPE_U64: return fmt::format("{}", load<uint64_t>(data, i));
  case KILN_DTYPE_BOOL: return load<uint8_t>(data, i) ? "true" : "false";
  default: return fmt::format("{}", elementAsDouble(dtype, data, i));
  }
}

uint64_t Random::next() {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void fillRandom(int32_t dtype, void *data, size_t count, Random &random) {
  for (size_t i = 0; i < count; ++i) {
    float f = static_cast<float>(random.unit() * 2.0 - 1.0);
    int64_t small = static_cast<int64_t>(random.next() % 16) - 8;
    switch (dtype) {
    case KILN_DTYPE_F32: store(data, i, f); break;
    case KILN_DTYPE_F16: store(data, i, floatToHalf(f)); break;
    case KILN_DTYPE_BF16: store(data, i, floatToBf16(f)); break;
    case KILN_DTYPE_F64: store(data, i, random.unit() * 2.0 - 1.0); break;
    case KILN_DTYPE_I8: store(data, i, static_cast<int8_t>(small)); break;
    case KILN_DTYPE_U8: store(data, i, static_cast<uint8_t>(small + 8)); break;
    case KILN_DTYPE_I16: store(data, i, static_cast<int16_t>(small)); break;
    case KILN_DTYPE_I32: store(data, i, static_cast<int32_t>(small)); break;
    case KILN_DTYPE_I64: store(data, i, small); break;
    case KILN_DTYPE_BOOL: store(data, i, static_cast<uint8_t>(small & 1)); break;
    case KILN_DTYPE_U16: store(data, i, static_cast<uint16_t>(small + 8)); break;
    case KILN_DTYPE_U32: store(data, i, static_cast<uint32_t>(small + 8)); break;
    case KILN_DTYPE_U64: store(data, i, static_cast<uint64_t>(small + 8)); break;
    // 8-bit floats: small values (exponent field 4..8, any mantissa and sign).
    case KILN_DTYPE_F8E4M3FN:
    case KILN_DTYPE_F8E4M3FNUZ:
    case KILN_DTYPE_F8E5M2:
    case KILN_DTYPE_F8E5M2FNUZ:
      store(data, i, static_cast<uint8_t>(0x20 + random.next() % 0x20 +
                                          (random.next() % 2) * 0x80));
      break;
    // Sub-byte types: any bit pattern; E8M0: 2^-8 ... 2^7.
    case KILN_DTYPE_I4:
    case KILN_DTYPE_U4:
    case KILN_DTYPE_F4E2M1: store(data, i, static_cast<uint8_t>(random.next() % 16)); break;
    case KILN_DTYPE_I2:
    case KILN_DTYPE_U2: store(data, i, static_cast<uint8_t>(random.next() % 4)); break;
    case KILN_DTYPE_F8E8M0:
      store(data, i, static_cast<uint8_t>(119 + random.next() % 16));
      break;
    default: break;
    }
  }
}

} // namespace kilnrun
