// RUN: kiln-opt %s --convert-kiln-to-linalg -split-input-file | FileCheck %s

/// A static f32 conv pads explicitly, gathers patches (im2col) and multiplies
/// them by the flattened filters with linalg.matmul; the bias is a generic.
// CHECK-DAG: #[[PATCH:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 * 2 + d2, d5 * 2 + d3)>
// CHECK-LABEL: func @conv_bias
// CHECK: tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: linalg.generic {indexing_maps = [#[[PATCH]], #{{.*}}]
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3], [4, 5]] : tensor<1x3x3x3x4x4xf32> into tensor<1x27x16xf32>
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x27xf32>, tensor<27x16xf32>)
// CHECK: arith.addf
func.func @conv_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = kiln.conv %x, %w, %b {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

/// A pointwise conv needs no patches: the input reshapes into the matmul.
// CHECK-LABEL: func @pointwise
// CHECK-NOT: tensor.pad
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<1x8x5x5xf32> into tensor<1x8x25xf32>
// CHECK: linalg.matmul
func.func @pointwise(%x: tensor<1x8x5x5xf32>, %w: tensor<4x8x1x1xf32>) -> tensor<1x4x5x5xf32> {
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x8x5x5xf32>, tensor<4x8x1x1xf32>) -> tensor<1x4x5x5xf32>
  return %0 : tensor<1x4x5x5xf32>
}

// -----

/// A dynamic batch keeps the named NCHW op.
// CHECK-LABEL: func @dynamic_batch
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
func.func @dynamic_batch(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32> {
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
  return %0 : tensor<?x4x6x6xf32>
}

// -----

/// Depthwise: a generic over (n, c, y, i, j, x), the output row innermost.
// CHECK-DAG: #[[DWIN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d3, d5 * 2 + d4 * 2)>
// CHECK-DAG: #[[DWW:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, 0, d3, d4)>
// CHECK-DAG: #[[DWOUT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>
// CHECK-LABEL: func @depthwise
// CHECK-NOT: depthwise_conv_2d
// CHECK: linalg.generic {indexing_maps = [#[[DWIN]], #[[DWW]], #[[DWOUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<1x8x9x11xf32>, tensor<8x1x3x3xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @depthwise(%x: tensor<1x8x9x11xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x7x4xf32> {
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 2>, dilations = array<i64: 1, 2>, pads = array<i64: 0, 0, 0, 0>, group = 8 : i64} : (tensor<1x8x9x11xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x7x4xf32>
  return %0 : tensor<1x8x7x4xf32>
}

// -----

// CHECK-LABEL: func @grouped
// CHECK: linalg.conv_2d_ngchw_gfchw
// CHECK: tensor.collapse_shape
func.func @grouped(%x: tensor<1x8x6x6xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 2 : i64} : (tensor<1x8x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

/// Max pooling pads with -inf; average pooling divides by covered counts.
// CHECK-LABEL: func @pools
// CHECK: tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: linalg.pooling_nchw_max
// CHECK: linalg.pooling_nchw_sum
// CHECK: linalg.pooling_nchw_sum
// CHECK: arith.divf
func.func @pools(%x: tensor<1x4x8x8xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  %1 = kiln.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  return %0, %1 : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
}
