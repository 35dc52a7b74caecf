// RUN: kiln-opt %s --convert-kiln-to-linalg="conv-matmul-max-batch=0 conv-shifted-discard-divisor=0 depthwise-max-unrolled-taps=4" -split-input-file | FileCheck %s
// RUN: kiln-opt %s --convert-kiln-to-linalg="conv-shifted-discard-divisor=0" -split-input-file | FileCheck %s --check-prefix=NOSHIFT

/// The conv forms' cut-offs are the target policy's (kiln::ConvLoweringOptions;
/// conv.mlir shows the CPU's defaults). With no batch allowed as matmuls a
/// static conv keeps the named NCHW op.
// CHECK-LABEL: func @conv_bias
// CHECK-NOT: linalg.matmul
// CHECK: linalg.conv_2d_nchw_fchw
func.func @conv_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = kiln.conv %x, %w, %b {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

/// Without the shifted form, a stride-1 conv on wide rows goes through
/// im2col: one matmul with K = C*kh*kw instead of nine shifted ones.
// NOSHIFT-LABEL: func @shifted_wide
// NOSHIFT: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3], [4, 5]] : tensor<1x3x3x3x4x16xf32> into tensor<1x27x64xf32>
// NOSHIFT: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x27xf32>, tensor<27x64xf32>)
// NOSHIFT-NOT: linalg.matmul
func.func @shifted_wide(%x: tensor<1x3x4x16xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x16xf32> {
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x4x16xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x16xf32>
  return %0 : tensor<1x4x4x16xf32>
}

// -----

/// A 3x3 depthwise window over 4 unrolled taps keeps the reduction loops.
// CHECK-LABEL: func @depthwise
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
func.func @depthwise(%x: tensor<1x4x6x6xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 4 : i64} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}
