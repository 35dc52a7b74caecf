//===- LowFloat.cpp - Scalar conversions to and from narrow types ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "LowFloat.h"

#include "LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;

namespace kiln::lowering {
namespace {

/// The layout and special values of one 8-bit float type.
struct Format {
  int mantissaBits;
  int exponentBits;
  int bias;
  bool unsignedZero; // FNUZ: 0x80 is the only NaN, there is no -0
  bool hasInfinity;  // E5M2: exponent all ones, mantissa 0
  bool hasNaN;
  double maxFinite;
  int32_t maxCode; // bits of +maxFinite
  int32_t nanCode; // bits a NaN becomes
  int signBit() const { return mantissaBits + exponentBits; }
};

Format formatOf(Type type) {
  if (isa<Float8E4M3FNType>(type))
    return {3, 4, 7, false, false, true, 448.0, 0x7E, 0x7F};
  if (isa<Float8E4M3FNUZType>(type))
    return {3, 4, 8, true, false, true, 240.0, 0x7F, 0x80};
  if (isa<Float8E5M2Type>(type))
    return {2, 5, 15, false, true, true, 57344.0, 0x7B, 0x7F};
  if (isa<Float4E2M1FNType>(type)) // no NaN (encodeNarrow picks its code)
    return {1, 2, 1, false, false, false, 6.0, 0x7, 0x8};
  return {2, 5, 16, true, false, true, 57344.0, 0x7F, 0x80}; // Float8E5M2FNUZType
}

struct Ops {
  OpBuilder &b;
  Location loc;
  Type i32, f32;

  Ops(OpBuilder &b, Location loc)
      : b(b), loc(loc), i32(b.getI32Type()), f32(b.getF32Type()) {}

  Value i(int64_t value) { return arith::ConstantIntOp::create(b, loc, i32, value); }
  Value f(double value) {
    return arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32),
                                          APFloat(static_cast<float>(value)));
  }
  Value shr(Value x, int64_t n) { return arith::ShRUIOp::create(b, loc, x, i(n)); }
  Value shl(Value x, int64_t n) { return arith::ShLIOp::create(b, loc, x, i(n)); }
  Value band(Value x, int64_t mask) { return arith::AndIOp::create(b, loc, x, i(mask)); }
  Value bor(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t n) { return arith::AddIOp::create(b, loc, x, i(n)); }
  Value eq(Value x, int64_t n) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, i(n));
  }
  Value ne(Value x, int64_t n) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x, i(n));
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value bitsOf(Value x) { return arith::BitcastOp::create(b, loc, i32, x); }
  /// 2^k as f32 for an i32 k in [-126, 127]: the exponent field alone.
  Value pow2(Value k) {
    return arith::BitcastOp::create(b, loc, f32, shl(add(k, 127), 23));
  }
  /// The unbiased exponent of a non-negative f32 (-127 for zero).
  Value exponentOf(Value magnitude) { return add(shr(bitsOf(magnitude), 23), -127); }
  /// `x` as f32 (exact from f16/bf16; f64 rounds once).
  Value toF32(Value x) {
    auto type = cast<FloatType>(x.getType());
    if (type.getWidth() < 32)
      return arith::ExtFOp::create(b, loc, f32, x);
    if (type.getWidth() > 32)
      return arith::TruncFOp::create(b, loc, f32, x);
    return x;
  }
  /// An f32 as the float type `to` (exact for every narrow float's value).
  Value fromF32(Value x, FloatType to) {
    if (to.getWidth() > 32)
      return arith::ExtFOp::create(b, loc, to, x);
    if (to.getWidth() < 32)
      return arith::TruncFOp::create(b, loc, to, x);
    return x;
  }
};

/// The f32 value of the code `bits` (an i32) of `format`.
Value decodeBits(Ops &o, Value bits, const Format &format) {
  OpBuilder &b = o.b;
  Location loc = o.loc;
  int m = format.mantissaBits;
  int32_t allOnes = (1 << format.exponentBits) - 1;
  Value exponent = o.band(o.shr(bits, m), allOnes);
  Value mantissa = o.band(bits, (1 << m) - 1);
  Value subnormal = o.eq(exponent, 0);
  // value = significand * 2^(max(E, 1) - bias - m), significand with the
  // implicit one for normal numbers.
  Value significand = o.select(subnormal, mantissa, o.bor(mantissa, o.i(1 << m)));
  Value scale = o.pow2(o.add(o.select(subnormal, o.i(1), exponent), -format.bias - m));
  Value magnitude = arith::MulFOp::create(
      b, loc, arith::UIToFPOp::create(b, loc, o.f32, significand), scale);
  Value negative = o.ne(o.band(bits, 1 << format.signBit()), 0);
  Value value = o.select(negative, arith::NegFOp::create(b, loc, magnitude), magnitude);
  if (!format.hasNaN)
    return value;
  Value nan = o.f(std::nan(""));
  if (format.unsignedZero)
    return o.select(o.eq(bits, 0x80), nan, value);
  Value top = o.eq(exponent, allOnes);
  if (format.hasInfinity) {
    Value inf = o.f(INFINITY);
    Value signedInf = o.select(negative, arith::NegFOp::create(b, loc, inf), inf);
    return o.select(top, o.select(o.eq(mantissa, 0), signedInf, nan), value);
  }
  return o.select(arith::AndIOp::create(b, loc, top, o.eq(mantissa, (1 << m) - 1)), nan,
                  value);
}

