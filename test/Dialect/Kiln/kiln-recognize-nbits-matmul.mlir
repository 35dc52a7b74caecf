// RUN: kiln-opt %s --kiln-recognize-nbits-matmul --split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-recognize-nbits-matmul=max-rows=2 --split-input-file | FileCheck %s --check-prefix=ROWS

/// The importer's MatMulNBits with constant weights (q [N, blocks, block]
/// ui8, zero points and scales [N, blocks, 1]; K = 40 not a multiple of
/// the block of 16, so the padding is sliced off): one low-bit kernel op on
/// A's rows, its weight kept in 4 bits (every value below 16).
// CHECK-LABEL: func.func @four_bits(
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<1x3x40xf32>
// CHECK-DAG: %[[Q:.+]] = kiln.constant dense<3> : tensor<5x48xi8>
// CHECK-DAG: %[[S:.+]] = kiln.constant dense<5.000000e-01> : tensor<5x3xf32>
// CHECK-DAG: %[[Z:.+]] = kiln.constant dense<8.000000e+00> : tensor<5x3xf32>
// CHECK-DAG: %[[A2:.+]] = kiln.reshape %[[A]] : (tensor<1x3x40xf32>) -> tensor<3x40xf32>
// CHECK-DAG: %[[E:.+]] = tensor.empty() : tensor<3x5xf32>
// CHECK: %[[K:.+]] = kiln.matmul_nbits_kernel %[[A2]], %[[Q]], %[[S]], %[[Z]] into %[[E]] {bits = 4 : i64, block_size = 16 : i64} : tensor<3x40xf32>, tensor<5x48xi8>, tensor<5x3xf32>, tensor<5x3xf32>, tensor<3x5xf32> -> tensor<3x5xf32>
// CHECK: %[[Y:.+]] = kiln.reshape %[[K]] : (tensor<3x5xf32>) -> tensor<1x3x5xf32>
// CHECK: return %[[Y]]
// ROWS-LABEL: func.func @four_bits(
// ROWS-NOT: kiln.matmul_nbits_kernel
// ROWS: kiln.matmul %{{.+}} : (tensor<1x3x40xf32>, tensor<40x5xf32>) -> tensor<1x3x5xf32>
func.func @four_bits(%a: tensor<1x3x40xf32>) -> tensor<1x3x5xf32> {
  %q = kiln.constant dense<3> : tensor<5x3x16xui8>
  %z = kiln.constant dense<8.0> : tensor<5x3x1xf32>
  %s = kiln.constant dense<0.5> : tensor<5x3x1xf32>
  %qf = kiln.cast %q : tensor<5x3x16xui8> -> tensor<5x3x16xf32>
  %c = kiln.sub %qf, %z : (tensor<5x3x16xf32>, tensor<5x3x1xf32>) -> tensor<5x3x16xf32>
  %w = kiln.mul %c, %s : (tensor<5x3x16xf32>, tensor<5x3x1xf32>) -> tensor<5x3x16xf32>
  %r = kiln.reshape %w : (tensor<5x3x16xf32>) -> tensor<5x48xf32>
  %sl = kiln.slice %r {starts = array<i64: 0>, ends = array<i64: 40>, axes = array<i64: 1>, steps = array<i64: 1>} : (tensor<5x48xf32>) -> tensor<5x40xf32>
  %t = kiln.transpose %sl {perm = array<i64: 1, 0>} : (tensor<5x40xf32>) -> tensor<40x5xf32>
  %y = kiln.matmul %a, %t : (tensor<1x3x40xf32>, tensor<40x5xf32>) -> tensor<1x3x5xf32>
  return %y : tensor<1x3x5xf32>
}

// -----

