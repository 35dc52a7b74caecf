// RUN: kiln-opt %s --convert-kiln-to-linalg | FileCheck %s

/// 1-D and 3-D pooling: a generic over (n, c, outputs..., window...) that
/// reads input[n, c, o * stride + w * dilation].
// CHECK-DAG: #[[IN1:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 * 2 + d3)>
// CHECK-DAG: #[[WIN1:.+]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-DAG: #[[IN3:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2 * 2 + d5 * 2, d3 * 2 + d6 * 2, d4 * 2 + d7 * 2)>
// CHECK-LABEL: func @pools_1d_3d
// CHECK: linalg.generic {indexing_maps = [#[[IN1]], #[[WIN1]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK: arith.maximumf
// CHECK: linalg.generic {indexing_maps = [#[[IN3]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[IN3]], {{.*}}]
// CHECK: arith.addf
// CHECK: arith.divf
func.func @pools_1d_3d(%x: tensor<1x3x32xf32>, %v: tensor<1x1x6x6x6xf32>) -> (tensor<1x3x15xf32>, tensor<1x1x2x2x2xf32>) {
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 3>, strides = array<i64: 2>, dilations = array<i64: 1>, pads = array<i64: 0, 0>} : (tensor<1x3x32xf32>) -> tensor<1x3x15xf32>
  %1 = kiln.avg_pool %v {kernel_shape = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, dilations = array<i64: 2, 2, 2>, pads = array<i64: 0, 0, 0, 0, 0, 0>} : (tensor<1x1x6x6x6xf32>) -> tensor<1x1x2x2x2xf32>
  return %0, %1 : tensor<1x3x15xf32>, tensor<1x1x2x2x2xf32>
}
