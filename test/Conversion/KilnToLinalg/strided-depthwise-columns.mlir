// RUN: kiln-opt %s --convert-kiln-to-linalg="strided-depthwise-columns=16 strided-windows-on-phases=true" -split-input-file | FileCheck %s

/// kiln-convert-kiln-to-linalg strided-depthwise-columns (the CPU policy: the
/// vector's lanes). A stride-2 depthwise conv with 20 output columns computes
/// rows of 33 (two vectors and the one column that LLVM's vectorizer peels
/// off a stride-2 loop: rows of 32 ran half scalar) on stride-2 views of its
/// input, padded on the right to the last column's window (2 * 32 + 3 = 67
/// columns: 1 + 40 + 26); the first 20 columns of each row are the result.
// CHECK-LABEL: func @pitched
// CHECK: %[[PADDED:.+]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 1, 1] [1, 4, 9, 40] [1, 1, 1, 1] : tensor<1x4x9x40xf32> into tensor<1x4x11x67xf32>
// CHECK: tensor.extract_slice %[[PADDED]][0, 0, 0, 0] [1, 4, 5, 33] [1, 1, 2, 2]
// CHECK: tensor.extract_slice %[[PADDED]][0, 0, 0, 1] [1, 4, 5, 33] [1, 1, 2, 2]
// CHECK: tensor.extract_slice %[[PADDED]][0, 0, 2, 2] [1, 4, 5, 33] [1, 1, 2, 2]
// CHECK: %[[WIDE:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-COUNT-8: math.fma
// CHECK: -> tensor<1x4x5x33xf32>
// CHECK: tensor.extract_slice %[[WIDE]][0, 0, 0, 0] [1, 4, 5, 20] [1, 1, 1, 1] : tensor<1x4x5x33xf32> to tensor<1x4x5x20xf32>
// CHECK-NOT: tensor.collapse_shape
func.func @pitched(%x: tensor<1x4x9x40xf32>, %w: tensor<4x1x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x5x20xf32> {
  %0 = kiln.conv %x, %w, %b {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 4 : i64} : (tensor<1x4x9x40xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<1x4x5x20xf32>
  return %0 : tensor<1x4x5x20xf32>
}

// -----

/// Output rows narrower than the 16 columns stay on phases (rows of 17 for
/// 7 columns ran slower than the phase copy and the flat conv).
// CHECK-LABEL: func @narrow_rows_on_phases
// CHECK: tensor.collapse_shape
// CHECK-NOT: [1, 1, 2, 2]
func.func @narrow_rows_on_phases(%x: tensor<1x4x14x14xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x7x7xf32> {
  %0 = kiln.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 4 : i64} : (tensor<1x4x14x14xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x7x7xf32>
  return %0 : tensor<1x4x7x7xf32>
}

// -----

/// Stride 1 is the flat form's (no strided views, no wide rows).
// CHECK-LABEL: func @stride_one
// CHECK-NOT: [1, 1, 2, 2]
// CHECK-NOT: x33xf32
func.func @stride_one(%x: tensor<1x4x20x20xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x20x20xf32> {
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 4 : i64} : (tensor<1x4x20x20xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x20x20xf32>
  return %0 : tensor<1x4x20x20xf32>
}
