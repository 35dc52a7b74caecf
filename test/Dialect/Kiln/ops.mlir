// RUN: kiln-opt %s | FileCheck %s
// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt -mlir-print-op-generic %s | kiln-opt | FileCheck %s

/// Every kiln op parses, verifies and prints back to a form that parses again.

// CHECK-LABEL: func @constants
func.func @constants() -> (tensor<2x2xf32>, tensor<3xi64>) {
  // CHECK: kiln.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
  %0 = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  // CHECK: kiln.constant dense<[1, 2, 3]> : tensor<3xi64>
  %1 = kiln.constant dense<[1, 2, 3]> : tensor<3xi64>
  return %0, %1 : tensor<2x2xf32>, tensor<3xi64>
}

// CHECK-LABEL: func @unary
func.func @unary(%x: tensor<2x?xf32>, %b: tensor<4xi1>, %i: tensor<4xi32>) {
  // CHECK: kiln.neg %{{.*}} : tensor<2x?xf32>
  %0 = kiln.neg %x : tensor<2x?xf32>
  // CHECK: kiln.abs
  %1 = kiln.abs %i : tensor<4xi32>
  // CHECK: kiln.exp
  %2 = kiln.exp %x : tensor<2x?xf32>
  // CHECK: kiln.log
  %3 = kiln.log %x : tensor<2x?xf32>
  // CHECK: kiln.sqrt
  %4 = kiln.sqrt %x : tensor<2x?xf32>
  // CHECK: kiln.rsqrt
  %5 = kiln.rsqrt %x : tensor<2x?xf32>
  // CHECK: kiln.reciprocal
  %6 = kiln.reciprocal %x : tensor<2x?xf32>
  // CHECK: kiln.tanh
  %7 = kiln.tanh %x : tensor<2x?xf32>
  // CHECK: kiln.sigmoid
  %8 = kiln.sigmoid %x : tensor<2x?xf32>
  // CHECK: kiln.relu
  %9 = kiln.relu %x : tensor<2x?xf32>
  // CHECK: kiln.leaky_relu %{{.*}} {alpha = 2.000000e-01 : f32} : tensor<2x?xf32>
  %10 = kiln.leaky_relu %x {alpha = 0.2 : f32} : tensor<2x?xf32>
  // CHECK: kiln.gelu none %{{.*}} : tensor<2x?xf32>
  %11 = kiln.gelu none %x : tensor<2x?xf32>
  // CHECK: kiln.gelu tanh %{{.*}} : tensor<2x?xf32>
  %12 = kiln.gelu tanh %x : tensor<2x?xf32>
  // CHECK: kiln.erf
  %13 = kiln.erf %x : tensor<2x?xf32>
  // CHECK: kiln.sin
  %14 = kiln.sin %x : tensor<2x?xf32>
  // CHECK: kiln.cos
  %15 = kiln.cos %x : tensor<2x?xf32>
  // CHECK: kiln.floor
  %16 = kiln.floor %x : tensor<2x?xf32>
  // CHECK: kiln.ceil
  %17 = kiln.ceil %x : tensor<2x?xf32>
  // CHECK: kiln.round
  %18 = kiln.round %x : tensor<2x?xf32>
  // CHECK: kiln.sign
  %19 = kiln.sign %i : tensor<4xi32>
  // CHECK: kiln.not %{{.*}} : tensor<4xi1>
  %20 = kiln.not %b : tensor<4xi1>
  // CHECK: kiln.cast %{{.*}} : tensor<4xi32> -> tensor<4xf16>
  %21 = kiln.cast %i : tensor<4xi32> -> tensor<4xf16>
  // CHECK: kiln.clip %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<2x?xf32>
  %22 = kiln.clip %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<2x?xf32>
  return
}

