// RUN: not kiln-opt %s --convert-kiln-to-linalg -split-input-file 2>&1 | FileCheck %s

/// An op no pattern lowers is reported with its node (the importer's name
/// location), the op, its operand and result types, the pattern's reason and
/// the dynamic dims -- never a bare "failed to legalize operation". Each case
/// is one failure path of the kiln -> linalg patterns.

/// ShuffleNetV2's conv after a reshape to a computed shape: every dim dynamic.
// CHECK-LABEL: error: loc("Conv_12"): node 'Conv_12' (kiln.conv): cannot lower to linalg with operand types (tensor<?x?x?x?xf32>, tensor<24x24x1x1xf32>, tensor<24xf32>) and result types (tensor<?x24x?x?xf32>): unsupported: dynamic channel or spatial dims (dynamic: operand 0 dims 0, 1, 2, 3; result dims 0, 2, 3)
// CHECK-NOT: failed to legalize
func.func @conv(%x: tensor<?x?x?x?xf32>, %w: tensor<24x24x1x1xf32>, %b: tensor<24xf32>) -> tensor<?x24x?x?xf32> {
  %0 = kiln.conv %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<?x?x?x?xf32>, tensor<24x24x1x1xf32>, tensor<24xf32>) -> tensor<?x24x?x?xf32> loc("Conv_12")
  return %0 : tensor<?x24x?x?xf32>
}

// -----

// CHECK-LABEL: error: loc("ConvTranspose_3"): node 'ConvTranspose_3' (kiln.conv_transpose): cannot lower to linalg with operand types (tensor<1x2x?x3xf32>, tensor<2x4x3x3xf32>) and result types (tensor<1x4x?x5xf32>): unsupported: dynamic channel or spatial dims (dynamic: operand 0 dims 2; result dims 2)
func.func @conv_transpose(%x: tensor<1x2x?x3xf32>, %w: tensor<2x4x3x3xf32>) -> tensor<1x4x?x5xf32> {
  %0 = kiln.conv_transpose %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 0, 0>, group = 1 : i64} : (tensor<1x2x?x3xf32>, tensor<2x4x3x3xf32>) -> tensor<1x4x?x5xf32> loc("ConvTranspose_3")
  return %0 : tensor<1x4x?x5xf32>
}

// -----

// CHECK-LABEL: error: loc("MaxPool_1"): node 'MaxPool_1' (kiln.max_pool): cannot lower to linalg with operand types (tensor<1x4x?x8xf32>) and result types (tensor<1x4x?x4xf32>): unsupported: dynamic channel or spatial dims (dynamic: operand 0 dims 2; result dims 2)
func.func @max_pool(%x: tensor<1x4x?x8xf32>) -> tensor<1x4x?x4xf32> {
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x?x8xf32>) -> tensor<1x4x?x4xf32> loc("MaxPool_1")
  return %0 : tensor<1x4x?x4xf32>
}

// -----

/// Without a node name (kiln IR written by hand) the op still names itself.
// CHECK: lowering-failures.mlir:[[@LINE+2]]:12: error: (kiln.top_k): cannot lower to linalg with operand types (tensor<?xf32>) and result types (tensor<1xf32>, tensor<1xi64>): unsupported: dynamic shapes (dynamic: operand 0 dims 0)
func.func @top_k_dynamic(%x: tensor<?xf32>) -> (tensor<1xf32>, tensor<1xi64>) {
  %v, %i = kiln.top_k %x {k = 1 : i64, axis = 0 : i64} : (tensor<?xf32>) -> (tensor<1xf32>, tensor<1xi64>)
  return %v, %i : tensor<1xf32>, tensor<1xi64>
}
