// RUN: kiln-opt %s --convert-kiln-to-linalg -split-input-file | FileCheck %s

/// A static f32 conv pads explicitly (a filled tensor with the input inserted,
/// so that the input's producer can write into it), gathers patches (im2col) and multiplies
/// them by the flattened filters with linalg.matmul; the bias is a generic.
// CHECK-DAG: #[[PATCH:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 * 2 + d2, d5 * 2 + d3)>
// CHECK-LABEL: func @conv_bias
// CHECK: %[[PADDED:.+]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x3x10x10xf32>)
// CHECK: tensor.insert_slice %{{.*}} into %[[PADDED]][0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1]
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

/// Stride 1 on wide rows (at most 1/8 of the columns discarded): one matmul
/// per tap on a shifted slice of the flattened padded input, at its row
/// pitch (16 + 2 columns x 4 rows).
// CHECK-LABEL: func @shifted_wide
// CHECK-NOT: linalg.generic
// CHECK-COUNT-9: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<3x72xf32>)
// CHECK-NOT: linalg.matmul
func.func @shifted_wide(%x: tensor<1x3x4x16xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x16xf32> {
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x4x16xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x16xf32>
  return %0 : tensor<1x4x4x16xf32>
}

// -----

/// Stride 1 on narrow rows (2 of 10 padded columns would be discarded):
/// im2col and one matmul with K = C*kh*kw.
// CHECK-LABEL: func @narrow_im2col
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3], [4, 5]] : tensor<1x3x3x3x4x8xf32> into tensor<1x27x32xf32>
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x27xf32>, tensor<27x32xf32>)
// CHECK-NOT: linalg.matmul
func.func @narrow_im2col(%x: tensor<1x3x4x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x8xf32> {
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x4x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x8xf32>
  return %0 : tensor<1x4x4x8xf32>
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

/// Depthwise: one all-parallel generic over (n, c, y, x), the output row
/// innermost, the 3x3 taps unrolled: nine (strided input slice, weight)
/// operand pairs and the bias; no zero fill and no separate bias generic.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[W00:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0, 0)>
// CHECK-DAG: #[[W22:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, 0, 2, 2)>
// CHECK-DAG: #[[BIAS:.+]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func @depthwise
// CHECK-NOT: linalg.fill
// CHECK: %[[T00:.+]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 8, 7, 4] [1, 1, 1, 2]
// CHECK: %[[T22:.+]] = tensor.extract_slice %{{.*}}[0, 0, 2, 4] [1, 8, 7, 4] [1, 1, 1, 2]
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[W00]], {{.*}}, #[[ID]], #[[W22]], #[[BIAS]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[T00]], %{{.*}}, %[[T22]], %{{.*}}, %{{.*}} :
// CHECK-COUNT-8: math.fma
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
func.func @depthwise(%x: tensor<1x8x9x11xf32>, %w: tensor<8x1x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x7x4xf32> {
  %0 = kiln.conv %x, %w, %b {strides = array<i64: 1, 2>, dilations = array<i64: 1, 2>, pads = array<i64: 0, 0, 0, 0>, group = 8 : i64} : (tensor<1x8x9x11xf32>, tensor<8x1x3x3xf32>, tensor<8xf32>) -> tensor<1x8x7x4xf32>
  return %0 : tensor<1x8x7x4xf32>
}

// -----

/// Stride-1 depthwise: the same generic on the flattened padded input at its
/// row pitch (6 + 2 columns, one extra zero row), taps as contiguous slices
/// at offsets i*8 + j; the result is the first 6 columns of each row.
// CHECK-LABEL: func @depthwise_flat
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x9x8xf32>)
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<1x4x9x8xf32> into tensor<1x4x72xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0] [1, 4, 48] [1, 1, 1]
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 18] [1, 4, 48] [1, 1, 1]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-COUNT-8: math.fma
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] output_shape [1, 4, 6, 8] : tensor<1x4x48xf32> into tensor<1x4x6x8xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 4, 6, 6] [1, 1, 1, 1] : tensor<1x4x6x8xf32> to tensor<1x4x6x6xf32>
func.func @depthwise_flat(%x: tensor<1x4x6x6xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 4 : i64} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

/// Depthwise windows over 49 taps keep the reduction loops (n, c, y, i, j, x)
/// over a zero-filled output.
// CHECK-LABEL: func @depthwise_large_window
// CHECK: linalg.fill
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @depthwise_large_window(%x: tensor<1x2x9x9xf32>, %w: tensor<2x1x9x9xf32>) -> tensor<1x2x1x1xf32> {
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 2 : i64} : (tensor<1x2x9x9xf32>, tensor<2x1x9x9xf32>) -> tensor<1x2x1x1xf32>
  return %0 : tensor<1x2x1x1xf32>
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

