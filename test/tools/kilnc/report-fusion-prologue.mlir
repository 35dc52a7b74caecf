// RUN: kilnc %s --emit=dispatch --report=fusion -o /dev/null 2>&1 | FileCheck %s
// RUN: kilnc %s --emit=dispatch --report=fusion --report-format=json -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON

/// A 1x1 conv's B prologue in the report: a stride-1 depthwise conv with
/// bias and ReLU6 on rows of 20 (pitch 22) folded into the project conv (9
/// tap views read like B, 9 weights and the bias per channel; B read as
/// image rows with masked loads), and a squeeze-excite scale folded into
/// the next 1x1 conv (x read like B, the pooled vector [1, 8, 1, 1] per
/// channel; its mean and sigmoid run once per channel and packed row). Each
/// names the nodes it covers: 3 dispatches for 7 nodes.

// CHECK: fusion report: 3 dispatches
// CHECK: convolution (1x1 conv taps, K = 4, B prologue in the packing (9 input(s) read like B, 10 per channel), B from prologue input rows of width 20 at row step 22 (masked loads)): {{.*}} nodes: project, dw, relu6
// CHECK: convolution (1x1 conv taps, K = 8, B prologue in the packing (1 input(s) read like B, 1 per channel), B from shifted prologue input rows): {{.*}} nodes: next, excite, gate, squeeze
// JSON: "conv": "1x1 conv taps, K = 4, B prologue in the packing (9 input(s) read like B, 10 per channel), B from prologue input rows of width 20 at row step 22 (masked loads)"
// JSON: "conv": "1x1 conv taps, K = 8, B prologue in the packing (1 input(s) read like B, 1 per channel), B from shifted prologue input rows"
func.func @main(%x: tensor<1x4x20x20xf32>, %wd: tensor<4x1x3x3xf32>, %bd: tensor<4xf32>, %wp: tensor<8x4x1x1xf32>, %w2: tensor<8x8x1x1xf32>) -> (tensor<1x8x20x20xf32>, tensor<1x8x20x20xf32>) {
  %d = kiln.conv %x, %wd, %bd {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 4 : i64} : (tensor<1x4x20x20xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<1x4x20x20xf32> loc("dw")
  %r = kiln.clip %d {min = 0.0 : f64, max = 6.0 : f64} : tensor<1x4x20x20xf32> loc("relu6")
  %p = kiln.conv %r, %wp {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : (tensor<1x4x20x20xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x20x20xf32> loc("project")
  %g = kiln.global_avg_pool %p : (tensor<1x8x20x20xf32>) -> tensor<1x8x1x1xf32> loc("squeeze")
  %s = kiln.sigmoid %g : tensor<1x8x1x1xf32> loc("gate")
  %m = kiln.mul %p, %s : (tensor<1x8x20x20xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x20x20xf32> loc("excite")
  %y = kiln.conv %m, %w2 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : (tensor<1x8x20x20xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x20x20xf32> loc("next")
  return %p, %y : tensor<1x8x20x20xf32>, tensor<1x8x20x20xf32>
}
