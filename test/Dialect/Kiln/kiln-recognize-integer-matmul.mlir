// RUN: kiln-opt %s --kiln-recognize-integer-matmul --split-input-file | FileCheck %s

// QDQ (onnxruntime's quantize_static): u8 activations, s8 weights per
// tensor. The float product becomes an exact i16 x i16 -> i32 product of the
// zero-point-shifted operands, requantized in f32 with sx * sw / sy. Each
// operand's lowest value (an 8-bit range minus a constant zero point: 0 -
// 128, -128 - 0) is kiln.lhs_bytes / kiln.rhs_bytes; a per-column or
// non-constant zero point gives none.
// CHECK-LABEL: func.func @qdq_per_tensor(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x5x7xui8>, %[[W:[a-z0-9]+]]: tensor<7x3xi8>
// CHECK-DAG: %[[FACTOR:.+]] = kiln.constant dense<0.00399999972> : tensor<f32>
// CHECK-DAG: %[[WW:.+]] = kiln.cast %[[W]] : tensor<7x3xi8> -> tensor<7x3xi16>
// CHECK-DAG: %[[B:.+]] = kiln.sub %[[WW]], %{{.+}} : (tensor<7x3xi16>, tensor<i16>) -> tensor<7x3xi16>
// CHECK-DAG: %[[XW:.+]] = kiln.cast %[[X]] : tensor<2x5x7xui8> -> tensor<2x5x7xi16>
// CHECK-DAG: %[[XZ:.+]] = kiln.cast %{{.+}} : tensor<ui8> -> tensor<i16>
// CHECK-DAG: %[[A:.+]] = kiln.sub %[[XW]], %[[XZ]] : (tensor<2x5x7xi16>, tensor<i16>) -> tensor<2x5x7xi16>
// CHECK: %[[ACC:.+]] = kiln.matmul %[[A]], %[[B]] {kiln.lhs_bytes = -128 : i64, kiln.rhs_bytes = -128 : i64} : (tensor<2x5x7xi16>, tensor<7x3xi16>) -> tensor<2x5x3xi32>
// CHECK: %[[ACCF:.+]] = kiln.cast %[[ACC]] : tensor<2x5x3xi32> -> tensor<2x5x3xf32>
// CHECK: %[[S:.+]] = kiln.mul %[[ACCF]], %[[FACTOR]]
// CHECK: %[[R:.+]] = kiln.round %[[S]]
// CHECK: %[[Z:.+]] = kiln.add %[[R]], %{{.+}}
// CHECK: %[[LO:.+]] = kiln.max %[[Z]]
// CHECK: %[[CL:.+]] = kiln.min %[[LO]]
// CHECK: %[[Y:.+]] = kiln.cast %[[CL]] : tensor<2x5x3xf32> -> tensor<2x5x3xui8>
// CHECK-NOT: kiln.dequantize_linear
// CHECK: return %[[Y]]
func.func @qdq_per_tensor(%x: tensor<2x5x7xui8>, %w: tensor<7x3xi8>) -> tensor<2x5x3xui8> {
  %sx = kiln.constant dense<0.02> : tensor<f32>
  %zx = kiln.constant dense<128> : tensor<ui8>
  %sw = kiln.constant dense<0.01> : tensor<f32>
  %zw = kiln.constant dense<0> : tensor<i8>
  %sy = kiln.constant dense<0.05> : tensor<f32>
  %zy = kiln.constant dense<120> : tensor<ui8>
  %xf = kiln.dequantize_linear %x, %sx, %zx : (tensor<2x5x7xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x5x7xf32>
  %wf = kiln.dequantize_linear %w, %sw, %zw : (tensor<7x3xi8>, tensor<f32>, tensor<i8>) -> tensor<7x3xf32>
  %p = kiln.matmul %xf, %wf : (tensor<2x5x7xf32>, tensor<7x3xf32>) -> tensor<2x5x3xf32>
  %y = kiln.quantize_linear %p, %sy, %zy : (tensor<2x5x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x5x3xui8>
  return %y : tensor<2x5x3xui8>
}

// -----

// Per-column weight scales and zero points (axis 1), s8 output: the factor
// is per column, -128 and 127 saturate.
// CHECK-LABEL: func.func @qdq_per_column(
// CHECK: %[[B:.+]] = kiln.sub %{{.+}}, %{{.+}} : (tensor<7x3xi16>, tensor<3xi16>) -> tensor<7x3xi16>
// CHECK: kiln.matmul %{{.+}}, %[[B]] {kiln.lhs_bytes = -131 : i64} : (tensor<4x7xi16>, tensor<7x3xi16>) -> tensor<4x3xi32>
// CHECK: %[[SXW:.+]] = kiln.mul %{{.+}} -> tensor<3xf32>
// CHECK: %[[F:.+]] = kiln.div %[[SXW]], %{{.+}} : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK: kiln.mul %{{.+}}, %[[F]] : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK: kiln.cast %{{.+}} : tensor<4x3xf32> -> tensor<4x3xi8>
func.func @qdq_per_column(%x: tensor<4x7xi8>, %w: tensor<7x3xi8>, %sw: tensor<3xf32>, %zw: tensor<3xi8>) -> tensor<4x3xi8> {
  %sx = kiln.constant dense<0.02> : tensor<f32>
  %zx = kiln.constant dense<3> : tensor<i8>
  %sy = kiln.constant dense<0.05> : tensor<f32>
  %zy = kiln.constant dense<-2> : tensor<i8>
  %xf = kiln.dequantize_linear %x, %sx, %zx : (tensor<4x7xi8>, tensor<f32>, tensor<i8>) -> tensor<4x7xf32>
  %wf = kiln.dequantize_linear %w, %sw, %zw {axis = 1 : i64} : (tensor<7x3xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<7x3xf32>
  %p = kiln.matmul %xf, %wf : (tensor<4x7xf32>, tensor<7x3xf32>) -> tensor<4x3xf32>
  %y = kiln.quantize_linear %p, %sy, %zy : (tensor<4x3xf32>, tensor<f32>, tensor<i8>) -> tensor<4x3xi8>
  return %y : tensor<4x3xi8>
}

// -----

// Not recognized: per-row weight scales (axis 0), and f16 scales (the
// requantization would not be onnxruntime's f32 one).
// CHECK-LABEL: func.func @qdq_not(
// CHECK-NOT: xi16>
// CHECK: kiln.matmul %{{.+}} -> tensor<4x3xf32>
// CHECK: kiln.matmul %{{.+}} -> tensor<4x3xf16>
// CHECK-NOT: xi16>
func.func @qdq_not(%x: tensor<4x7xi8>, %w: tensor<7x3xi8>, %sw: tensor<7xf32>, %zw: tensor<7xi8>, %h: tensor<f16>) -> (tensor<4x3xi8>, tensor<4x3xi8>) {
  %sx = kiln.constant dense<0.02> : tensor<f32>
  %zx = kiln.constant dense<3> : tensor<i8>
  %xf = kiln.dequantize_linear %x, %sx, %zx : (tensor<4x7xi8>, tensor<f32>, tensor<i8>) -> tensor<4x7xf32>
  %wf = kiln.dequantize_linear %w, %sw, %zw {axis = 0 : i64} : (tensor<7x3xi8>, tensor<7xf32>, tensor<7xi8>) -> tensor<7x3xf32>
  %p = kiln.matmul %xf, %wf : (tensor<4x7xf32>, tensor<7x3xf32>) -> tensor<4x3xf32>
  %y = kiln.quantize_linear %p, %sx, %zx : (tensor<4x3xf32>, tensor<f32>, tensor<i8>) -> tensor<4x3xi8>
  %zh = kiln.constant dense<0> : tensor<i8>
  %xh = kiln.dequantize_linear %x, %h, %zh : (tensor<4x7xi8>, tensor<f16>, tensor<i8>) -> tensor<4x7xf16>
  %wh = kiln.dequantize_linear %w, %h, %zh : (tensor<7x3xi8>, tensor<f16>, tensor<i8>) -> tensor<7x3xf16>
  %ph = kiln.matmul %xh, %wh : (tensor<4x7xf16>, tensor<7x3xf16>) -> tensor<4x3xf16>
  %yh = kiln.quantize_linear %ph, %h, %zh : (tensor<4x3xf16>, tensor<f16>, tensor<i8>) -> tensor<4x3xi8>
  return %y, %yh : tensor<4x3xi8>, tensor<4x3xi8>
}

// -----

// The importer's MatMulInteger / QLinearMatMul form: f64 operands that are
// 8-bit integers minus 8-bit zero points (a per-row one reshaped, a
// constant one) become i16, their product an integer kiln.matmul, cast back to f64.
// CHECK-LABEL: func.func @shifted_f64(
// CHECK-DAG: %[[R:.+]] = kiln.cast %{{.+}} : tensor<3x4xf64> -> tensor<3x4xi16>
// CHECK-DAG: %[[L:.+]] = kiln.cast %{{.+}} : tensor<2x3xf64> -> tensor<2x3xi16>
// CHECK: %[[P:.+]] = kiln.matmul %[[L]], %[[R]] {kiln.rhs_bytes = -121 : i64} : (tensor<2x3xi16>, tensor<3x4xi16>) -> tensor<2x4xi32>
// CHECK: %[[PF:.+]] = kiln.cast %[[P]] : tensor<2x4xi32> -> tensor<2x4xf64>
// CHECK: return %[[PF]]
func.func @shifted_f64(%a: tensor<2x3xui8>, %az: tensor<2xui8>, %b: tensor<3x4xi8>) -> tensor<2x4xf64> {
  %af = kiln.cast %a : tensor<2x3xui8> -> tensor<2x3xf64>
  %azf = kiln.cast %az : tensor<2xui8> -> tensor<2xf64>
  %shape = kiln.constant dense<[2, 1]> : tensor<2xi64>
  %azr = kiln.reshape %azf, %shape : (tensor<2xf64>, tensor<2xi64>) -> tensor<2x1xf64>
  %x = kiln.sub %af, %azr : (tensor<2x3xf64>, tensor<2x1xf64>) -> tensor<2x3xf64>
  %bf = kiln.cast %b : tensor<3x4xi8> -> tensor<3x4xf64>
  %bz = kiln.constant dense<-7.0> : tensor<f64>
  %y = kiln.sub %bf, %bz : (tensor<3x4xf64>, tensor<f64>) -> tensor<3x4xf64>
  %p = kiln.matmul %x, %y : (tensor<2x3xf64>, tensor<3x4xf64>) -> tensor<2x4xf64>
  return %p : tensor<2x4xf64>
}

// -----

// Not recognized: an operand cast from i32 (not an 8-bit value), and a
// constant zero point that is not an integer.
// CHECK-LABEL: func.func @shifted_not(
// CHECK-NOT: xi16>
// CHECK: kiln.matmul %{{.+}} -> tensor<2x4xf64>
// CHECK: kiln.matmul %{{.+}} -> tensor<2x4xf64>
// CHECK-NOT: xi16>
func.func @shifted_not(%a: tensor<2x3xi32>, %b: tensor<3x4xi8>, %c: tensor<2x3xi8>) -> (tensor<2x4xf64>, tensor<2x4xf64>) {
  %af = kiln.cast %a : tensor<2x3xi32> -> tensor<2x3xf64>
  %bf = kiln.cast %b : tensor<3x4xi8> -> tensor<3x4xf64>
  %p = kiln.matmul %af, %bf : (tensor<2x3xf64>, tensor<3x4xf64>) -> tensor<2x4xf64>
  %cf = kiln.cast %c : tensor<2x3xi8> -> tensor<2x3xf64>
  %half = kiln.constant dense<0.5> : tensor<f64>
  %x = kiln.sub %cf, %half : (tensor<2x3xf64>, tensor<f64>) -> tensor<2x3xf64>
  %q = kiln.matmul %x, %bf : (tensor<2x3xf64>, tensor<3x4xf64>) -> tensor<2x4xf64>
  return %p, %q : tensor<2x4xf64>, tensor<2x4xf64>
}

// -----

// The form `kilnc quantize` writes: no QuantizeLinear after the product,
// whose float result becomes f32(acc) * (sx * sw), per column here.
// CHECK-LABEL: func.func @dq_float_result(
// CHECK: %[[ACC:.+]] = kiln.matmul %{{.+}}, %{{.+}} {kiln.lhs_bytes = -3 : i64} : (tensor<4x7xi16>, tensor<7x3xi16>) -> tensor<4x3xi32>
// CHECK: %[[F:.+]] = kiln.mul %{{.+}} -> tensor<3xf32>
// CHECK: %[[ACCF:.+]] = kiln.cast %[[ACC]] : tensor<4x3xi32> -> tensor<4x3xf32>
// CHECK: %[[Y:.+]] = kiln.mul %[[ACCF]], %[[F]] : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK: return %[[Y]]
func.func @dq_float_result(%x: tensor<4x7xui8>, %w: tensor<7x3xi8>, %sw: tensor<3xf32>, %zw: tensor<3xi8>) -> tensor<4x3xf32> {
  %sx = kiln.constant dense<0.02> : tensor<f32>
  %zx = kiln.constant dense<3> : tensor<ui8>
  %xf = kiln.dequantize_linear %x, %sx, %zx : (tensor<4x7xui8>, tensor<f32>, tensor<ui8>) -> tensor<4x7xf32>
  %wf = kiln.dequantize_linear %w, %sw, %zw {axis = 1 : i64} : (tensor<7x3xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<7x3xf32>
  %p = kiln.matmul %xf, %wf : (tensor<4x7xf32>, tensor<7x3xf32>) -> tensor<4x3xf32>
  return %p : tensor<4x3xf32>
}

// -----

// A QDQ Gemm (quantize_static's classifier head: B transposed, per-row
// weights, an int32 bias with scale sx * sw): the weights minus their zero
// points transposed to [K, N] (folded at compile time), the bias added in
// i32, requantized per column.
// CHECK-LABEL: func.func @qdq_gemm_trans_b(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x5xi8>, %[[W:[a-z0-9]+]]: tensor<3x5xi8>, %[[BIAS:[a-z0-9]+]]: tensor<3xi32>
// CHECK-NOT: kiln.gemm
// CHECK: %[[WS:.+]] = kiln.sub %{{.+}}, %{{.+}} : (tensor<3x5xi16>, tensor<3x1xi16>) -> tensor<3x5xi16>
// CHECK: %[[WT:.+]] = kiln.transpose %[[WS]] {perm = array<i64: 1, 0>} : (tensor<3x5xi16>) -> tensor<5x3xi16>
// CHECK: %[[ACC:.+]] = kiln.matmul %{{.+}}, %[[WT]] {kiln.lhs_bytes = -129 : i64} : (tensor<2x5xi16>, tensor<5x3xi16>) -> tensor<2x3xi32>
// CHECK: kiln.add %[[ACC]], %{{.+}} : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK: kiln.cast %{{.+}} : tensor<2x3xf32> -> tensor<2x3xi8>
func.func @qdq_gemm_trans_b(%x: tensor<2x5xi8>, %w: tensor<3x5xi8>, %b: tensor<3xi32>) -> tensor<2x3xi8> {
  %sx = kiln.constant dense<0.5> : tensor<f32>
  %zx = kiln.constant dense<1> : tensor<i8>
  %sw = kiln.constant dense<[0.25, 0.125, 0.5]> : tensor<3xf32>
  %zw = kiln.constant dense<[0, 1, -1]> : tensor<3xi8>
  %sb = kiln.constant dense<[0.125, 0.0625, 0.25]> : tensor<3xf32>
  %zb = kiln.constant dense<0> : tensor<3xi32>
  %sy = kiln.constant dense<0.05> : tensor<f32>
  %zy = kiln.constant dense<-3> : tensor<i8>
  %xf = kiln.dequantize_linear %x, %sx, %zx : (tensor<2x5xi8>, tensor<f32>, tensor<i8>) -> tensor<2x5xf32>
  %wf = kiln.dequantize_linear %w, %sw, %zw {axis = 0 : i64} : (tensor<3x5xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<3x5xf32>
  %bf = kiln.dequantize_linear %b, %sb, %zb {axis = 0 : i64} : (tensor<3xi32>, tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  %g = kiln.gemm %xf, %wf, %bf {trans_b = true} : (tensor<2x5xf32>, tensor<3x5xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %y = kiln.quantize_linear %g, %sy, %zy : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  return %y : tensor<2x3xi8>
}