/// Max pooling pads with -inf and, up to 49 taps, takes the maximum over the
/// window's strided tap views in one all-parallel generic (no filled output);
/// average pooling divides by covered counts.
// CHECK-LABEL: func @pools
// CHECK: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[PADDED:.+]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<1x4x10x10xf32>)
// CHECK: %[[IN:.+]] = tensor.insert_slice %{{.*}} into %[[PADDED]][0, 0, 1, 1] [1, 4, 8, 8] [1, 1, 1, 1]
// CHECK: %[[T0:.+]] = tensor.extract_slice %[[IN]][0, 0, 0, 0] [1, 4, 4, 4] [1, 1, 2, 2]
// CHECK: %[[T8:.+]] = tensor.extract_slice %[[IN]][0, 0, 2, 2] [1, 4, 4, 4] [1, 1, 2, 2]
// CHECK: %[[OUT:.+]] = tensor.empty() : tensor<1x4x4x4xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK-SAME: ins(%[[T0]], {{.*}}, %[[T8]] : {{.*}}) outs(%[[OUT]] : tensor<1x4x4x4xf32>)
// CHECK-COUNT-8: arith.maximumf
// CHECK: linalg.yield
// CHECK-NOT: linalg.pooling_nchw_max
// CHECK: linalg.pooling_nchw_sum
// CHECK: linalg.pooling_nchw_sum
// CHECK: arith.divf
func.func @pools(%x: tensor<1x4x8x8xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  %1 = kiln.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  return %0, %1 : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
}

// -----

/// A max pooling window of more than 49 taps keeps pooling_nchw_max over a
/// -inf filled output.
// CHECK-LABEL: func @wide_max_pool
// CHECK: linalg.fill
// CHECK: linalg.pooling_nchw_max
func.func @wide_max_pool(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x1x1xf32> {
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 8, 8>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x1x1xf32>
  return %0 : tensor<1x4x1x1xf32>
}

// -----

/// A grouped 1-D conv runs as the 2-D conv of a unit-height image.
// CHECK-LABEL: func @grouped_1d
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x11xf32>, %[[W:.+]]: tensor<4x1x4xf32>)
// CHECK-DAG: tensor.expand_shape %[[X]] {{\[\[}}0], [1], [2, 3]] output_shape [2, 4, 1, 11]
// CHECK-DAG: tensor.expand_shape %[[W]] {{\[\[}}0], [1], [2, 3]] output_shape [4, 1, 1, 4]
// CHECK-NOT: kiln.conv
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<2x4x1x8xf32> into tensor<2x4x8xf32>
func.func @grouped_1d(%x: tensor<2x4x11xf32>, %w: tensor<4x1x4xf32>) -> tensor<2x4x8xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1>, group = 4 : i64, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<2x4x11xf32>, tensor<4x1x4xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

/// A transposed conv: the input spread by the strides into a zero tensor
/// padded by dilation * (K - 1) - pad (a 3x3 input, stride 2, kernel 3, pads
/// 1: 5 + 1 + 1 wide), the weight flipped with its channel dims swapped, then
/// a unit-stride conv (here im2col + matmul).
// CHECK-LABEL: func @conv_transpose
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x3x3xf32>, %[[W:.+]]: tensor<2x4x3x3xf32>)
// CHECK: %[[ZEROS:.+]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x7x7xf32>)
// CHECK: %[[SPREAD:.+]] = tensor.insert_slice %[[X]] into %[[ZEROS]][0, 0, 1, 1] [1, 2, 3, 3] [1, 1, 2, 2]
// CHECK: %[[FLIPPED:.+]] = linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<4x2x3x3xf32>)
// CHECK: %[[KH:.+]] = linalg.index 2
// CHECK: arith.subi %c2{{.*}}, %[[KH]]
// CHECK: tensor.extract %[[W]]
// CHECK-NOT: kiln.conv
// CHECK: ins(%[[SPREAD]] : tensor<1x2x7x7xf32>)
// CHECK: tensor.collapse_shape %[[FLIPPED]] {{\[\[}}0], [1, 2, 3]] : tensor<4x2x3x3xf32> into tensor<4x18xf32>
// CHECK: linalg.matmul
func.func @conv_transpose(%x: tensor<1x2x3x3xf32>, %w: tensor<2x4x3x3xf32>) -> tensor<1x4x5x5xf32> {
  %0 = kiln.conv_transpose %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 0, 0>, group = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<1x4x5x5xf32>
  return %0 : tensor<1x4x5x5xf32>
}

// -----

/// Pads larger than the window extent crop the spread input.
// CHECK-LABEL: func @conv_transpose_crop
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0] [1, 1, 4] [1, 1, 1] : tensor<1x1x4xf32> into tensor<1x1x5xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 1] [1, 1, 4] [1, 1, 1] : tensor<1x1x5xf32> to tensor<1x1x4xf32>
func.func @conv_transpose_crop(%x: tensor<1x1x4xf32>, %w: tensor<1x1x2xf32>) -> tensor<1x1x3xf32> {
  %0 = kiln.conv_transpose %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pads = array<i64: 2, 0>, output_padding = array<i64: 0>, group = 1 : i64} : (tensor<1x1x4xf32>, tensor<1x1x2xf32>) -> tensor<1x1x3xf32>
  return %0 : tensor<1x1x3xf32>
}
