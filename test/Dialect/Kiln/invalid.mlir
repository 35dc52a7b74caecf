// RUN: kiln-opt %s -split-input-file -verify-diagnostics

/// Every verifier and type-inference diagnostic of the kiln dialect, one per case.

func.func @broadcast_mismatch(%x: tensor<2x3xf32>, %y: tensor<4x3xf32>) {
  // expected-error @+1 {{shapes [2, 3], [4, 3] are not broadcast-compatible (dim 0 of the result: 2 vs 4)}}
  %0 = kiln.add %x, %y : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @result_contradicts_inference(%x: tensor<2x3xf32>, %y: tensor<3xf32>) {
  // expected-error @+2 {{'kiln.mul' op inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<2x4xf32>'}}
  // expected-error @+1 {{'kiln.mul' op failed to infer returned types}}
  %0 = kiln.mul %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @predicate_needs_i1(%x: tensor<4xf32>) {
  // expected-error @+1 {{op result #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = kiln.less %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @clip_bounds(%x: tensor<4xf32>) {
  // expected-error @+1 {{'min' value 6.000000e+00 is greater than 'max' value 0.000000e+00}}
  %0 = kiln.clip %x {min = 6.0 : f64, max = 0.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @softmax_axis(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{'axis' value is 4, accepted range is [-4, 3]}}
  %0 = kiln.softmax %x {axis = 4 : i64} : tensor<2x3x4x5xf32>
  return
}

// -----

func.func @cumsum_axis(%x: tensor<2x8xi64>) {
  // expected-error @+1 {{'axis' value is -3, accepted range is [-2, 1]}}
  %0 = kiln.cumsum %x {axis = -3 : i64} : tensor<2x8xi64>
  return
}

// -----

func.func @layer_norm_scale_rank(%x: tensor<2x8xf32>, %g: tensor<2x8xf32>) {
  // expected-error @+1 {{'scale' has rank 2, accepted at most 1 (the normalized dims)}}
  %0 = kiln.layer_norm %x, %g {axis = -1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_scale_shape(%x: tensor<2x8xf32>, %g: tensor<7xf32>) {
  // expected-error @+1 {{shapes [8], [7] are not broadcast-compatible}}
  %0 = kiln.layer_norm %x, %g {axis = -1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x8xf32>, tensor<7xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_epsilon(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'epsilon' value is -1.000000e+00, accepted range is [0, inf)}}
  %0 = kiln.layer_norm %x, %g {axis = -1 : i64, epsilon = -1.0 : f32} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @batch_norm_rank(%x: tensor<8xf32>, %c: tensor<8xf32>) {
  // expected-error @+1 {{input has rank 1, expected at least 2 ([N, C, ...])}}
  %0 = kiln.batch_norm %x, %c, %c, %c, %c {epsilon = 1.0e-5 : f32} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @batch_norm_param_rank(%x: tensor<1x8x4x4xf32>, %c: tensor<8xf32>, %bad: tensor<1x8xf32>) {
  // expected-error @+1 {{'mean' has rank 2, expected 1}}
  %0 = kiln.batch_norm %x, %c, %c, %bad, %c {epsilon = 1.0e-5 : f32} : (tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1x8xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
  return
}

// -----

func.func @instance_norm_channels(%x: tensor<1x8x4x4xf32>, %c: tensor<8xf32>, %bad: tensor<4xf32>) {
  // expected-error @+1 {{'bias' has 4 elements, expected 8 (the channel dim)}}
  %0 = kiln.instance_norm %x, %c, %bad {epsilon = 1.0e-5 : f32} : (tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<1x8x4x4xf32>
  return
}

// -----

func.func @quantize_type(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<ui8>) {
  // expected-error @+1 {{result element type must match the zero point's ('ui8')}}
  %0 = kiln.quantize_linear %x, %s, %z : (tensor<4xf32>, tensor<f32>, tensor<ui8>) -> tensor<4xi8>
  return
}

// -----

func.func @quantize_shape(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<i8>) {
  // expected-error @+1 {{result shape must match the input shape}}
  %0 = kiln.quantize_linear %x, %s, %z : (tensor<4xf32>, tensor<f32>, tensor<i8>) -> tensor<5xi8>
  return
}

// -----

func.func @quantize_param_shapes(%x: tensor<4x3xf32>, %s: tensor<4xf32>, %z: tensor<i8>) {
  // expected-error @+1 {{'scale' and 'zero_point' shapes differ}}
  %0 = kiln.quantize_linear %x, %s, %z {axis = 0 : i64} : (tensor<4x3xf32>, tensor<4xf32>, tensor<i8>) -> tensor<4x3xi8>
  return
}

// -----

func.func @quantize_scale_rank(%x: tensor<4x3xf32>, %s: tensor<4x3xf32>, %z: tensor<4x3xi8>) {
  // expected-error @+1 {{'scale' has rank 2, expected 0 (per tensor) or 1 (per axis)}}
  %0 = kiln.quantize_linear %x, %s, %z : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xi8>) -> tensor<4x3xi8>
  return
}

// -----

func.func @dequantize_per_axis(%q: tensor<4x3xi8>, %s: tensor<3xf32>, %z: tensor<3xi8>) {
  // expected-error @+1 {{'scale' has 3 elements, expected 4 (dim 0)}}
  %0 = kiln.dequantize_linear %q, %s, %z {axis = 0 : i64} : (tensor<4x3xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<4x3xf32>
  return
}

// -----

func.func @dequantize_zero_point_type(%q: tensor<4xi8>, %s: tensor<f32>, %z: tensor<ui8>) {
  // expected-error @+1 {{input element type must match the zero point's ('ui8')}}
  %0 = kiln.dequantize_linear %q, %s, %z : (tensor<4xi8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  return
}

// -----

func.func @dequantize_result_type(%q: tensor<4xi8>, %s: tensor<f32>, %z: tensor<i8>) {
  // expected-error @+1 {{result element type must match the scale's ('f32')}}
  %0 = kiln.dequantize_linear %q, %s, %z : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<4xf16>
  return
}

// -----

func.func @dequantize_shape(%q: tensor<4xi8>, %s: tensor<f32>, %z: tensor<i8>) {
  // expected-error @+1 {{result shape must match the input shape}}
  %0 = kiln.dequantize_linear %q, %s, %z : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<3xf32>
  return
}

// -----

func.func @reshape_needs_shape(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{result type 'tensor<?x2x2xf32>' has dynamic dims, so the shape operand is required}}
  %0 = kiln.reshape %x : (tensor<?x4xf32>) -> tensor<?x2x2xf32>
  return
}

// -----

func.func @reshape_shape_entries(%x: tensor<?x4xf32>, %s: tensor<2xi64>) {
  // expected-error @+1 {{shape operand has 2 entries but the result has rank 3}}
  %0 = kiln.reshape %x, %s : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x2x2xf32>
  return
}

// -----

func.func @reshape_element_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{input has 6 elements but the result type 'tensor<8xf32>' has 8}}
  %0 = kiln.reshape %x : (tensor<2x3xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @expand_rank(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{input rank 3 exceeds the result rank 2}}
  %0 = kiln.expand %x : (tensor<2x3x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @expand_not_broadcast(%x: tensor<2x1xf32>) {
  // expected-error @+1 {{input 'tensor<2x1xf32>' does not broadcast to 'tensor<1x4xf32>'}}
  %0 = kiln.expand %x : (tensor<2x1xf32>) -> tensor<1x4xf32>
  return
}

// -----

func.func @constant_of_shape_type(%s: tensor<2xi64>) {
  // expected-error @+1 {{'value' has type 'f32', expected the result element type 'i64'}}
  %0 = kiln.constant_of_shape %s {value = 0.0 : f32} : (tensor<2xi64>) -> tensor<?x?xi64>
  return
}

// -----

func.func @resize_rank(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{result rank 3 differs from the input rank 4}}
  %0 = kiln.resize nearest asymmetric floor %x : (tensor<1x3x8x8xf32>) -> tensor<3x16x16xf32>
  return
}

// -----

func.func @resize_scales_length(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'scales' has 2 entries, expected 4}}
  %0 = kiln.resize nearest asymmetric floor %x {scales = array<f32: 2.0, 2.0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32>
  return
}

// -----

func.func @resize_scale_value(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'scales' value is 0.000000e+00, accepted range is (0, inf)}}
  %0 = kiln.resize nearest asymmetric floor %x {scales = array<f32: 1.0, 1.0, 0.0, 2.0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32>
  return
}

// -----

func.func @matmul_scalar(%x: tensor<f32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{operands must have rank >= 1, got ranks 0 and 1}}
  %0 = kiln.matmul %x, %y : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @matmul_contraction(%x: tensor<2x4xf32>, %y: tensor<5x3xf32>) {
  // expected-error @+1 {{contraction dims differ: lhs has 4, rhs has 5}}
  %0 = kiln.matmul %x, %y : (tensor<2x4xf32>, tensor<5x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @matmul_batch(%x: tensor<2x2x4xf32>, %y: tensor<3x4x3xf32>) {
  // expected-error @+1 {{shapes [2], [3] are not broadcast-compatible}}
  %0 = kiln.matmul %x, %y : (tensor<2x2x4xf32>, tensor<3x4x3xf32>) -> tensor<2x2x3xf32>
  return
}

// -----

func.func @matmul_integer_rank(%x: tensor<4xi16>, %y: tensor<4x3xi16>) {
  // expected-error @+1 {{an i16 (integer) matmul needs lhs [..., M, K] and rhs [K, N], got ranks 1 and 2}}
  %0 = kiln.matmul %x, %y : (tensor<4xi16>, tensor<4x3xi16>) -> tensor<3xi32>
  return
}

// -----

func.func @gemm_rank(%x: tensor<2x3x4xf32>, %y: tensor<4x3xf32>) {
  // expected-error @+1 {{'a' and 'b' must be 2-D tensors}}
  %0 = kiln.gemm %x, %y : (tensor<2x3x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @gemm_contraction(%x: tensor<2x4xf32>, %y: tensor<3x5xf32>) {
  // expected-error @+1 {{contraction dims differ: op(a) has 4 columns, op(b) has 5 rows}}
  %0 = kiln.gemm %x, %y {trans_b = true} : (tensor<2x4xf32>, tensor<3x5xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @gemm_c_rank(%x: tensor<2x4xf32>, %y: tensor<4x3xf32>, %c: tensor<1x2x3xf32>) {
  // expected-error @+1 {{'c' must have rank <= 2}}
  %0 = kiln.gemm %x, %y, %c : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<1x2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @gemm_c_broadcast(%x: tensor<1x4xf32>, %y: tensor<4x3xf32>, %c: tensor<2x3xf32>) {
  // expected-error @+1 {{'c' does not broadcast to [M, N]}}
  %0 = kiln.gemm %x, %y, %c : (tensor<1x4xf32>, tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<1x3xf32>
  return
}

// -----

func.func @attention_rank(%q: tensor<64xf32>) {
  // expected-error @+1 {{query, key and value must have rank >= 2}}
  %0 = kiln.attention %q, %q, %q : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return
}

// -----

func.func @attention_head_dim(%q: tensor<8x64xf32>, %k: tensor<8x32xf32>) {
  // expected-error @+1 {{query head dim 64 differs from key head dim 32}}
  %0 = kiln.attention %q, %k, %q : (tensor<8x64xf32>, tensor<8x32xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  return
}

// -----

func.func @attention_lengths(%q: tensor<8x64xf32>, %v: tensor<9x64xf32>) {
  // expected-error @+1 {{key length 8 differs from value length 9}}
  %0 = kiln.attention %q, %q, %v : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<9x64xf32>) -> tensor<8x64xf32>
  return
}

// -----

func.func @attention_mask(%q: tensor<8x64xf32>, %m: tensor<7x8xi1>) {
  // expected-error @+1 {{shapes [8, 8], [7, 8] are not broadcast-compatible}}
  %0 = kiln.attention %q, %q, %q, %m : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<7x8xi1>) -> tensor<8x64xf32>
  return
}

// -----

func.func @attention_scale(%q: tensor<8x64xf32>) {
  // expected-error @+1 {{'scale' value is -1.00, accepted range is (0, inf)}}
  %0 = kiln.attention %q, %q, %q {scale = -1.0 : f32} : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  return
}

// -----

func.func @conv_rank(%x: tensor<3x8xf32>, %w: tensor<4x3xf32>) {
  // expected-error @+1 {{input has rank 2, accepted range is [3, 5] (1-D to 3-D)}}
  %0 = kiln.conv %x, %w {strides = array<i64>, dilations = array<i64>, pads = array<i64>} : (tensor<3x8xf32>, tensor<4x3xf32>) -> tensor<3x8xf32>
  return
}

// -----

func.func @conv_weight_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+1 {{weight has rank 3, expected 4}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_strides_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'strides' has 1 entries, expected 2}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_pads_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'pads' has 2 entries, expected 4}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_stride_value(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'strides' value is 0, accepted range is [1, inf)}}
  %0 = kiln.conv %x, %w {strides = array<i64: 0, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_pad_value(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'pads' value is -1, accepted range is [0, inf)}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: -1, 0, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x5x6xf32>
  return
}

// -----

func.func @conv_group_value(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'group' value is 0, accepted range is [1, inf)}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 0 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{input has 3 channels but weight expects 2 x group 1}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_filters_group(%x: tensor<1x4x8x8xf32>, %w: tensor<6x1x3x3xf32>) {
  // expected-error @+1 {{weight has 6 filters, not divisible by group 4}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{bias must be 1-D with 4 elements}}
  %0 = kiln.conv %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<5xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_window(%x: tensor<1x3x5x5xf32>, %w: tensor<4x3x7x7xf32>) {
  // expected-error @+1 {{spatial dim 0: window of 7 does not fit padded size 5}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x3x5x5xf32>, tensor<4x3x7x7xf32>) -> tensor<1x4x1x1xf32>
  return
}

// -----

func.func @conv_transpose_output_padding(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{'output_padding' has 1 entries, expected 2}}
  %0 = kiln.conv_transpose %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 0>} : (tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x10x10xf32>
  return
}

// -----

func.func @conv_transpose_group(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{'group' value is -2, accepted range is [1, inf)}}
  %0 = kiln.conv_transpose %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 0, 0>, group = -2 : i64} : (tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x10x10xf32>
  return
}

// -----

func.func @conv_transpose_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{input has 4 channels but weight has 3}}
  %0 = kiln.conv_transpose %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 0, 0>} : (tensor<1x4x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x2x10x10xf32>
  return
}

// -----

func.func @conv_transpose_size(%x: tensor<1x4x1x1xf32>, %w: tensor<4x2x1x1xf32>) {
  // expected-error @+1 {{spatial dim 0: output size would be -1}}
  %0 = kiln.conv_transpose %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 0, 1, 0>, output_padding = array<i64: 0, 0>} : (tensor<1x4x1x1xf32>, tensor<4x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  return
}

// -----

func.func @pool_rank(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{input must have rank >= 3 ([N, C, D1..Dk])}}
  %0 = kiln.max_pool %x {kernel_shape = array<i64>, strides = array<i64>, dilations = array<i64>, pads = array<i64>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @pool_kernel_length(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'kernel_shape' has 1 entries, expected 2}}
  %0 = kiln.avg_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32>
  return
}

// -----

func.func @pool_kernel_value(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'kernel_shape' value is 0, accepted range is [1, inf)}}
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 0, 2>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32>
  return
}

// -----

func.func @pool_dilation_value(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'dilations' value is 0, accepted range is [1, inf)}}
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, dilations = array<i64: 0, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32>
  return
}

// -----

func.func @global_pool_rank(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{input must have rank >= 3 ([N, C, D1..Dk])}}
  %0 = kiln.global_avg_pool %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @reduce_axis_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'axes' value is 2, accepted range is [-2, 1]}}
  %0 = kiln.reduce sum %x {axes = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return
}

// -----

func.func @reduce_axis_twice(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'axes' names dim 1 twice}}
  %0 = kiln.reduce sum %x {axes = array<i64: 1, -1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return
}

// -----

func.func @argmax_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{input must have rank >= 1}}
  %0 = kiln.argmax %x {axis = 0 : i64} : (tensor<f32>) -> tensor<i64>
  return
}

