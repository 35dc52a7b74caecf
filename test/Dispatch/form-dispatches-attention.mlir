// RUN: kiln-opt %s --kiln-form-dispatches --split-input-file | FileCheck %s

#in = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

/// The head merge transpose after the attention kernel is folded into it
/// (merge_heads): it writes [B, Sq, H, D] itself, one dispatch.
// CHECK-LABEL: func @head_merge
// CHECK: %[[E:.+]] = tensor.empty() : tensor<1x5x2x16xf32>
// CHECK: %[[R:.+]] = kiln.attention_kernel %{{.+}}, %{{.+}}, %{{.+}} into %[[E]] {merge_heads, scale = 2.500000e-01 : f32} : {{.+}} -> tensor<1x5x2x16xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @head_merge(%q: tensor<1x2x5x16xf32>) -> tensor<1x5x2x16xf32> {
  %e = tensor.empty() : tensor<1x2x5x16xf32>
  %a = kiln.attention_kernel %q, %q, %q into %e {scale = 0.25 : f32} : tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32> -> tensor<1x2x5x16xf32>
  %t = tensor.empty() : tensor<1x5x2x16xf32>
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a : tensor<1x2x5x16xf32>) outs(%t : tensor<1x5x2x16xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<1x5x2x16xf32>
  return %r : tensor<1x5x2x16xf32>
}

// -----

#in = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
#out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

/// Not the head merge (another permutation), or a result with two users:
/// nothing is folded.
// CHECK-LABEL: func @other_permutation
// CHECK: kiln.attention_kernel
// CHECK-NOT: merge_heads
// CHECK: linalg.generic
// CHECK-LABEL: func @two_users
// CHECK: kiln.attention_kernel
// CHECK-NOT: merge_heads
// CHECK: linalg.transpose
func.func @other_permutation(%q: tensor<1x2x16x16xf32>) -> tensor<1x2x16x16xf32> {
  %e = tensor.empty() : tensor<1x2x16x16xf32>
  %a = kiln.attention_kernel %q, %q, %q into %e {scale = 0.25 : f32} : tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32> -> tensor<1x2x16x16xf32>
  %t = tensor.empty() : tensor<1x2x16x16xf32>
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a : tensor<1x2x16x16xf32>) outs(%t : tensor<1x2x16x16xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<1x2x16x16xf32>
  return %r : tensor<1x2x16x16xf32>
}
func.func @two_users(%q: tensor<1x2x5x16xf32>) -> (tensor<1x5x2x16xf32>, tensor<1x2x5x16xf32>) {
  %e = tensor.empty() : tensor<1x2x5x16xf32>
  %a = kiln.attention_kernel %q, %q, %q into %e {scale = 0.25 : f32} : tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32> -> tensor<1x2x5x16xf32>
  %t = tensor.empty() : tensor<1x5x2x16xf32>
  %r = linalg.transpose ins(%a : tensor<1x2x5x16xf32>) outs(%t : tensor<1x5x2x16xf32>) permutation = [0, 2, 1, 3]
  return %r, %a : tensor<1x5x2x16xf32>, tensor<1x2x5x16xf32>
}

// -----

/// linalg.transpose with the head merge permutation folds too.
// CHECK-LABEL: func @named_transpose
// CHECK: kiln.attention_kernel {{.+}} {merge_heads
// CHECK-NOT: linalg.transpose
func.func @named_transpose(%q: tensor<1x2x5x16xf32>) -> tensor<1x5x2x16xf32> {
  %e = tensor.empty() : tensor<1x2x5x16xf32>
  %a = kiln.attention_kernel %q, %q, %q into %e {scale = 0.25 : f32} : tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32> -> tensor<1x2x5x16xf32>
  %t = tensor.empty() : tensor<1x5x2x16xf32>
  %r = linalg.transpose ins(%a : tensor<1x2x5x16xf32>) outs(%t : tensor<1x5x2x16xf32>) permutation = [0, 2, 1, 3]
  return %r : tensor<1x5x2x16xf32>
}
