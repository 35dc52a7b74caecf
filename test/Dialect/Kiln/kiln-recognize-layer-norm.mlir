// RUN: kiln-opt %s --kiln-recognize-layer-norm --split-input-file | FileCheck %s

/// PyTorch's LayerNorm export (opset < 17): ReduceMean, Sub, Pow(2),
/// ReduceMean, Add(eps), Sqrt, Div, Mul(gamma), Add(beta).
// CHECK-LABEL: func @torch_layer_norm
// CHECK-SAME: (%[[X:.+]]: tensor<2x8x16xf32>, %[[G:.+]]: tensor<16xf32>, %[[B:.+]]: tensor<16xf32>)
// CHECK-NEXT: %[[Y:.+]] = kiln.layer_norm %[[X]], %[[G]], %[[B]] {axis = 2 : i64, epsilon = 9.99999974E-6 : f32}
// CHECK-NEXT: return %[[Y]]
func.func @torch_layer_norm(%x: tensor<2x8x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x8x16xf32> {
  %mean = kiln.reduce mean %x {axes = array<i64: -1>, keepdims = true} : (tensor<2x8x16xf32>) -> tensor<2x8x1xf32>
  %d = kiln.sub %x, %mean : (tensor<2x8x16xf32>, tensor<2x8x1xf32>) -> tensor<2x8x16xf32>
  %two = kiln.constant dense<2.0> : tensor<f32>
  %sq = kiln.pow %d, %two : (tensor<2x8x16xf32>, tensor<f32>) -> tensor<2x8x16xf32>
  %var = kiln.reduce mean %sq {axes = array<i64: -1>, keepdims = true} : (tensor<2x8x16xf32>) -> tensor<2x8x1xf32>
  %eps = kiln.constant dense<1.0e-05> : tensor<f32>
  %ve = kiln.add %var, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %s = kiln.sqrt %ve : tensor<2x8x1xf32>
  %n = kiln.div %d, %s : (tensor<2x8x16xf32>, tensor<2x8x1xf32>) -> tensor<2x8x16xf32>
  %m = kiln.mul %n, %g : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  %y = kiln.add %m, %b : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}

// -----

/// The canonical forms d * d and eps + var, rsqrt instead of sqrt/div, and
/// the parameters on the left; no beta.
// CHECK-LABEL: func @square_rsqrt
// CHECK-SAME: (%[[X:.+]]: tensor<4x16xf32>, %[[G:.+]]: tensor<16xf32>)
// CHECK-NEXT: %[[Y:.+]] = kiln.layer_norm %[[X]], %[[G]] {axis = 1 : i64, epsilon = 9.99999996E-13 : f32}
// CHECK-NEXT: return %[[Y]]
func.func @square_rsqrt(%x: tensor<4x16xf32>, %g: tensor<16xf32>) -> tensor<4x16xf32> {
  %mean = kiln.reduce mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x16xf32>) -> tensor<4x1xf32>
  %d = kiln.sub %x, %mean : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  %sq = kiln.mul %d, %d : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %var = kiln.reduce mean %sq {axes = array<i64: 1>, keepdims = true} : (tensor<4x16xf32>) -> tensor<4x1xf32>
  %eps = kiln.constant dense<1.0e-12> : tensor<1xf32>
  %ve = kiln.add %eps, %var : (tensor<1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %r = kiln.rsqrt %ve : tensor<4x1xf32>
  %n = kiln.mul %r, %d : (tensor<4x1xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = kiln.mul %g, %n : (tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

/// Normalizing over the last two dims.
// CHECK-LABEL: func @two_axes
// CHECK: kiln.layer_norm %{{.+}}, %{{.+}} {axis = 1 : i64
func.func @two_axes(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %mean = kiln.reduce mean %x {axes = array<i64: 1, 2>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<2x1x1xf32>
  %d = kiln.sub %x, %mean : (tensor<2x4x8xf32>, tensor<2x1x1xf32>) -> tensor<2x4x8xf32>
  %sq = kiln.mul %d, %d : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %var = kiln.reduce mean %sq {axes = array<i64: 2, 1>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<2x1x1xf32>
  %eps = kiln.constant dense<1.0e-05> : tensor<f32>
  %ve = kiln.add %var, %eps : (tensor<2x1x1xf32>, tensor<f32>) -> tensor<2x1x1xf32>
  %s = kiln.sqrt %ve : tensor<2x1x1xf32>
  %n = kiln.div %d, %s : (tensor<2x4x8xf32>, tensor<2x1x1xf32>) -> tensor<2x4x8xf32>
  return %n : tensor<2x4x8xf32>
}

// -----

/// A mean over a leading axis is not a layer norm.
// CHECK-LABEL: func @leading_axis
// CHECK-NOT: kiln.layer_norm
func.func @leading_axis(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %mean = kiln.reduce mean %x {axes = array<i64: 0>, keepdims = true} : (tensor<4x16xf32>) -> tensor<1x16xf32>
  %d = kiln.sub %x, %mean : (tensor<4x16xf32>, tensor<1x16xf32>) -> tensor<4x16xf32>
  %sq = kiln.mul %d, %d : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %var = kiln.reduce mean %sq {axes = array<i64: 0>, keepdims = true} : (tensor<4x16xf32>) -> tensor<1x16xf32>
  %eps = kiln.constant dense<1.0e-05> : tensor<f32>
  %ve = kiln.add %var, %eps : (tensor<1x16xf32>, tensor<f32>) -> tensor<1x16xf32>
  %s = kiln.sqrt %ve : tensor<1x16xf32>
  %n = kiln.div %d, %s : (tensor<4x16xf32>, tensor<1x16xf32>) -> tensor<4x16xf32>
  return %n : tensor<4x16xf32>
}

// -----

/// A variance of something other than (x - mean) is not a layer norm.
// CHECK-LABEL: func @wrong_variance
// CHECK-NOT: kiln.layer_norm
func.func @wrong_variance(%x: tensor<4x16xf32>, %z: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %mean = kiln.reduce mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x16xf32>) -> tensor<4x1xf32>
  %d = kiln.sub %x, %mean : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  %sq = kiln.mul %z, %z : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %var = kiln.reduce mean %sq {axes = array<i64: 1>, keepdims = true} : (tensor<4x16xf32>) -> tensor<4x1xf32>
  %eps = kiln.constant dense<1.0e-05> : tensor<f32>
  %ve = kiln.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s = kiln.sqrt %ve : tensor<4x1xf32>
  %n = kiln.div %d, %s : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  return %n : tensor<4x16xf32>
}

// -----

/// A gamma that widens the result (rank above the normalized dims) stays a mul.
// CHECK-LABEL: func @wide_gamma
// CHECK: kiln.layer_norm
// CHECK: kiln.mul
func.func @wide_gamma(%x: tensor<4x16xf32>, %g: tensor<3x4x16xf32>) -> tensor<3x4x16xf32> {
  %mean = kiln.reduce mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x16xf32>) -> tensor<4x1xf32>
  %d = kiln.sub %x, %mean : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  %sq = kiln.mul %d, %d : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %var = kiln.reduce mean %sq {axes = array<i64: 1>, keepdims = true} : (tensor<4x16xf32>) -> tensor<4x1xf32>
  %eps = kiln.constant dense<1.0e-05> : tensor<f32>
  %ve = kiln.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s = kiln.sqrt %ve : tensor<4x1xf32>
  %n = kiln.div %d, %s : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  %y = kiln.mul %n, %g : (tensor<4x16xf32>, tensor<3x4x16xf32>) -> tensor<3x4x16xf32>
  return %y : tensor<3x4x16xf32>
}
