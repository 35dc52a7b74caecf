// RUN: kiln-opt %s --kiln-recognize-attention --split-input-file | FileCheck %s

/// BERT's export: K^T written directly as a transpose of the reshaped key
/// projection, Div by sqrt(d), an additive mask, Softmax(-1), MatMul V. The
/// transpose back to K composes with the exporter's into one.
// CHECK-LABEL: func @bert_attention
// CHECK-SAME: (%[[Q:.+]]: tensor<1x2x8x4xf32>, %[[K:.+]]: tensor<1x8x2x4xf32>, %[[V:.+]]: tensor<1x2x8x4xf32>, %[[M:.+]]: tensor<1x1x1x8xf32>)
// CHECK: %[[KK:.+]] = kiln.transpose %[[K]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK: %[[O:.+]] = kiln.attention %[[Q]], %[[KK]], %[[V]], %[[M]] {scale = 5.000000e-01 : f32}
// CHECK-NEXT: return %[[O]]
func.func @bert_attention(%q: tensor<1x2x8x4xf32>, %k: tensor<1x8x2x4xf32>, %v: tensor<1x2x8x4xf32>, %mask: tensor<1x1x1x8xf32>) -> tensor<1x2x8x4xf32> {
  %kt = kiln.transpose %k {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x8x2x4xf32>) -> tensor<1x2x4x8xf32>
  %s = kiln.matmul %q, %kt : (tensor<1x2x8x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x8x8xf32>
  %c = kiln.constant dense<2.0> : tensor<f32>
  %d = kiln.div %s, %c : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8x8xf32>
  %a = kiln.add %d, %mask : (tensor<1x2x8x8xf32>, tensor<1x1x1x8xf32>) -> tensor<1x2x8x8xf32>
  %p = kiln.softmax %a {axis = -1 : i64} : tensor<1x2x8x8xf32>
  %o = kiln.matmul %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

/// Scale by multiplication (on the left), no mask, 3-D (batch * heads).
// CHECK-LABEL: func @mul_scale_no_mask
// CHECK-SAME: (%[[Q:.+]]: tensor<6x5x4xf32>, %[[KT:.+]]: tensor<6x4x7xf32>, %[[V:.+]]: tensor<6x7x3xf32>)
// CHECK: %[[K:.+]] = kiln.transpose %[[KT]] {perm = array<i64: 0, 2, 1>}
// CHECK: kiln.attention %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f32} : (tensor<6x5x4xf32>, tensor<6x7x4xf32>, tensor<6x7x3xf32>) -> tensor<6x5x3xf32>
func.func @mul_scale_no_mask(%q: tensor<6x5x4xf32>, %kt: tensor<6x4x7xf32>, %v: tensor<6x7x3xf32>) -> tensor<6x5x3xf32> {
  %s = kiln.matmul %q, %kt : (tensor<6x5x4xf32>, tensor<6x4x7xf32>) -> tensor<6x5x7xf32>
  %c = kiln.constant dense<0.125> : tensor<f32>
  %d = kiln.mul %c, %s : (tensor<f32>, tensor<6x5x7xf32>) -> tensor<6x5x7xf32>
  %p = kiln.softmax %d {axis = 2 : i64} : tensor<6x5x7xf32>
  %o = kiln.matmul %p, %v : (tensor<6x5x7xf32>, tensor<6x7x3xf32>) -> tensor<6x5x3xf32>
  return %o : tensor<6x5x3xf32>
}

// -----

/// Softmax over another axis is not attention.
// CHECK-LABEL: func @softmax_other_axis
// CHECK-NOT: kiln.attention
func.func @softmax_other_axis(%q: tensor<5x4xf32>, %kt: tensor<4x7xf32>, %v: tensor<5x3xf32>) -> tensor<7x3xf32> {
  %s = kiln.matmul %q, %kt : (tensor<5x4xf32>, tensor<4x7xf32>) -> tensor<5x7xf32>
  %p = kiln.softmax %s {axis = 0 : i64} : tensor<5x7xf32>
  %pt = kiln.transpose %p {perm = array<i64: 1, 0>} : (tensor<5x7xf32>) -> tensor<7x5xf32>
  %o = kiln.matmul %pt, %v : (tensor<7x5xf32>, tensor<5x3xf32>) -> tensor<7x3xf32>
  return %o : tensor<7x3xf32>
}

// -----

/// Scores used twice (returned as well) must stay: no match.
// CHECK-LABEL: func @scores_reused
// CHECK-NOT: kiln.attention
func.func @scores_reused(%q: tensor<5x4xf32>, %kt: tensor<4x7xf32>, %v: tensor<7x3xf32>) -> (tensor<5x3xf32>, tensor<5x7xf32>) {
  %s = kiln.matmul %q, %kt : (tensor<5x4xf32>, tensor<4x7xf32>) -> tensor<5x7xf32>
  %p = kiln.softmax %s {axis = -1 : i64} : tensor<5x7xf32>
  %o = kiln.matmul %p, %v : (tensor<5x7xf32>, tensor<7x3xf32>) -> tensor<5x3xf32>
  return %o, %p : tensor<5x3xf32>, tensor<5x7xf32>
}

// -----

/// A negative scale is outside kiln.attention's range: no match.
// CHECK-LABEL: func @negative_scale
// CHECK-NOT: kiln.attention
func.func @negative_scale(%q: tensor<5x4xf32>, %kt: tensor<4x7xf32>, %v: tensor<7x3xf32>) -> tensor<5x3xf32> {
  %s = kiln.matmul %q, %kt : (tensor<5x4xf32>, tensor<4x7xf32>) -> tensor<5x7xf32>
  %c = kiln.constant dense<-1.0> : tensor<f32>
  %d = kiln.mul %s, %c : (tensor<5x7xf32>, tensor<f32>) -> tensor<5x7xf32>
  %p = kiln.softmax %d {axis = -1 : i64} : tensor<5x7xf32>
  %o = kiln.matmul %p, %v : (tensor<5x7xf32>, tensor<7x3xf32>) -> tensor<5x3xf32>
  return %o : tensor<5x3xf32>
}

// -----

/// A mask that widens the batch dims changes the result shape: no match.
// CHECK-LABEL: func @widening_mask
// CHECK-NOT: kiln.attention
func.func @widening_mask(%q: tensor<5x4xf32>, %kt: tensor<4x7xf32>, %v: tensor<7x3xf32>, %m: tensor<2x5x7xf32>) -> tensor<2x5x3xf32> {
  %s = kiln.matmul %q, %kt : (tensor<5x4xf32>, tensor<4x7xf32>) -> tensor<5x7xf32>
  %a = kiln.add %s, %m : (tensor<5x7xf32>, tensor<2x5x7xf32>) -> tensor<2x5x7xf32>
  %p = kiln.softmax %a {axis = -1 : i64} : tensor<2x5x7xf32>
  %o = kiln.matmul %p, %v : (tensor<2x5x7xf32>, tensor<7x3xf32>) -> tensor<2x5x3xf32>
  return %o : tensor<2x5x3xf32>
}

// -----

/// GPT-2's causal masked fill, Where(keep, scores, finfo.min): the fill
/// becomes an additive mask select(keep, 0, fill).
// CHECK-LABEL: func @gpt2_masked_fill
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x8x4xf32>, %[[KT:.+]]: tensor<2x4x4x8xf32>, %[[V:.+]]: tensor<2x4x8x4xf32>, %[[KEEP:.+]]: tensor<1x1x8x8xi1>)
// CHECK-DAG: %[[ZERO:.+]] = kiln.constant dense<0.000000e+00> : tensor<f32>
// CHECK-DAG: %[[MIN:.+]] = kiln.constant dense<-3.40282347E+38> : tensor<f32>
// CHECK: %[[M:.+]] = kiln.select %[[KEEP]], %[[ZERO]], %[[MIN]] : (tensor<1x1x8x8xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x8x8xf32>
// CHECK: kiln.attention %[[Q]], %{{.+}}, %[[V]], %[[M]] {scale = 2.500000e-01 : f32}
func.func @gpt2_masked_fill(%q: tensor<2x4x8x4xf32>, %kt: tensor<2x4x4x8xf32>, %v: tensor<2x4x8x4xf32>, %keep: tensor<1x1x8x8xi1>) -> tensor<2x4x8x4xf32> {
  %s = kiln.matmul %q, %kt : (tensor<2x4x8x4xf32>, tensor<2x4x4x8xf32>) -> tensor<2x4x8x8xf32>
  %c = kiln.constant dense<0.25> : tensor<f32>
  %d = kiln.mul %s, %c : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %min = kiln.constant dense<-3.40282347E+38> : tensor<f32>
  %w = kiln.select %keep, %d, %min : (tensor<1x1x8x8xi1>, tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %p = kiln.softmax %w {axis = 3 : i64} : tensor<2x4x8x8xf32>
  %o = kiln.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x4xf32>
  return %o : tensor<2x4x8x4xf32>
}

// -----

/// The fill on the true side (the condition marks what is masked out).
// CHECK-LABEL: func @masked_fill_inverted
// CHECK: %[[M:.+]] = kiln.select %{{.+}}, %{{.+}}, %{{.+}} : (tensor<8x8xi1>, tensor<f32>, tensor<f32>) -> tensor<8x8xf32>
// CHECK: kiln.attention %{{.+}}, %{{.+}}, %{{.+}}, %[[M]]
func.func @masked_fill_inverted(%q: tensor<8x4xf32>, %kt: tensor<4x8xf32>, %v: tensor<8x4xf32>, %drop: tensor<8x8xi1>) -> tensor<8x4xf32> {
  %s = kiln.matmul %q, %kt : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %c = kiln.constant dense<0.5> : tensor<f32>
  %d = kiln.mul %s, %c : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %ninf = kiln.constant dense<0xFF800000> : tensor<f32>
  %w = kiln.select %drop, %ninf, %d : (tensor<8x8xi1>, tensor<f32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %p = kiln.softmax %w {axis = -1 : i64} : tensor<8x8xf32>
  %o = kiln.matmul %p, %v : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %o : tensor<8x4xf32>
}

// -----

/// A fill that is not negligible (0) changes the scores' distribution
/// differently from an additive mask: no attention.
// CHECK-LABEL: func @masked_fill_zero
// CHECK-NOT: kiln.attention
func.func @masked_fill_zero(%q: tensor<8x4xf32>, %kt: tensor<4x8xf32>, %v: tensor<8x4xf32>, %keep: tensor<8x8xi1>) -> tensor<8x4xf32> {
  %s = kiln.matmul %q, %kt : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %c = kiln.constant dense<0.5> : tensor<f32>
  %d = kiln.mul %s, %c : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %w = kiln.select %keep, %d, %zero : (tensor<8x8xi1>, tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %p = kiln.softmax %w {axis = -1 : i64} : tensor<8x8xf32>
  %o = kiln.matmul %p, %v : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %o : tensor<8x4xf32>
}