/// A value of 16 or more: the weight stays 8-bit. K is a whole number of
/// blocks (no slice); A is a row of rank 1.
// CHECK-LABEL: func.func @eight_bits(
// CHECK: kiln.matmul_nbits_kernel {{.+}} {bits = 8 : i64, block_size = 16 : i64} : tensor<1x32xf32>, tensor<4x32xi8>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<1x4xf32> -> tensor<1x4xf32>
// CHECK: kiln.reshape %{{.+}} : (tensor<1x4xf32>) -> tensor<4xf32>
// ROWS-LABEL: func.func @eight_bits(
// ROWS: kiln.matmul_nbits_kernel
func.func @eight_bits(%a: tensor<32xf32>) -> tensor<4xf32> {
  %q = kiln.constant dense<[[[200, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]], [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]], [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]], [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]]]> : tensor<4x2x16xui8>
  %z = kiln.constant dense<128.0> : tensor<4x2x1xf32>
  %s = kiln.constant dense<0.25> : tensor<4x2x1xf32>
  %qf = kiln.cast %q : tensor<4x2x16xui8> -> tensor<4x2x16xf32>
  %c = kiln.sub %qf, %z : (tensor<4x2x16xf32>, tensor<4x2x1xf32>) -> tensor<4x2x16xf32>
  %w = kiln.mul %c, %s : (tensor<4x2x16xf32>, tensor<4x2x1xf32>) -> tensor<4x2x16xf32>
  %r = kiln.reshape %w : (tensor<4x2x16xf32>) -> tensor<4x32xf32>
  %t = kiln.transpose %r {perm = array<i64: 1, 0>} : (tensor<4x32xf32>) -> tensor<32x4xf32>
  %y = kiln.matmul %a, %t : (tensor<32xf32>, tensor<32x4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

/// Not the form: a weight that is not a constant, a slice that does not
/// start at 0, a dynamic A.
// CHECK-LABEL: func.func @not_constant(
// CHECK-NOT: kiln.matmul_nbits_kernel
// CHECK: kiln.matmul
func.func @not_constant(%a: tensor<2x32xf32>, %q: tensor<4x2x16xui8>) -> tensor<2x4xf32> {
  %z = kiln.constant dense<8.0> : tensor<4x2x1xf32>
  %s = kiln.constant dense<0.25> : tensor<4x2x1xf32>
  %qf = kiln.cast %q : tensor<4x2x16xui8> -> tensor<4x2x16xf32>
  %c = kiln.sub %qf, %z : (tensor<4x2x16xf32>, tensor<4x2x1xf32>) -> tensor<4x2x16xf32>
  %w = kiln.mul %c, %s : (tensor<4x2x16xf32>, tensor<4x2x1xf32>) -> tensor<4x2x16xf32>
  %r = kiln.reshape %w : (tensor<4x2x16xf32>) -> tensor<4x32xf32>
  %t = kiln.transpose %r {perm = array<i64: 1, 0>} : (tensor<4x32xf32>) -> tensor<32x4xf32>
  %y = kiln.matmul %a, %t : (tensor<2x32xf32>, tensor<32x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @offset_slice(
// CHECK-NOT: kiln.matmul_nbits_kernel
// CHECK: kiln.matmul
func.func @offset_slice(%a: tensor<1x24xf32>) -> tensor<1x4xf32> {
  %q = kiln.constant dense<3> : tensor<4x2x16xui8>
  %z = kiln.constant dense<8.0> : tensor<4x2x1xf32>
  %s = kiln.constant dense<0.25> : tensor<4x2x1xf32>
  %qf = kiln.cast %q : tensor<4x2x16xui8> -> tensor<4x2x16xf32>
  %c = kiln.sub %qf, %z : (tensor<4x2x16xf32>, tensor<4x2x1xf32>) -> tensor<4x2x16xf32>
  %w = kiln.mul %c, %s : (tensor<4x2x16xf32>, tensor<4x2x1xf32>) -> tensor<4x2x16xf32>
  %r = kiln.reshape %w : (tensor<4x2x16xf32>) -> tensor<4x32xf32>
  %sl = kiln.slice %r {starts = array<i64: 8>, ends = array<i64: 32>, axes = array<i64: 1>, steps = array<i64: 1>} : (tensor<4x32xf32>) -> tensor<4x24xf32>
  %t = kiln.transpose %sl {perm = array<i64: 1, 0>} : (tensor<4x24xf32>) -> tensor<24x4xf32>
  %y = kiln.matmul %a, %t : (tensor<1x24xf32>, tensor<24x4xf32>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

// CHECK-LABEL: func.func @dynamic_rows(
// CHECK-NOT: kiln.matmul_nbits_kernel
// CHECK: kiln.matmul
func.func @dynamic_rows(%a: tensor<?x32xf32>) -> tensor<?x4xf32> {
  %q = kiln.constant dense<3> : tensor<4x2x16xui8>
  %z = kiln.constant dense<8.0> : tensor<4x2x1xf32>
  %s = kiln.constant dense<0.25> : tensor<4x2x1xf32>
  %qf = kiln.cast %q : tensor<4x2x16xui8> -> tensor<4x2x16xf32>
  %c = kiln.sub %qf, %z : (tensor<4x2x16xf32>, tensor<4x2x1xf32>) -> tensor<4x2x16xf32>
  %w = kiln.mul %c, %s : (tensor<4x2x16xf32>, tensor<4x2x1xf32>) -> tensor<4x2x16xf32>
  %r = kiln.reshape %w : (tensor<4x2x16xf32>) -> tensor<4x32xf32>
  %t = kiln.transpose %r {perm = array<i64: 1, 0>} : (tensor<4x32xf32>) -> tensor<32x4xf32>
  %y = kiln.matmul %a, %t : (tensor<?x32xf32>, tensor<32x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
