//===- LowFloat.h - Scalar conversions to and from narrow types -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Casts between ONNX's 8-bit floats (f8E4M3FN, f8E4M3FNUZ, f8E5M2,
// f8E5M2FNUZ) and the wider types, built from integer and f32 arith ops
// because LLVM has no 8-bit floats (their values are i8 bit patterns there).
// Rounding and the special values follow ONNX Cast: round to nearest even;
// with `saturate` an out-of-range value becomes the largest finite value of
// its sign, else infinity (f8E5M2) or NaN; infinities count as out of range
// (as in ONNX's reference implementation; its Cast table makes them NaN for
// the FNUZ types even with `saturate`). NaN stays NaN; -0 is 0 in the FNUZ
// types.
//
// The sub-byte types (i4, ui4, i2, ui2, f4E2M1FN) and f8E8M0FNU are stored
// as i8 from convert-kiln-to-linalg on, one byte per element: the element's
// bits in the low bits, the others zero (ml_dtypes' layout); decodeNarrow and
// encodeNarrow convert between that byte and values. Float to f4E2M1FN is
// round to nearest even, saturating (NaN becomes a zero of the opposite sign, as ml_dtypes); to
// f8E8M0FNU as ONNX's reference `to_float8e8m0` with round_mode "up"; float to the integers
// truncates, and a result out of range is 0 (ml_dtypes, ONNX's reference);
// integers to them wrap.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CONVERSION_KILNTOLINALG_LOWFLOAT_H
#define KILN_LIB_CONVERSION_KILNTOLINALG_LOWFLOAT_H

#include "mlir/IR/Builders.h"

namespace kiln::lowering {

/// Whether `type` is one of the 8-bit float types handled here.
bool isLowFloat(mlir::Type type);

/// `x` (an 8-bit float) as the float type `to`; exact.
mlir::Value extendLowFloat(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                           mlir::FloatType to);

/// `x` (a float of 16 bits or more) rounded to the 8-bit float type `to`.
mlir::Value truncateToLowFloat(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                               mlir::FloatType to, bool saturate);

/// Whether `type` is stored as an i8 byte (the sub-byte types, f8E8M0FNU).
bool isNarrowStorage(mlir::Type type);

/// The value of the byte `byte` (i8) of the narrow type `narrow`: an i8 for
/// the integers (sign-extended for i4/i2, their bits for ui4/ui2), an f32 for
/// f4E2M1FN and f8E8M0FNU (exact).
mlir::Value decodeNarrow(mlir::OpBuilder &b, mlir::Location loc, mlir::Value byte,
                         mlir::Type narrow);

/// The byte (i8) of `x` (a float, or an integer read as unsigned when
/// `isUnsigned`) converted to the narrow type `narrow` (to f8E8M0FNU rounding
/// up: ONNX Cast's default `round_mode`).
mlir::Value encodeNarrow(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                         bool isUnsigned, mlir::Type narrow, bool saturate);

} // namespace kiln::lowering

#endif // KILN_LIB_CONVERSION_KILNTOLINALG_LOWFLOAT_H