/// The code (an i32) of the f32 `x` rounded to `format`.
Value encodeBits(Ops &o, Value x, const Format &format, bool saturate) {
  OpBuilder &b = o.b;
  Location loc = o.loc;
  int m = format.mantissaBits;
  Value magnitude = math::AbsFOp::create(b, loc, x);
  int minExponent = 1 - format.bias;
  // Round to the quantum of the value's binade (the subnormal one below the
  // normal range): dividing and multiplying by a power of two is exact.
  Value exponent = arith::MaxSIOp::create(b, loc, o.exponentOf(magnitude), o.i(minExponent));
  Value quantum = o.pow2(o.add(exponent, -m));
  Value rounded = arith::MulFOp::create(
      b, loc,
      math::RoundEvenOp::create(b, loc, arith::DivFOp::create(b, loc, magnitude, quantum)),
      quantum);
  // Encode the rounded magnitude (exact in the target when in range).
  Value roundedExponent = o.exponentOf(rounded);
  Value normal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                       roundedExponent, o.i(minExponent));
  Value normalCode = o.bor(o.shl(o.add(roundedExponent, format.bias), m),
                           o.band(o.shr(o.bitsOf(rounded), 23 - m), (1 << m) - 1));
  Value subnormalCode = arith::FPToUIOp::create(
      b, loc, o.i32,
      arith::DivFOp::create(b, loc, rounded, o.pow2(o.i(minExponent - m))));
  Value code = o.select(normal, normalCode, subnormalCode);
  // Out of range (infinities too): the largest finite value, infinity or NaN.
  Value overflow = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, rounded,
                                         o.f(format.maxFinite));
  int32_t infinityCode = ((1 << format.exponentBits) - 1) << m; // 0x7C for E5M2
  int32_t overflowCode = saturate || !format.hasNaN ? format.maxCode
                         : format.hasInfinity       ? infinityCode
                                                    : format.nanCode;
  code = o.select(overflow, o.i(overflowCode), code);
  // The sign, except on zero and NaN of the FNUZ types (0x80 is their NaN).
  Value sign = o.shl(o.shr(o.bitsOf(x), 31), format.signBit());
  if (format.unsignedZero)
    sign = o.select(arith::OrIOp::create(b, loc, o.eq(code, 0), o.eq(code, format.nanCode)),
                    o.i(0), sign);
  code = o.bor(code, sign);
  Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  return o.select(isNan, o.i(format.nanCode), code);
}

/// `x` as f32 (integers signed unless `isUnsigned`; an i1 is unsigned).
Value anyToF32(Ops &o, Value x, bool isUnsigned) {
  if (isa<FloatType>(x.getType()))
    return o.toF32(x);
  if (isUnsigned || x.getType().isInteger(1))
    return arith::UIToFPOp::create(o.b, o.loc, o.f32, x);
  return arith::SIToFPOp::create(o.b, o.loc, o.f32, x);
}

/// The f8E8M0FNU code (an i32) of the f32 `x`, as ONNX's `to_float8e8m0`
/// with round_mode "up": the exponent field, plus one when the mantissa is
/// not zero (not past 0xFE with `saturate`); NaN and infinity are 0xFF (the
/// sign is ignored).
Value encodeE8M0(Ops &o, Value x, bool saturate) {
  OpBuilder &b = o.b;
  Location loc = o.loc;
  Value bits = o.bitsOf(x);
  Value exponent = o.band(o.shr(bits, 23), 0xFF);
  Value special = o.eq(exponent, 0xFF);
  Value roundUp = o.ne(o.band(bits, 0x7FFFFF), 0);
  if (saturate)
    roundUp = arith::AndIOp::create(b, loc, roundUp, o.ne(exponent, 0xFE));
  Value rounded = o.select(roundUp, o.add(exponent, 1), exponent);
  return o.select(special, o.i(0xFF), rounded);
}

} // namespace

bool isNarrowStorage(Type type) {
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.getWidth() == 4 || integer.getWidth() == 2;
  return isa<Float4E2M1FNType, Float8E8M0FNUType>(type);
}

