// RUN: kiln-opt --kiln-cuda-lower-precision="precision=fp16" %s | FileCheck %s
// RUN: kiln-opt --kiln-cuda-lower-precision="precision=bf16" %s | FileCheck %s --check-prefix=BF16
// RUN: kiln-opt --kiln-cuda-lower-precision="precision=tf32" %s | FileCheck %s --check-prefix=TF32

// Weights as the ONNX importer makes them (dense_resource blobs), and seen
// through reshapes and transposes, are converted (fp16/bf16) or transposed
// (tf32) now: no truncf or transpose kernel is left for them. The results
// are dense_resource blobs (64-byte aligned) that kiln-pack-weights moves
// into the weights blob.

// [[1, 0.1], [-2, 65520]] rounds to f16 [1, 0.1, -2, inf] and bf16
// [1, 0.1, -2, 65536] (nearest even).
// The f32 original, now unused, is erased (else it would be a second copy
// in the weights blob).
// CHECK-LABEL: func.func @resource
// CHECK-NOT: dense_resource<w22>
// CHECK: %[[X:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<4x2xf32>)
// CHECK: %[[W:.*]] = arith.constant dense_resource<[[F16W:kiln_weight[_0-9]*]]> : tensor<2x2xf16>
// CHECK: linalg.matmul ins(%[[X]], %[[W]] : tensor<4x2xf16>, tensor<2x2xf16>)
// BF16-LABEL: func.func @resource
// BF16: arith.constant dense_resource<[[BF16W:kiln_weight[_0-9]*]]> : tensor<2x2xbf16>
func.func @resource(%x: tensor<4x2xf32>, %init: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = arith.constant dense_resource<w22> : tensor<2x2xf32>
  %0 = linalg.matmul ins(%x, %w : tensor<4x2xf32>, tensor<2x2xf32>) outs(%init : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// Through a linalg.transpose: [[1, -2], [0.1, 65520]].
// CHECK-LABEL: func.func @through_transpose
// CHECK: %[[T:.*]] = arith.constant dense_resource<[[F16T:kiln_weight[_0-9]*]]> : tensor<2x2xf16>
// CHECK: linalg.matmul ins(%{{.*}}, %[[T]] :
func.func @through_transpose(%x: tensor<4x2xf32>, %init: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = arith.constant dense_resource<w22> : tensor<2x2xf32>
  %e = tensor.empty() : tensor<2x2xf32>
  %t = linalg.transpose ins(%w : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) permutation = [1, 0]
  %0 = linalg.matmul ins(%x, %t : tensor<4x2xf32>, tensor<2x2xf32>) outs(%init : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// Through a reshape: the elements keep their order.
// CHECK-LABEL: func.func @through_reshape
// CHECK: %[[R:.*]] = arith.constant dense_resource<[[F16R:kiln_weight[_0-9]*]]> : tensor<2x2xf16>
// CHECK: linalg.matmul ins(%{{.*}}, %[[R]] :
func.func @through_reshape(%x: tensor<4x2xf32>, %init: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = arith.constant dense_resource<w22> : tensor<4xf32>
  %r = tensor.expand_shape %w [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  %0 = linalg.matmul ins(%x, %r : tensor<4x2xf32>, tensor<2x2xf32>) outs(%init : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// Refused: a blob the module does not hold, and a weight computed by
// another op, are converted by a truncf kernel as any activation.
// CHECK-LABEL: func.func @refused
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x2xf32>) outs(%{{.*}} : tensor<2x2xf16>)
// CHECK: arith.truncf
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x2xf32>) outs(%{{.*}} : tensor<2x2xf16>)
// CHECK: arith.truncf
// CHECK-NOT: kiln_weight
// CHECK: return
func.func @refused(%x: tensor<4x2xf32>, %init: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %absent = arith.constant dense_resource<absent> : tensor<2x2xf32>
  %0 = linalg.matmul ins(%x, %absent : tensor<4x2xf32>, tensor<2x2xf32>) outs(%init : tensor<4x2xf32>) -> tensor<4x2xf32>
  %w = arith.constant dense_resource<w22> : tensor<2x2xf32>
  %e = tensor.empty() : tensor<2x2xf32>
  %n = linalg.negf ins(%w : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = linalg.matmul ins(%x, %n : tensor<4x2xf32>, tensor<2x2xf32>) outs(%init : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0, %1 : tensor<4x2xf32>, tensor<4x2xf32>
}

// A weight read by two products is converted once: one blob.
// CHECK-LABEL: func.func @shared
// CHECK: %[[S:.*]] = arith.constant dense_resource<kiln_weight{{[_0-9]*}}> : tensor<2x2xf16>
// CHECK-NOT: dense_resource
// CHECK: linalg.matmul ins(%{{.*}}, %[[S]] :
// CHECK: linalg.matmul ins(%{{.*}}, %[[S]] :
func.func @shared(%x: tensor<4x2xf32>, %y: tensor<4x2xf32>, %init: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %w = arith.constant dense_resource<w22> : tensor<2x2xf32>
  %0 = linalg.matmul ins(%x, %w : tensor<4x2xf32>, tensor<2x2xf32>) outs(%init : tensor<4x2xf32>) -> tensor<4x2xf32>
  %1 = linalg.matmul ins(%y, %w : tensor<4x2xf32>, tensor<2x2xf32>) outs(%init : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0, %1 : tensor<4x2xf32>, tensor<4x2xf32>
}

// tf32: the weight [[0..3], [4..7], ...] is given transposed, now.
// TF32-LABEL: func.func @tf32
// TF32-NOT: linalg.transpose
// TF32: %[[WT:.*]] = arith.constant dense_resource<[[TF32W:kiln_weight[_0-9]*]]> : tensor<4x4xf32>
// TF32: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%arg0, %[[WT]] : tensor<8x4xf32>, tensor<4x4xf32>)
func.func @tf32(%x: tensor<8x4xf32>, %init: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %w = arith.constant dense_resource<w44> : tensor<4x4xf32>
  %0 = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%init : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// A convolution's filters (8 x 3 x 1 x 1: K = 3, given 5 zero channels
// for 16-byte rows) are padded, reshaped to [F, K] and converted now; only
// the input gets a zero fill and an insert_slice.
// CHECK-LABEL: func.func @conv_stem
// CHECK: tensor.insert_slice %arg0
// CHECK-NOT: tensor.insert_slice
// CHECK: %[[F:.*]] = arith.constant dense_resource<[[F16C:kiln_weight[_0-9]*]]> : tensor<8x8xf16>
// CHECK: linalg.batch_matmul {{.*}} ins(%[[F]], %{{.*}} : tensor<8x8xf16>, tensor<2x16x8xf16>)
// TF32-LABEL: func.func @conv_stem
// TF32-NOT: tensor.insert_slice %{{.*}} into %{{.*}} : tensor<8x3x1x1xf32>
// TF32: arith.constant dense_resource<[[TF32C:kiln_weight[_0-9]*]]> : tensor<8x4xf32>
func.func @conv_stem(%x: tensor<2x3x4x4xf32>, %init: tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32> {
  %f = arith.constant dense_resource<f8> : tensor<8x3x1x1xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %f : tensor<2x3x4x4xf32>, tensor<8x3x1x1xf32>) outs(%init : tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  return %0 : tensor<2x8x4x4xf32>
}

// tf32 wgmma truncates its operands: weights are rounded to the nearest
// tf32 value now (ties away from zero). 1 + 2^-11 rounds up to 1 + 2^-10,
// 1 + 2^-12 down to 1, -(1 + 2^-11) to -(1 + 2^-10); truncation would give
// 1, 1, -1.
// TF32-LABEL: func.func @tf32_rounding
// TF32: arith.constant dense_resource<[[TF32R:kiln_weight[_0-9]*]]> : tensor<4x4xf32>
func.func @tf32_rounding(%x: tensor<8x4xf32>, %init: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %w = arith.constant dense_resource<w44r> : tensor<4x4xf32>
  %0 = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%init : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// A convolution's filters are rounded too (8 x 4 x 1 x 1: no zero
// channels); the first is 1 + 2^-11.
// TF32-LABEL: func.func @tf32_conv_rounding
// TF32: arith.constant dense_resource<[[TF32CR:kiln_weight[_0-9]*]]> : tensor<8x4xf32>
func.func @tf32_conv_rounding(%x: tensor<2x4x4x4xf32>, %init: tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32> {
  %f = arith.constant dense_resource<f84r> : tensor<8x4x1x1xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %f : tensor<2x4x4x4xf32>, tensor<8x4x1x1xf32>) outs(%init : tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  return %0 : tensor<2x8x4x4xf32>
}

// CHECK: [[F16W]]: "0x40000000003C662E00C0007C"
// CHECK: [[F16T]]: "0x40000000003C00C0662E007C"
// CHECK: [[F16R]]: "0x40000000003C662E00C0007C"
// CHECK: [[F16C]]: "0x400000000000003C004000000000000000000000004200440045
// BF16: [[BF16W]]: "0x40000000803FCD3D00C08047"
// TF32: [[TF32W]]: "0x40000000000000000000804000000041000040410000803F0000A0400000104100005041000000400000C0400000204100006041000040400000E0400000304100007041"
// TF32: [[TF32C]]: "0x40000000000000000000803F000000400000000000004040000080400000A04000000000
// TF32: [[TF32R]]: "0x400000000020803F0000000000000000000000000000803F000000000000000000000000002080BF00000000000000000000000000000000000000000000000000000000"
// TF32: [[TF32CR]]: "0x400000000020803F00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"

{-#
  dialect_resources: {
    builtin: {
      w22: "0x040000000000803FCDCCCC3D000000C000F07F47",
      w44: "0x04000000000000000000803F0000004000004040000080400000A0400000C0400000E0400000004100001041000020410000304100004041000050410000604100007041",
      w44r: "0x040000000010803F0008803F001080BF00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
      f84r: "0x040000000010803F00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
      f8: "0x04000000000000000000803F0000004000004040000080400000A0400000C0400000E0400000004100001041000020410000304100004041000050410000604100007041000080410000884100009041000098410000A0410000A8410000B0410000B841"
    }
  }
#-}
