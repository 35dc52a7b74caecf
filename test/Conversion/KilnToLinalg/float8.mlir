// RUN: kiln-opt %s --convert-kiln-to-linalg -split-input-file | FileCheck %s

/// Casts to an 8-bit float: f32 arithmetic rounds to the binade's quantum
/// (roundeven), integer ops build the bit pattern, the byte becomes the
/// 8-bit float by a bitcast. saturate picks the code of an out-of-range value.

// CHECK-LABEL: func @to_e4m3fn
// CHECK: linalg.generic
// CHECK: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f8E4M3FN):
// CHECK: math.absf %[[IN]]
// CHECK: math.roundeven
/// Out of range with saturate: 0x7E (448).
// CHECK: arith.constant 126 : i32
// CHECK: arith.cmpf uno, %[[IN]], %[[IN]]
// CHECK: %[[BYTE:.+]] = arith.trunci %{{.+}} : i32 to i8
// CHECK: %[[F8:.+]] = arith.bitcast %[[BYTE]] : i8 to f8E4M3FN
// CHECK: linalg.yield %[[F8]] : f8E4M3FN
func.func @to_e4m3fn(%x: tensor<4xf32>) -> tensor<4xf8E4M3FN> {
  %0 = kiln.cast %x : tensor<4xf32> -> tensor<4xf8E4M3FN>
  return %0 : tensor<4xf8E4M3FN>
}

// -----

/// Without saturate an out-of-range f8E5M2 is infinity, 0x7C; f16 goes
/// through f32.
// CHECK-LABEL: func @to_e5m2_no_saturate
// CHECK: ^bb0(%[[IN:.+]]: f16, %{{.+}}: f8E5M2):
// CHECK: arith.extf %[[IN]] : f16 to f32
// CHECK: arith.constant 124 : i32
// CHECK-NOT: arith.constant 123 : i32
// CHECK: arith.bitcast %{{.+}} : i8 to f8E5M2
func.func @to_e5m2_no_saturate(%x: tensor<4xf16>) -> tensor<4xf8E5M2> {
  %0 = kiln.cast %x {saturate = false} : tensor<4xf16> -> tensor<4xf8E5M2>
  return %0 : tensor<4xf8E5M2>
}

// -----

/// From an 8-bit float: the bits, the significand times a power of two made
/// from the exponent field, NaN (0x80 for FNUZ), then f16 by truncf (exact).
// CHECK-LABEL: func @from_e4m3fnuz
// CHECK: ^bb0(%[[IN:.+]]: f8E4M3FNUZ, %{{.+}}: f16):
// CHECK: %[[B:.+]] = arith.bitcast %[[IN]] : f8E4M3FNUZ to i8
// CHECK: arith.extui %[[B]] : i8 to i32
// CHECK: arith.uitofp
// CHECK: arith.mulf
// CHECK: arith.constant 128 : i32
// CHECK: %[[H:.+]] = arith.truncf %{{.+}} : f32 to f16
// CHECK: linalg.yield %[[H]] : f16
func.func @from_e4m3fnuz(%x: tensor<4xf8E4M3FNUZ>) -> tensor<4xf16> {
  %0 = kiln.cast %x : tensor<4xf8E4M3FNUZ> -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

/// To an integer: through f32, then the usual float-to-integer cast.
// CHECK-LABEL: func @e5m2fnuz_to_i32
// CHECK: arith.bitcast %{{.+}} : f8E5M2FNUZ to i8
// CHECK: arith.fptosi %{{.+}} : f32 to i32
func.func @e5m2fnuz_to_i32(%x: tensor<4xf8E5M2FNUZ>) -> tensor<4xi32> {
  %0 = kiln.cast %x : tensor<4xf8E5M2FNUZ> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
