// RUN: kiln-opt %s --kiln-fold-matmul-scales --split-input-file | FileCheck %s

/// GPT-2's attention scores: Q and the KV cache both scaled by d^-1/4 (0.5
/// for head dim 16). Q takes d^-1/2, the cache is read as it is (no mul).
// CHECK-LABEL: func @gpt2_scores
// CHECK-SAME: (%[[Q:.+]]: tensor<2x3x4x16xf32>, %[[K:.+]]: tensor<2x4x5x16xf32>)
// CHECK: %[[S:.+]] = kiln.constant dense<2.500000e-01> : tensor<f32>
// CHECK: %[[QS:.+]] = kiln.mul %[[Q]], %[[S]]
// CHECK: %[[QT:.+]] = kiln.transpose %[[QS]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK-NOT: kiln.mul
// CHECK: %[[KT:.+]] = kiln.transpose %[[K]] {perm = array<i64: 0, 1, 3, 2>}
// CHECK: kiln.matmul %[[QT]], %[[KT]]
func.func @gpt2_scores(%q: tensor<2x3x4x16xf32>, %k: tensor<2x4x5x16xf32>) -> tensor<2x4x3x5xf32> {
  %s = kiln.constant dense<5.000000e-01> : tensor<f32>
  %qs = kiln.mul %q, %s : (tensor<2x3x4x16xf32>, tensor<f32>) -> tensor<2x3x4x16xf32>
  %qt = kiln.transpose %qs {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x3x4x16xf32>) -> tensor<2x4x3x16xf32>
  %ks = kiln.mul %k, %s : (tensor<2x4x5x16xf32>, tensor<f32>) -> tensor<2x4x5x16xf32>
  %kt = kiln.transpose %ks {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x4x5x16xf32>) -> tensor<2x4x16x5xf32>
  %p = kiln.matmul %qt, %kt : (tensor<2x4x3x16xf32>, tensor<2x4x16x5xf32>) -> tensor<2x4x3x5xf32>
  return %p : tensor<2x4x3x5xf32>
}

// -----

/// A factor of shape 1x1 on the lhs, through a reshape and a transpose
/// on the rhs (the dynamo export's K), with a shape query of the moved
/// value on the side (a symbolic dim); f16, s1 * s2 rounded in f16.
// CHECK-LABEL: func @reshape_f16
// CHECK-SAME: (%[[A:.+]]: tensor<3x8xf16>, %[[B:.+]]: tensor<?x8x3xf16>, %[[SHAPE:.+]]: tensor<2xi64>)
// CHECK: %[[S:.+]] = kiln.constant dense<2.999880e-02> : tensor<1x1xf16>
// CHECK: %[[AS:.+]] = kiln.mul %[[A]], %[[S]]
// CHECK-NOT: kiln.mul
// CHECK: %[[R:.+]] = kiln.reshape %[[B]], %[[SHAPE]]
// CHECK: %[[T:.+]] = kiln.transpose %[[R]]
// CHECK: kiln.shape %[[T]]
// CHECK: kiln.matmul %[[AS]], %[[T]]
func.func @reshape_f16(%a: tensor<3x8xf16>, %b: tensor<?x8x3xf16>, %shape: tensor<2xi64>)
    -> (tensor<3x?xf16>, tensor<2xi64>) {
  %s1 = kiln.constant dense<0.3> : tensor<1x1xf16>
  %s2 = kiln.constant dense<0.1> : tensor<f16>
  %as = kiln.mul %s1, %a : (tensor<1x1xf16>, tensor<3x8xf16>) -> tensor<3x8xf16>
  %bs = kiln.mul %b, %s2 : (tensor<?x8x3xf16>, tensor<f16>) -> tensor<?x8x3xf16>
  %r = kiln.reshape %bs, %shape : (tensor<?x8x3xf16>, tensor<2xi64>) -> tensor<?x8xf16>
  %t = kiln.transpose %r {perm = array<i64: 1, 0>} : (tensor<?x8xf16>) -> tensor<8x?xf16>
  %tshape = kiln.shape %t : (tensor<8x?xf16>) -> tensor<2xi64>
  %p = kiln.matmul %as, %t : (tensor<3x8xf16>, tensor<8x?xf16>) -> tensor<3x?xf16>
  return %p, %tshape : tensor<3x?xf16>, tensor<2xi64>
}

// -----

