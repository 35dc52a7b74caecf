// RUN: kiln-opt %s --convert-kiln-to-linalg -split-input-file -verify-diagnostics | FileCheck %s

/// The sub-byte types and f8E8M0FNU become i8 tensors of one byte per
/// element; the function keeps the type in kiln.element (and ui4 is also
/// kiln.unsigned). From i4: the byte's low 4 bits sign-extended (shli, shrsi).

// CHECK-LABEL: func @from_i4
// CHECK-SAME: (%{{.+}}: tensor<4xi8> {kiln.element = i4}, %{{.+}}: tensor<4xi8> {kiln.element = ui4, kiln.unsigned})
// CHECK: ^bb0(%[[IN:.+]]: i8, %{{.+}}: f32):
// CHECK: %[[UP:.+]] = arith.shli %[[IN]], %{{.+}} : i8
// CHECK: %[[V:.+]] = arith.shrsi %[[UP]], %{{.+}} : i8
// CHECK: arith.sitofp %[[V]] : i8 to f32
/// From ui4: the low bits, then unsigned.
// CHECK: ^bb0(%[[UIN:.+]]: i8, %{{.+}}: f32):
// CHECK: %[[U:.+]] = arith.andi %[[UIN]], %{{.+}} : i8
// CHECK: arith.uitofp %[[U]] : i8 to f32
func.func @from_i4(%x: tensor<4xi4>, %u: tensor<4xui4>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = kiln.cast %x : tensor<4xi4> -> tensor<4xf32>
  %1 = kiln.cast %u : tensor<4xui4> -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

/// Float to i2: in range is -3 < x < 2 (the truncation in [-2, 1]), else 0;
/// the byte is the low 2 bits.
// CHECK-LABEL: func @to_i2
// CHECK-SAME: -> (tensor<4xi8> {kiln.element = i2})
// CHECK: ^bb0(%[[IN:.+]]: f32, %{{.+}}: i8):
// CHECK: %[[LO:.+]] = arith.constant -3.000000e+00 : f32
// CHECK: arith.cmpf ogt, %[[IN]], %[[LO]]
// CHECK: %[[HI:.+]] = arith.constant 2.000000e+00 : f32
// CHECK: arith.cmpf olt, %[[IN]], %[[HI]]
// CHECK: %[[I:.+]] = arith.fptosi %{{.+}} : f32 to i32
// CHECK: %[[B:.+]] = arith.trunci %[[I]] : i32 to i8
// CHECK: %[[MASK:.+]] = arith.constant 3 : i8
// CHECK: %[[OUT:.+]] = arith.andi %[[B]], %[[MASK]] : i8
// CHECK: linalg.yield %[[OUT]] : i8
func.func @to_i2(%x: tensor<4xf32>) -> tensor<4xi2> {
  %0 = kiln.cast %x : tensor<4xf32> -> tensor<4xi2>
  return %0 : tensor<4xi2>
}

// -----

/// Integers to ui4 wrap: the low 4 bits.
// CHECK-LABEL: func @i64_to_ui4
// CHECK: ^bb0(%[[IN:.+]]: i64, %{{.+}}: i8):
// CHECK: %[[B:.+]] = arith.trunci %[[IN]] : i64 to i8
// CHECK: arith.andi %[[B]], %{{.+}} : i8
func.func @i64_to_ui4(%x: tensor<4xi64>) -> tensor<4xui4> {
  %0 = kiln.cast %x : tensor<4xi64> -> tensor<4xui4>
  return %0 : tensor<4xui4>
}

// -----

/// f4E2M1FN: round to the binade's quantum as for the 8-bit floats, 7 (6.0)
/// when out of range, 8 (-0) for NaN; the byte is the code.
// CHECK-LABEL: func @to_f4
// CHECK-SAME: -> (tensor<4xi8> {kiln.element = f4E2M1FN})
// CHECK: ^bb0(%[[IN:.+]]: f16, %{{.+}}: i8):
// CHECK: arith.extf %[[IN]] : f16 to f32
// CHECK: math.roundeven
// CHECK: arith.constant 7 : i32
// CHECK: arith.constant 8 : i32
// CHECK: arith.trunci %{{.+}} : i32 to i8
func.func @to_f4(%x: tensor<4xf16>) -> tensor<4xf4E2M1FN> {
  %0 = kiln.cast %x : tensor<4xf16> -> tensor<4xf4E2M1FN>
  return %0 : tensor<4xf4E2M1FN>
}

// -----

/// f8E8M0FNU: the f32 exponent field, plus one when the mantissa is not zero
/// and (saturate) the field is not 0xFE; 0xFF for NaN and infinity.
// CHECK-LABEL: func @to_e8m0
// CHECK: ^bb0(%[[IN:.+]]: f32, %{{.+}}: i8):
// CHECK: %[[BITS:.+]] = arith.bitcast %[[IN]] : f32 to i32
// CHECK: arith.constant 8388607 : i32
// CHECK: arith.constant 254 : i32
// CHECK: arith.trunci %{{.+}} : i32 to i8
/// From f8E8M0FNU: the code as the exponent field (0: 2^-127, 0x400000).
// CHECK-LABEL: func @from_e8m0
// CHECK: ^bb0(%[[B:.+]]: i8, %{{.+}}: f16):
// CHECK: arith.extui %[[B]] : i8 to i32
// CHECK: arith.constant 4194304 : i32
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @to_e8m0(%x: tensor<4xf32>) -> tensor<4xf8E8M0FNU> {
  %0 = kiln.cast %x : tensor<4xf32> -> tensor<4xf8E8M0FNU>
  return %0 : tensor<4xf8E8M0FNU>
}
func.func @from_e8m0(%x: tensor<4xf8E8M0FNU>) -> tensor<4xf16> {
  %0 = kiln.cast %x : tensor<4xf8E8M0FNU> -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

/// Constants become their bytes: i4 -1 is 15, f4E2M1FN -6 is 15.
// CHECK-LABEL: func @constants
// CHECK: arith.constant dense<[15, 7, 8]> : tensor<3xi8>
// CHECK: arith.constant dense<[15, 1, 0]> : tensor<3xi8>
func.func @constants() -> (tensor<3xi4>, tensor<3xf4E2M1FN>) {
  %0 = kiln.constant dense<[-1, 7, -8]> : tensor<3xi4>
  %1 = kiln.constant dense<[-6.0, 0.5, 0.0]> : tensor<3xf4E2M1FN>
  return %0, %1 : tensor<3xi4>, tensor<3xf4E2M1FN>
}

// -----

/// Other ops on them are not lowered (a clean failure).
func.func @moved(%x: tensor<4xi4>) -> tensor<2x2xi4> {
  // expected-error @+1 {{(kiln.reshape): cannot lower to linalg with operand types (tensor<4xi4>) and result types (tensor<2x2xi4>): unsupported: no pattern lowers this form}}
  %0 = kiln.reshape %x : (tensor<4xi4>) -> tensor<2x2xi4>
  return %0 : tensor<2x2xi4>
}
