// RUN: kiln-opt %s --convert-kiln-to-linalg="depthwise-rows-max-width=16" -split-input-file | FileCheck %s
// RUN: kiln-opt %s --convert-kiln-to-linalg="depthwise-rows-max-width=15" -split-input-file | FileCheck %s --check-prefix=ALWAYS
// RUN: kiln-opt %s --convert-kiln-to-linalg -split-input-file | FileCheck %s --check-prefix=ALWAYS

/// A stride-1 depthwise conv whose result reaches only a 1x1 conv (through
/// its ReLU6) runs on the flattened padded input whatever its width: taps
/// are 1-D slices at the row pitch 18 (the dispatch stage joins it to the
/// 1x1 conv).
// CHECK-LABEL: func @before_pointwise
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<1x4x19x18xf32> into tensor<1x4x342xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]}
// ALWAYS-LABEL: func @before_pointwise
// ALWAYS: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<1x4x19x18xf32> into tensor<1x4x342xf32>
func.func @before_pointwise(%x: tensor<1x4x16x16xf32>, %w: tensor<4x1x3x3xf32>, %p: tensor<8x4x1x1xf32>) -> tensor<1x8x16x16xf32> {
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 4 : i64} : (tensor<1x4x16x16xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x16x16xf32>
  %1 = kiln.clip %0 {min = 0.0 : f64, max = 6.0 : f64} : tensor<1x4x16x16xf32>
  %2 = kiln.conv %1, %p {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x16x16xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x16x16xf32>
  return %2 : tensor<1x8x16x16xf32>
}

// -----

/// One whose activation a mean also reads (a squeeze-excite block) runs on
/// the image rows where they are at most depthwise-rows-max-width wide: a
/// generic over [N, C, OH, OW] with each tap a view of the padded input, so
/// the activation can join it; on wider rows, or by default, it runs flat.
// CHECK-LABEL: func @before_mean
// CHECK-NOT: tensor.collapse_shape
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 4, 16, 16] [1, 1, 1, 1] : tensor<1x4x18x18xf32> to tensor<1x4x16x16xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// ALWAYS-LABEL: func @before_mean
// ALWAYS: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<1x4x19x18xf32> into tensor<1x4x342xf32>
func.func @before_mean(%x: tensor<1x4x16x16xf32>, %w: tensor<4x1x3x3xf32>) -> (tensor<1x4x16x16xf32>, tensor<1x4x1x1xf32>) {
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 4 : i64} : (tensor<1x4x16x16xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x16x16xf32>
  %1 = kiln.sigmoid %0 : tensor<1x4x16x16xf32>
  %2 = kiln.mul %0, %1 : (tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %3 = kiln.reduce mean %2 {axes = array<i64: 2, 3>, keepdims = true} : (tensor<1x4x16x16xf32>) -> tensor<1x4x1x1xf32>
  return %2, %3 : tensor<1x4x16x16xf32>, tensor<1x4x1x1xf32>
}
