// RUN: kiln-opt %s -split-input-file -verify-diagnostics

/// Window and element-count arithmetic on static dims and attributes near
/// 2^62-2^63: every overflow is a diagnostic (checked arithmetic), never a
/// wrapped size. 4611686018427387904 is 2^62.

func.func @conv_padded_overflow(%x: tensor<1x1x4611686018427387904xf32>, %w: tensor<1x1x1xf32>) {
  // expected-error @+1 {{spatial dim 0: padded size overflows int64 (input 4611686018427387904, kernel 1, stride 1, dilation 1)}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pads = array<i64: 4611686018427387904, 4611686018427387904>} : (tensor<1x1x4611686018427387904xf32>, tensor<1x1x1xf32>) -> tensor<1x1x?xf32>
  return
}

// -----

func.func @conv_span_overflow(%x: tensor<1x1x8xf32>, %w: tensor<1x1x3xf32>) {
  // expected-error @+1 {{spatial dim 0: window span overflows int64 (input 8, kernel 3, stride 1, dilation 4611686018427387904)}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 4611686018427387904>, pads = array<i64: 0, 0>} : (tensor<1x1x8xf32>, tensor<1x1x3xf32>) -> tensor<1x1x?xf32>
  return
}

// -----

// With a weight dim of 0 the window span is 1 - dilation = 0, so the output
// would be (2^63 - 1) + 1.
func.func @conv_output_overflow(%x: tensor<1x1x9223372036854775806xf32>, %w: tensor<1x1x0xf32>) {
  // expected-error @+1 {{spatial dim 0: output size overflows int64 (input 9223372036854775806, kernel 0, stride 1, dilation 1)}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pads = array<i64: 0, 1>} : (tensor<1x1x9223372036854775806xf32>, tensor<1x1x0xf32>) -> tensor<1x1x?xf32>
  return
}

// -----

func.func @conv_group_overflow(%x: tensor<1x4x8xf32>, %w: tensor<4x2x3xf32>) {
  // expected-error @+1 {{input has 4 channels but weight expects 2 x group 4611686018427387904}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pads = array<i64: 0, 0>, group = 4611686018427387904 : i64} : (tensor<1x4x8xf32>, tensor<4x2x3xf32>) -> tensor<1x4x6xf32>
  return
}

// -----

// ceil_mode adds stride - 1 to the room before dividing.
func.func @max_pool_ceil_overflow(%x: tensor<1x1x9223372036854775800xf32>) {
  // expected-error @+1 {{spatial dim 0: output size overflows int64 (input 9223372036854775800, kernel 1, stride 10, dilation 1)}}
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 1>, strides = array<i64: 10>, dilations = array<i64: 1>, pads = array<i64: 0, 0>, ceil_mode = true} : (tensor<1x1x9223372036854775800xf32>) -> tensor<1x1x?xf32>
  return
}

// -----

func.func @avg_pool_padded_overflow(%x: tensor<1x1x8xf32>) {
  // expected-error @+1 {{spatial dim 0: padded size overflows int64 (input 8, kernel 2, stride 1, dilation 1)}}
  %0 = kiln.avg_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 1>, dilations = array<i64: 1>, pads = array<i64: 9223372036854775807, 0>} : (tensor<1x1x8xf32>) -> tensor<1x1x?xf32>
  return
}

// -----

func.func @conv_transpose_output_overflow(%x: tensor<1x1x4611686018427387904xf32>, %w: tensor<1x1x3xf32>) {
  // expected-error @+1 {{spatial dim 0: output size overflows int64 (input 4611686018427387904, kernel 3, stride 2, dilation 1)}}
  %0 = kiln.conv_transpose %x, %w {strides = array<i64: 2>, dilations = array<i64: 1>, pads = array<i64: 0, 0>, output_padding = array<i64: 0>} : (tensor<1x1x4611686018427387904xf32>, tensor<1x1x3xf32>) -> tensor<1x1x?xf32>
  return
}

// -----

func.func @conv_transpose_span_overflow(%x: tensor<1x1x4xf32>, %w: tensor<1x1x3xf32>) {
  // expected-error @+1 {{spatial dim 0: output size overflows int64 (input 4, kernel 3, stride 1, dilation 9223372036854775807)}}
  %0 = kiln.conv_transpose %x, %w {strides = array<i64: 1>, dilations = array<i64: 9223372036854775807>, pads = array<i64: 0, 0>, output_padding = array<i64: 0>} : (tensor<1x1x4xf32>, tensor<1x1x3xf32>) -> tensor<1x1x?xf32>
  return
}

// -----

