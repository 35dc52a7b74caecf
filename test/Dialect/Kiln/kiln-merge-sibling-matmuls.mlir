// RUN: kiln-opt %s --kiln-merge-sibling-matmuls --split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-merge-sibling-matmuls="max-weight-bytes=100" --split-input-file | FileCheck %s --check-prefix=LIMIT

/// A decode step's q, k and v: one row times three constant weights is one
/// product by their concatenation and three slices of its columns, in the
/// order of the former products.
// CHECK-LABEL: func @qkv
// CHECK-SAME: (%[[X:.+]]: tensor<1x1x8xf32>)
// CHECK-DAG: %[[WQ:.+]] = kiln.constant dense<1.000000e+00> : tensor<8x4xf32>
// CHECK-DAG: %[[WK:.+]] = kiln.constant dense<2.000000e+00> : tensor<8x2xf32>
// CHECK-DAG: %[[WV:.+]] = kiln.constant dense<3.000000e+00> : tensor<8x2xf32>
// CHECK: %[[W:.+]] = kiln.concat %[[WQ]], %[[WK]], %[[WV]] {axis = 1 : i64} : (tensor<8x4xf32>, tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<8x8xf32>
// CHECK: %[[P:.+]] = kiln.matmul %[[X]], %[[W]] : (tensor<1x1x8xf32>, tensor<8x8xf32>) -> tensor<1x1x8xf32>
// CHECK: %[[Q:.+]] = kiln.slice %[[P]] {axes = array<i64: 2>, ends = array<i64: 4>, starts = array<i64: 0>, steps = array<i64: 1>} : (tensor<1x1x8xf32>) -> tensor<1x1x4xf32>
// CHECK: %[[K:.+]] = kiln.slice %[[P]] {axes = array<i64: 2>, ends = array<i64: 6>, starts = array<i64: 4>, steps = array<i64: 1>}
// CHECK: %[[V:.+]] = kiln.slice %[[P]] {axes = array<i64: 2>, ends = array<i64: 8>, starts = array<i64: 6>, steps = array<i64: 1>}
// CHECK-NOT: kiln.matmul
// CHECK: return %[[Q]], %[[K]], %[[V]]
// LIMIT-LABEL: func @qkv
// LIMIT-COUNT-3: kiln.matmul
// LIMIT-NOT: kiln.concat
func.func @qkv(%x: tensor<1x1x8xf32>) -> (tensor<1x1x4xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>) {
  %wq = kiln.constant dense<1.0> : tensor<8x4xf32>
  %wk = kiln.constant dense<2.0> : tensor<8x2xf32>
  %wv = kiln.constant dense<3.0> : tensor<8x2xf32>
  %q = kiln.matmul %x, %wq : (tensor<1x1x8xf32>, tensor<8x4xf32>) -> tensor<1x1x4xf32>
  %k = kiln.matmul %x, %wk : (tensor<1x1x8xf32>, tensor<8x2xf32>) -> tensor<1x1x2xf32>
  %v = kiln.matmul %x, %wv : (tensor<1x1x8xf32>, tensor<8x2xf32>) -> tensor<1x1x2xf32>
  return %q, %k, %v : tensor<1x1x4xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>
}

// -----

/// Left alone: more than one row (a prefill or a batch: the slices would
/// be strided), a weight that is not a constant, a lone product, and
/// products of different lhs.
// CHECK-LABEL: func @not_siblings
// CHECK-NOT: kiln.concat
// CHECK-COUNT-6: kiln.matmul
// CHECK-NOT: kiln.slice
func.func @not_siblings(%rows: tensor<2x8xf32>, %x: tensor<1x8xf32>, %y: tensor<1x8xf32>, %w: tensor<8x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) {
  %c = kiln.constant dense<1.0> : tensor<8x4xf32>
  %a = kiln.matmul %rows, %c : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %b = kiln.matmul %rows, %c : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %d = kiln.matmul %x, %c : (tensor<1x8xf32>, tensor<8x4xf32>) -> tensor<1x4xf32>
  %e = kiln.matmul %x, %w : (tensor<1x8xf32>, tensor<8x4xf32>) -> tensor<1x4xf32>
  %f = kiln.matmul %y, %c : (tensor<1x8xf32>, tensor<8x4xf32>) -> tensor<1x4xf32>
  %g = kiln.matmul %y, %w : (tensor<1x8xf32>, tensor<8x4xf32>) -> tensor<1x4xf32>
  return %a, %b, %d, %e, %f, %g : tensor<2x4xf32>, tensor<2x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>
}