// -----

func.func @argmin_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'axis' value is 2, accepted range is [-2, 1]}}
  %0 = kiln.argmin %x {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x1xi64>
  return
}

// -----

func.func @top_k_too_many(%x: tensor<2x5xf32>) {
  // expected-error @+1 {{'k' value is 10, accepted range is [0, 5]}}
  %0:2 = kiln.top_k %x {k = 10 : i64, axis = -1 : i64} : (tensor<2x5xf32>) -> (tensor<2x10xf32>, tensor<2x10xi64>)
  return
}

// -----

func.func @transpose_length(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'perm' has 2 entries, expected 3}}
  %0 = kiln.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  return
}

// -----

func.func @transpose_not_permutation(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'perm' is not a permutation of [0, 2]}}
  %0 = kiln.transpose %x {perm = array<i64: 0, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<2x2x4xf32>
  return
}

// -----

func.func @concat_empty() {
  // expected-error @+1 {{'kiln.concat' op expected 1 or more operands, but found 0}}
  %0 = kiln.concat {axis = 0 : i64} : () -> tensor<0xf32>
  return
}

// -----

func.func @concat_rank(%x: tensor<2x3xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{input 1 has a different rank than input 0}}
  %0 = kiln.concat %x, %y {axis = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
  return
}

// -----

