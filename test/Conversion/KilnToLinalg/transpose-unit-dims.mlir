// RUN: kiln-opt %s --convert-kiln-to-linalg -split-input-file | FileCheck %s

/// A decode step's head split [b, 1, h, d] -> [b, h, 1, d] keeps the order
/// of the dims that are not 1: no element moves, so it is a view (the unit
/// dims dropped, then the result's added), not a transpose kernel.
// CHECK-LABEL: func.func @head_split
// CHECK-SAME: (%[[X:.+]]: tensor<2x1x12x64xf16>)
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1, 2], [3]] : tensor<2x1x12x64xf16> into tensor<2x12x64xf16>
// CHECK: %[[VIEW:.+]] = tensor.expand_shape %[[FLAT]] {{\[}}[0], [1], [2, 3]] output_shape [2, 12, 1, 64] : tensor<2x12x64xf16> into tensor<2x12x1x64xf16>
// CHECK-NOT: linalg.transpose
// CHECK: return %[[VIEW]]
func.func @head_split(%x: tensor<2x1x12x64xf16>) -> tensor<2x12x1x64xf16> {
  %y = kiln.transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x1x12x64xf16>) -> tensor<2x12x1x64xf16>
  return %y : tensor<2x12x1x64xf16>
}

// -----

/// Symbolic dims that keep their order are fine too (only static 1s move).
// CHECK-LABEL: func.func @symbolic
// CHECK: tensor.collapse_shape
// CHECK: tensor.expand_shape
// CHECK-NOT: linalg.transpose
func.func @symbolic(%x: tensor<?x1x?xf32>) -> tensor<?x?x1xf32> {
  %y = kiln.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<?x1x?xf32>) -> tensor<?x?x1xf32>
  return %y : tensor<?x?x1xf32>
}

// -----

/// Dims other than 1 that change order: a real transpose.
// CHECK-LABEL: func.func @swap
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.transpose
func.func @swap(%x: tensor<1x3x12x64xf32>) -> tensor<1x12x3x64xf32> {
  %y = kiln.transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x3x12x64xf32>) -> tensor<1x12x3x64xf32>
  return %y : tensor<1x12x3x64xf32>
}

// -----

/// Through a split of a fused projection: at batch 1 the piece is one
/// contiguous block of it, so the head split is a view; at batch 2 its rows
/// are strided (2304 apart), and a view would hand attention a strided Q:
/// that transpose stays a kernel (a contiguous copy).
// CHECK-LABEL: func.func @split_rows
// CHECK: tensor.extract_slice
// CHECK: tensor.collapse_shape
// CHECK-NOT: linalg.transpose
// CHECK-LABEL: func.func @split_batch
// CHECK: linalg.transpose
func.func @split_rows(%qkv: tensor<1x1x2304xf16>) -> tensor<1x12x1x64xf16> {
  %q, %k, %v = kiln.split %qkv {axis = 2 : i64, sizes = array<i64: 768, 768, 768>} : (tensor<1x1x2304xf16>) -> (tensor<1x1x768xf16>, tensor<1x1x768xf16>, tensor<1x1x768xf16>)
  %heads = kiln.reshape %q : (tensor<1x1x768xf16>) -> tensor<1x1x12x64xf16>
  %y = kiln.transpose %heads {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x1x12x64xf16>) -> tensor<1x12x1x64xf16>
  return %y : tensor<1x12x1x64xf16>
}
func.func @split_batch(%qkv: tensor<2x1x2304xf16>) -> tensor<2x12x1x64xf16> {
  %q, %k, %v = kiln.split %qkv {axis = 2 : i64, sizes = array<i64: 768, 768, 768>} : (tensor<2x1x2304xf16>) -> (tensor<2x1x768xf16>, tensor<2x1x768xf16>, tensor<2x1x768xf16>)
  %heads = kiln.reshape %q : (tensor<2x1x768xf16>) -> tensor<2x1x12x64xf16>
  %y = kiln.transpose %heads {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x1x12x64xf16>) -> tensor<2x12x1x64xf16>
  return %y : tensor<2x12x1x64xf16>
}
