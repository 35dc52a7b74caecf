// RUN: kiln-opt %s --kiln-recognize-gelu --split-input-file | FileCheck %s

/// PyTorch's erf GELU export: Div(sqrt 2), Erf, Add(1), Mul(x), Mul(0.5).
// CHECK-LABEL: func @erf_torch
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf32>)
// CHECK-NEXT: %[[Y:.+]] = kiln.gelu none %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @erf_torch(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %sqrt2 = kiln.constant dense<1.41421354> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %a = kiln.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = kiln.erf %a : tensor<2x8xf32>
  %c = kiln.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %m = kiln.mul %x, %c : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = kiln.mul %m, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

/// 0.5 * x first, x * (1/sqrt 2) (the canonical form of the division), 1 + erf.
// CHECK-LABEL: func @erf_half_first
// CHECK-SAME: (%[[X:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.+]] = kiln.gelu none %[[X]] : tensor<8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @erf_half_first(%x: tensor<8xf32>) -> tensor<8xf32> {
  %rsqrt2 = kiln.constant dense<0.707106769> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %h = kiln.mul %half, %x : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %a = kiln.mul %x, %rsqrt2 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %e = kiln.erf %a : tensor<8xf32>
  %c = kiln.add %one, %e : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %y = kiln.mul %h, %c : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

/// x * (0.5 * (1 + erf(x / sqrt 2))).
// CHECK-LABEL: func @erf_half_inner
// CHECK-NEXT: kiln.gelu none
// CHECK-NEXT: return
func.func @erf_half_inner(%x: tensor<8xf32>) -> tensor<8xf32> {
  %sqrt2 = kiln.constant dense<1.41421354> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %a = kiln.div %x, %sqrt2 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %e = kiln.erf %a : tensor<8xf32>
  %c = kiln.add %e, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %h = kiln.mul %c, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %y = kiln.mul %x, %h : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

/// HF "gelu_new": 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))).
// CHECK-LABEL: func @tanh_form
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[Y:.+]] = kiln.gelu tanh %[[X]] : tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @tanh_form(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %three = kiln.constant dense<3.0> : tensor<f32>
  %k = kiln.constant dense<0.044715> : tensor<f32>
  %s = kiln.constant dense<0.797884583> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %h = kiln.mul %half, %x : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %cube = kiln.pow %x, %three : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %kc = kiln.mul %k, %cube : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %in = kiln.add %x, %kc : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %arg = kiln.mul %s, %in : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = kiln.tanh %arg : tensor<4x8xf32>
  %c = kiln.add %one, %t : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = kiln.mul %h, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

/// The cube written as x * (x * x).
// CHECK-LABEL: func @tanh_mul_cube
// CHECK-NEXT: kiln.gelu tanh
func.func @tanh_mul_cube(%x: tensor<8xf32>) -> tensor<8xf32> {
  %k = kiln.constant dense<0.044715> : tensor<f32>
  %s = kiln.constant dense<0.797884583> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %sq = kiln.mul %x, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %cube = kiln.mul %x, %sq : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %kc = kiln.mul %cube, %k : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %in = kiln.add %kc, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %arg = kiln.mul %in, %s : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %t = kiln.tanh %arg : tensor<8xf32>
  %c = kiln.add %t, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %m = kiln.mul %x, %c : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %y = kiln.mul %m, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

/// erf of a different value than the one multiplied is not GELU.
// CHECK-LABEL: func @different_inputs
// CHECK-NOT: kiln.gelu
func.func @different_inputs(%x: tensor<8xf32>, %z: tensor<8xf32>) -> tensor<8xf32> {
  %sqrt2 = kiln.constant dense<1.41421354> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %a = kiln.div %z, %sqrt2 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %e = kiln.erf %a : tensor<8xf32>
  %c = kiln.add %e, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %m = kiln.mul %x, %c : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %y = kiln.mul %m, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

/// A wrong constant (x / 2 instead of x / sqrt 2) is not GELU.
// CHECK-LABEL: func @wrong_constant
// CHECK-NOT: kiln.gelu
func.func @wrong_constant(%x: tensor<8xf32>) -> tensor<8xf32> {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %a = kiln.div %x, %two : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %e = kiln.erf %a : tensor<8xf32>
  %c = kiln.add %e, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %m = kiln.mul %x, %c : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %y = kiln.mul %m, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}