func.func @concat_dims(%x: tensor<2x3xf32>, %y: tensor<2x4xf32>) {
  // expected-error @+1 {{input 1 dim 1 is 4, expected 3}}
  %0 = kiln.concat %x, %y {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @split_empty(%x: tensor<6xf32>) {
  // expected-error @+1 {{'sizes' must not be empty}}
  kiln.split %x {axis = 0 : i64, sizes = array<i64>} : (tensor<6xf32>) -> ()
  return
}

// -----

func.func @split_negative(%x: tensor<6xf32>) {
  // expected-error @+1 {{'sizes' value is -1, accepted range is [0, inf)}}
  %0:2 = kiln.split %x {axis = 0 : i64, sizes = array<i64: 7, -1>} : (tensor<6xf32>) -> (tensor<7xf32>, tensor<?xf32>)
  return
}

// -----

func.func @split_total(%x: tensor<6xf32>) {
  // expected-error @+1 {{'sizes' add up to 5, expected the axis length 6}}
  %0:2 = kiln.split %x {axis = 0 : i64, sizes = array<i64: 2, 3>} : (tensor<6xf32>) -> (tensor<2xf32>, tensor<3xf32>)
  return
}

// -----

func.func @slice_lengths(%x: tensor<6xf32>) {
  // expected-error @+1 {{'starts', 'ends', 'axes' and 'steps' must have the same length}}
  %0 = kiln.slice %x {starts = array<i64: 0>, ends = array<i64: 2, 3>, axes = array<i64: 0>, steps = array<i64: 1>} : (tensor<6xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @slice_step(%x: tensor<6xf32>) {
  // expected-error @+1 {{'steps' value is 0 (entry 0), accepted: any nonzero value}}
  %0 = kiln.slice %x {starts = array<i64: 0>, ends = array<i64: 2>, axes = array<i64: 0>, steps = array<i64: 0>} : (tensor<6xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @gather_scalar(%x: tensor<f32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{input must be a tensor of rank >= 1}}
  %0 = kiln.gather %x, %i {axis = 0 : i64} : (tensor<f32>, tensor<2xi64>) -> tensor<2xf32>
  return
}

// -----

func.func @gather_elements_rank(%x: tensor<3x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{input and indices must have the same rank}}
  %0 = kiln.gather_elements %x, %i {axis = 0 : i64} : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<3xf32>
  return
}

// -----

func.func @scatter_elements_shapes(%x: tensor<3x4xf32>, %i: tensor<2x2xi64>, %u: tensor<2x3xf32>) {
  // expected-error @+1 {{indices and updates must have the same shape and the input's rank}}
  %0 = kiln.scatter_elements none %x, %i, %u {axis = 0 : i64} : (tensor<3x4xf32>, tensor<2x2xi64>, tensor<2x3xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @squeeze_non_unit(%x: tensor<1x3xf32>) {
  // expected-error @+1 {{cannot squeeze dim 1 of size 3 (only size-1 dims)}}
  %0 = kiln.squeeze %x {axes = array<i64: 1>} : (tensor<1x3xf32>) -> tensor<1xf32>
  return
}

// -----

func.func @squeeze_all_dynamic(%x: tensor<1x?xf32>) {
  // expected-error @+1 {{squeezing all size-1 dims needs static dims; dim 1 is dynamic}}
  %0 = kiln.squeeze %x {axes = array<i64>} : (tensor<1x?xf32>) -> tensor<?xf32>
  return
}

// -----

func.func @unsqueeze_axis(%x: tensor<3xf32>) {
  // expected-error @+1 {{'axes' value is 2, accepted range is [-2, 1]}}
  %0 = kiln.unsqueeze %x {axes = array<i64: 2>} : (tensor<3xf32>) -> tensor<3x1xf32>
  return
}

// -----

func.func @flatten_axis(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'axis' value is 4, accepted range is [-3, 3]}}
  %0 = kiln.flatten %x {axis = 4 : i64} : (tensor<2x3x4xf32>) -> tensor<24x1xf32>
  return
}

// -----

func.func @pad_length(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'pads' has 2 entries, expected 4}}
  %0 = kiln.pad constant %x {pads = array<i64: 1, 1>} : (tensor<3x4xf32>) -> tensor<5x4xf32>
  return
}

// -----

func.func @pad_negative_size(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{dim 0 would have size -1 after padding}}
  %0 = kiln.pad constant %x {pads = array<i64: -2, 0, -2, 0>} : (tensor<3x4xf32>) -> tensor<0x4xf32>
  return
}

// -----

func.func @tile_length(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'repeats' has 1 entries, expected 2}}
  %0 = kiln.tile %x {repeats = array<i64: 2>} : (tensor<3x4xf32>) -> tensor<6x4xf32>
  return
}

