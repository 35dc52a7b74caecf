// RUN: kiln-opt %s --kiln-sink-transposes --split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-sink-transposes --canonicalize --split-input-file | FileCheck %s --check-prefix=CANCEL

/// A unary op and a cast move above the transpose (the transpose sinks).
// CHECK-LABEL: func @unary_and_cast
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[R:.+]] = kiln.relu %[[X]] : tensor<2x3x4xf32>
// CHECK: %[[C:.+]] = kiln.cast %[[R]] : tensor<2x3x4xf32> -> tensor<2x3x4xf16>
// CHECK: %[[T:.+]] = kiln.transpose %[[C]] {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf16>) -> tensor<4x2x3xf16>
// CHECK: return %[[T]]
func.func @unary_and_cast(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf16> {
  %t = kiln.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %r = kiln.relu %t : tensor<4x2x3xf32>
  %c = kiln.cast %r : tensor<4x2x3xf32> -> tensor<4x2x3xf16>
  return %c : tensor<4x2x3xf16>
}

// -----

/// Both operands transposed by the same permutation; and a scalar operand.
// CHECK-LABEL: func @binary
// CHECK-SAME: (%[[A:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<2x3xf32>, %[[S:.+]]: tensor<f32>)
// CHECK: %[[ADD:.+]] = kiln.add %[[A]], %[[B]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[MUL:.+]] = kiln.mul %[[S]], %[[ADD]] : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[T:.+]] = kiln.transpose %[[MUL]] {perm = array<i64: 1, 0>}
// CHECK: return %[[T]]
func.func @binary(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %s: tensor<f32>) -> tensor<3x2xf32> {
  %ta = kiln.transpose %a {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %tb = kiln.transpose %b {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %sum = kiln.add %ta, %tb : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %m = kiln.mul %s, %sum : (tensor<f32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %m : tensor<3x2xf32>
}

// -----

/// NHWC -> NCHW, an activation, NCHW -> NHWC: the round trip cancels.
// CANCEL-LABEL: func @round_trip
// CANCEL-SAME: (%[[X:.+]]: tensor<1x4x4x8xf32>)
// CANCEL-NEXT: %[[S:.+]] = kiln.sigmoid %[[X]] : tensor<1x4x4x8xf32>
// CANCEL-NEXT: return %[[S]]
func.func @round_trip(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %nchw = kiln.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x4x4x8xf32>) -> tensor<1x8x4x4xf32>
  %s = kiln.sigmoid %nchw : tensor<1x8x4x4xf32>
  %nhwc = kiln.transpose %s {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x4x4x8xf32>
  return %nhwc : tensor<1x4x4x8xf32>
}

// -----

/// A transpose with another user stays put (moving it would duplicate it).
// CHECK-LABEL: func @shared_transpose
// CHECK: %[[T:.+]] = kiln.transpose
// CHECK: kiln.exp %[[T]]
func.func @shared_transpose(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %t = kiln.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %e = kiln.exp %t : tensor<3x2xf32>
  return %e, %t : tensor<3x2xf32>, tensor<3x2xf32>
}

// -----

/// Different permutations, or an untransposed operand with several
/// elements: nothing moves.
// CHECK-LABEL: func @not_sinkable
// CHECK: kiln.transpose
// CHECK: kiln.transpose
// CHECK: kiln.add
// CHECK: kiln.transpose
// CHECK: kiln.mul
// CHECK-NOT: kiln.transpose
func.func @not_sinkable(%a: tensor<2x2x2xf32>, %b: tensor<2x2x2xf32>, %c: tensor<2xf32>) -> (tensor<2x2x2xf32>, tensor<2x2x2xf32>) {
  %ta = kiln.transpose %a {perm = array<i64: 1, 0, 2>} : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %tb = kiln.transpose %b {perm = array<i64: 0, 2, 1>} : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %sum = kiln.add %ta, %tb : (tensor<2x2x2xf32>, tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %tc = kiln.transpose %a {perm = array<i64: 2, 1, 0>} : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %m = kiln.mul %tc, %c : (tensor<2x2x2xf32>, tensor<2xf32>) -> tensor<2x2x2xf32>
  return %sum, %m : tensor<2x2x2xf32>, tensor<2x2x2xf32>
}