// CHECK-LABEL: func @binary
func.func @binary(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %i: tensor<4xi64>,
                  %b: tensor<4xi1>) {
  // CHECK: kiln.add %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = kiln.add %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: kiln.sub
  %1 = kiln.sub %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: kiln.mul
  %2 = kiln.mul %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: kiln.div
  %3 = kiln.div %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: kiln.pow
  %4 = kiln.pow %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: kiln.max
  %5 = kiln.max %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: kiln.min
  %6 = kiln.min %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: kiln.mod %{{.*}}, %{{.*}} {fmod = true}
  %7 = kiln.mod %x, %y {fmod = true} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: kiln.mod %{{.*}}, %{{.*}} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %8 = kiln.mod %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  /// Floored float remainder (ONNX Mod-28 with fmod = 0).
  // CHECK: kiln.mod %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %fm = kiln.mod %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: kiln.and
  %9 = kiln.and %b, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  // CHECK: kiln.or
  %10 = kiln.or %b, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  // CHECK: kiln.xor
  %11 = kiln.xor %b, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  // CHECK: kiln.equal %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %12 = kiln.equal %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: kiln.less
  %13 = kiln.less %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  // CHECK: kiln.less_equal
  %14 = kiln.less_equal %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  // CHECK: kiln.greater
  %15 = kiln.greater %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  // CHECK: kiln.greater_equal
  %16 = kiln.greater_equal %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  return
}

/// Broadcasting with dynamic dims, and a written type that refines the inferred `?`.
// CHECK-LABEL: func @broadcast_dynamic
func.func @broadcast_dynamic(%x: tensor<?x1xf32>, %y: tensor<1x4xf32>, %c: tensor<?x4xi1>)
    -> (tensor<?x4xf32>, tensor<8x4xf32>) {
  // CHECK: kiln.add %{{.*}}, %{{.*}} : (tensor<?x1xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  %0 = kiln.add %x, %y : (tensor<?x1xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  // CHECK: kiln.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x4xi1>, tensor<?x1xf32>, tensor<1x4xf32>) -> tensor<8x4xf32>
  %1 = kiln.select %c, %x, %y : (tensor<?x4xi1>, tensor<?x1xf32>, tensor<1x4xf32>) -> tensor<8x4xf32>
  return %0, %1 : tensor<?x4xf32>, tensor<8x4xf32>
}

