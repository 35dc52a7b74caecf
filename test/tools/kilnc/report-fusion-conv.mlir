// RUN: kilnc %s --emit=dispatch --report=fusion -o /dev/null 2>&1 | FileCheck %s
// RUN: kilnc %s --emit=dispatch --report=fusion --report-format=json -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON

/// Conv dispatches say how the kernel reads the input: a 3x3 stride-2 conv
/// (bias and relu fused) gathers B through the conv's index map (output
/// rows of 4, 2 * 10 input elements apart, columns 2 apart: an implicit
/// GEMM), a stride-1 3x3 conv on 16-wide rows reads shifted input rows.

// CHECK: fusion report: 2 dispatches
// CHECK-NEXT: #0 convolution (3x3 conv taps, K = 27, B gathered (output width 4, row step 20, column step 2)): linalg.generic (tensor<4x3x3x3xf32>, tensor<3x100xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> + epilogue linalg.generic {{.*}}  nodes: down, down_relu
// CHECK-NEXT: #1 convolution (3x3 conv taps, K = 36, B from shifted input rows): linalg.generic {{.*}}  nodes: wide
// JSON: "conv": "3x3 conv taps, K = 27, B gathered (output width 4, row step 20, column step 2)"
// JSON: "conv": "3x3 conv taps, K = 36, B from shifted input rows"
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %y: tensor<1x4x4x16xf32>, %w2: tensor<4x4x3x3xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x16xf32>) {
  %c = kiln.conv %x, %w, %b {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32> loc("down")
  %r = kiln.relu %c : tensor<1x4x4x4xf32> loc("down_relu")
  %d = kiln.conv %y, %w2 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x16xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x4x16xf32> loc("wide")
  return %r, %d : tensor<1x4x4x4xf32>, tensor<1x4x4x16xf32>
}
