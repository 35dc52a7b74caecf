// RUN: kiln-opt %s --convert-kiln-to-linalg="strided-windows-on-phases=true" -split-input-file | FileCheck %s
// RUN: kiln-opt %s --convert-kiln-to-linalg -split-input-file | FileCheck %s --check-prefix=STRIDED

/// kiln-convert-kiln-to-linalg strided-windows-on-phases (the CPU policy).
/// A stride-2 depthwise conv on the 2x2 phases of its padded input: the input
/// padded to whole phase rows and columns (7 + 2 -> 10 columns, 5 per phase;
/// 6 phase rows: the 4 output rows, the window's second phase row and one row
/// the flat taps of the last output row run into), one data-movement generic
/// Q[n, c, a, b, y, x] = x[n, c, 2y + a, 2x + b] with the phase column b
/// innermost, then the stride-1 flat form on the flattened phases: tap (i, j)
/// is phase (i % 2) * 2 + j % 2 at offset (i / 2) * 5 + j / 2, the result the
/// first 4 of each row of 5.
// CHECK-DAG: #[[READ:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3 * 2 + d2, d4 * 2 + d5)>
// CHECK-DAG: #[[WRITE:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5, d3, d4)>
// CHECK-LABEL: func @depthwise_phases
// CHECK: %[[PADDED:.+]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 1, 1] [1, 4, 7, 7] [1, 1, 1, 1] : tensor<1x4x7x7xf32> into tensor<1x4x12x10xf32>
// CHECK: %[[PHASES:.+]] = linalg.generic {indexing_maps = [#[[READ]], #[[WRITE]]]
// CHECK-SAME: ins(%[[PADDED]] : tensor<1x4x12x10xf32>) outs(%{{.*}} : tensor<1x4x2x2x6x5xf32>)
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[PHASES]] {{\[\[}}0], [1], [2, 3], [4, 5]] : tensor<1x4x2x2x6x5xf32> into tensor<1x4x4x30xf32>
// CHECK: tensor.extract_slice %[[FLAT]][0, 0, 0, 0] [1, 4, 1, 20] [1, 1, 1, 1] : tensor<1x4x4x30xf32> to tensor<1x4x20xf32>
// CHECK: tensor.extract_slice %[[FLAT]][0, 0, 1, 0] [1, 4, 1, 20]
// CHECK: tensor.extract_slice %[[FLAT]][0, 0, 0, 1] [1, 4, 1, 20]
// CHECK: tensor.extract_slice %[[FLAT]][0, 0, 2, 0] [1, 4, 1, 20]
// CHECK: tensor.extract_slice %[[FLAT]][0, 0, 3, 0] [1, 4, 1, 20]
// CHECK: tensor.extract_slice %[[FLAT]][0, 0, 2, 1] [1, 4, 1, 20]
// CHECK: tensor.extract_slice %[[FLAT]][0, 0, 0, 5] [1, 4, 1, 20]
// CHECK: tensor.extract_slice %[[FLAT]][0, 0, 1, 5] [1, 4, 1, 20]
// CHECK: tensor.extract_slice %[[FLAT]][0, 0, 0, 6] [1, 4, 1, 20]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-COUNT-8: math.fma
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] output_shape [1, 4, 4, 5] : tensor<1x4x20xf32> into tensor<1x4x4x5xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 4, 4, 4] [1, 1, 1, 1] : tensor<1x4x4x5xf32> to tensor<1x4x4x4xf32>
/// Without the option: one generic over strided views of the padded input.
// STRIDED-LABEL: func @depthwise_phases
// STRIDED: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 4, 4, 4] [1, 1, 2, 2]
// STRIDED-NOT: tensor.collapse_shape
func.func @depthwise_phases(%x: tensor<1x4x7x7xf32>, %w: tensor<4x1x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = kiln.conv %x, %w, %b {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 4 : i64} : (tensor<1x4x7x7xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

/// Unequal strides or a dilation keep the strided views.
// CHECK-LABEL: func @depthwise_unequal_strides
// CHECK-NOT: tensor.collapse_shape
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 8, 7, 4] [1, 1, 1, 2]
func.func @depthwise_unequal_strides(%x: tensor<1x8x9x11xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x7x4xf32> {
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 2>, dilations = array<i64: 1, 2>, pads = array<i64: 0, 0, 0, 0>, group = 8 : i64} : (tensor<1x8x9x11xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x7x4xf32>
  return %0 : tensor<1x8x7x4xf32>
}

// -----

/// A stride-2 max pool on the phases of its -inf padded input (ceil-mode
/// overhang and whole phases: 9 + 1 -> 12 rows, 10 columns), the maximum of
/// its 9 contiguous tap slices, the first 4 columns of each phase row of 5.
// CHECK-LABEL: func @max_pool_phases
// CHECK: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<1x4x12x10xf32>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x4x2x2x6x5xf32>)
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %{{.*}} : tensor<1x4x2x2x6x5xf32> into tensor<1x4x4x30xf32>
// CHECK: tensor.extract_slice %[[FLAT]][0, 0, 0, 0] [1, 4, 1, 20]
// CHECK: tensor.extract_slice %[[FLAT]][0, 0, 0, 6] [1, 4, 1, 20]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-COUNT-8: arith.maximumf
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 4, 4, 4] [1, 1, 1, 1] : tensor<1x4x4x5xf32> to tensor<1x4x4x4xf32>
// CHECK-NOT: linalg.pooling_nchw_max
// STRIDED-LABEL: func @max_pool_phases
// STRIDED: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 4, 4, 4] [1, 1, 2, 2]
func.func @max_pool_phases(%x: tensor<1x4x7x7xf32>) -> tensor<1x4x4x4xf32> {
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x7x7xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}
