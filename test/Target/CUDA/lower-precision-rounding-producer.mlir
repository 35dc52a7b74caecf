// RUN: kiln-opt --kiln-cuda-lower-precision="precision=fp16" %s | FileCheck %s

// An operand computed by an elementwise dispatch that only products read
// (through a reshape, with a shape query on it): the producer rounds its own
// result (truncf before the yield), in its place, and no rounding kernel
// of its own is left (Q, an argument, gets one).
// CHECK-LABEL: func.func @scaled_keys
// CHECK: %[[K:.+]] = linalg.generic {{.*}} ins(%arg1 : tensor<?x3x5x4xf32>) outs(%{{.+}} : tensor<?x3x4x5xf16>) {{.*}}kind = "elementwise"
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f16):
// CHECK-NEXT: %[[S:.+]] = arith.mulf %[[IN]]
// CHECK-NEXT: %[[R:.+]] = arith.truncf %[[S]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[R]] : f16
// CHECK: %[[C:.+]] = tensor.collapse_shape %[[K]] {{.*}} : tensor<?x3x4x5xf16> into tensor<?x4x5xf16>
// CHECK: %[[Q:.+]] = linalg.generic {{.*}} ins(%arg0 : tensor<?x1x4xf32>) outs(%{{.+}} : tensor<?x1x4xf16>) {
// CHECK: linalg.batch_matmul ins(%[[Q]], %[[C]] : tensor<?x1x4xf16>, tensor<?x4x5xf16>)
func.func @scaled_keys(%q: tensor<?x1x4xf32>, %k: tensor<?x3x5x4xf32>, %init: tensor<?x1x5xf32>) -> (tensor<?x1x5xf32>, index) {
  %c0 = arith.constant 0 : index
  %s = arith.constant 0.5 : f32
  %n = tensor.dim %k, %c0 : tensor<?x3x5x4xf32>
  %e = tensor.empty(%n) : tensor<?x3x4x5xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k : tensor<?x3x5x4xf32>) outs(%e : tensor<?x3x4x5xf32>) attrs = {kiln.dispatch = {id = 1 : i64, kind = "elementwise", nodes = ["scale"]}} {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %s : f32
    linalg.yield %m : f32
  } -> tensor<?x3x4x5xf32>
  %c = tensor.collapse_shape %t [[0, 1], [2], [3]] : tensor<?x3x4x5xf32> into tensor<?x4x5xf32>
  %d = tensor.dim %c, %c0 : tensor<?x4x5xf32>
  %r = linalg.batch_matmul ins(%q, %c : tensor<?x1x4xf32>, tensor<?x4x5xf32>) outs(%init : tensor<?x1x5xf32>) -> tensor<?x1x5xf32>
  return %r, %d : tensor<?x1x5xf32>, index
}

// Read by something other than a product too: the producer stays f32 and a
// rounding kernel feeds the product.
// CHECK-LABEL: func.func @also_returned
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<4x8xf32>) {{.*}}kind = "elementwise"
// CHECK: %[[R:.+]] = linalg.generic {{.*}} ins(%{{.+}} : tensor<4x8xf32>) outs(%{{.+}} : tensor<4x8xf16>) {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.truncf
// CHECK: linalg.matmul ins(%[[R]], %{{.+}} : tensor<4x8xf16>, tensor<8x2xf16>)
func.func @also_returned(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>, %init: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) attrs = {kiln.dispatch = {id = 1 : i64, kind = "elementwise", nodes = ["gelu"]}} {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %r = linalg.matmul ins(%g, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%init : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %r, %g : tensor<4x2xf32>, tensor<4x8xf32>
}

// A generic outside any elementwise, data-movement or row-group dispatch
// (here: none) keeps its f32 result.
// CHECK-LABEL: func.func @no_dispatch
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<4x8xf32>) {
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<4x8xf16>) {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.truncf
func.func @no_dispatch(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>, %init: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %r = linalg.matmul ins(%g, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%init : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// Grouped-query attention's repeated keys: an f16 cache widened by a plain
// copy, broadcast over the group (a move), then transposed and scaled for
// Q K^T. The broadcast moves the f16 values as they are (no widening kernel
// is left), the scaling kernel reads them and rounds its own result.
// CHECK-LABEL: func.func @repeated_cache
// CHECK-NOT: arith.extf
// CHECK: %[[R:.+]] = linalg.generic {{.*}} ins(%{{.+}} : tensor<2x1x5x4xf16>) outs(%{{.+}} : tensor<2x3x5x4xf16>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f16, %{{.+}}: f16):
// CHECK-NEXT: linalg.yield %[[IN]] : f16
// CHECK: linalg.generic {{.*}} ins(%[[R]] : tensor<2x3x5x4xf16>) outs(%{{.+}} : tensor<2x3x4x5xf16>) {{.*}}kind = "elementwise"
// CHECK-NEXT: ^bb0(%[[K:.+]]: f16, %{{.+}}: f16):
// CHECK-NEXT: %[[W:.+]] = arith.extf %[[K]] : f16 to f32
// CHECK-NEXT: %[[S:.+]] = arith.mulf %[[W]]
// CHECK-NEXT: arith.truncf %[[S]] : f32 to f16
func.func @repeated_cache(%q: tensor<6x1x4xf32>, %k: tensor<2x5x4xf16>, %init: tensor<6x1x5xf32>) -> tensor<6x1x5xf32> {
  %s = arith.constant 0.5 : f32
  %e0 = tensor.empty() : tensor<2x5x4xf32>
  %w = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k : tensor<2x5x4xf16>) outs(%e0 : tensor<2x5x4xf32>) attrs = {kiln.dispatch = {id = 1 : i64, kind = "elementwise", nodes = ["widen"]}} {
  ^bb0(%in: f16, %out: f32):
    %x = arith.extf %in : f16 to f32
    linalg.yield %x : f32
  } -> tensor<2x5x4xf32>
  %g = tensor.expand_shape %w [[0, 1], [2], [3]] output_shape [2, 1, 5, 4] : tensor<2x5x4xf32> into tensor<2x1x5x4xf32>
  %e1 = tensor.empty() : tensor<2x3x5x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%g : tensor<2x1x5x4xf32>) outs(%e1 : tensor<2x3x5x4xf32>) attrs = {kiln.dispatch = {id = 2 : i64, kind = "data_movement", nodes = ["repeat"]}} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x3x5x4xf32>
  %e2 = tensor.empty() : tensor<2x3x4x5xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%r : tensor<2x3x5x4xf32>) outs(%e2 : tensor<2x3x4x5xf32>) attrs = {kiln.dispatch = {id = 3 : i64, kind = "elementwise", nodes = ["scale"]}} {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %s : f32
    linalg.yield %m : f32
  } -> tensor<2x3x4x5xf32>
  %c = tensor.collapse_shape %t [[0, 1], [2], [3]] : tensor<2x3x4x5xf32> into tensor<6x4x5xf32>
  %p = linalg.batch_matmul ins(%q, %c : tensor<6x1x4xf32>, tensor<6x4x5xf32>) outs(%init : tensor<6x1x5xf32>) -> tensor<6x1x5xf32>
  return %p : tensor<6x1x5xf32>
}
