// RUN: kiln-opt %s -canonicalize -split-input-file | FileCheck %s

/// Folders and canonicalization patterns of kiln ops, one law per case.

/// x + 0 = x and 0 + x = x (a zero that does not change the shape).
// CHECK-LABEL: func @add_zero
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]], %[[X]]
func.func @add_zero(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %zero = kiln.constant dense<0.0> : tensor<3xf32>
  %0 = kiln.add %x, %zero : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = kiln.add %zero, %x : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

/// A zero that broadcasts x to a bigger shape is not an identity.
// CHECK-LABEL: func @add_zero_broadcasting
// CHECK: kiln.add
func.func @add_zero_broadcasting(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %zero = kiln.constant dense<0.0> : tensor<2x3xf32>
  %0 = kiln.add %x, %zero : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

/// x - 0 = x, x * 1 = x, x / 1 = x.
// CHECK-LABEL: func @identities
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]]
func.func @identities(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %zero = kiln.constant dense<0.0> : tensor<4xf32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %0 = kiln.sub %x, %zero : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = kiln.mul %one, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = kiln.div %x, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

/// Shape arithmetic on constants folds: (c1 * c2 + c3 - c4) / c5.
// CHECK-LABEL: func @constant_arithmetic
// CHECK-NEXT: %[[C:.+]] = kiln.constant dense<[4, 9]> : tensor<2xi64>
// CHECK-NEXT: return %[[C]]
func.func @constant_arithmetic() -> tensor<2xi64> {
  %a = kiln.constant dense<[2, 3]> : tensor<2xi64>
  %b = kiln.constant dense<[4, 6]> : tensor<2xi64>
  %c = kiln.constant dense<[1, 1]> : tensor<2xi64>
  %d = kiln.constant dense<[1, 1]> : tensor<2xi64>
  %e = kiln.constant dense<[2, 2]> : tensor<2xi64>
  %0 = kiln.mul %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %1 = kiln.add %0, %c : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %2 = kiln.sub %1, %d : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %3 = kiln.div %2, %e : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %3 : tensor<2xi64>
}

// -----

/// Integer division by zero is left for run time, not folded.
// CHECK-LABEL: func @no_fold_div_by_zero
// CHECK: kiln.div
func.func @no_fold_div_by_zero() -> tensor<2xi64> {
  %a = kiln.constant dense<[2, 3]> : tensor<2xi64>
  %z = kiln.constant dense<[1, 0]> : tensor<2xi64>
  %0 = kiln.div %a, %z : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

/// neg(neg(x)) = x; not(not(x)) = x; clip with no bounds = x; cast to the same type = x.
// CHECK-LABEL: func @involutions
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[B:.+]]: tensor<4xi1>)
// CHECK-NEXT: return %[[X]], %[[B]], %[[X]], %[[X]]
func.func @involutions(%x: tensor<4xf32>, %b: tensor<4xi1>)
    -> (tensor<4xf32>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) {
  %0 = kiln.neg %x : tensor<4xf32>
  %1 = kiln.neg %0 : tensor<4xf32>
  %2 = kiln.not %b : tensor<4xi1>
  %3 = kiln.not %2 : tensor<4xi1>
  %4 = kiln.clip %x : tensor<4xf32>
  %5 = kiln.cast %x : tensor<4xf32> -> tensor<4xf32>
  return %1, %3, %4, %5 : tensor<4xf32>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>
}

// -----

/// reshape to the same type = x; reshape(reshape(x)) = reshape(x).
// CHECK-LABEL: func @reshape_chain
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.+]] = kiln.reshape %[[X]] : (tensor<2x3x4xf32>) -> tensor<24xf32>
// CHECK-NEXT: return %[[X]], %[[R]]
func.func @reshape_chain(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<24xf32>) {
  %0 = kiln.reshape %x : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %1 = kiln.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %2 = kiln.reshape %1 : (tensor<6x4xf32>) -> tensor<24xf32>
  return %0, %2 : tensor<2x3x4xf32>, tensor<24xf32>
}

// -----

/// A static reshape drops its shape operand; a constant reshapes at compile time.
// CHECK-LABEL: func @reshape_static
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>
// CHECK-DAG: %[[C:.+]] = kiln.constant dense<{{\[}}[1, 2], [3, 4]]> : tensor<2x2xi64>
// CHECK-DAG: %[[R:.+]] = kiln.reshape %[[X]] : (tensor<2x3xf32>) -> tensor<6xf32>
// CHECK: return %[[R]], %[[C]]
func.func @reshape_static(%x: tensor<2x3xf32>, %s: tensor<1xi64>) -> (tensor<6xf32>, tensor<2x2xi64>) {
  %0 = kiln.reshape %x, %s : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<6xf32>
  %c = kiln.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %1 = kiln.reshape %c : (tensor<4xi64>) -> tensor<2x2xi64>
  return %0, %1 : tensor<6xf32>, tensor<2x2xi64>
}