// -----

func.func @tile_negative(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'repeats' value is -1, accepted range is [0, inf)}}
  %0 = kiln.tile %x {repeats = array<i64: -1, 1>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @tile_overflow(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{tiled dim overflows int64}}
  %0 = kiln.tile %x {repeats = array<i64: 4611686018427387904, 1>} : (tensor<3x4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @one_hot_values(%i: tensor<4xi64>, %v: tensor<3xf32>) {
  // expected-error @+1 {{'values' must be a 2-element 1-D tensor [off, on]}}
  %0 = kiln.one_hot %i, %v {depth = 10 : i64, axis = -1 : i64} : (tensor<4xi64>, tensor<3xf32>) -> tensor<4x10xf32>
  return
}

// -----

func.func @one_hot_depth(%i: tensor<4xi64>, %v: tensor<2xf32>) {
  // expected-error @+1 {{'depth' value is 0, accepted range is [1, inf)}}
  %0 = kiln.one_hot %i, %v {depth = 0 : i64, axis = -1 : i64} : (tensor<4xi64>, tensor<2xf32>) -> tensor<4x0xf32>
  return
}

// -----

func.func @unary_type_mismatch(%x: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.exp' op result #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<4xi32>'}}
  %0 = "kiln.exp"(%x) : (tensor<4xf32>) -> tensor<4xi32>
  return
}

