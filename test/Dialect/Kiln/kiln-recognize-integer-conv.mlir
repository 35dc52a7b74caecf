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
// CHECK: kiln.pad constant %{{.+}} {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>} : (tensor<1x3x7x7xi16>) -> tensor<1x3x9x9xi16>
// CHECK-COUNT-9: kiln.slice %{{.+}} {axes = array<i64: 2, 3>, {{.+}} steps = array<i64: 2, 2>} : (tensor<1x3x9x9xi16>) -> tensor<1x3x4x4xi16>
// CHECK: kiln.concat {{.+}} -> tensor<9x3x4x4xi16>
// CHECK: %[[COLS:.+]] = kiln.reshape %{{.+}} : (tensor<9x3x4x4xi16>) -> tensor<27x16xi16>
// CHECK: %[[ACC:.+]] = kiln.matmul %{{.+}}, %[[COLS]] {kiln.lhs_bytes = -128 : i64, kiln.rhs_bytes = -128 : i64} : (tensor<4x27xi16>, tensor<27x16xi16>) -> tensor<4x16xi32>
// CHECK: %[[SUM:.+]] = kiln.add %[[ACC]], %[[B]] : (tensor<4x16xi32>, tensor<4x1xi32>) -> tensor<4x16xi32>
// CHECK: %[[F:.+]] = kiln.reshape %{{.+}} : (tensor<4xf32>) -> tensor<4x1xf32>
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
// columns ([C, H * W], a reshape); a Relu before the quantize_linear
// raises the lower clamp to Q(0) = zy (120).
// CHECK-LABEL: func.func @conv1x1_relu(
// CHECK: %[[LO:.+]] = kiln.constant dense<1.200000e+02> : tensor<f32>
// CHECK-NOT: kiln.slice
// CHECK: %[[COLS:.+]] = kiln.reshape %{{.+}} : (tensor<1x8x5x5xi16>) -> tensor<8x25xi16>
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