// -----

/// transpose(x, identity) = x; transpose(transpose(x, p), q) = transpose(x, p∘q).
// CHECK-LABEL: func @transpose_compose
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.+]] = kiln.transpose %[[X]] {perm = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
// CHECK-NEXT: return %[[X]], %[[T]], %[[X]]
func.func @transpose_compose(%x: tensor<2x3x4xf32>)
    -> (tensor<2x3x4xf32>, tensor<4x3x2xf32>, tensor<2x3x4xf32>) {
  %0 = kiln.transpose %x {perm = array<i64: 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %1 = kiln.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %2 = kiln.transpose %1 {perm = array<i64: 2, 0, 1>} : (tensor<3x2x4xf32>) -> tensor<4x3x2xf32>
  %3 = kiln.transpose %1 {perm = array<i64: 1, 0, 2>} : (tensor<3x2x4xf32>) -> tensor<2x3x4xf32>
  return %0, %2, %3 : tensor<2x3x4xf32>, tensor<4x3x2xf32>, tensor<2x3x4xf32>
}

// -----

/// concat of one tensor = the tensor; expand to the same type = x.
// CHECK-LABEL: func @trivial_data_movement
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]], %[[X]]
func.func @trivial_data_movement(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = kiln.concat %x {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = kiln.expand %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

/// shape and size of static dims are constants; a dynamic dim keeps the op.
// CHECK-LABEL: func @shape_of_static
// CHECK-DAG: kiln.constant dense<[3, 4]> : tensor<2xi64>
// CHECK-DAG: kiln.constant dense<24> : tensor<i64>
// CHECK-DAG: kiln.shape %{{.*}} : (tensor<?x4xf32>) -> tensor<2xi64>
// CHECK-DAG: kiln.constant dense<4> : tensor<1xi64>
func.func @shape_of_static(%x: tensor<2x3x4xf32>, %d: tensor<?x4xf32>)
    -> (tensor<2xi64>, tensor<i64>, tensor<2xi64>, tensor<1xi64>) {
  %0 = kiln.shape %x {start = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2xi64>
  %1 = kiln.size %x : (tensor<2x3x4xf32>) -> tensor<i64>
  %2 = kiln.shape %d : (tensor<?x4xf32>) -> tensor<2xi64>
  %3 = kiln.shape %d {start = -1 : i64} : (tensor<?x4xf32>) -> tensor<1xi64>
  return %0, %1, %2, %3 : tensor<2xi64>, tensor<i64>, tensor<2xi64>, tensor<1xi64>
}

// -----

/// x - x = 0 for integers; not for floats (NaN - NaN is NaN).
// CHECK-LABEL: func @sub_self
// CHECK-SAME: (%[[I:.+]]: tensor<3xi64>, %[[F:.+]]: tensor<3xf32>)
// CHECK-DAG: %[[Z:.+]] = kiln.constant dense<0> : tensor<3xi64>
// CHECK-DAG: %[[S:.+]] = kiln.sub %[[F]], %[[F]]
// CHECK: return %[[Z]], %[[S]]
func.func @sub_self(%i: tensor<3xi64>, %f: tensor<3xf32>) -> (tensor<3xi64>, tensor<3xf32>) {
  %0 = kiln.sub %i, %i : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %1 = kiln.sub %f, %f : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xi64>, tensor<3xf32>
}

// -----

/// cast(cast(x : A -> B) -> C) = cast(x : A -> C) when A -> B is lossless:
/// i32 -> i64 -> i32 is x; f16 -> f32 -> i64 is one cast.
// CHECK-LABEL: func @double_cast
// CHECK-SAME: (%[[X:.+]]: tensor<4xi32>, %[[H:.+]]: tensor<4xf16>)
// CHECK-NEXT: %[[C:.+]] = kiln.cast %[[H]] : tensor<4xf16> -> tensor<4xi64>
// CHECK-NEXT: return %[[X]], %[[C]]
func.func @double_cast(%x: tensor<4xi32>, %h: tensor<4xf16>) -> (tensor<4xi32>, tensor<4xi64>) {
  %0 = kiln.cast %x : tensor<4xi32> -> tensor<4xi64>
  %1 = kiln.cast %0 : tensor<4xi64> -> tensor<4xi32>
  %2 = kiln.cast %h : tensor<4xf16> -> tensor<4xf32>
  %3 = kiln.cast %2 : tensor<4xf32> -> tensor<4xi64>
  return %1, %3 : tensor<4xi32>, tensor<4xi64>
}

// -----

/// A lossy first cast (f32 -> i32 truncates, i64 -> i32 wraps) is kept.
// CHECK-LABEL: func @lossy_double_cast
// CHECK-COUNT-4: kiln.cast
func.func @lossy_double_cast(%x: tensor<4xf32>, %y: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xi64>) {
  %0 = kiln.cast %x : tensor<4xf32> -> tensor<4xi32>
  %1 = kiln.cast %0 : tensor<4xi32> -> tensor<4xf32>
  %2 = kiln.cast %y : tensor<4xi64> -> tensor<4xi32>
  %3 = kiln.cast %2 : tensor<4xi32> -> tensor<4xi64>
  return %1, %3 : tensor<4xf32>, tensor<4xi64>
}

// -----

/// select(c, x, x) = x.
// CHECK-LABEL: func @select_same
// CHECK-SAME: (%{{.+}}: tensor<4xi1>, %[[X:.+]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @select_same(%c: tensor<4xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.select %c, %x, %x : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

/// squeeze(unsqueeze(x)) = x on the same axes; other axes stay.
// CHECK-LABEL: func @squeeze_unsqueeze
// CHECK-SAME: (%[[X:.+]]: tensor<3x1xf32>)
// CHECK: %[[U:.+]] = kiln.unsqueeze %[[X]]
// CHECK-NEXT: %[[S:.+]] = kiln.squeeze %[[U]] {axes = array<i64: 2>}
// CHECK-NEXT: return %[[X]], %[[S]]
func.func @squeeze_unsqueeze(%x: tensor<3x1xf32>) -> (tensor<3x1xf32>, tensor<1x3xf32>) {
  %u = kiln.unsqueeze %x {axes = array<i64: 0>} : (tensor<3x1xf32>) -> tensor<1x3x1xf32>
  %0 = kiln.squeeze %u {axes = array<i64: -3>} : (tensor<1x3x1xf32>) -> tensor<3x1xf32>
  %1 = kiln.squeeze %u {axes = array<i64: 2>} : (tensor<1x3x1xf32>) -> tensor<1x3xf32>
  return %0, %1 : tensor<3x1xf32>, tensor<1x3xf32>
}

// -----

/// expand to the same shape and concat of one input are identities.
// CHECK-LABEL: func @expand_concat_identity
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]], %[[X]]
func.func @expand_concat_identity(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = kiln.expand %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = kiln.concat %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

/// pow(x, 1) = x; pow(x, 2) = x * x; pow(x, 3) stays.
// CHECK-LABEL: func @pow_small
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK-DAG: %[[SQ:.+]] = kiln.mul %[[X]], %[[X]]
// CHECK-DAG: %[[CU:.+]] = kiln.pow %[[X]]
// CHECK: return %[[X]], %[[SQ]], %[[CU]]
func.func @pow_small(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %one = kiln.constant dense<1.0> : tensor<f32>
  %two = kiln.constant dense<2.0> : tensor<f32>
  %three = kiln.constant dense<3.0> : tensor<f32>
  %0 = kiln.pow %x, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = kiln.pow %x, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = kiln.pow %x, %three : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

/// x / c = x * (1/c) for a float splat; integer and zero divisors stay.
// CHECK-LABEL: func @div_by_constant
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[I:.+]]: tensor<4xi64>)
// CHECK-DAG: %[[R:.+]] = kiln.constant dense<1.250000e-01> : tensor<f32>
// CHECK-DAG: %[[M:.+]] = kiln.mul %[[X]], %[[R]]
// CHECK-DAG: %[[Z:.+]] = kiln.div %[[X]], %{{.+}} : (tensor<4xf32>, tensor<f32>)
// CHECK-DAG: %[[D:.+]] = kiln.div %[[I]]
// CHECK: return %[[M]], %[[Z]], %[[D]]
func.func @div_by_constant(%x: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi64>) {
  %eight = kiln.constant dense<8.0> : tensor<f32>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %ieight = kiln.constant dense<8> : tensor<i64>
  %0 = kiln.div %x, %eight : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = kiln.div %x, %zero : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = kiln.div %i, %ieight : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xi64>
}

// -----

/// floor, ceil and relu of float constants are constants (NaN stays NaN);
/// casts of constants: float -> int truncates toward zero, float -> bool is
/// c != 0, int -> float converts (so unrolled loop counters fold).
// CHECK-LABEL: func @fold_constant_unary
// CHECK-DAG: %[[FLOOR:.+]] = kiln.constant dense<[-2.000000e+00, 1.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[CEIL:.+]] = kiln.constant dense<[-1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[RELU:.+]] = kiln.constant dense<[0.000000e+00, 1.500000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[INT:.+]] = kiln.constant dense<[-1, 1]> : tensor<2xi64>
// CHECK-DAG: %[[BOOL:.+]] = kiln.constant dense<true> : tensor<2xi1>
// CHECK-DAG: %[[FLT:.+]] = kiln.constant dense<[-3.000000e+00, 2.550000e+02]> : tensor<2xf32>
// CHECK-NOT: kiln.floor
// CHECK-NOT: kiln.cast
// CHECK: return %[[FLOOR]], %[[CEIL]], %[[RELU]], %[[INT]], %[[BOOL]], %[[FLT]]
func.func @fold_constant_unary() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xi64>, tensor<2xi1>, tensor<2xf32>) {
  %c = kiln.constant dense<[-1.5, 1.5]> : tensor<2xf32>
  %i = kiln.constant dense<[-3, 255]> : tensor<2xi32>
  %0 = kiln.floor %c : tensor<2xf32>
  %1 = kiln.ceil %c : tensor<2xf32>
  %2 = kiln.relu %c : tensor<2xf32>
  %3 = kiln.cast %c : tensor<2xf32> -> tensor<2xi64>
  %4 = kiln.cast %c : tensor<2xf32> -> tensor<2xi1>
  %5 = kiln.cast %i : tensor<2xi32> -> tensor<2xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xi64>, tensor<2xi1>, tensor<2xf32>
}