// -----

func.func @gather_nd_batch_dims(%x: tensor<4x5xf32>, %i: tensor<4x1xi64>) {
  // expected-error @+1 {{'batch_dims' value is 2, accepted range is [0, 1]}}
  %0 = kiln.gather_nd %x, %i {batch_dims = 2 : i64} : (tensor<4x5xf32>, tensor<4x1xi64>) -> tensor<4xf32>
  return
}

// -----

func.func @gather_nd_tuple_static(%x: tensor<4x5xf32>, %i: tensor<3x?xi64>) {
  // expected-error @+1 {{the last dim of indices (the tuple length) must be static}}
  %0 = kiln.gather_nd %x, %i : (tensor<4x5xf32>, tensor<3x?xi64>) -> tensor<3xf32>
  return
}

// -----

func.func @gather_nd_tuple_length(%x: tensor<4x5xf32>, %i: tensor<3x3xi64>) {
  // expected-error @+1 {{index tuples have 3 coordinates, accepted range is [1, 2]}}
  %0 = kiln.gather_nd %x, %i : (tensor<4x5xf32>, tensor<3x3xi64>) -> tensor<3xf32>
  return
}

// -----

func.func @gather_nd_indices_rank(%x: tensor<4x5xf32>, %i: tensor<i64>) {
  // expected-error @+1 {{indices must have rank >= 1}}
  %0 = kiln.gather_nd %x, %i : (tensor<4x5xf32>, tensor<i64>) -> tensor<f32>
  return
}