Value decodeNarrow(OpBuilder &b, Location loc, Value byte, Type narrow) {
  Ops o(b, loc);
  Type i8 = b.getI8Type();
  auto c8 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, i8, v); };
  if (auto integer = dyn_cast<IntegerType>(narrow)) {
    unsigned width = integer.getWidth();
    if (integer.isUnsigned())
      return arith::AndIOp::create(b, loc, byte, c8((1 << width) - 1));
    Value up = arith::ShLIOp::create(b, loc, byte, c8(8 - width));
    return arith::ShRSIOp::create(b, loc, up, c8(8 - width));
  }
  Value bits = arith::ExtUIOp::create(b, loc, o.i32, byte);
  if (isa<Float4E2M1FNType>(narrow))
    return decodeBits(o, o.band(bits, 0xF), formatOf(narrow));
  // f8E8M0FNU: 2^(bits - 127), NaN for 0xFF; 2^-127 (bits 0) is an f32
  // subnormal, the others the exponent field alone.
  Value value = arith::BitcastOp::create(b, loc, o.f32, o.shl(bits, 23));
  value = o.select(o.eq(bits, 0),
                   arith::BitcastOp::create(b, loc, o.f32, o.i(0x400000)), value);
  return o.select(o.eq(bits, 0xFF), o.f(std::nan("")), value);
}

Value encodeNarrow(OpBuilder &b, Location loc, Value x, bool isUnsigned, Type narrow,
                   bool saturate) {
  Ops o(b, loc);
  Type i8 = b.getI8Type();
  if (auto integer = dyn_cast<IntegerType>(narrow)) {
    unsigned width = integer.getWidth();
    Value wide;
    if (auto type = dyn_cast<FloatType>(x.getType())) {
      // trunc(x) in [lo, hi], i.e. lo - 1 < x < hi + 1, else 0 (NaN too).
      int64_t lo = integer.isUnsigned() ? 0 : -(int64_t(1) << (width - 1));
      int64_t hi = integer.isUnsigned() ? (int64_t(1) << width) - 1
                                        : (int64_t(1) << (width - 1)) - 1;
      auto constant = [&](double v) { return scalarConstant(b, loc, type, v); };
      auto cmp = [&](arith::CmpFPredicate p, Value l, Value r) {
        return arith::CmpFOp::create(b, loc, p, l, r);
      };
      Value aboveLo = cmp(arith::CmpFPredicate::OGT, x, constant(double(lo - 1)));
      Value belowHi = cmp(arith::CmpFPredicate::OLT, x, constant(double(hi + 1)));
      Value inRange = arith::AndIOp::create(b, loc, aboveLo, belowHi);
      Value safe = o.select(inRange, x, constant(0));
      wide = arith::FPToSIOp::create(b, loc, o.i32, safe);
    } else {
      wide = x; // integers wrap: keep the low bits
    }
    unsigned fromWidth = wide.getType().getIntOrFloatBitWidth();
    if (fromWidth > 8)
      wide = arith::TruncIOp::create(b, loc, i8, wide);
    else if (fromWidth < 8)
      wide = arith::ExtUIOp::create(b, loc, i8, wide);
    return arith::AndIOp::create(b, loc, wide,
                                 arith::ConstantIntOp::create(b, loc, i8, (1 << width) - 1));
  }
  Value f = anyToF32(o, x, isUnsigned);
  Value code;
  if (isa<Float4E2M1FNType>(narrow)) {
    code = encodeBits(o, f, formatOf(narrow), /*saturate=*/true);
    // NaN is a zero of the opposite sign (ml_dtypes): +NaN 0x8, -NaN 0x0.
    Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, f, f);
    Value sign = o.shl(o.shr(o.bitsOf(f), 31), 3);
    Value flipped = arith::XOrIOp::create(b, loc, sign, o.i(8));
    code = o.select(isNan, flipped, code);
  } else {
    code = encodeE8M0(o, f, saturate);
  }
  return arith::TruncIOp::create(b, loc, i8, code);
}

bool isLowFloat(Type type) {
  return isa<Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type,
             Float8E5M2FNUZType>(type);
}

Value extendLowFloat(OpBuilder &b, Location loc, Value x, FloatType to) {
  Ops o(b, loc);
  Value byte = arith::BitcastOp::create(b, loc, b.getI8Type(), x);
  Value bits = arith::ExtUIOp::create(b, loc, o.i32, byte);
  return o.fromF32(decodeBits(o, bits, formatOf(x.getType())), to);
}

Value truncateToLowFloat(OpBuilder &b, Location loc, Value x, FloatType to,
                         bool saturate) {
  Ops o(b, loc);
  Value code = encodeBits(o, o.toF32(x), formatOf(to), saturate);
  Value byte = arith::TruncIOp::create(b, loc, b.getI8Type(), code);
  return arith::BitcastOp::create(b, loc, to, byte);
}

} // namespace kiln::lowering
