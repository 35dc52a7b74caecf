//===- LowFloat.h - Scalar conversions to and from 8-bit floats -*- C++ -*-===//
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

} // namespace kiln::lowering

#endif // KILN_LIB_CONVERSION_KILNTOLINALG_LOWFLOAT_H
