// RUN: kiln-opt %s --convert-kiln-to-linalg -split-input-file | FileCheck %s

/// rotate_half(x) = concat(-x[..., 32:], x[..., :32]): one generic reading x
/// at (d + 32) mod 64, negating where the output index is below 32; no
/// slice, neg kernel or insert_slice is left.
// CHECK-DAG: #[[ROT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, (d3 + 32) mod 64)>
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func @rotate_half
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x1x64xf32>)
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[ROT]], #[[ID]]]
// CHECK-SAME: ins(%[[X]] : tensor<1x4x1x64xf32>)
// CHECK: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK:   %[[NEG:.+]] = arith.negf %[[IN]]
// CHECK:   %[[I:.+]] = linalg.index 3
// CHECK:   %[[HIGH:.+]] = arith.cmpi ult, %[[I]], %c32
// CHECK:   %[[V:.+]] = arith.select %[[HIGH]], %[[NEG]], %[[IN]]
// CHECK:   linalg.yield %[[V]]
// CHECK-NOT: insert_slice
// CHECK: return %[[R]]
func.func @rotate_half(%x: tensor<1x4x1x64xf32>) -> tensor<1x4x1x64xf32> {
  %lo = kiln.slice %x {axes = array<i64: 3>, starts = array<i64: 0>, ends = array<i64: 32>, steps = array<i64: 1>} : (tensor<1x4x1x64xf32>) -> tensor<1x4x1x32xf32>
  %hi = kiln.slice %x {axes = array<i64: -1>, starts = array<i64: 32>, ends = array<i64: 9223372036854775807>, steps = array<i64: 1>} : (tensor<1x4x1x64xf32>) -> tensor<1x4x1x32xf32>
  %neg = kiln.neg %hi : tensor<1x4x1x32xf32>
  %r = kiln.concat %neg, %lo {axis = -1 : i64} : (tensor<1x4x1x32xf32>, tensor<1x4x1x32xf32>) -> tensor<1x4x1x64xf32>
  return %r : tensor<1x4x1x64xf32>
}

// -----

/// A plain rotation (no neg) by an uneven split along a middle axis: the
/// element is read as it is.
// CHECK-DAG: #[[ROT:.+]] = affine_map<(d0, d1) -> ((d0 + 2) mod 5, d1)>
// CHECK-LABEL: func @rotate_uneven
// CHECK: linalg.generic {indexing_maps = [#[[ROT]], #{{.+}}]
// CHECK: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]]
func.func @rotate_uneven(%x: tensor<5x3xf32>) -> tensor<5x3xf32> {
  %hi = kiln.slice %x {axes = array<i64: 0>, starts = array<i64: 2>, ends = array<i64: 5>, steps = array<i64: 1>} : (tensor<5x3xf32>) -> tensor<3x3xf32>
  %lo = kiln.slice %x {axes = array<i64: 0>, starts = array<i64: 0>, ends = array<i64: 2>, steps = array<i64: 1>} : (tensor<5x3xf32>) -> tensor<2x3xf32>
  %r = kiln.concat %hi, %lo {axis = 0 : i64} : (tensor<3x3xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}

// -----

/// Not a rotation: the pieces are in order (x itself), overlap, or come
/// from different tensors; each stays slices and insert_slices.
// CHECK-LABEL: func @not_rotations
// CHECK-NOT: mod
// CHECK-COUNT-6: tensor.insert_slice
// CHECK-NOT: mod
func.func @not_rotations(%x: tensor<2x8xf32>, %y: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %a = kiln.slice %x {axes = array<i64: 1>, starts = array<i64: 0>, ends = array<i64: 4>, steps = array<i64: 1>} : (tensor<2x8xf32>) -> tensor<2x4xf32>
  %b = kiln.slice %x {axes = array<i64: 1>, starts = array<i64: 4>, ends = array<i64: 8>, steps = array<i64: 1>} : (tensor<2x8xf32>) -> tensor<2x4xf32>
  %c = kiln.slice %y {axes = array<i64: 1>, starts = array<i64: 0>, ends = array<i64: 4>, steps = array<i64: 1>} : (tensor<2x8xf32>) -> tensor<2x4xf32>
  %d = kiln.slice %x {axes = array<i64: 1>, starts = array<i64: 3>, ends = array<i64: 7>, steps = array<i64: 1>} : (tensor<2x8xf32>) -> tensor<2x4xf32>
  %in_order = kiln.concat %a, %b {axis = 1 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  %other = kiln.concat %b, %c {axis = 1 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  %overlap = kiln.concat %d, %a {axis = 1 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  return %in_order, %other, %overlap : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}
