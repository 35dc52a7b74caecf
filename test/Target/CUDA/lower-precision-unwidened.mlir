// RUN: kiln-opt --kiln-cuda-lower-precision="precision=fp16" %s | FileCheck %s

// An operand that is f16 values widened (an f16 KV cache transposed for
// Q K^T, kilnc --kv-cache-dtype=fp16), seen through a reshape: the
// transpose moves the f16 values as they are and the product reads them;
// no widening generic is left, nor a rounding one for K (Q, f32, is rounded).
// CHECK-LABEL: func.func @cache
// CHECK-NOT: arith.extf
// CHECK: %[[T:.+]] = linalg.generic {{.*}} ins(%arg1 : tensor<2x3x5x4xf16>) outs(%{{.+}} : tensor<2x3x4x5xf16>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f16, %{{.+}}: f16):
// CHECK-NEXT: linalg.yield %[[IN]] : f16
// CHECK: %[[C:.+]] = tensor.collapse_shape %[[T]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x4x5xf16> into tensor<6x4x5xf16>
// CHECK: linalg.batch_matmul ins(%{{.+}}, %[[C]] : tensor<6x1x4xf16>, tensor<6x4x5xf16>)
// CHECK-NOT: arith.extf
func.func @cache(%q: tensor<6x1x4xf32>, %k: tensor<2x3x5x4xf16>, %init: tensor<6x1x5xf32>) -> tensor<6x1x5xf32> {
  %e = tensor.empty() : tensor<2x3x4x5xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k : tensor<2x3x5x4xf16>) outs(%e : tensor<2x3x4x5xf32>) {
  ^bb0(%in: f16, %out: f32):
    %w = arith.extf %in : f16 to f32
    linalg.yield %w : f32
  } -> tensor<2x3x4x5xf32>
  %c = tensor.collapse_shape %t [[0, 1], [2], [3]] : tensor<2x3x4x5xf32> into tensor<6x4x5xf32>
  %p = linalg.batch_matmul ins(%q, %c : tensor<6x1x4xf32>, tensor<6x4x5xf32>) outs(%init : tensor<6x1x5xf32>) -> tensor<6x1x5xf32>
  return %p : tensor<6x1x5xf32>
}

// A plain copy of the f16 cache (identity maps, the move that replaced a
// widening): the product reads the cache itself, no kernel is left.
// CHECK-LABEL: func.func @plain_copy
// CHECK-NOT: linalg.generic
// CHECK: %[[C:.+]] = tensor.collapse_shape %arg1 {{\[}}[0, 1], [2], [3]] : tensor<2x3x5x4xf16> into tensor<6x5x4xf16>
// CHECK: linalg.batch_matmul ins(%{{.+}}, %[[C]] : tensor<6x1x5xf16>, tensor<6x5x4xf16>)
func.func @plain_copy(%p: tensor<6x1x5xf32>, %v: tensor<2x3x5x4xf16>, %init: tensor<6x1x4xf32>) -> tensor<6x1x4xf32> {
  %e = tensor.empty() : tensor<2x3x5x4xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%v : tensor<2x3x5x4xf16>) outs(%e : tensor<2x3x5x4xf32>) {
  ^bb0(%in: f16, %out: f32):
    %w = arith.extf %in : f16 to f32
    linalg.yield %w : f32
  } -> tensor<2x3x5x4xf32>
  %c = tensor.collapse_shape %t [[0, 1], [2], [3]] : tensor<2x3x5x4xf32> into tensor<6x5x4xf32>
  %r = linalg.batch_matmul ins(%p, %c : tensor<6x1x5xf32>, tensor<6x5x4xf32>) outs(%init : tensor<6x1x4xf32>) -> tensor<6x1x4xf32>
  return %r : tensor<6x1x4xf32>
}

// The cache as a K-major B (convert-kiln-to-linalg's form of Q K^T on CUDA:
// the maps of C = A * B^T read the cache where it lies): the product reads
// the f16 cache itself, keeps its maps, and no widening or transposing
// kernel is left.
// CHECK-LABEL: func.func @k_major_cache
// CHECK-NOT: arith.extf
// CHECK: %[[C:.+]] = tensor.collapse_shape %arg1 {{\[}}[0, 1], [2], [3]] : tensor<2x3x5x4xf16> into tensor<6x5x4xf16>
// CHECK: linalg.batch_matmul indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}] ins(%{{.+}}, %[[C]] : tensor<6x1x4xf16>, tensor<6x5x4xf16>)
// CHECK-NOT: arith.extf
func.func @k_major_cache(%q: tensor<6x1x4xf32>, %k: tensor<2x3x5x4xf16>, %init: tensor<6x1x5xf32>) -> tensor<6x1x5xf32> {
  %e = tensor.empty() : tensor<2x3x5x4xf32>
  %w = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k : tensor<2x3x5x4xf16>) outs(%e : tensor<2x3x5x4xf32>) {
  ^bb0(%in: f16, %out: f32):
    %x = arith.extf %in : f16 to f32
    linalg.yield %x : f32
  } -> tensor<2x3x5x4xf32>
  %c = tensor.collapse_shape %w [[0, 1], [2], [3]] : tensor<2x3x5x4xf32> into tensor<6x5x4xf32>
  %p = linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
      ins(%q, %c : tensor<6x1x4xf32>, tensor<6x5x4xf32>) outs(%init : tensor<6x1x5xf32>) -> tensor<6x1x5xf32>
  return %p : tensor<6x1x5xf32>
}

// Other user maps (here A transposed) are not a form this pass knows: the
// product stays f32.
// CHECK-LABEL: func.func @other_maps
// CHECK: linalg.batch_matmul indexing_maps = {{.*}} ins(%arg0, %arg1 : tensor<6x4x1xf32>, tensor<6x4x5xf32>)
func.func @other_maps(%q: tensor<6x4x1xf32>, %k: tensor<6x4x5xf32>, %init: tensor<6x1x5xf32>) -> tensor<6x1x5xf32> {
  %p = linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
      ins(%q, %k : tensor<6x4x1xf32>, tensor<6x4x5xf32>) outs(%init : tensor<6x1x5xf32>) -> tensor<6x1x5xf32>
  return %p : tensor<6x1x5xf32>
}
