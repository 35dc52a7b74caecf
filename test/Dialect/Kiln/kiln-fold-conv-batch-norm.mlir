// RUN: kiln-opt %s --kiln-fold-conv-batch-norm --split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-fold-conv-batch-norm --kiln-fold-constants --split-input-file | FileCheck %s --check-prefix=FOLD

/// batch_norm after a conv with constant parameters becomes the conv's
/// weight and bias: W * k, (b - mean) * k + beta with k = s / sqrt(var + eps).
// CHECK-LABEL: func @conv_bn
// CHECK-NOT: kiln.batch_norm
// CHECK: %[[K:.+]] = kiln.div
// CHECK: %[[KC:.+]] = kiln.reshape %[[K]] : (tensor<2xf32>) -> tensor<2x1x1x1xf32>
// CHECK: %[[W:.+]] = kiln.mul {{.*}}%[[KC]]{{[, ]}}
// CHECK: %[[B:.+]] = kiln.add
// CHECK: kiln.conv %{{.+}}, %[[W]], %[[B]]
// FOLD-LABEL: func @conv_bn
// FOLD-DAG: %[[W:.+]] = kiln.constant dense<{{.+}}2.000000e+00]], {{.+}}4.000000e+00]]], {{.+}}1.500000e+00]], {{.+}}1.500000e+00]]]]> : tensor<2x2x1x1xf32>
// FOLD-DAG: %[[B:.+]] = kiln.constant dense<[1.000000e+00, -2.500000e+00]> : tensor<2xf32>
// FOLD: kiln.conv %{{.+}}, %[[W]], %[[B]]
func.func @conv_bn(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = kiln.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[3.0]]]]> : tensor<2x2x1x1xf32>
  %b = kiln.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %s = kiln.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %beta = kiln.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %mean = kiln.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %var = kiln.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %c = kiln.conv %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %y = kiln.batch_norm %c, %s, %beta, %mean, %var {epsilon = 0.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

/// Without a conv bias the new bias is beta - mean * k.
// CHECK-LABEL: func @conv_no_bias
// CHECK: kiln.neg
// CHECK: kiln.conv %{{.+}}, %{{.+}}, %{{.+}} {
// CHECK-NOT: kiln.batch_norm
func.func @conv_no_bias(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = kiln.constant dense<1.0> : tensor<2x2x3x3xf32>
  %p = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %c = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  %y = kiln.batch_norm %c, %p, %p, %p, %p {epsilon = 1.0e-05 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

/// A conv whose result is also used elsewhere keeps its batch_norm.
// CHECK-LABEL: func @conv_two_uses
// CHECK: kiln.batch_norm
func.func @conv_two_uses(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = kiln.constant dense<1.0> : tensor<2x2x1x1xf32>
  %p = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %c = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %y = kiln.batch_norm %c, %p, %p, %p, %p {epsilon = 1.0e-05 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y, %c : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

/// Statistics that are not constants (a model input) are left alone.
// CHECK-LABEL: func @variable_stats
// CHECK: kiln.batch_norm
func.func @variable_stats(%x: tensor<1x2x4x4xf32>, %m: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %w = kiln.constant dense<1.0> : tensor<2x2x1x1xf32>
  %p = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %c = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %y = kiln.batch_norm %c, %p, %p, %m, %p {epsilon = 1.0e-05 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