// CHECK-LABEL: func @contractions
func.func @contractions(%a: tensor<8x128x768xf32>, %w: tensor<768x3072xf32>,
                        %v: tensor<768xf32>, %x: tensor<1x512xf32>,
                        %fc: tensor<1000x512xf32>, %bias: tensor<1000xf32>,
                        %q: tensor<1x12x128x64xf32>, %mask: tensor<1x1x1x128xi1>) {
  // CHECK: kiln.matmul %{{.*}}, %{{.*}} : (tensor<8x128x768xf32>, tensor<768x3072xf32>) -> tensor<8x128x3072xf32>
  %0 = kiln.matmul %a, %w : (tensor<8x128x768xf32>, tensor<768x3072xf32>) -> tensor<8x128x3072xf32>
  // CHECK: kiln.matmul %{{.*}}, %{{.*}} : (tensor<8x128x768xf32>, tensor<768xf32>) -> tensor<8x128xf32>
  %1 = kiln.matmul %a, %v : (tensor<8x128x768xf32>, tensor<768xf32>) -> tensor<8x128xf32>
  // CHECK: kiln.gemm %{{.*}}, %{{.*}}, %{{.*}} {trans_b = true}
  %2 = kiln.gemm %x, %fc, %bias {trans_b = true} : (tensor<1x512xf32>, tensor<1000x512xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>
  // CHECK: kiln.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {scale = 1.250000e-01 : f32}
  %3 = kiln.attention %q, %q, %q, %mask {scale = 0.125 : f32} : (tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x1x1x128xi1>) -> tensor<1x12x128x64xf32>
  // CHECK: kiln.attention %{{.*}}, %{{.*}}, %{{.*}} {is_causal = true}
  %4 = kiln.attention %q, %q, %q {is_causal = true} : (tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>) -> tensor<1x12x128x64xf32>
  return
}

// CHECK-LABEL: func @conv_and_pool
func.func @conv_and_pool(%x: tensor<1x3x224x224xf32>, %w: tensor<64x3x7x7xf32>,
                         %b: tensor<64xf32>, %y: tensor<1x64x28x28xf32>,
                         %wt: tensor<64x32x3x3xf32>, %dw: tensor<64x1x3x3xf32>) {
  // CHECK: kiln.conv %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  %0 = kiln.conv %x, %w, %b {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 3, 3, 3, 3>, group = 1 : i64} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  /// Depthwise: group == channels.
  // CHECK: kiln.conv {{.*}} group = 64 : i64{{.*}} -> tensor<1x64x28x28xf32>
  %1 = kiln.conv %y, %dw {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 64 : i64} : (tensor<1x64x28x28xf32>, tensor<64x1x3x3xf32>) -> tensor<1x64x28x28xf32>
  // CHECK: kiln.conv_transpose {{.*}} -> tensor<1x32x56x56xf32>
  %2 = kiln.conv_transpose %y, %wt {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x64x28x28xf32>, tensor<64x32x3x3xf32>) -> tensor<1x32x56x56xf32>
  // CHECK: kiln.max_pool {{.*}} -> tensor<1x64x14x14xf32>
  %3 = kiln.max_pool %y {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x28x28xf32>) -> tensor<1x64x14x14xf32>
  /// ceil_mode: ceil((28 - 3) / 2) + 1 = 14 windows instead of 13.
  // CHECK: kiln.avg_pool {{.*}}ceil_mode = true{{.*}} -> tensor<1x64x14x14xf32>
  %4 = kiln.avg_pool %y {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, ceil_mode = true} : (tensor<1x64x28x28xf32>) -> tensor<1x64x14x14xf32>
  // CHECK: kiln.global_avg_pool %{{.*}} : (tensor<1x64x28x28xf32>) -> tensor<1x64x1x1xf32>
  %5 = kiln.global_avg_pool %y : (tensor<1x64x28x28xf32>) -> tensor<1x64x1x1xf32>
  // CHECK: kiln.global_max_pool
  %6 = kiln.global_max_pool %y : (tensor<1x64x28x28xf32>) -> tensor<1x64x1x1xf32>
  return
}

// CHECK-LABEL: func @reductions_and_norms
func.func @reductions_and_norms(%x: tensor<1x128x768xf32>, %g: tensor<768xf32>,
                                %img: tensor<1x64x56x56xf32>, %c: tensor<64xf32>,
                                %ids: tensor<2x8xi64>) {
  // CHECK: kiln.reduce mean %{{.*}} {axes = array<i64: -1>} : (tensor<1x128x768xf32>) -> tensor<1x128x1xf32>
  %0 = kiln.reduce mean %x {axes = array<i64: -1>, keepdims = true} : (tensor<1x128x768xf32>) -> tensor<1x128x1xf32>
  // CHECK: kiln.reduce sum {{.*}} -> tensor<f32>
  %1 = kiln.reduce sum %x {axes = array<i64>, keepdims = false} : (tensor<1x128x768xf32>) -> tensor<f32>
  // CHECK: kiln.reduce max
  %2 = kiln.reduce max %x {axes = array<i64: 1>} : (tensor<1x128x768xf32>) -> tensor<1x1x768xf32>
  // CHECK: kiln.reduce min
  %3 = kiln.reduce min %x {axes = array<i64: 1>} : (tensor<1x128x768xf32>) -> tensor<1x1x768xf32>
  // CHECK: kiln.reduce prod
  %4 = kiln.reduce prod %x {axes = array<i64: 1>} : (tensor<1x128x768xf32>) -> tensor<1x1x768xf32>
  // CHECK: kiln.reduce l2
  %5 = kiln.reduce l2 %x {axes = array<i64: 1>} : (tensor<1x128x768xf32>) -> tensor<1x1x768xf32>
  // CHECK: kiln.reduce log_sum_exp
  %6 = kiln.reduce log_sum_exp %x {axes = array<i64: 1>} : (tensor<1x128x768xf32>) -> tensor<1x1x768xf32>
  // CHECK: kiln.argmax %{{.*}} {axis = 2 : i64, keepdims = false} : (tensor<1x128x768xf32>) -> tensor<1x128xi64>
  %7 = kiln.argmax %x {axis = 2 : i64, keepdims = false} : (tensor<1x128x768xf32>) -> tensor<1x128xi64>
  // CHECK: kiln.argmin
  %8 = kiln.argmin %x {axis = -1 : i64} : (tensor<1x128x768xf32>) -> tensor<1x128x1xi64>
  // CHECK: kiln.softmax %{{.*}} {axis = -1 : i64} : tensor<1x128x768xf32>
  %9 = kiln.softmax %x {axis = -1 : i64} : tensor<1x128x768xf32>
  // CHECK: kiln.log_softmax
  %10 = kiln.log_softmax %x {axis = 1 : i64} : tensor<1x128x768xf32>
  // CHECK: kiln.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = -1 : i64, epsilon = 9.99999974E-6 : f32}
  %11 = kiln.layer_norm %x, %g, %g {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
  // CHECK: kiln.batch_norm
  %12 = kiln.batch_norm %img, %c, %c, %c, %c {epsilon = 1.0e-05 : f32} : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
  // CHECK: kiln.instance_norm
  %13 = kiln.instance_norm %img, %c, %c {epsilon = 1.0e-05 : f32} : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
  // CHECK: kiln.cumsum %{{.*}} {axis = 1 : i64, exclusive = true} : tensor<2x8xi64>
  %14 = kiln.cumsum %ids {axis = 1 : i64, exclusive = true} : tensor<2x8xi64>
  // CHECK: kiln.top_k %{{.*}} {axis = -1 : i64, k = 5 : i64} : (tensor<1x128x768xf32>) -> (tensor<1x128x5xf32>, tensor<1x128x5xi64>)
  %15:2 = kiln.top_k %x {k = 5 : i64, axis = -1 : i64} : (tensor<1x128x768xf32>) -> (tensor<1x128x5xf32>, tensor<1x128x5xi64>)
  return
}

// CHECK-LABEL: func @quantization
func.func @quantization(%x: tensor<1x64xf32>, %s: tensor<f32>, %z: tensor<i8>,
                        %q: tensor<64x3xi8>, %sa: tensor<64xf32>, %za: tensor<64xi8>) {
  // CHECK: kiln.quantize_linear %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x64xf32>, tensor<f32>, tensor<i8>) -> tensor<1x64xi8>
  %0 = kiln.quantize_linear %x, %s, %z : (tensor<1x64xf32>, tensor<f32>, tensor<i8>) -> tensor<1x64xi8>
  // CHECK: kiln.dequantize_linear %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i64}
  %1 = kiln.dequantize_linear %q, %sa, %za {axis = 0 : i64} : (tensor<64x3xi8>, tensor<64xf32>, tensor<64xi8>) -> tensor<64x3xf32>
  return
}

// CHECK-LABEL: func @data_movement
func.func @data_movement(%x: tensor<1x128x768xf32>, %d: tensor<?x768xf32>,
                         %s3: tensor<3xi64>, %ids: tensor<1x128xi64>,
                         %table: tensor<30522x768xf32>, %m: tensor<3x4xf32>,
                         %i2: tensor<3x2xi64>, %u2: tensor<3x2xf32>,
                         %nd: tensor<1x128x1xi64>) {
  // CHECK: kiln.reshape %{{.*}} : (tensor<1x128x768xf32>) -> tensor<128x768xf32>
  %0 = kiln.reshape %x : (tensor<1x128x768xf32>) -> tensor<128x768xf32>
  // CHECK: kiln.reshape %{{.*}}, %{{.*}} : (tensor<?x768xf32>, tensor<3xi64>) -> tensor<?x12x64xf32>
  %1 = kiln.reshape %d, %s3 : (tensor<?x768xf32>, tensor<3xi64>) -> tensor<?x12x64xf32>
  // CHECK: kiln.transpose %{{.*}} {perm = array<i64: 0, 2, 1>} : (tensor<1x128x768xf32>) -> tensor<1x768x128xf32>
  %2 = kiln.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<1x128x768xf32>) -> tensor<1x768x128xf32>
  // CHECK: kiln.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<1x128x768xf32>, tensor<1x128x768xf32>) -> tensor<2x128x768xf32>
  %3 = kiln.concat %x, %x {axis = 0 : i64} : (tensor<1x128x768xf32>, tensor<1x128x768xf32>) -> tensor<2x128x768xf32>
  // CHECK: kiln.split %{{.*}} {axis = 2 : i64, sizes = array<i64: 256, 512>} : (tensor<1x128x768xf32>) -> (tensor<1x128x256xf32>, tensor<1x128x512xf32>)
  %4:2 = kiln.split %x {axis = 2 : i64, sizes = array<i64: 256, 512>} : (tensor<1x128x768xf32>) -> (tensor<1x128x256xf32>, tensor<1x128x512xf32>)
  /// Python slice bounds: 10:-1:3 over 128 gives ceil(117 / 3) = 39 elements.
  // CHECK: kiln.slice {{.*}} -> tensor<1x39x768xf32>
  %5 = kiln.slice %x {starts = array<i64: 10>, ends = array<i64: -1>, axes = array<i64: 1>, steps = array<i64: 3>} : (tensor<1x128x768xf32>) -> tensor<1x39x768xf32>
  /// Reverse slice with an end far below zero covers the whole dim.
  // CHECK: kiln.slice {{.*}} -> tensor<1x128x768xf32>
  %6 = kiln.slice %x {starts = array<i64: -1>, ends = array<i64: -9223372036854775807>, axes = array<i64: 1>, steps = array<i64: -1>} : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32>
  // CHECK: kiln.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<30522x768xf32>, tensor<1x128xi64>) -> tensor<1x128x768xf32>
  %7 = kiln.gather %table, %ids {axis = 0 : i64} : (tensor<30522x768xf32>, tensor<1x128xi64>) -> tensor<1x128x768xf32>
  // CHECK: kiln.gather_elements
  %8 = kiln.gather_elements %m, %i2 {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  // CHECK: kiln.gather_nd %{{.*}}, %{{.*}} : (tensor<30522x768xf32>, tensor<1x128x1xi64>) -> tensor<1x128x768xf32>
  %g = kiln.gather_nd %table, %nd : (tensor<30522x768xf32>, tensor<1x128x1xi64>) -> tensor<1x128x768xf32>
  // CHECK: kiln.scatter_elements add
  %9 = kiln.scatter_elements add %m, %i2, %u2 {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x4xf32>
  // CHECK: kiln.expand %{{.*}} : (tensor<1x128x768xf32>) -> tensor<4x128x768xf32>
  %10 = kiln.expand %x : (tensor<1x128x768xf32>) -> tensor<4x128x768xf32>
  // CHECK: kiln.squeeze %{{.*}} {axes = array<i64: 0>} : (tensor<1x128x768xf32>) -> tensor<128x768xf32>
  %11 = kiln.squeeze %x {axes = array<i64: 0>} : (tensor<1x128x768xf32>) -> tensor<128x768xf32>
  // CHECK: kiln.unsqueeze %{{.*}} {axes = array<i64: 1, 2>} : (tensor<1x128xi64>) -> tensor<1x1x1x128xi64>
  %12 = kiln.unsqueeze %ids {axes = array<i64: 1, 2>} : (tensor<1x128xi64>) -> tensor<1x1x1x128xi64>
  // CHECK: kiln.flatten %{{.*}} {axis = 1 : i64} : (tensor<1x128x768xf32>) -> tensor<1x98304xf32>
  %13 = kiln.flatten %x {axis = 1 : i64} : (tensor<1x128x768xf32>) -> tensor<1x98304xf32>
  // CHECK: kiln.pad reflect %{{.*}} {pads = array<i64: 0, 1, 0, 2>} : (tensor<3x4xf32>) -> tensor<3x7xf32>
  %14 = kiln.pad reflect %m {pads = array<i64: 0, 1, 0, 2>} : (tensor<3x4xf32>) -> tensor<3x7xf32>
  // CHECK: kiln.tile %{{.*}} {repeats = array<i64: 2, 1>} : (tensor<3x4xf32>) -> tensor<6x4xf32>
  %15 = kiln.tile %m {repeats = array<i64: 2, 1>} : (tensor<3x4xf32>) -> tensor<6x4xf32>
  return
}

// CHECK-LABEL: func @shape_ops
func.func @shape_ops(%x: tensor<?x128x768xf32>, %s: tensor<2xi64>, %a: tensor<i64>,
                     %img: tensor<1x256x20x20xf32>, %i: tensor<4xi64>, %v: tensor<2xf32>) {
  // CHECK: kiln.range %{{.*}}, %{{.*}}, %{{.*}} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %0 = kiln.range %a, %a, %a : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  // CHECK: kiln.constant_of_shape %{{.*}} {value = 0.000000e+00 : f32} : (tensor<2xi64>) -> tensor<?x?xf32>
  %1 = kiln.constant_of_shape %s {value = 0.0 : f32} : (tensor<2xi64>) -> tensor<?x?xf32>
  // CHECK: kiln.shape %{{.*}} : (tensor<?x128x768xf32>) -> tensor<3xi64>
  %2 = kiln.shape %x : (tensor<?x128x768xf32>) -> tensor<3xi64>
  // CHECK: kiln.shape %{{.*}} {start = 1 : i64} : (tensor<?x128x768xf32>) -> tensor<2xi64>
  %3 = kiln.shape %x {start = 1 : i64} : (tensor<?x128x768xf32>) -> tensor<2xi64>
  // CHECK: kiln.size %{{.*}} : (tensor<?x128x768xf32>) -> tensor<i64>
  %4 = kiln.size %x : (tensor<?x128x768xf32>) -> tensor<i64>
  // CHECK: kiln.resize nearest asymmetric floor %{{.*}} {scales = array<f32: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>} : (tensor<1x256x20x20xf32>) -> tensor<1x256x40x40xf32>
  %5 = kiln.resize nearest asymmetric floor %img {scales = array<f32: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x256x20x20xf32>) -> tensor<1x256x40x40xf32>
  // CHECK: kiln.resize linear half_pixel round_prefer_floor
  %6 = kiln.resize linear half_pixel round_prefer_floor %img : (tensor<1x256x20x20xf32>) -> tensor<1x256x40x40xf32>
  // CHECK: kiln.one_hot %{{.*}}, %{{.*}} {axis = -1 : i64, depth = 10 : i64} : (tensor<4xi64>, tensor<2xf32>) -> tensor<4x10xf32>
  %7 = kiln.one_hot %i, %v {depth = 10 : i64, axis = -1 : i64} : (tensor<4xi64>, tensor<2xf32>) -> tensor<4x10xf32>
  return
}

// CHECK-LABEL: func @grid_sample
func.func @grid_sample(%x: tensor<1x3x8x8xf32>, %g: tensor<1x4x5x2xf32>, %v: tensor<2x1x4x4x4xf32>, %g3: tensor<2x3x3x3x3xf32>) {
  // CHECK: kiln.grid_sample linear zeros %{{.*}}, %{{.*}} : (tensor<1x3x8x8xf32>, tensor<1x4x5x2xf32>) -> tensor<1x3x4x5xf32>
  %0 = kiln.grid_sample linear zeros %x, %g : (tensor<1x3x8x8xf32>, tensor<1x4x5x2xf32>) -> tensor<1x3x4x5xf32>
  // CHECK: kiln.grid_sample nearest reflection %{{.*}}, %{{.*}} {align_corners = true}
  %1 = kiln.grid_sample nearest reflection %v, %g3 {align_corners = true} : (tensor<2x1x4x4x4xf32>, tensor<2x3x3x3x3xf32>) -> tensor<2x1x3x3x3xf32>
  return
}

// CHECK-LABEL: func @einsum
func.func @einsum(%a: tensor<5x2x3xf32>, %b: tensor<5x3x4xf32>, %d: tensor<3x3xf64>) {
  // CHECK: kiln.einsum "bij,bjk->bik" %{{.*}}, %{{.*}} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
  %0 = kiln.einsum "bij,bjk->bik" %a, %b : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
  // CHECK: kiln.einsum "ii->i" %{{.*}} : (tensor<3x3xf64>) -> tensor<3xf64>
  %1 = kiln.einsum "ii->i" %d : (tensor<3x3xf64>) -> tensor<3xf64>
  return
}
