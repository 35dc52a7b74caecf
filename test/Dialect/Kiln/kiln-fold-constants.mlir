// RUN: kiln-opt %s --kiln-fold-constants --split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-fold-constants="max-result-bytes=16" --split-input-file | FileCheck %s --check-prefix=LIMIT

/// Constant subgraphs are evaluated; one case per op family.

/// The exporters' shape chain: Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
// CHECK-LABEL: func @shape_chain
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[S:.+]] = kiln.constant dense<[2, 12]> : tensor<2xi64>
// CHECK-NEXT: %[[R:.+]] = kiln.reshape %[[X]], %[[S]]
// CHECK-NEXT: return %[[R]]
func.func @shape_chain(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  %s = kiln.shape %x : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %i = kiln.constant dense<0> : tensor<i64>
  %d = kiln.gather %s, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %u = kiln.unsqueeze %d {axes = array<i64: 0>} : (tensor<i64>) -> tensor<1xi64>
  %m = kiln.constant dense<-1> : tensor<1xi64>
  %c = kiln.concat %u, %m {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %a = kiln.constant dense<[1, 12]> : tensor<2xi64>
  %w = kiln.mul %c, %a : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %abs = kiln.abs %w : tensor<2xi64>
  %r = kiln.reshape %x, %abs : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
  return %r : tensor<2x12xf32>
}

// -----

/// Float arithmetic with broadcasting, rounded to f32.
// CHECK-LABEL: func @broadcast_float
// CHECK-NEXT: kiln.constant dense<{{\[}}[1.100000e+01, 2.300000e+01], [1.300000e+01, 2.500000e+01]]> : tensor<2x2xf32>
func.func @broadcast_float() -> tensor<2x2xf32> {
  %a = kiln.constant dense<[[1.0], [3.0]]> : tensor<2x1xf32>
  %b = kiln.constant dense<[10.0, 20.0]> : tensor<2xf32>
  %c = kiln.constant dense<[[0.0, 2.0]]> : tensor<1x2xf32>
  %0 = kiln.add %a, %b : (tensor<2x1xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %1 = kiln.add %0, %c : (tensor<2x2xf32>, tensor<1x2xf32>) -> tensor<2x2xf32>
  return %1 : tensor<2x2xf32>
}

// -----

/// Cast truncates toward zero; equal/not/select compose.
// CHECK-LABEL: func @cast_where
// CHECK-NEXT: %[[C:.+]] = kiln.constant dense<[1, -2, 7]> : tensor<3xi64>
// CHECK-NEXT: return %[[C]]
func.func @cast_where() -> tensor<3xi64> {
  %f = kiln.constant dense<[1.9, -2.7, 3.0]> : tensor<3xf32>
  %i = kiln.cast %f : tensor<3xf32> -> tensor<3xi64>
  %three = kiln.constant dense<3> : tensor<i64>
  %eq = kiln.equal %i, %three : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %ne = kiln.not %eq : tensor<3xi1>
  %seven = kiln.constant dense<7> : tensor<i64>
  %r = kiln.select %ne, %i, %seven : (tensor<3xi1>, tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  return %r : tensor<3xi64>
}

// -----

/// Range, constant_of_shape, expand and slice.
// CHECK-LABEL: func @generators
// CHECK-DAG: kiln.constant dense<[0, 2, 4]> : tensor<3xi64>
// CHECK-DAG: kiln.constant dense<5.000000e-01> : tensor<2x3xf32>
// CHECK-DAG: kiln.constant dense<{{\[}}[4, 2], [4, 2]]> : tensor<2x2xi64>
// CHECK-NOT: kiln.range
func.func @generators() -> (tensor<3xi64>, tensor<2x3xf32>, tensor<2x2xi64>) {
  %s = kiln.constant dense<0> : tensor<i64>
  %l = kiln.constant dense<6> : tensor<i64>
  %d = kiln.constant dense<2> : tensor<i64>
  %r = kiln.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<3xi64>
  %shape = kiln.constant dense<[2, 3]> : tensor<2xi64>
  %h = kiln.constant_of_shape %shape {value = 0.5 : f32} : (tensor<2xi64>) -> tensor<2x3xf32>
  %rev = kiln.slice %r {starts = array<i64: -1>, ends = array<i64: -100>, axes = array<i64: 0>, steps = array<i64: -1>} : (tensor<3xi64>) -> tensor<3xi64>
  %two = kiln.slice %rev {starts = array<i64: 0>, ends = array<i64: 2>, axes = array<i64: 0>, steps = array<i64: 1>} : (tensor<3xi64>) -> tensor<2xi64>
  %e = kiln.expand %two : (tensor<2xi64>) -> tensor<2x2xi64>
  return %r, %h, %e : tensor<3xi64>, tensor<2x3xf32>, tensor<2x2xi64>
}

// -----

/// Reductions, split, tile, flatten and squeeze.
// CHECK-LABEL: func @reduce_split
// CHECK-DAG: kiln.constant dense<[2.000000e+00, 5.000000e+00]> : tensor<2xf32>
// CHECK-DAG: kiln.constant dense<[1, 2, 1, 2]> : tensor<4xi64>
// CHECK-DAG: kiln.constant dense<3> : tensor<1xi64>
// CHECK-DAG: kiln.constant dense<6> : tensor<1x1xi64>
func.func @reduce_split() -> (tensor<2xf32>, tensor<4xi64>, tensor<1xi64>, tensor<1x1xi64>) {
  %x = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %m = kiln.reduce mean %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
  %v = kiln.constant dense<[1, 2, 3]> : tensor<3xi64>
  %a, %b = kiln.split %v {axis = 0 : i64, sizes = array<i64: 2, 1>} : (tensor<3xi64>) -> (tensor<2xi64>, tensor<1xi64>)
  %t = kiln.tile %a {repeats = array<i64: 2>} : (tensor<2xi64>) -> tensor<4xi64>
  %f = kiln.flatten %b {axis = 1 : i64} : (tensor<1xi64>) -> tensor<1x1xi64>
  %s = kiln.reduce sum %v {axes = array<i64>, keepdims = true} : (tensor<3xi64>) -> tensor<1xi64>
  %ss = kiln.unsqueeze %s {axes = array<i64: 0>} : (tensor<1xi64>) -> tensor<1x1xi64>
  return %m, %t, %b, %ss : tensor<2xf32>, tensor<4xi64>, tensor<1xi64>, tensor<1x1xi64>
}

// -----

/// A constant weight's transpose folds, and gemm(a, c, trans_b) takes the
/// transposed constant: a plain matmul for codegen.
// CHECK-LABEL: func @gemm_trans_b
// CHECK-NEXT: %[[W:.+]] = kiln.constant dense<{{\[}}[1.000000e+00, 3.000000e+00, 5.000000e+00], [2.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-NEXT: kiln.gemm %{{.+}}, %[[W]] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
func.func @gemm_trans_b(%x: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %w = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %y = kiln.gemm %x, %w {trans_b = true} : (tensor<4x2xf32>, tensor<3x2xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

/// A non-constant B keeps trans_b: transposing it would cost a copy per run.
// CHECK-LABEL: func @gemm_trans_b_variable
// CHECK: kiln.gemm {{.*}}trans_b = true
func.func @gemm_trans_b_variable(%x: tensor<4x2xf32>, %w: tensor<3x2xf32>) -> tensor<4x3xf32> {
  %y = kiln.gemm %x, %w {trans_b = true} : (tensor<4x2xf32>, tensor<3x2xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

/// Large float results become dense_resource blobs, not giant attributes;
/// a splat stays a splat whatever its size.
// CHECK-LABEL: func @large_results
// CHECK-DAG: kiln.constant dense_resource<kiln_folded{{.*}}> : tensor<64x128xf32>
// CHECK-DAG: kiln.constant dense<2.000000e+00> : tensor<256x256xf32>
// LIMIT-LABEL: func @large_results
// LIMIT: kiln.transpose
// LIMIT: kiln.add
func.func @large_results() -> (tensor<64x128xf32>, tensor<256x256xf32>) {
  %r = kiln.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %big = kiln.constant dense<1.0> : tensor<128x64xf32>
  %col = kiln.constant dense<[[0.0], [1.0]]> : tensor<2x1xf32>
  %e = kiln.expand %col : (tensor<2x1xf32>) -> tensor<2x64xf32>
  %t = kiln.tile %e {repeats = array<i64: 64, 1>} : (tensor<2x64xf32>) -> tensor<128x64xf32>
  %s = kiln.add %big, %t : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
  %tt = kiln.transpose %s {perm = array<i64: 1, 0>} : (tensor<128x64xf32>) -> tensor<64x128xf32>
  %one = kiln.constant dense<1.0> : tensor<256x256xf32>
  %two = kiln.add %one, %one : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %tt, %two : tensor<64x128xf32>, tensor<256x256xf32>
}

// -----

/// Integer division by zero and out-of-range gather indices are left for run time.
// CHECK-LABEL: func @not_foldable
// CHECK: kiln.div
// CHECK: kiln.gather
func.func @not_foldable() -> (tensor<2xi64>, tensor<1xi64>) {
  %a = kiln.constant dense<[4, 5]> : tensor<2xi64>
  %z = kiln.constant dense<[2, 0]> : tensor<2xi64>
  %d = kiln.div %a, %z : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %i = kiln.constant dense<[7]> : tensor<1xi64>
  %g = kiln.gather %a, %i {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  return %d, %g : tensor<2xi64>, tensor<1xi64>
}

// -----

/// Ops on non-constant values are untouched.
// CHECK-LABEL: func @not_constant
// CHECK: kiln.add
func.func @not_constant(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = kiln.add %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

/// An empty splat constant (a zero-width pad the exporters emit) folds through
/// concat without reading an element it does not have.
// CHECK-LABEL: func @empty_splat
// CHECK-NEXT: %[[C:.+]] = kiln.constant dense<1.000000e+00> : tensor<2x2xf32>
// CHECK-NEXT: return %[[C]]
func.func @empty_splat() -> tensor<2x2xf32> {
  %e = kiln.constant dense<0.0> : tensor<2x0xf32>
  %c = kiln.constant dense<1.0> : tensor<2x2xf32>
  %0 = kiln.concat %e, %c {axis = 1 : i64} : (tensor<2x0xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
