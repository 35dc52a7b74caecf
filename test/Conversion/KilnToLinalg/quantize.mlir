// RUN: kiln-opt %s --convert-kiln-to-linalg -split-input-file | FileCheck %s

/// Per-axis quantization to u8: divide, round half to even, add the zero
/// point and saturate in f32 (exact: round(x / s) is an integer, the zero
/// point 8-bit), then convert.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[AXIS:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @quantize_per_axis
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[AXIS]], #[[AXIS]], #[[ID]]]
// CHECK-SAME: outs(%{{.*}} : tensor<2x3xi8>)
// CHECK: %[[Q:.+]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK: %[[R:.+]] = math.roundeven %[[Q]] : f32
// CHECK: %[[Z:.+]] = arith.uitofp %{{.*}} : i8 to f32
// CHECK: %[[S:.+]] = arith.addf %[[R]], %[[Z]] : f32
// CHECK: %[[LO:.+]] = arith.maximumf %[[S]], %{{.*}} : f32
// CHECK: %[[HI:.+]] = arith.minimumf %[[LO]], %{{.*}} : f32
// CHECK: arith.fptoui %[[HI]] : f32 to i8
func.func @quantize_per_axis(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %z: tensor<3xui8>) -> tensor<2x3xui8> {
  %0 = kiln.quantize_linear %x, %s, %z {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xui8>) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}

// -----

/// Per-tensor quantization of f16 to s16: the division in f16, the rest in
/// f32, saturated to [-32768, 32767].
// CHECK-LABEL: func @quantize_f16_to_i16
// CHECK: arith.divf %{{.*}}, %{{.*}} : f16
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.sitofp %{{.*}} : i16 to f32
// CHECK: arith.maximumf %{{.*}}, %cst{{.*}} : f32
// CHECK: arith.minimumf %{{.*}}, %cst{{.*}} : f32
// CHECK: arith.fptosi %{{.*}} : f32 to i16
func.func @quantize_f16_to_i16(%x: tensor<4xf16>, %s: tensor<f16>, %z: tensor<i16>) -> tensor<4xi16> {
  %0 = kiln.quantize_linear %x, %s, %z : (tensor<4xf16>, tensor<f16>, tensor<i16>) -> tensor<4xi16>
  return %0 : tensor<4xi16>
}

// -----

/// Per-tensor dequantization of i16 to f16: the difference in i32, the
/// product in f32, rounded once.
// CHECK-DAG: #[[SCALAR:.+]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func @dequantize_i16
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[SCALAR]], #[[SCALAR]], #{{.+}}]
// CHECK: arith.extsi %{{.*}} : i16 to i32
// CHECK: arith.subi %{{.*}}, %{{.*}} : i32
// CHECK: arith.sitofp %{{.*}} : i32 to f32
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.mulf
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @dequantize_i16(%x: tensor<4xi16>, %s: tensor<f16>, %z: tensor<i16>) -> tensor<4xf16> {
  %0 = kiln.dequantize_linear %x, %s, %z : (tensor<4xi16>, tensor<f16>, tensor<i16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}
