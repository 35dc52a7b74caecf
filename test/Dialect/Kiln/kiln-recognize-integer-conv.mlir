// RUN: kiln-opt %s --kiln-recognize-integer-matmul --split-input-file | FileCheck %s

// A QDQ 3x3 conv (quantize_static's form: per-channel s8 weights, an int32
// bias with scale sx * sw, stride 2, padding 1) becomes an integer matmul:
// the weights minus their zero points, tap-major [M, KH * KW * C], times the
// im2col columns of the zero-point-shifted input [KH * KW * C, OH * OW],
// plus the bias in i32, requantized per output channel (a row).
// CHECK-LABEL: func.func @conv3x3_stride2(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<1x3x7x7xui8>, %[[W:[a-z0-9]+]]: tensor<4x3x3x3xi8>, %[[BIAS:[a-z0-9]+]]: tensor<4xi32>
// CHECK-NOT: kiln.conv
// CHECK: %[[B:.+]] = kiln.reshape %[[BIAS]] : (tensor<4xi32>) -> tensor<4x1xi32>
// CHECK: kiln.transpose %{{.+}} {perm = array<i64: 0, 2, 3, 1>} : (tensor<4x3x3x3xi16>) -> tensor<4x3x3x3xi16>
// CHECK: %[[F:.+]] = kiln.reshape %{{.+}} : (tensor<4xf32>) -> tensor<4x1xf32>
// CHECK: kiln.pad constant %{{.+}} {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>} : (tensor<1x3x7x7xi16>) -> tensor<1x3x9x9xi16>
// CHECK-COUNT-9: kiln.slice %{{.+}} {axes = array<i64: 2, 3>, {{.+}} steps = array<i64: 2, 2>} : (tensor<1x3x9x9xi16>) -> tensor<1x3x4x4xi16>
// CHECK: kiln.concat {{.+}} -> tensor<9x3x4x4xi16>
// CHECK: %[[COLS:.+]] = kiln.reshape %{{.+}} : (tensor<9x3x4x4xi16>) -> tensor<27x16xi16>
// CHECK: %[[ACC:.+]] = kiln.matmul %{{.+}}, %[[COLS]] {kiln.lhs_bytes = -128 : i64, kiln.rhs_bytes = -128 : i64} : (tensor<4x27xi16>, tensor<27x16xi16>) -> tensor<4x16xi32>
// CHECK: %[[SUM:.+]] = kiln.add %[[ACC]], %[[B]] : (tensor<4x16xi32>, tensor<4x1xi32>) -> tensor<4x16xi32>
// CHECK: %[[SF:.+]] = kiln.cast %[[SUM]] : tensor<4x16xi32> -> tensor<4x16xf32>
// CHECK: kiln.mul %[[SF]], %[[F]] : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
// CHECK: kiln.round
// CHECK: %[[Y:.+]] = kiln.cast %{{.+}} : tensor<4x16xf32> -> tensor<4x16xui8>
// CHECK: %[[OUT:.+]] = kiln.reshape %[[Y]] : (tensor<4x16xui8>) -> tensor<1x4x4x4xui8>
// CHECK: return %[[OUT]]
func.func @conv3x3_stride2(%x: tensor<1x3x7x7xui8>, %w: tensor<4x3x3x3xi8>, %b: tensor<4xi32>) -> tensor<1x4x4x4xui8> {
  %sx = kiln.constant dense<0.5> : tensor<f32>
  %zx = kiln.constant dense<128> : tensor<ui8>
  %sw = kiln.constant dense<[0.25, 0.125, 0.5, 1.0]> : tensor<4xf32>
  %zw = kiln.constant dense<0> : tensor<4xi8>
  %sb = kiln.constant dense<[0.125, 0.0625, 0.25, 0.5]> : tensor<4xf32>
  %zb = kiln.constant dense<0> : tensor<4xi32>
  %sy = kiln.constant dense<0.05> : tensor<f32>
  %zy = kiln.constant dense<120> : tensor<ui8>
  %xf = kiln.dequantize_linear %x, %sx, %zx : (tensor<1x3x7x7xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x7x7xf32>
  %wf = kiln.dequantize_linear %w, %sw, %zw {axis = 0 : i64} : (tensor<4x3x3x3xi8>, tensor<4xf32>, tensor<4xi8>) -> tensor<4x3x3x3xf32>
  %bf = kiln.dequantize_linear %b, %sb, %zb {axis = 0 : i64} : (tensor<4xi32>, tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  %c = kiln.conv %xf, %wf, %bf {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : (tensor<1x3x7x7xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %y = kiln.quantize_linear %c, %sy, %zy : (tensor<1x4x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4x4x4xui8>
  return %y : tensor<1x4x4x4xui8>
}

// -----

// A 1x1 stride-1 conv without padding reads the input itself as the
// columns ([C, H * W], a reshape of the 8-bit input, then the zero point's
// shift); a Relu before the quantize_linear raises the lower clamp to
// Q(0) = zy (120).
// CHECK-LABEL: func.func @conv1x1_relu(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<1x8x5x5xui8>
// CHECK: %[[LO:.+]] = kiln.constant dense<1.200000e+02> : tensor<f32>
// CHECK-NOT: kiln.slice
// CHECK: %[[FLAT:.+]] = kiln.reshape %[[X]] : (tensor<1x8x5x5xui8>) -> tensor<8x25xui8>
// CHECK: %[[WIDE:.+]] = kiln.cast %[[FLAT]] : tensor<8x25xui8> -> tensor<8x25xi16>
// CHECK: %[[COLS:.+]] = kiln.sub %[[WIDE]], %{{.+}} : (tensor<8x25xi16>, tensor<i16>) -> tensor<8x25xi16>
// CHECK: kiln.matmul %{{.+}}, %[[COLS]] {kiln.lhs_bytes = -128 : i64, kiln.rhs_bytes = -128 : i64} : (tensor<6x8xi16>, tensor<8x25xi16>) -> tensor<6x25xi32>
// CHECK: kiln.max %{{.+}}, %[[LO]] : (tensor<6x25xf32>, tensor<f32>)
// CHECK-NOT: kiln.relu
func.func @conv1x1_relu(%x: tensor<1x8x5x5xui8>, %w: tensor<6x8x1x1xi8>) -> tensor<1x6x5x5xui8> {
  %sx = kiln.constant dense<0.5> : tensor<f32>
  %zx = kiln.constant dense<128> : tensor<ui8>
  %sw = kiln.constant dense<0.25> : tensor<f32>
  %zw = kiln.constant dense<0> : tensor<i8>
  %sy = kiln.constant dense<0.05> : tensor<f32>
  %zy = kiln.constant dense<120> : tensor<ui8>
  %xf = kiln.dequantize_linear %x, %sx, %zx : (tensor<1x8x5x5xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x8x5x5xf32>
  %wf = kiln.dequantize_linear %w, %sw, %zw : (tensor<6x8x1x1xi8>, tensor<f32>, tensor<i8>) -> tensor<6x8x1x1xf32>
  %c = kiln.conv %xf, %wf {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : (tensor<1x8x5x5xf32>, tensor<6x8x1x1xf32>) -> tensor<1x6x5x5xf32>
  %r = kiln.relu %c : tensor<1x6x5x5xf32>
  %y = kiln.quantize_linear %r, %sy, %zy : (tensor<1x6x5x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x6x5x5xui8>
  return %y : tensor<1x6x5x5xui8>
}

// -----

// Not rewritten (the float conv stays): a depthwise conv (group = C), a
// bias whose scale is not sx * sw, and a batch of 2 images.
// CHECK-LABEL: func.func @depthwise(
// CHECK: kiln.conv
// CHECK-NOT: kiln.matmul
func.func @depthwise(%x: tensor<1x4x5x5xui8>, %w: tensor<4x1x3x3xi8>) -> tensor<1x4x3x3xui8> {
  %sx = kiln.constant dense<0.5> : tensor<f32>
  %zx = kiln.constant dense<128> : tensor<ui8>
  %sw = kiln.constant dense<0.25> : tensor<f32>
  %zw = kiln.constant dense<0> : tensor<i8>
  %sy = kiln.constant dense<0.05> : tensor<f32>
  %zy = kiln.constant dense<120> : tensor<ui8>
  %xf = kiln.dequantize_linear %x, %sx, %zx : (tensor<1x4x5x5xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x5x5xf32>
  %wf = kiln.dequantize_linear %w, %sw, %zw : (tensor<4x1x3x3xi8>, tensor<f32>, tensor<i8>) -> tensor<4x1x3x3xf32>
  %c = kiln.conv %xf, %wf {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 4 : i64} : (tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x3x3xf32>
  %y = kiln.quantize_linear %c, %sy, %zy : (tensor<1x4x3x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4x3x3xui8>
  return %y : tensor<1x4x3x3xui8>
}

// CHECK-LABEL: func.func @bias_scale_differs(
// CHECK: kiln.conv
// CHECK-NOT: kiln.matmul
func.func @bias_scale_differs(%x: tensor<1x2x3x3xui8>, %w: tensor<3x2x1x1xi8>, %b: tensor<3xi32>) -> tensor<1x3x3x3xui8> {
  %sx = kiln.constant dense<0.5> : tensor<f32>
  %zx = kiln.constant dense<128> : tensor<ui8>
  %sw = kiln.constant dense<0.25> : tensor<f32>
  %zw = kiln.constant dense<0> : tensor<i8>
  %sb = kiln.constant dense<0.1> : tensor<f32>
  %zb = kiln.constant dense<0> : tensor<i32>
  %sy = kiln.constant dense<0.05> : tensor<f32>
  %zy = kiln.constant dense<120> : tensor<ui8>
  %xf = kiln.dequantize_linear %x, %sx, %zx : (tensor<1x2x3x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x3x3xf32>
  %wf = kiln.dequantize_linear %w, %sw, %zw : (tensor<3x2x1x1xi8>, tensor<f32>, tensor<i8>) -> tensor<3x2x1x1xf32>
  %bf = kiln.dequantize_linear %b, %sb, %zb : (tensor<3xi32>, tensor<f32>, tensor<i32>) -> tensor<3xf32>
  %c = kiln.conv %xf, %wf, %bf {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<3x2x1x1xf32>, tensor<3xf32>) -> tensor<1x3x3x3xf32>
  %y = kiln.quantize_linear %c, %sy, %zy : (tensor<1x3x3x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x3x3xui8>
  return %y : tensor<1x3x3x3xui8>
}

// CHECK-LABEL: func.func @batch2(
// CHECK: kiln.conv
// CHECK-NOT: kiln.matmul
func.func @batch2(%x: tensor<2x2x3x3xui8>, %w: tensor<3x2x1x1xi8>) -> tensor<2x3x3x3xui8> {
  %sx = kiln.constant dense<0.5> : tensor<f32>
  %zx = kiln.constant dense<128> : tensor<ui8>
  %sw = kiln.constant dense<0.25> : tensor<f32>
  %zw = kiln.constant dense<0> : tensor<i8>
  %sy = kiln.constant dense<0.05> : tensor<f32>
  %zy = kiln.constant dense<120> : tensor<ui8>
  %xf = kiln.dequantize_linear %x, %sx, %zx : (tensor<2x2x3x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x2x3x3xf32>
  %wf = kiln.dequantize_linear %w, %sw, %zw : (tensor<3x2x1x1xi8>, tensor<f32>, tensor<i8>) -> tensor<3x2x1x1xf32>
  %c = kiln.conv %xf, %wf {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : (tensor<2x2x3x3xf32>, tensor<3x2x1x1xf32>) -> tensor<2x3x3x3xf32>
  %y = kiln.quantize_linear %c, %sy, %zy : (tensor<2x3x3x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x3x3x3xui8>
  return %y : tensor<2x3x3x3xui8>
}

// -----

/// A QDQ depthwise 3x3 conv (group = channels, constant per-channel weights
/// with zero points, an int32 bias, Relu6) at stride 1 with OW = W becomes
/// i32 sums of the 8-bit input's taps over whole images: the input
/// flattened and padded with its zero point (100) by a row and a column in
/// front and behind (7 = 6 + 1 elements each), nine windows of 5 x 6 = 30
/// elements at offsets i * 6 + j; in the side taps (j = 0, 2) the columns
/// that wrap into the next or previous row become zx, (x & keep) | fill.
/// Each window times its tap's weights minus zero points; plus -zx *
/// sum(w - zw) per channel (-100 * 45, -100 * -54, -100 * 9) and the bias;
/// requantized per channel, Relu6 as the clamp [Q(0), Q(6)] = [120, 240];
/// the result reshaped to the image.
// CHECK-LABEL: func.func @depthwise3x3_relu6(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<1x3x5x6xui8>
// CHECK-DAG: %[[HI:.+]] = kiln.constant dense<2.400000e+02> : tensor<f32>
// CHECK-DAG: %[[LO:.+]] = kiln.constant dense<1.200000e+02> : tensor<f32>
// CHECK-DAG: %[[BIAS:.+]] = kiln.constant dense<{{\[\[\[}}10], [-20], [30]]]> : tensor<1x3x1xi32>
// CHECK-DAG: %[[SHIFT:.+]] = kiln.constant dense<{{\[\[\[}}-4500], [5400], [-900]]]> : tensor<1x3x1xi32>
// CHECK-DAG: %[[W0:.+]] = kiln.constant dense<{{\[\[\[}}1], [-2], [1]]]> : tensor<1x3x1xi32>
// CHECK-DAG: %[[FILL0:.+]] = kiln.constant dense<{{\[\[\[}}100, 0, 0, 0, 0, 0, 100, 0, {{.+}}]]]> : tensor<1x1x30xui8>
// CHECK-DAG: %[[KEEP0:.+]] = kiln.constant dense<{{\[\[\[}}0, 255, 255, 255, 255, 255, 0, 255, {{.+}}]]]> : tensor<1x1x30xui8>
// CHECK-NOT: kiln.conv
// CHECK: %[[FLAT:.+]] = kiln.reshape %[[X]] : (tensor<1x3x5x6xui8>) -> tensor<1x3x30xui8>
// CHECK: %[[PAD:.+]] = kiln.pad constant %[[FLAT]] {pads = array<i64: 0, 0, 7, 0, 0, 7>, value = 1.000000e+02 : f64} : (tensor<1x3x30xui8>) -> tensor<1x3x44xui8>
// CHECK: %[[T0:.+]] = kiln.slice %[[PAD]] {axes = array<i64: 2>, ends = array<i64: 30>, starts = array<i64: 0>, steps = array<i64: 1>}
// CHECK: %[[K0:.+]] = kiln.and %[[T0]], %[[KEEP0]]
// CHECK: %[[F0:.+]] = kiln.or %[[K0]], %[[FILL0]]
// CHECK: %[[C0:.+]] = kiln.cast %[[F0]] : tensor<1x3x30xui8> -> tensor<1x3x30xi32>
// CHECK: kiln.mul %[[C0]], %[[W0]] : (tensor<1x3x30xi32>, tensor<1x3x1xi32>) -> tensor<1x3x30xi32>
// CHECK: %[[T1:.+]] = kiln.slice %[[PAD]] {axes = array<i64: 2>, ends = array<i64: 31>, starts = array<i64: 1>, steps = array<i64: 1>}
// CHECK-NEXT: kiln.cast %[[T1]]
// CHECK-COUNT-7: kiln.slice %[[PAD]]
// CHECK: %[[S1:.+]] = kiln.add %{{.+}}, %[[SHIFT]] : (tensor<1x3x30xi32>, tensor<1x3x1xi32>)
// CHECK: %[[ACC:.+]] = kiln.add %[[S1]], %[[BIAS]] : (tensor<1x3x30xi32>, tensor<1x3x1xi32>)
// CHECK: %[[F:.+]] = kiln.reshape %{{.+}} : (tensor<3xf32>) -> tensor<1x3x1xf32>
// CHECK: %[[AF:.+]] = kiln.cast %[[ACC]] : tensor<1x3x30xi32> -> tensor<1x3x30xf32>
// CHECK: kiln.mul %[[AF]], %[[F]]
// CHECK: kiln.round
// CHECK: kiln.max %{{.+}}, %[[LO]]
// CHECK: kiln.min %{{.+}}, %[[HI]]
// CHECK: %[[Y:.+]] = kiln.cast %{{.+}} : tensor<1x3x30xf32> -> tensor<1x3x30xui8>
// CHECK: %[[OUT:.+]] = kiln.reshape %[[Y]] : (tensor<1x3x30xui8>) -> tensor<1x3x5x6xui8>
// CHECK-NOT: kiln.clip
// CHECK: return %[[OUT]]
func.func @depthwise3x3_relu6(%x: tensor<1x3x5x6xui8>) -> tensor<1x3x5x6xui8> {
  %w = kiln.constant dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[-1, -2, -3], [-4, -5, -6], [-7, -8, -9]]], [[[0, 1, 0], [1, -4, 1], [0, 1, 0]]]]> : tensor<3x1x3x3xi8>
  %b = kiln.constant dense<[10, -20, 30]> : tensor<3xi32>
  %sx = kiln.constant dense<0.5> : tensor<f32>
  %zx = kiln.constant dense<100> : tensor<ui8>
  %sw = kiln.constant dense<[0.25, 0.125, 0.5]> : tensor<3xf32>
  %zw = kiln.constant dense<[0, 1, -1]> : tensor<3xi8>
  %sb = kiln.constant dense<[0.125, 0.0625, 0.25]> : tensor<3xf32>
  %zb = kiln.constant dense<0> : tensor<3xi32>
  %sy = kiln.constant dense<0.05> : tensor<f32>
  %zy = kiln.constant dense<120> : tensor<ui8>
  %xf = kiln.dequantize_linear %x, %sx, %zx : (tensor<1x3x5x6xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x5x6xf32>
  %wf = kiln.dequantize_linear %w, %sw, %zw {axis = 0 : i64} : (tensor<3x1x3x3xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<3x1x3x3xf32>
  %bf = kiln.dequantize_linear %b, %sb, %zb {axis = 0 : i64} : (tensor<3xi32>, tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  %c = kiln.conv %xf, %wf, %bf {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 3 : i64} : (tensor<1x3x5x6xf32>, tensor<3x1x3x3xf32>, tensor<3xf32>) -> tensor<1x3x5x6xf32>
  %r = kiln.clip %c {min = 0.0 : f64, max = 6.0 : f64} : tensor<1x3x5x6xf32>
  %y = kiln.quantize_linear %r, %sy, %zy : (tensor<1x3x5x6xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x5x6xui8>
  return %y : tensor<1x3x5x6xui8>
}

// -----

/// At stride 2 each output row is computed at every column from contiguous
/// windows (rows 2y + i, columns j .. j + 15: 2 OW - 1 = 9 rounded up to 16,
/// the input padded on the right to 18 columns) and every other column is
/// kept; per-tensor weights and factor.
// CHECK-LABEL: func.func @depthwise3x3_stride2(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<1x2x7x9xi8>
// CHECK-NOT: kiln.conv
// CHECK: %[[PAD:.+]] = kiln.pad constant %[[X]] {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 8>, value = -3.000000e+00 : f64} : (tensor<1x2x7x9xi8>) -> tensor<1x2x9x18xi8>
// CHECK: kiln.slice %[[PAD]] {axes = array<i64: 2, 3>, ends = array<i64: 7, 16>, starts = array<i64: 0, 0>, steps = array<i64: 2, 1>} : (tensor<1x2x9x18xi8>) -> tensor<1x2x4x16xi8>
// CHECK-COUNT-8: kiln.slice %[[PAD]] {{.+}} steps = array<i64: 2, 1>} : (tensor<1x2x9x18xi8>) -> tensor<1x2x4x16xi8>
// CHECK: kiln.mul %{{.+}}, %{{.+}} : (tensor<1x2x4x16xf32>, tensor<f32>)
// CHECK: %[[Y:.+]] = kiln.cast %{{.+}} : tensor<1x2x4x16xf32> -> tensor<1x2x4x16xi8>
// CHECK: %[[OUT:.+]] = kiln.slice %[[Y]] {axes = array<i64: 3>, ends = array<i64: 9>, starts = array<i64: 0>, steps = array<i64: 2>} : (tensor<1x2x4x16xi8>) -> tensor<1x2x4x5xi8>
// CHECK: return %[[OUT]]
func.func @depthwise3x3_stride2(%x: tensor<1x2x7x9xi8>) -> tensor<1x2x4x5xi8> {
  %w = kiln.constant dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[-1, -2, -3], [-4, -5, -6], [-7, -8, -9]]]]> : tensor<2x1x3x3xi8>
  %sx = kiln.constant dense<0.5> : tensor<f32>
  %zx = kiln.constant dense<-3> : tensor<i8>
  %sw = kiln.constant dense<0.25> : tensor<f32>
  %zw = kiln.constant dense<0> : tensor<i8>
  %sy = kiln.constant dense<0.05> : tensor<f32>
  %zy = kiln.constant dense<7> : tensor<i8>
  %xf = kiln.dequantize_linear %x, %sx, %zx : (tensor<1x2x7x9xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x7x9xf32>
  %wf = kiln.dequantize_linear %w, %sw, %zw : (tensor<2x1x3x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x1x3x3xf32>
  %c = kiln.conv %xf, %wf {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : (tensor<1x2x7x9xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x5xf32>
  %y = kiln.quantize_linear %c, %sy, %zy : (tensor<1x2x4x5xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x5xi8>
  return %y : tensor<1x2x4x5xi8>
}

// -----

/// A stride-1 conv whose OW is not W (no padding: 6 - 2 = 4 columns) runs
/// at the input's row pitch 6: windows of 3 x 6 = 18 elements rounded up
/// to 32 (the last tap's window needs 8 rows, 3 more than the input), the
/// 16 - 2 columns past each row computed and dropped.
// CHECK-LABEL: func.func @depthwise3x3_pitched(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<1x2x5x6xi8>
// CHECK: %[[PAD:.+]] = kiln.pad constant %[[X]] {pads = array<i64: 0, 0, 0, 0, 0, 0, 3, 0>, value = -3.000000e+00 : f64} : (tensor<1x2x5x6xi8>) -> tensor<1x2x8x6xi8>
// CHECK: %[[FLAT:.+]] = kiln.reshape %[[PAD]] : (tensor<1x2x8x6xi8>) -> tensor<1x2x48xi8>
// CHECK: kiln.slice %[[FLAT]] {axes = array<i64: 2>, ends = array<i64: 32>, starts = array<i64: 0>, steps = array<i64: 1>} : (tensor<1x2x48xi8>) -> tensor<1x2x32xi8>
// CHECK-NOT: kiln.and
// CHECK-COUNT-8: kiln.slice %[[FLAT]]
// CHECK: %[[Y:.+]] = kiln.cast %{{.+}} : tensor<1x2x32xf32> -> tensor<1x2x32xi8>
// CHECK: %[[YS:.+]] = kiln.slice %[[Y]] {axes = array<i64: 2>, ends = array<i64: 18>, starts = array<i64: 0>, steps = array<i64: 1>}
// CHECK: %[[ROWS:.+]] = kiln.reshape %[[YS]] : (tensor<1x2x18xi8>) -> tensor<1x2x3x6xi8>
// CHECK: %[[OUT:.+]] = kiln.slice %[[ROWS]] {axes = array<i64: 3>, ends = array<i64: 4>, starts = array<i64: 0>, steps = array<i64: 1>} : (tensor<1x2x3x6xi8>) -> tensor<1x2x3x4xi8>
// CHECK: return %[[OUT]]
func.func @depthwise3x3_pitched(%x: tensor<1x2x5x6xi8>) -> tensor<1x2x3x4xi8> {
  %w = kiln.constant dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[-1, -2, -3], [-4, -5, -6], [-7, -8, -9]]]]> : tensor<2x1x3x3xi8>
  %sx = kiln.constant dense<0.5> : tensor<f32>
  %zx = kiln.constant dense<-3> : tensor<i8>
  %sw = kiln.constant dense<0.25> : tensor<f32>
  %zw = kiln.constant dense<0> : tensor<i8>
  %sy = kiln.constant dense<0.05> : tensor<f32>
  %zy = kiln.constant dense<7> : tensor<i8>
  %xf = kiln.dequantize_linear %x, %sx, %zx : (tensor<1x2x5x6xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x5x6xf32>
  %wf = kiln.dequantize_linear %w, %sw, %zw : (tensor<2x1x3x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x1x3x3xf32>
  %c = kiln.conv %xf, %wf {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 2 : i64} : (tensor<1x2x5x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x3x4xf32>
  %y = kiln.quantize_linear %c, %sy, %zy : (tensor<1x2x3x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x4xi8>
  return %y : tensor<1x2x3x4xi8>
}

// -----

/// Not rewritten: a depthwise conv whose weights are not a constant (the
/// per-tap weights and the zero point's term are folded at compile time;
/// nor is it a grouped conv's product per group, which leaves depthwise
/// convs to their own pattern).
// CHECK-LABEL: func.func @depthwise_runtime_weights(
// CHECK: kiln.conv
// CHECK: kiln.quantize_linear
func.func @depthwise_runtime_weights(%x: tensor<1x2x5x5xi8>, %w: tensor<2x1x3x3xi8>) -> tensor<1x2x5x5xi8> {
  %sx = kiln.constant dense<0.5> : tensor<f32>
  %zx = kiln.constant dense<-3> : tensor<i8>
  %sw = kiln.constant dense<0.25> : tensor<f32>
  %zw = kiln.constant dense<0> : tensor<i8>
  %sy = kiln.constant dense<0.05> : tensor<f32>
  %zy = kiln.constant dense<7> : tensor<i8>
  %xf = kiln.dequantize_linear %x, %sx, %zx : (tensor<1x2x5x5xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x5x5xf32>
  %wf = kiln.dequantize_linear %w, %sw, %zw : (tensor<2x1x3x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x1x3x3xf32>
  %c = kiln.conv %xf, %wf {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : (tensor<1x2x5x5xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x5x5xf32>
  %y = kiln.quantize_linear %c, %sy, %zy : (tensor<1x2x5x5xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x5x5xi8>
  return %y : tensor<1x2x5x5xi8>
}

// -----

/// A grouped conv (group 2 of 4 channels) is one integer product per group:
/// the group's input channels as im2col columns, its rows of the weights,
/// each requantized (an epilogue per kernel), the 8-bit results joined.
// CHECK-LABEL: func.func @grouped_not_depthwise(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<1x4x5x5xi8>
// CHECK-NOT: kiln.conv
// CHECK: %[[A:.+]] = kiln.reshape %{{.+}} : (tensor<4x3x3x2xi16>) -> tensor<4x18xi16>
// CHECK: kiln.slice %[[X]] {axes = array<i64: 1>, ends = array<i64: 2>, starts = array<i64: 0>, steps = array<i64: 1>} : (tensor<1x4x5x5xi8>) -> tensor<1x2x5x5xi8>
// CHECK: %[[A0:.+]] = kiln.slice %[[A]] {axes = array<i64: 0>, ends = array<i64: 2>, starts = array<i64: 0>, steps = array<i64: 1>} : (tensor<4x18xi16>) -> tensor<2x18xi16>
// CHECK: kiln.matmul %[[A0]], %{{.+}} : (tensor<2x18xi16>, tensor<18x25xi16>) -> tensor<2x25xi32>
// CHECK: %[[Y0:.+]] = kiln.cast %{{.+}} : tensor<2x25xf32> -> tensor<2x25xi8>
// CHECK: kiln.slice %[[X]] {axes = array<i64: 1>, ends = array<i64: 4>, starts = array<i64: 2>, steps = array<i64: 1>}
// CHECK: %[[A1:.+]] = kiln.slice %[[A]] {axes = array<i64: 0>, ends = array<i64: 4>, starts = array<i64: 2>, steps = array<i64: 1>}
// CHECK: kiln.matmul %[[A1]], %{{.+}} : (tensor<2x18xi16>, tensor<18x25xi16>) -> tensor<2x25xi32>
// CHECK: %[[Y1:.+]] = kiln.cast %{{.+}} : tensor<2x25xf32> -> tensor<2x25xi8>
// CHECK: %[[Y:.+]] = kiln.concat %[[Y0]], %[[Y1]] {axis = 0 : i64} : (tensor<2x25xi8>, tensor<2x25xi8>) -> tensor<4x25xi8>
// CHECK: kiln.reshape %[[Y]] : (tensor<4x25xi8>) -> tensor<1x4x5x5xi8>
func.func @grouped_not_depthwise(%x: tensor<1x4x5x5xi8>) -> tensor<1x4x5x5xi8> {
  %w = kiln.constant dense<1> : tensor<4x2x3x3xi8>
  %sx = kiln.constant dense<0.5> : tensor<f32>
  %zx = kiln.constant dense<-3> : tensor<i8>
  %sw = kiln.constant dense<0.25> : tensor<f32>
  %zw = kiln.constant dense<0> : tensor<i8>
  %sy = kiln.constant dense<0.05> : tensor<f32>
  %zy = kiln.constant dense<7> : tensor<i8>
  %xf = kiln.dequantize_linear %x, %sx, %zx : (tensor<1x4x5x5xi8>, tensor<f32>, tensor<i8>) -> tensor<1x4x5x5xf32>
  %wf = kiln.dequantize_linear %w, %sw, %zw : (tensor<4x2x3x3xi8>, tensor<f32>, tensor<i8>) -> tensor<4x2x3x3xf32>
  %c = kiln.conv %xf, %wf {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x5x5xf32>
  %y = kiln.quantize_linear %c, %sy, %zy : (tensor<1x4x5x5xf32>, tensor<f32>, tensor<i8>) -> tensor<1x4x5x5xi8>
  return %y : tensor<1x4x5x5xi8>
}
