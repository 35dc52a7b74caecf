// RUN: kiln-opt %s --kiln-decompose-attention --split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-decompose-attention --kiln-recognize-attention --canonicalize --split-input-file | FileCheck %s --check-prefix=ROUND

/// attention(Q, K, V, mask) {scale} = matmul(softmax(Q K^T * scale + mask), V);
/// recognition gives the same op back (ROUND).
// CHECK-LABEL: func @additive_mask
// CHECK-SAME: (%[[Q:.+]]: tensor<2x5x4xf32>, %[[K:.+]]: tensor<2x7x4xf32>, %[[V:.+]]: tensor<2x7x3xf32>, %[[M:.+]]: tensor<5x7xf32>)
// CHECK: %[[KT:.+]] = kiln.transpose %[[K]] {perm = array<i64: 0, 2, 1>}
// CHECK: %[[S:.+]] = kiln.matmul %[[Q]], %[[KT]]
// CHECK: %[[SS:.+]] = kiln.mul %[[S]], %{{.+}}
// CHECK: %[[A:.+]] = kiln.add %[[SS]], %[[M]]
// CHECK: %[[P:.+]] = kiln.softmax %[[A]] {axis = -1 : i64}
// CHECK: %[[O:.+]] = kiln.matmul %[[P]], %[[V]]
// CHECK-NEXT: return %[[O]]
// ROUND-LABEL: func @additive_mask
// ROUND-SAME: (%[[Q:.+]]: tensor<2x5x4xf32>, %[[K:.+]]: tensor<2x7x4xf32>, %[[V:.+]]: tensor<2x7x3xf32>, %[[M:.+]]: tensor<5x7xf32>)
// ROUND-NEXT: %[[O:.+]] = kiln.attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 2.500000e-01 : f32}
// ROUND-NEXT: return %[[O]]
func.func @additive_mask(%q: tensor<2x5x4xf32>, %k: tensor<2x7x4xf32>, %v: tensor<2x7x3xf32>, %m: tensor<5x7xf32>) -> tensor<2x5x3xf32> {
  %o = kiln.attention %q, %k, %v, %m {scale = 0.25 : f32} : (tensor<2x5x4xf32>, tensor<2x7x4xf32>, tensor<2x7x3xf32>, tensor<5x7xf32>) -> tensor<2x5x3xf32>
  return %o : tensor<2x5x3xf32>
}

// -----

/// The default scale is 1/sqrt(D); a scale of 1 writes no multiplication.
// CHECK-LABEL: func @default_scale
// CHECK: kiln.constant dense<2.500000e-01> : tensor<f32>
// CHECK: kiln.mul
// CHECK-LABEL: func @unit_scale
// CHECK-NOT: kiln.mul
// CHECK: kiln.softmax
func.func @default_scale(%q: tensor<5x16xf32>, %k: tensor<7x16xf32>, %v: tensor<7x3xf32>) -> tensor<5x3xf32> {
  %o = kiln.attention %q, %k, %v : (tensor<5x16xf32>, tensor<7x16xf32>, tensor<7x3xf32>) -> tensor<5x3xf32>
  return %o : tensor<5x3xf32>
}
func.func @unit_scale(%q: tensor<5x16xf32>, %k: tensor<7x16xf32>, %v: tensor<7x3xf32>) -> tensor<5x3xf32> {
  %o = kiln.attention %q, %k, %v {scale = 1.0 : f32} : (tensor<5x16xf32>, tensor<7x16xf32>, tensor<7x3xf32>) -> tensor<5x3xf32>
  return %o : tensor<5x3xf32>
}

// -----

/// A boolean mask and is_causal select -inf where keys are masked out.
// CHECK-LABEL: func @bool_mask_causal
// CHECK-DAG: %[[NEG:.+]] = kiln.constant dense<0xFF800000> : tensor<f32>
// CHECK-DAG: %[[TRIL:.+]] = kiln.constant dense<{{\[}}[true, false, false], [true, true, false], [true, true, true]]> : tensor<3x3xi1>
// CHECK: %[[S:.+]] = kiln.select %{{.+}}, %{{.+}}, %[[NEG]]
// CHECK: kiln.select %[[TRIL]], %[[S]], %[[NEG]]
// CHECK: kiln.softmax
func.func @bool_mask_causal(%q: tensor<3x4xf32>, %k: tensor<3x4xf32>, %v: tensor<3x2xf32>, %m: tensor<3xi1>) -> tensor<3x2xf32> {
  %o = kiln.attention %q, %k, %v, %m {scale = 0.5 : f32, is_causal = true} : (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x2xf32>, tensor<3xi1>) -> tensor<3x2xf32>
  return %o : tensor<3x2xf32>
}

// -----

/// A causal mask over dynamic lengths is left for the lowering to report.
// CHECK-LABEL: func @causal_dynamic
// CHECK: kiln.attention
func.func @causal_dynamic(%q: tensor<?x4xf32>, %k: tensor<?x4xf32>, %v: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %o = kiln.attention %q, %k, %v {is_causal = true} : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
  return %o : tensor<?x2xf32>
}