/// Refused: the scaled K is also a result (its values would change).
// CHECK-LABEL: func @rhs_read_elsewhere
// CHECK-COUNT-2: kiln.mul %{{.+}}, %{{.+}} : (tensor<{{.+}}>, tensor<f32>)
func.func @rhs_read_elsewhere(%q: tensor<3x8xf32>, %k: tensor<8x5xf32>) -> (tensor<3x5xf32>, tensor<8x5xf32>) {
  %s = kiln.constant dense<5.000000e-01> : tensor<f32>
  %qs = kiln.mul %q, %s : (tensor<3x8xf32>, tensor<f32>) -> tensor<3x8xf32>
  %ks = kiln.mul %k, %s : (tensor<8x5xf32>, tensor<f32>) -> tensor<8x5xf32>
  %p = kiln.matmul %qs, %ks : (tensor<3x8xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
  return %p, %ks : tensor<3x5xf32>, tensor<8x5xf32>
}

// -----

/// Refused: the scaled Q is also a result.
// CHECK-LABEL: func @lhs_read_elsewhere
// CHECK-COUNT-2: kiln.mul %{{.+}}, %{{.+}} : (tensor<{{.+}}>, tensor<f32>)
func.func @lhs_read_elsewhere(%q: tensor<3x8xf32>, %k: tensor<8x5xf32>) -> (tensor<3x5xf32>, tensor<3x8xf32>) {
  %s = kiln.constant dense<5.000000e-01> : tensor<f32>
  %qs = kiln.mul %q, %s : (tensor<3x8xf32>, tensor<f32>) -> tensor<3x8xf32>
  %ks = kiln.mul %k, %s : (tensor<8x5xf32>, tensor<f32>) -> tensor<8x5xf32>
  %p = kiln.matmul %qs, %ks : (tensor<3x8xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
  return %p, %qs : tensor<3x5xf32>, tensor<3x8xf32>
}

// -----

/// Refused: a factor of more than one element (a per-column scale).
// CHECK-LABEL: func @vector_factor
// CHECK: kiln.mul %{{.+}}, %{{.+}} : (tensor<3x8xf32>, tensor<f32>)
// CHECK: kiln.mul %{{.+}}, %{{.+}} : (tensor<8x5xf32>, tensor<5xf32>)
func.func @vector_factor(%q: tensor<3x8xf32>, %k: tensor<8x5xf32>) -> tensor<3x5xf32> {
  %s = kiln.constant dense<5.000000e-01> : tensor<f32>
  %v = kiln.constant dense<5.000000e-01> : tensor<5xf32>
  %qs = kiln.mul %q, %s : (tensor<3x8xf32>, tensor<f32>) -> tensor<3x8xf32>
  %ks = kiln.mul %k, %v : (tensor<8x5xf32>, tensor<5xf32>) -> tensor<8x5xf32>
  %p = kiln.matmul %qs, %ks : (tensor<3x8xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
  return %p : tensor<3x5xf32>
}

// -----

/// Refused: a cast between the factor and the product (it rounds).
// CHECK-LABEL: func @through_cast
// CHECK: kiln.mul %{{.+}}, %{{.+}} : (tensor<3x8xf32>, tensor<f32>)
// CHECK: kiln.mul %{{.+}}, %{{.+}} : (tensor<8x5xf16>, tensor<f16>)
func.func @through_cast(%q: tensor<3x8xf32>, %k: tensor<8x5xf16>) -> tensor<3x5xf32> {
  %s = kiln.constant dense<5.000000e-01> : tensor<f32>
  %sh = kiln.constant dense<5.000000e-01> : tensor<f16>
  %qs = kiln.mul %q, %s : (tensor<3x8xf32>, tensor<f32>) -> tensor<3x8xf32>
  %ks = kiln.mul %k, %sh : (tensor<8x5xf16>, tensor<f16>) -> tensor<8x5xf16>
  %kc = kiln.cast %ks : tensor<8x5xf16> -> tensor<8x5xf32>
  %p = kiln.matmul %qs, %kc : (tensor<3x8xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
  return %p : tensor<3x5xf32>
}

// -----

/// Refused: integer products (the factor is not a float).
// CHECK-LABEL: func @integers
// CHECK-COUNT-2: kiln.mul %{{.+}}, %{{.+}} : (tensor<{{.+}}>, tensor<i32>)
func.func @integers(%i: tensor<3x8xi32>, %j: tensor<8x5xi32>) -> tensor<3x5xi32> {
  %s = kiln.constant dense<2> : tensor<i32>
  %is = kiln.mul %i, %s : (tensor<3x8xi32>, tensor<i32>) -> tensor<3x8xi32>
  %js = kiln.mul %j, %s : (tensor<8x5xi32>, tensor<i32>) -> tensor<8x5xi32>
  %p = kiln.matmul %is, %js : (tensor<3x8xi32>, tensor<8x5xi32>) -> tensor<3x5xi32>
  return %p : tensor<3x5xi32>
}

// -----

/// One mul feeding both operands (x x^T scaled once) is not two factors.
// CHECK-LABEL: func @shared_factor
// CHECK: %[[XS:.+]] = kiln.mul
// CHECK: %[[T:.+]] = kiln.transpose %[[XS]]
// CHECK: kiln.matmul %[[XS]], %[[T]]
func.func @shared_factor(%x: tensor<3x8xf32>) -> tensor<3x3xf32> {
  %s = kiln.constant dense<5.000000e-01> : tensor<f32>
  %xs = kiln.mul %x, %s : (tensor<3x8xf32>, tensor<f32>) -> tensor<3x8xf32>
  %t = kiln.transpose %xs {perm = array<i64: 1, 0>} : (tensor<3x8xf32>) -> tensor<8x3xf32>
  %p = kiln.matmul %xs, %t : (tensor<3x8xf32>, tensor<8x3xf32>) -> tensor<3x3xf32>
  return %p : tensor<3x3xf32>
}

// -----

/// s1 * s2 underflows f16: no rewrite.
// CHECK-LABEL: func @underflow
// CHECK-COUNT-2: kiln.mul
func.func @underflow(%a: tensor<3x8xf16>, %b: tensor<8x5xf16>) -> tensor<3x5xf16> {
  %s = kiln.constant dense<1.0e-04> : tensor<f16>
  %as = kiln.mul %a, %s : (tensor<3x8xf16>, tensor<f16>) -> tensor<3x8xf16>
  %bs = kiln.mul %b, %s : (tensor<8x5xf16>, tensor<f16>) -> tensor<8x5xf16>
  %p = kiln.matmul %as, %bs : (tensor<3x8xf16>, tensor<8x5xf16>) -> tensor<3x5xf16>
  return %p : tensor<3x5xf16>
}
