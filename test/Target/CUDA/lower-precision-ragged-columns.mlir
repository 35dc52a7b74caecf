// RUN: kiln-opt --kiln-cuda-lower-precision="precision=fp16" %s | FileCheck %s

// A weight whose rows TMA cannot read (N = 3, not a multiple of 8; a
// vocabulary of 50257 in a decoder's head) but whose K is (8): stored
// transposed (N x K) and converted now, the product reading it K-major.
// CHECK-LABEL: func.func @ragged_columns
// CHECK: %[[W:.*]] = arith.constant dense_resource<{{kiln_weight[_0-9]*}}> : tensor<3x8xf16>
// CHECK: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%{{.*}}, %[[W]] : tensor<5x8xf16>, tensor<3x8xf16>) outs(%{{.*}} : tensor<5x3xf32>)
func.func @ragged_columns(%x: tensor<5x8xf32>, %init: tensor<5x3xf32>) -> tensor<5x3xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [10.0, 11.0, 12.0],
                             [13.0, 14.0, 15.0], [16.0, 17.0, 18.0], [19.0, 20.0, 21.0], [22.0, 23.0, 24.0]]> : tensor<8x3xf32>
  %0 = linalg.matmul ins(%x, %w : tensor<5x8xf32>, tensor<8x3xf32>) outs(%init : tensor<5x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}
