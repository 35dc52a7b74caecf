// RUN: kiln-opt %s --convert-kiln-to-linalg --split-input-file --verify-diagnostics | FileCheck %s

/// kiln.attention that the CPU kernel computes -> one kiln.attention_kernel.
/// A mask that is the same for every query becomes key-major by reshapes
/// (views); one that varies along the queries by a linalg.transpose.
// CHECK-LABEL: func @bert
// CHECK-SAME: (%[[Q:.+]]: tensor<1x2x5x16xf32>, %[[K:.+]]: tensor<1x2x7x16xf32>, %[[M:.+]]: tensor<1x1x1x7xf32>)
// CHECK: %[[C:.+]] = tensor.collapse_shape %[[M]] {{\[}}[0], [1], [2, 3]]
// CHECK: %[[KM:.+]] = tensor.expand_shape %[[C]] {{\[}}[0], [1], [2, 3]] output_shape [1, 1, 7, 1]
// CHECK: %[[E:.+]] = tensor.empty() : tensor<1x2x5x16xf32>
// CHECK: kiln.attention_kernel %[[Q]], %[[K]], %[[K]], %[[KM]] into %[[E]] {scale = 2.500000e-01 : f32}
// CHECK-SAME: -> tensor<1x2x5x16xf32>
func.func @bert(%q: tensor<1x2x5x16xf32>, %k: tensor<1x2x7x16xf32>, %m: tensor<1x1x1x7xf32>) -> tensor<1x2x5x16xf32> {
  %o = kiln.attention %q, %k, %k, %m {scale = 0.25 : f32} : (tensor<1x2x5x16xf32>, tensor<1x2x7x16xf32>, tensor<1x2x7x16xf32>, tensor<1x1x1x7xf32>) -> tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}

// -----

/// Default scale 1/sqrt(16); a [Sq, Sk] mask gets unit dims, then transposed.
// CHECK-LABEL: func @query_mask
// CHECK: %[[X:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0, 1, 2], [3]] output_shape [1, 1, 5, 7]
// CHECK: %[[T:.+]] = linalg.transpose ins(%[[X]] : tensor<1x1x5x7xf32>) outs(%{{.+}} : tensor<1x1x7x5xf32>) permutation = [0, 1, 3, 2]
// CHECK: kiln.attention_kernel %{{.+}}, %{{.+}}, %{{.+}}, %[[T]] into %{{.+}} {scale = 2.500000e-01 : f32}
func.func @query_mask(%q: tensor<1x2x5x16xf32>, %k: tensor<1x2x7x16xf32>, %m: tensor<5x7xf32>) -> tensor<1x2x5x16xf32> {
  %o = kiln.attention %q, %k, %k, %m : (tensor<1x2x5x16xf32>, tensor<1x2x7x16xf32>, tensor<1x2x7x16xf32>, tensor<5x7xf32>) -> tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}

// -----

// CHECK-LABEL: func @causal
// CHECK: kiln.attention_kernel %[[Q:.+]], %[[Q]], %[[Q]] into %{{.+}} {is_causal, scale = 2.500000e-01 : f32}
func.func @causal(%q: tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32> {
  %o = kiln.attention %q, %q, %q {is_causal = true} : (tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}

// -----

/// What the kernel does not compute is left to kiln-decompose-attention;
/// reaching the lowering, it is an error.
func.func @rank3(%q: tensor<2x5x16xf32>) -> tensor<2x5x16xf32> {
  // expected-error @+1 {{(kiln.attention): cannot lower to linalg with operand types (tensor<2x5x16xf32>, tensor<2x5x16xf32>, tensor<2x5x16xf32>) and result types (tensor<2x5x16xf32>): unsupported: query, key and value are not static rank-4 tensors}}
  %o = kiln.attention %q, %q, %q : (tensor<2x5x16xf32>, tensor<2x5x16xf32>, tensor<2x5x16xf32>) -> tensor<2x5x16xf32>
  return %o : tensor<2x5x16xf32>
}