// -----

func.func @bitcast_width(%x: tensor<4xf32>) {
  // expected-error @+1 {{element types 'f32' and 'i16' differ in width}}
  %0 = kiln.bitcast %x : tensor<4xf32> -> tensor<4xi16>
  return
}

// -----

func.func @cumprod_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{'axis' value is 3, accepted range is [-1, 0]}}
  %0 = kiln.cumprod %x {axis = 3 : i64} : tensor<4xf32>
  return
}

// -----

func.func @grid_sample_grid(%x: tensor<1x3x8x8xf32>, %g: tensor<1x4x5x3xf32>) {
  // expected-error @+1 {{grid must be [N, O1..Om, 2] for an input with 2 spatial dims}}
  %0 = kiln.grid_sample linear zeros %x, %g : (tensor<1x3x8x8xf32>, tensor<1x4x5x3xf32>) -> tensor<1x3x4x5xf32>
  return
}

// -----

func.func @grid_sample_result(%x: tensor<1x3x8x8xf32>, %g: tensor<1x4x5x2xf32>) {
  // expected-error @+1 {{result must be [N, C, O1..Om] of the input and the grid}}
  %0 = kiln.grid_sample linear zeros %x, %g : (tensor<1x3x8x8xf32>, tensor<1x4x5x2xf32>) -> tensor<1x3x5x4xf32>
  return
}

// -----

func.func @grid_sample_rank(%x: tensor<3x8xf32>, %g: tensor<3x2xf32>) {
  // expected-error @+1 {{input rank 2 is below 3 ([N, C, D1..Dk])}}
  %0 = kiln.grid_sample linear zeros %x, %g : (tensor<3x8xf32>, tensor<3x2xf32>) -> tensor<3x8xf32>
  return
}

// -----

func.func @einsum_terms(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{equation has 2 operand terms, but the op has 1 operands}}
  %0 = kiln.einsum "ij,jk->ik" %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @einsum_rank(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{term 'ijk' has 3 letters for an operand of rank 2}}
  %0 = kiln.einsum "ijk->i" %a : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @einsum_sizes(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{letter 'i' has sizes 2 and 3}}
  %0 = kiln.einsum "ii->i" %a : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @einsum_result_letter(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{result letter 'k' is in no operand term}}
  %0 = kiln.einsum "ij->k" %a : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @einsum_arrow(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{equation 'ij' has no '->'}}
  %0 = kiln.einsum "ij" %a : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}
