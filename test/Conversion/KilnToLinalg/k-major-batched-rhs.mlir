// The transpose the pattern stops reading is still converted on its own;
// the linalg stage's canonicalization erases it, unread.
// RUN: kiln-opt %s --convert-kiln-to-linalg="k-major-batched-rhs=true" --canonicalize -split-input-file | FileCheck %s
// RUN: kiln-opt %s --convert-kiln-to-linalg -split-input-file | FileCheck %s --check-prefix=CPU

/// The CUDA policy (kiln::TargetPolicy::kMajorBatchedRhs): attention's scores
/// against a KV cache, K^T a transpose of the cache's last two dims. The
/// product reads the cache itself through the maps of C = A * B^T: no
/// linalg.transpose, the cache's rows are B's K-major rows. The sizes and
/// the run-time checks (contraction dim = the cache's last dim, the symbolic
/// batch) read the cache, N is its third dim.
// CHECK-DAG: #[[A:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[B:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[C:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func @scores
// CHECK-SAME: (%[[Q:.+]]: tensor<?x4x?x16xf32>, %[[K:.+]]: tensor<?x4x?x16xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: call @kiln_check({{.*}}) {kiln.check_message = "dim mismatch in matmul{{.*}}(batch dim 0)
// CHECK-DAG: %[[X:.+]] = tensor.collapse_shape %[[Q]] {{\[\[}}0, 1], [2], [3]] : tensor<?x4x?x16xf32> into tensor<?x?x16xf32>
// CHECK-DAG: %[[Y:.+]] = tensor.collapse_shape %[[K]] {{\[\[}}0, 1], [2], [3]] : tensor<?x4x?x16xf32> into tensor<?x?x16xf32>
// CHECK: %[[P:.+]] = linalg.batch_matmul indexing_maps = [#[[A]], #[[B]], #[[C]]] ins(%[[X]], %[[Y]] : tensor<?x?x16xf32>, tensor<?x?x16xf32>) outs(%{{.*}} : tensor<?x?x?xf32>)
// CHECK: %[[N:.+]] = tensor.dim %[[K]], %c2
// CHECK: tensor.expand_shape %[[P]] {{\[\[}}0, 1], [2], [3]] output_shape [%{{.*}}, 4, %{{.*}}, %[[N]]] : tensor<?x?x?xf32> into tensor<?x4x?x?xf32>
// CHECK-NOT: linalg.transpose
// CPU-LABEL: func @scores
// CPU: linalg.transpose
// CPU: linalg.batch_matmul ins
func.func @scores(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32> {
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<?x4x?x16xf32>) -> tensor<?x4x16x?xf32>
  %0 = kiln.matmul %q, %kt : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
  return %0 : tensor<?x4x?x?xf32>
}

// -----

/// Static, 3-D, f16 (the template's case): the same maps.
// CHECK-LABEL: func @static_f16
// CHECK-NOT: linalg.transpose
// CHECK: linalg.batch_matmul indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}] ins(%{{.*}}, %{{.*}} : tensor<8x1x64xf16>, tensor<8x32x64xf16>)
func.func @static_f16(%q: tensor<8x1x64xf16>, %k: tensor<8x32x64xf16>) -> tensor<8x1x32xf16> {
  %kt = kiln.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<8x32x64xf16>) -> tensor<8x64x32xf16>
  %0 = kiln.matmul %q, %kt : (tensor<8x1x64xf16>, tensor<8x64x32xf16>) -> tensor<8x1x32xf16>
  return %0 : tensor<8x1x32xf16>
}

// -----

/// Not this form: a transpose of other dims, batch dims that broadcast,
/// integers (the CUDA kernels are float).
// CHECK-LABEL: func @other_forms
// CHECK: linalg.transpose
// CHECK: linalg.batch_matmul ins
// CHECK: linalg.transpose
// CHECK: linalg.generic
// CHECK: linalg.transpose
// CHECK: linalg.batch_matmul ins
// CHECK-NOT: linalg.batch_matmul indexing_maps
func.func @other_forms(%q: tensor<2x3x16xf32>, %k: tensor<16x2x3xf32>, %b: tensor<1x3x16xf32>,
                       %i: tensor<2x3x16xi32>, %j: tensor<2x3x16xi32>)
    -> (tensor<2x3x3xf32>, tensor<2x3x3xf32>, tensor<2x3x3xi32>) {
  %kt = kiln.transpose %k {perm = array<i64: 1, 0, 2>} : (tensor<16x2x3xf32>) -> tensor<2x16x3xf32>
  %0 = kiln.matmul %q, %kt : (tensor<2x3x16xf32>, tensor<2x16x3xf32>) -> tensor<2x3x3xf32>
  %bt = kiln.transpose %b {perm = array<i64: 0, 2, 1>} : (tensor<1x3x16xf32>) -> tensor<1x16x3xf32>
  %1 = kiln.matmul %q, %bt : (tensor<2x3x16xf32>, tensor<1x16x3xf32>) -> tensor<2x3x3xf32>
  %jt = kiln.transpose %j {perm = array<i64: 0, 2, 1>} : (tensor<2x3x16xi32>) -> tensor<2x16x3xi32>
  %2 = kiln.matmul %i, %jt : (tensor<2x3x16xi32>, tensor<2x16x3xi32>) -> tensor<2x3x3xi32>
  return %0, %1, %2 : tensor<2x3x3xf32>, tensor<2x3x3xf32>, tensor<2x3x3xi32>
}
