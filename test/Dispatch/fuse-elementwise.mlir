// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-fuse-elementwise))" -split-input-file | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-fuse-elementwise{max-fused-ops=4}))" -split-input-file | FileCheck %s --check-prefix=LIMIT

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

/// bias-add then relu after a matmul: one generic consumes the matmul
/// (which stays a named op).
// CHECK-LABEL: func @bias_relu
// CHECK: linalg.matmul
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
func.func @bias_relu(%a: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%a, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %biased = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%biased : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  return %relu : tensor<4x16xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

/// A producer with two consumers is not fused (it would be computed twice).
// CHECK-LABEL: func @shared_producer
// CHECK-COUNT-3: linalg.generic
func.func @shared_producer(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%exp : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %abs = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%exp : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.absf %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %neg, %abs : tensor<8xf32>, tensor<8xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

/// A chain of three squarings fuses into one kernel by default; with bodies
/// capped at 4 operations (two multiplications and the yield) it stays two.
// CHECK-LABEL: func @chain
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
// LIMIT-LABEL: func @chain
// LIMIT-COUNT-2: linalg.generic
// LIMIT-NOT: linalg.generic
func.func @chain(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.mulf %v, %v : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.mulf %v, %v : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%b : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.mulf %v, %v : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  return %c : tensor<8xf32>
}