// -----

/// Out-of-range or NaN float -> int conversions are not defined: left alone.
// CHECK-LABEL: func @no_fold_bad_cast
// CHECK: kiln.cast
func.func @no_fold_bad_cast() -> tensor<2xi32> {
  %c = kiln.constant dense<[1.0e+20, 0x7FC00000]> : tensor<2xf32>
  %0 = kiln.cast %c : tensor<2xf32> -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

/// gather(dequantize_linear(x, s, z), i) = dequantize_linear(gather(x, i), s, z)
/// with a per-tensor s and z: the gathered rows are dequantized, not the table.
// CHECK-LABEL: func @gather_of_dequantize
// CHECK-SAME: (%[[T:.+]]: tensor<50x8xi8>, %[[I:.+]]: tensor<1x3xi64>)
// CHECK: %[[ROWS:.+]] = kiln.gather %[[T]], %[[I]] {axis = 0 : i64} : (tensor<50x8xi8>, tensor<1x3xi64>) -> tensor<1x3x8xi8>
// CHECK: %[[Y:.+]] = kiln.dequantize_linear %[[ROWS]], %{{.+}}, %{{.+}} : (tensor<1x3x8xi8>, tensor<f32>, tensor<i8>) -> tensor<1x3x8xf32>
// CHECK: return %[[Y]]
func.func @gather_of_dequantize(%t: tensor<50x8xi8>, %i: tensor<1x3xi64>) -> tensor<1x3x8xf32> {
  %s = kiln.constant dense<0.5> : tensor<f32>
  %z = kiln.constant dense<3> : tensor<i8>
  %d = kiln.dequantize_linear %t, %s, %z : (tensor<50x8xi8>, tensor<f32>, tensor<i8>) -> tensor<50x8xf32>
  %g = kiln.gather %d, %i {axis = 0 : i64} : (tensor<50x8xf32>, tensor<1x3xi64>) -> tensor<1x3x8xf32>
  return %g : tensor<1x3x8xf32>
}

// -----

/// Not with per-axis parameters (their axis would move with the gather).
// CHECK-LABEL: func @gather_of_per_axis_dequantize
// CHECK: kiln.dequantize_linear {{.+}} -> tensor<50x8xf32>
// CHECK: kiln.gather
func.func @gather_of_per_axis_dequantize(%t: tensor<50x8xi8>, %i: tensor<1x3xi64>) -> tensor<1x3x8xf32> {
  %s = kiln.constant dense<[0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25]> : tensor<8xf32>
  %z = kiln.constant dense<3> : tensor<8xi8>
  %d = kiln.dequantize_linear %t, %s, %z {axis = 1 : i64} : (tensor<50x8xi8>, tensor<8xf32>, tensor<8xi8>) -> tensor<50x8xf32>
  %g = kiln.gather %d, %i {axis = 0 : i64} : (tensor<50x8xf32>, tensor<1x3xi64>) -> tensor<1x3x8xf32>
  return %g : tensor<1x3x8xf32>
}