func.func @conv_transpose_channels_overflow(%x: tensor<1x1x4xf32>, %w: tensor<1x4611686018427387904x3xf32>) {
  // expected-error @+1 {{output channels 4611686018427387904 x group 2 overflow int64}}
  %0 = kiln.conv_transpose %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pads = array<i64: 0, 0>, output_padding = array<i64: 0>, group = 2 : i64} : (tensor<1x1x4xf32>, tensor<1x4611686018427387904x3xf32>) -> tensor<1x?x6xf32>
  return
}

// -----

// ONNX: output_padding < max(stride, dilation); here both are 2.
func.func @conv_transpose_output_padding_stride(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) {
  // expected-error @+1 {{'output_padding' value is 2, accepted range is [0, 2) (max of stride and dilation of spatial dim 1)}}
  %0 = kiln.conv_transpose %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 2>, pads = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 1, 2>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x10x12xf32>
  return
}

// -----

func.func @conv_transpose_output_padding_negative(%x: tensor<1x1x4xf32>, %w: tensor<1x1x3xf32>) {
  // expected-error @+1 {{'output_padding' value is -1, accepted range is [0, 1) (max of stride and dilation of spatial dim 0)}}
  %0 = kiln.conv_transpose %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pads = array<i64: 0, 0>, output_padding = array<i64: -1>} : (tensor<1x1x4xf32>, tensor<1x1x3xf32>) -> tensor<1x1x5xf32>
  return
}

// -----

// The largest accepted output_padding: below the dilation when the stride is
// smaller (3 * 1 + 2 + 3 * 2 + 1 = 12).
func.func @conv_transpose_output_padding_dilation(%x: tensor<1x1x4xf32>, %w: tensor<1x1x3xf32>) -> tensor<1x1x12xf32> {
  %0 = kiln.conv_transpose %x, %w {strides = array<i64: 1>, dilations = array<i64: 3>, pads = array<i64: 0, 0>, output_padding = array<i64: 2>} : (tensor<1x1x4xf32>, tensor<1x1x3xf32>) -> tensor<1x1x12xf32>
  return %0 : tensor<1x1x12xf32>
}

// -----

func.func @reshape_count_overflow(%x: tensor<4611686018427387904x4xf32>) {
  // expected-error @+1 {{'kiln.reshape' op input type 'tensor<4611686018427387904x4xf32>' has more than 2^63 - 1 elements}}
  %0 = kiln.reshape %x : (tensor<4611686018427387904x4xf32>) -> tensor<16xf32>
  return
}

// -----

func.func @reshape_result_count_overflow(%x: tensor<16xf32>) {
  // expected-error @+1 {{'kiln.reshape' op result type 'tensor<2x4611686018427387904x2xf32>' has more than 2^63 - 1 elements}}
  %0 = kiln.reshape %x : (tensor<16xf32>) -> tensor<2x4611686018427387904x2xf32>
  return
}

// -----

func.func @flatten_count_overflow(%x: tensor<1x4611686018427387904x2x4xf32>) {
  // expected-error @+1 {{flattened dim 0 has more than 2^63 - 1 elements}}
  %0 = kiln.flatten %x {axis = 3 : i64} : (tensor<1x4611686018427387904x2x4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @concat_overflow(%x: tensor<4611686018427387904xf32>) {
  // expected-error @+1 {{concatenated dim 0 overflows int64}}
  %0 = kiln.concat %x, %x {axis = 0 : i64} : (tensor<4611686018427387904xf32>, tensor<4611686018427387904xf32>) -> tensor<?xf32>
  return
}

// -----

func.func @split_sizes_overflow(%x: tensor<?xf32>) {
  // expected-error @+1 {{'sizes' add up to more than 2^63 - 1}}
  %0, %1 = kiln.split %x {axis = 0 : i64, sizes = array<i64: 4611686018427387904, 4611686018427387904>} : (tensor<?xf32>) -> (tensor<4611686018427387904xf32>, tensor<4611686018427387904xf32>)
  return
}

// -----

func.func @pad_overflow(%x: tensor<8xf32>) {
  // expected-error @+1 {{dim 0: padded size overflows int64}}
  %0 = kiln.pad constant %x {pads = array<i64: 9223372036854775807, 1>} : (tensor<8xf32>) -> tensor<?xf32>
  return
}

// -----

// Steps of +-2^63: one element each (the length was (e - s + step - 1) /
// step, which overflowed).
func.func @slice_huge_steps(%x: tensor<8xf32>) -> (tensor<1xf32>, tensor<1xf32>) {
  %0 = kiln.slice %x {starts = array<i64: 0>, ends = array<i64: 8>, axes = array<i64: 0>, steps = array<i64: 9223372036854775807>} : (tensor<8xf32>) -> tensor<1xf32>
  %1 = kiln.slice %x {starts = array<i64: -1>, ends = array<i64: -100>, axes = array<i64: 0>, steps = array<i64: -9223372036854775808>} : (tensor<8xf32>) -> tensor<1xf32>
  return %0, %1 : tensor<1xf32>, tensor<1xf32>
}
