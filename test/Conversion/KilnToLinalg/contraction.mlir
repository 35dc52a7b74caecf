// RUN: kiln-opt %s --convert-kiln-to-linalg -split-input-file | FileCheck %s

/// 2-D products are linalg.matmul; other forms one contraction generic.

// CHECK-LABEL: func @matmul_2d
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[FILL:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[FILL]] : tensor<4x16xf32>)
func.func @matmul_2d(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = kiln.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

/// Batched lhs with a shared 2-D rhs is one 2-D product over all rows.
// CHECK-LABEL: func @matmul_rows
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
// CHECK: %[[MM:.+]] = linalg.matmul ins(%[[FLAT]], %{{.*}} : tensor<8x8xf32>, tensor<8x16xf32>)
// CHECK: tensor.expand_shape %[[MM]] {{\[\[}}0, 1], [2]] output_shape [2, 4, 16] : tensor<8x16xf32> into tensor<2x4x16xf32>
func.func @matmul_rows(%a: tensor<2x4x8xf32>, %b: tensor<8x16xf32>) -> tensor<2x4x16xf32> {
  %0 = kiln.matmul %a, %b : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

/// Equal batch dims collapse into one linalg.batch_matmul.
// CHECK-LABEL: func @matmul_batched
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] : tensor<2x3x4x8xf32> into tensor<6x4x8xf32>
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<6x4x8xf32>, tensor<6x8x16xf32>)
// CHECK: tensor.expand_shape
func.func @matmul_batched(%a: tensor<2x3x4x8xf32>, %b: tensor<2x3x8x16xf32>) -> tensor<2x3x4x16xf32> {
  %0 = kiln.matmul %a, %b : (tensor<2x3x4x8xf32>, tensor<2x3x8x16xf32>) -> tensor<2x3x4x16xf32>
  return %0 : tensor<2x3x4x16xf32>
}

// -----

/// Dynamic batch dims (a symbolic batch and sequence, as in attention) equal
/// in both operands are checked equal at run time and collapse the same way.
// CHECK-LABEL: func @matmul_batched_dynamic
// CHECK: call @kiln_check({{.*}}) {kiln.check_message = "dim mismatch in matmul{{.*}}(batch dim 0)
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] : tensor<?x4x?x16xf32> into tensor<?x?x16xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] : tensor<?x4x16x?xf32> into tensor<?x16x?xf32>
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<?x?x16xf32>, tensor<?x16x?xf32>) outs(%{{.*}} : tensor<?x?x?xf32>)
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] output_shape [%{{.*}}, 4, %{{.*}}, %{{.*}}] : tensor<?x?x?xf32> into tensor<?x4x?x?xf32>
func.func @matmul_batched_dynamic(%a: tensor<?x4x?x16xf32>, %b: tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32> {
  %0 = kiln.matmul %a, %b : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
  return %0 : tensor<?x4x?x?xf32>
}

// -----

/// Broadcast batch dims: one contraction generic whose maps read index 0.
// CHECK-DAG: #[[A:.+]] = affine_map<(d0, d1, d2, d3) -> (0, d1, d3)>
// CHECK-DAG: #[[B:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-LABEL: func @matmul_batch_broadcast
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
func.func @matmul_batch_broadcast(%a: tensor<1x4x8xf32>, %b: tensor<3x8x16xf32>) -> tensor<3x4x16xf32> {
  %0 = kiln.matmul %a, %b : (tensor<1x4x8xf32>, tensor<3x8x16xf32>) -> tensor<3x4x16xf32>
  return %0 : tensor<3x4x16xf32>
}

// -----

/// Gemm with trans_b reads B as (n, k); alpha and C become an epilogue generic.
// CHECK-DAG: #[[BT:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func @gemm_trans_b
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[BT]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @gemm_trans_b(%x: tensor<1x512xf32>, %w: tensor<1000x512xf32>, %b: tensor<1000xf32>) -> tensor<1x1000xf32> {
  %0 = kiln.gemm %x, %w, %b {trans_b = true, alpha = 2.0 : f32} : (tensor<1x512xf32>, tensor<1000x512xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>
  return %0 : tensor<1x1000xf32>
}

// -----

/// einsum: result letters are the parallel dims, the rest reductions; a
/// repeated letter reads a diagonal.
// CHECK-DAG: #[[A:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[B:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[C:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[DIAG:.+]] = affine_map<(d0) -> (d0, d0)>
// CHECK-LABEL: func @einsum
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[DIAG]], #{{.+}}], iterator_types = ["parallel"]}
func.func @einsum(%a: tensor<5x2x3xf32>, %b: tensor<5x3x4xf32>, %d: tensor<3x3xf32>) -> (tensor<5x2x4xf32>, tensor<3xf32>) {
  %0 = kiln.einsum "bij,bjk->bik" %a, %b : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
  %1 = kiln.einsum "ii->i" %d : (tensor<3x3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<5x2x4xf32>, tensor<3xf32>
}
