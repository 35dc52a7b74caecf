// RUN: kiln-opt %s --convert-kiln-to-linalg -split-input-file | FileCheck %s

/// Unsigned tensors become signless ones of the same width; the function keeps
/// the fact in `kiln.unsigned` (for the artifact's dtypes) and the formulas use
/// the unsigned arith ops.

// CHECK-LABEL: func @div_compare
// CHECK-SAME: (%{{.+}}: tensor<4xi8> {kiln.unsigned}, %{{.+}}: tensor<4xi8> {kiln.unsigned}) -> (tensor<4xi8> {kiln.unsigned}, tensor<4xi1>)
// CHECK: arith.divui
// CHECK: arith.cmpi ult
// CHECK-NOT: ui8
func.func @div_compare(%x: tensor<4xui8>, %y: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xi1>) {
  %0 = kiln.div %x, %y : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = kiln.less %x, %y : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  return %0, %1 : tensor<4xui8>, tensor<4xi1>
}

// -----

// CHECK-LABEL: func @max_mod_cast
// CHECK: arith.maxui
// CHECK: arith.remui
// CHECK: arith.uitofp {{.*}} : i32 to f32
// CHECK: arith.fptoui {{.*}} : f32 to i16
func.func @max_mod_cast(%x: tensor<4xui32>, %y: tensor<4xui32>, %f: tensor<4xf32>) -> (tensor<4xui32>, tensor<4xui32>, tensor<4xf32>, tensor<4xui16>) {
  %0 = kiln.max %x, %y : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
  %1 = kiln.mod %x, %y : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
  %2 = kiln.cast %x : tensor<4xui32> -> tensor<4xf32>
  %3 = kiln.cast %f : tensor<4xf32> -> tensor<4xui16>
  return %0, %1, %2, %3 : tensor<4xui32>, tensor<4xui32>, tensor<4xf32>, tensor<4xui16>
}

// -----

/// An unsigned constant keeps its bits.
// CHECK-LABEL: func @constant
// CHECK: arith.constant dense<[1, 2, -1]> : tensor<3xi8>
// CHECK: arith.addi
func.func @constant(%x: tensor<3xui8>) -> tensor<3xui8> {
  %c = kiln.constant dense<[1, 2, 255]> : tensor<3xui8>
  %0 = kiln.add %x, %c : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  return %0 : tensor<3xui8>
}

// -----

/// Shifts: an amount outside [0, width) (compared unsigned, so negative ones
/// too) shifts everything out; a signed right shift then fills with the sign.
// CHECK-LABEL: func @shifts
// CHECK: arith.cmpi uge
// CHECK: arith.shli
// CHECK: arith.cmpi uge
// CHECK: arith.shrui
// CHECK: arith.cmpi uge
// CHECK: arith.shrsi
func.func @shifts(%x: tensor<3xui8>, %y: tensor<3xui8>, %s: tensor<3xi32>, %t: tensor<3xi32>) -> (tensor<3xui8>, tensor<3xui8>, tensor<3xi32>) {
  %0 = kiln.bit_shift %x, %y {left = true} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  %1 = kiln.bit_shift %x, %y {left = false} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  %2 = kiln.bit_shift %s, %t {left = false} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  return %0, %1, %2 : tensor<3xui8>, tensor<3xui8>, tensor<3xi32>
}

// -----

/// Bitwise not is xor with all ones (logical not on i1).
// CHECK-LABEL: func @bitwise_not
// CHECK: arith.constant -1 : i16
// CHECK: arith.xori
func.func @bitwise_not(%x: tensor<3xi16>) -> tensor<3xi16> {
  %0 = kiln.not %x : tensor<3xi16>
  return %0 : tensor<3xi16>
}

// -----

/// bitcast keeps the bits; a bool becomes the byte 0 or 1.
// CHECK-LABEL: func @bitcasts
// CHECK: arith.bitcast {{.*}} : f32 to i32
// CHECK: arith.extui {{.*}} : i1 to i8
func.func @bitcasts(%x: tensor<3xf32>, %b: tensor<3xi1>) -> (tensor<3xi32>, tensor<3xui8>) {
  %0 = kiln.bitcast %x : tensor<3xf32> -> tensor<3xi32>
  %1 = kiln.bitcast %b : tensor<3xi1> -> tensor<3xui8>
  return %0, %1 : tensor<3xi32>, tensor<3xui8>
}

// -----

/// A constant pad, a slice and a concat of unsigned tensors (an integer
/// depthwise conv's input, padded with its zero point; a grouped conv's
/// 8-bit results joined): the fill 200 is the byte 0xc8, -56 signless.
// CHECK-LABEL: func @pad_slice_u8
// CHECK: %[[FILL:.+]] = arith.constant -56 : i8
// CHECK: tensor.pad %{{.+}} low[0, 1] high[0, 2]
// CHECK: tensor.yield %[[FILL]] : i8
// CHECK: %[[S:.+]] = tensor.extract_slice %{{.+}}[0, 1] [2, 3] [1, 2] : tensor<2x8xi8> to tensor<2x3xi8>
// CHECK: %[[E:.+]] = tensor.empty() : tensor<4x3xi8>
// CHECK: tensor.insert_slice %[[S]] into %[[E]][0, 0] [2, 3] [1, 1] : tensor<2x3xi8> into tensor<4x3xi8>
// CHECK-NOT: ui8
func.func @pad_slice_u8(%x: tensor<2x5xui8>) -> tensor<4x3xui8> {
  %p = kiln.pad constant %x {pads = array<i64: 0, 1, 0, 2>, value = 200.0 : f64} : (tensor<2x5xui8>) -> tensor<2x8xui8>
  %s = kiln.slice %p {axes = array<i64: 1>, starts = array<i64: 1>, ends = array<i64: 7>, steps = array<i64: 2>} : (tensor<2x8xui8>) -> tensor<2x3xui8>
  %c = kiln.concat %s, %s {axis = 0 : i64} : (tensor<2x3xui8>, tensor<2x3xui8>) -> tensor<4x3xui8>
  return %c : tensor<4x3xui8>
}
