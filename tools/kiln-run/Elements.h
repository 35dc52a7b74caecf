//===- Elements.h - Element conversions, printing and random fill ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILNRUN_ELEMENTS_H
#define KILN_TOOLS_KILNRUN_ELEMENTS_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace kilnrun {

float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);
float bf16ToFloat(uint16_t bits);
/// An 8-bit float (KILN_DTYPE_F8E4M3FN...F8E5M2FNUZ) from its bits.
double float8ToDouble(int32_t dtype, uint8_t bits);
uint16_t floatToBf16(float value);
/// A sub-byte element or E8M0 (KILN_DTYPE_I4...F8E8M0) from its byte.
double narrowToDouble(int32_t dtype, uint8_t bits);

/// The dtype whose .npy files hold `dtype`'s raw bit patterns when NumPy has
/// no type for it (bf16: u16; 8-bit floats, E8M0 and the sub-byte types:
/// u8, ml_dtypes' one byte per element), or 0. kiln-run reads such a file for an input
/// or reference of `dtype` and writes `dtype`'s outputs as such files
/// (docs/cli.md, kiln-run).
int32_t rawBitsDtype(int32_t dtype);

/// Element `i` of a dense array of `dtype`, widened to double.
double elementAsDouble(int32_t dtype, const void *data, size_t i);
/// Element `i` as text: shortest round-trip form for floats.
std::string formatElement(int32_t dtype, const void *data, size_t i);

/// SplitMix64: tiny, and unlike <random>'s distributions it gives the same
/// values on every platform and standard library.
class Random {
public:
  explicit Random(uint64_t seed) : state(seed) {}
  uint64_t next();
  /// Uniform in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
  uint64_t state;
};

/// Fills `count` elements of `dtype`: floats uniform in [-1, 1), signed
/// integers in [-8, 8), u8 in [0, 16), bools 0 or 1.
void fillRandom(int32_t dtype, void *data, size_t count, Random &random);

} // namespace kilnrun

#endif // KILN_TOOLS_KILNRUN_ELEMENTS_H
