// RUN: kiln-opt %s --convert-kiln-to-linalg -split-input-file -verify-diagnostics | FileCheck %s

/// Nearest: one read per element; the unresized dims are read directly, the
/// resized ones through the coordinate transform (asymmetric: y / scale) and
/// the rounding (floor: never up), clamped into the input.
// CHECK-LABEL: func @nearest_asymmetric_floor
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<1x2x8x8xf32>)
// CHECK: %[[N:.+]] = linalg.index 0 : index
// CHECK: %[[C:.+]] = linalg.index 1 : index
// CHECK: %[[H:.+]] = linalg.index 2 : index
// CHECK: %[[HF:.+]] = arith.sitofp %{{.*}} : i64 to f64
// CHECK: %[[X:.+]] = arith.divf %[[HF]], %cst
// CHECK: math.floor %[[X]] : f64
// CHECK: arith.maxsi
// CHECK: %[[W:.+]] = linalg.index 3 : index
// CHECK: %[[V:.+]] = tensor.extract %{{.*}}[%[[N]], %[[C]], %{{.*}}, %{{.*}}] : tensor<1x2x4x4xf32>
// CHECK-NEXT: linalg.yield %[[V]] : f32
func.func @nearest_asymmetric_floor(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32> {
  %0 = kiln.resize nearest asymmetric floor %x {scales = array<f32: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}

// -----

/// Linear over two dims: four reads weighted by products of (1 - r, r).
// CHECK-LABEL: func @linear_half_pixel
// CHECK: linalg.generic
// CHECK-COUNT-4: tensor.extract
// CHECK-NOT: tensor.extract
// CHECK: linalg.yield
func.func @linear_half_pixel(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32> {
  %0 = kiln.resize linear half_pixel round_prefer_floor %x : (tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

/// Cubic over one dim of an f16 tensor: four taps accumulated in f32.
// CHECK-LABEL: func @cubic_f16
// CHECK: linalg.generic
// CHECK-COUNT-4: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @cubic_f16(%x: tensor<2x5xf16>) -> tensor<2x9xf16> {
  %0 = kiln.resize cubic align_corners round_prefer_floor %x {cubic_coeff_a = -5.000000e-01 : f32} : (tensor<2x5xf16>) -> tensor<2x9xf16>
  return %0 : tensor<2x9xf16>
}

// -----

func.func @dynamic_resized_dim(%x: tensor<1x?xf32>) -> tensor<1x?xf32> {
  // expected-error @+1 {{(kiln.resize): cannot lower to linalg with operand types (tensor<1x?xf32>) and result types (tensor<1x?xf32>): unsupported: a resized dim is dynamic (dynamic: operand 0 dims 1; result dims 1)}}
  %0 = kiln.resize nearest asymmetric floor %x {scales = array<f32: 1.0, 2.0>} : (tensor<1x?xf32>) -> tensor<1x?xf32>
  return %0 : tensor<1x?xf32>
}

// -----

/// grid_sample: per spatial dim the grid component (x for the last dim) is
/// denormalized and split into taps; zeros padding selects 0 outside.
// CHECK-LABEL: func @grid_sample_linear_zeros
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<1x3x4x5xf32>)
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %c1] : tensor<1x4x5x2xf32>
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %c0] : tensor<1x4x5x2xf32>
// CHECK-COUNT-4: arith.select %{{.*}}, %{{.*}}, %cst{{.*}} : f32
// CHECK: linalg.yield
func.func @grid_sample_linear_zeros(%x: tensor<1x3x8x8xf32>, %g: tensor<1x4x5x2xf32>) -> tensor<1x3x4x5xf32> {
  %0 = kiln.grid_sample linear zeros %x, %g : (tensor<1x3x8x8xf32>, tensor<1x4x5x2xf32>) -> tensor<1x3x4x5xf32>
  return %0 : tensor<1x3x4x5xf32>
}

// -----

/// Nearest with border padding: one read, no select.
// CHECK-LABEL: func @grid_sample_nearest_border
// CHECK: linalg.generic
// CHECK: math.roundeven
// CHECK-COUNT-1: tensor.extract %{{.*}} : tensor<1x1x4x4x4xf32>
// CHECK-NOT: tensor.extract
// CHECK: linalg.yield
func.func @grid_sample_nearest_border(%x: tensor<1x1x4x4x4xf32>, %g: tensor<1x2x2x2x3xf32>) -> tensor<1x1x2x2x2xf32> {
  %0 = kiln.grid_sample nearest border %x, %g {align_corners = true} : (tensor<1x1x4x4x4xf32>, tensor<1x2x2x2x3xf32>) -> tensor<1x1x2x2x2xf32>
  return %0 : tensor<1x1x2x2x2xf32>
}
