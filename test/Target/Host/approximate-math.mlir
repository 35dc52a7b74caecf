// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-approximate-math))" | FileCheck %s

/// f32 exp becomes a range reduction and a polynomial (fma chain), with the
/// power of two built from the exponent bits: no call to libm remains.
// CHECK-LABEL: func @exp_f32
// CHECK-SAME: (%[[X:.+]]: f32)
// CHECK-NOT: math.exp
// CHECK: math.floor
// CHECK: math.fma
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.+}} : i32 to f32
// CHECK-NOT: math.exp
func.func @exp_f32(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  return %0 : f32
}

// -----

/// tanh on vectors (as in vectorized row kernels) becomes a rational
/// polynomial of the same vector type.
// CHECK-LABEL: func @tanh_vector
// CHECK-NOT: math.tanh
// CHECK: math.fma %{{.+}} : vector<8xf32>
// CHECK: arith.divf %{{.+}} : vector<8xf32>
// CHECK-NOT: math.tanh
func.func @tanh_vector(%x: vector<8xf32>) -> vector<8xf32> {
  %0 = math.tanh %x : vector<8xf32>
  return %0 : vector<8xf32>
}

// -----

/// erf (GELU's) becomes a piecewise rational polynomial.
// CHECK-LABEL: func @erf_f32
// CHECK-NOT: math.erf
// CHECK: math.fma
// CHECK: arith.divf
// CHECK-NOT: math.erf
func.func @erf_f32(%x: f32) -> f32 {
  %0 = math.erf %x : f32
  return %0 : f32
}

// -----

/// f16 is computed in f32 and narrowed back.
// CHECK-LABEL: func @exp_f16
// CHECK-SAME: (%[[X:.+]]: f16)
// CHECK: %[[WIDE:.+]] = arith.extf %[[X]] : f16 to f32
// CHECK-NOT: math.exp
// CHECK: math.fma
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @exp_f16(%x: f16) -> f16 {
  %0 = math.exp %x : f16
  return %0 : f16
}

// -----

/// Left alone: f64 math (no f64 approximation) and functions the hardware
/// has an instruction for (sqrt).
// CHECK-LABEL: func @untouched
// CHECK-SAME: (%[[D:.+]]: f64, %[[S:.+]]: f32)
// CHECK: %[[E:.+]] = math.exp %[[D]] : f64
// CHECK: %[[R:.+]] = math.sqrt %[[S]] : f32
// CHECK: return %[[E]], %[[R]]
func.func @untouched(%d: f64, %s: f32) -> (f64, f32) {
  %0 = math.exp %d : f64
  %1 = math.sqrt %s : f32
  return %0, %1 : f64, f32
}
