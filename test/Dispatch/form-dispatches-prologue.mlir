// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-form-dispatches))" -split-input-file | FileCheck %s

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#ch3 = affine_map<(d0, d1, d2) -> (d0)>

/// A squeeze-excite scale x * sigmoid(s + b) per channel ([C, H, W] = [8,
/// 4, 8]) read only by a 1x1 conv (the matmul of its filter [4, 8] and the
/// scaled x viewed as [8, 32]): the matmul becomes conv taps whose body
/// computes B from x (collapsed to [8, 32], read like B at consecutive
/// columns) and s, b (per channel: d2). One dispatch instead of two.
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d2, d1)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d2)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>
// CHECK-LABEL: func @excite
// CHECK: %[[XS:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1, 2]] : tensor<8x4x8xf32> into tensor<8x32xf32>
// CHECK: linalg.generic {indexing_maps = [#[[W]], #[[X]], #[[C]], #[[C]], #[[O]]], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK-SAME: ins(%arg3, %[[XS]], %arg1, %arg2 : tensor<4x8x1x1xf32>, tensor<8x32xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK-SAME: kiln.conv_taps
// CHECK: ^bb0(%[[WV:.*]]: f32, %[[XV:.*]]: f32, %[[SV:.*]]: f32, %[[BV:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK: %[[Z:.*]] = arith.addf %[[SV]], %[[BV]]
// CHECK: math.exp
// CHECK: %[[G:.*]] = arith.divf
// CHECK: %[[E:.*]] = arith.mulf %[[XV]], %[[G]]
// CHECK: %[[P:.*]] = arith.mulf %[[WV]], %[[E]]
// CHECK: arith.addf %[[OUT]], %[[P]]
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.matmul
func.func @excite(%x: tensor<8x4x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>, %w: tensor<4x8x1x1xf32>) -> tensor<4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8x4x8xf32>
  %scaled = linalg.generic {indexing_maps = [#id3, #ch3, #ch3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %s, %b : tensor<8x4x8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8x4x8xf32>) {
  ^bb0(%xv: f32, %sv: f32, %bv: f32, %o: f32):
    %z = arith.addf %sv, %bv : f32
    %n = arith.negf %z : f32
    %ex = math.exp %n : f32
    %d = arith.addf %ex, %one : f32
    %g = arith.divf %one, %d : f32
    %r = arith.mulf %xv, %g : f32
    linalg.yield %r : f32
  } -> tensor<8x4x8xf32>
  %expanded = tensor.expand_shape %scaled [[0, 1], [2], [3]] output_shape [1, 8, 4, 8] : tensor<8x4x8xf32> into tensor<1x8x4x8xf32>
  %col = tensor.collapse_shape %expanded [[0], [1], [2, 3]] : tensor<1x8x4x8xf32> into tensor<1x8x32xf32>
  %img = tensor.extract_slice %col[0, 0, 0] [1, 8, 32] [1, 1, 1] : tensor<1x8x32xf32> to tensor<8x32xf32>
  %filter = tensor.collapse_shape %w [[0], [1, 2, 3]] : tensor<4x8x1x1xf32> into tensor<4x8xf32>
  %ez = tensor.empty() : tensor<4x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%ez : tensor<4x32xf32>) -> tensor<4x32xf32>
  %m = linalg.matmul ins(%filter, %img : tensor<4x8xf32>, tensor<8x32xf32>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  return %m : tensor<4x32xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#ch3 = affine_map<(d0, d1, d2) -> (d0)>
#pix3 = affine_map<(d0, d1, d2) -> (d1, d2)>

/// Not a prologue: the scaled x is also returned (it must be written), and
/// a producer with an input read per pixel (neither like B nor per
/// channel).
// CHECK-LABEL: func @excite_also_returned
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0, %arg1 : tensor<8x4x8xf32>, tensor<8xf32>)
// CHECK: linalg.matmul
// CHECK-NOT: kiln.conv_taps
// CHECK-LABEL: func @per_pixel_input
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0, %arg1 : tensor<8x4x8xf32>, tensor<4x8xf32>)
// CHECK: linalg.matmul
// CHECK-NOT: kiln.conv_taps
func.func @excite_also_returned(%x: tensor<8x4x8xf32>, %s: tensor<8xf32>, %w: tensor<4x8x1x1xf32>) -> (tensor<4x32xf32>, tensor<8x4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4x8xf32>
  %scaled = linalg.generic {indexing_maps = [#id3, #ch3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %s : tensor<8x4x8xf32>, tensor<8xf32>) outs(%e : tensor<8x4x8xf32>) {
  ^bb0(%xv: f32, %sv: f32, %o: f32):
    %r = arith.mulf %xv, %sv : f32
    linalg.yield %r : f32
  } -> tensor<8x4x8xf32>
  %flat = tensor.collapse_shape %scaled [[0], [1, 2]] : tensor<8x4x8xf32> into tensor<8x32xf32>
  %filter = tensor.collapse_shape %w [[0], [1, 2, 3]] : tensor<4x8x1x1xf32> into tensor<4x8xf32>
  %ez = tensor.empty() : tensor<4x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%ez : tensor<4x32xf32>) -> tensor<4x32xf32>
  %m = linalg.matmul ins(%filter, %flat : tensor<4x8xf32>, tensor<8x32xf32>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  return %m, %scaled : tensor<4x32xf32>, tensor<8x4x8xf32>
}
func.func @per_pixel_input(%x: tensor<8x4x8xf32>, %p: tensor<4x8xf32>, %w: tensor<4x8x1x1xf32>) -> tensor<4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4x8xf32>
  %scaled = linalg.generic {indexing_maps = [#id3, #pix3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %p : tensor<8x4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<8x4x8xf32>) {
  ^bb0(%xv: f32, %pv: f32, %o: f32):
    %r = arith.mulf %xv, %pv : f32
    linalg.yield %r : f32
  } -> tensor<8x4x8xf32>
  %flat = tensor.collapse_shape %scaled [[0], [1, 2]] : tensor<8x4x8xf32> into tensor<8x32xf32>
  %filter = tensor.collapse_shape %w [[0], [1, 2, 3]] : tensor<4x8x1x1xf32> into tensor<4x8xf32>
  %ez = tensor.empty() : tensor<4x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%ez : tensor<4x32xf32>) -> tensor<4x32xf32>
  %m = linalg.matmul ins(%filter, %flat : tensor<4x8xf32>, tensor<8x32xf32>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  return %m : tensor<4x32xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch4 = affine_map<(d0, d1, d2, d3) -> (d1)>

/// Not a prologue: the producer reads a strided view (a stride-2
/// depthwise tap), which the [C, H*W] view of B would have to copy.
// CHECK-LABEL: func @strided_producer
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK: } -> tensor<1x8x4x8xf32>
// CHECK: linalg.matmul
// CHECK-NOT: kiln.conv_taps
func.func @strided_producer(%t: tensor<1x8x8x16xf32>, %s: tensor<8xf32>, %w: tensor<4x8x1x1xf32>) -> tensor<4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %v = tensor.extract_slice %t[0, 0, 0, 0] [1, 8, 4, 8] [1, 1, 2, 2] : tensor<1x8x8x16xf32> to tensor<1x8x4x8xf32>
  %e = tensor.empty() : tensor<1x8x4x8xf32>
  %d = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%v, %s : tensor<1x8x4x8xf32>, tensor<8xf32>) outs(%e : tensor<1x8x4x8xf32>) {
  ^bb0(%xv: f32, %sv: f32, %o: f32):
    %r = arith.mulf %xv, %sv : f32
    linalg.yield %r : f32
  } -> tensor<1x8x4x8xf32>
  %col = tensor.collapse_shape %d [[0], [1], [2, 3]] : tensor<1x8x4x8xf32> into tensor<1x8x32xf32>
  %img = tensor.extract_slice %col[0, 0, 0] [1, 8, 32] [1, 1, 1] : tensor<1x8x32xf32> to tensor<8x32xf32>
  %filter = tensor.collapse_shape %w [[0], [1, 2, 3]] : tensor<4x8x1x1xf32> into tensor<4x8xf32>
  %ez = tensor.empty() : tensor<4x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%ez : tensor<4x32xf32>) -> tensor<4x32xf32>
  %m = linalg.matmul ins(%filter, %img : tensor<4x8xf32>, tensor<8x32xf32>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  return %m : tensor<4x32xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#ch3 = affine_map<(d0, d1, d2) -> (d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

/// A stride-1 depthwise conv at the row pitch 18 (2 image rows of 16,
/// [1, 4, 36]) with its ReLU6 joined at the pitch, read by a 1x1 conv as
/// conv taps at width 16, row step 18: rows of at least a vector (16), so
/// the joined generic becomes that conv's B prologue. Its input, read like
/// B through the same map, is the pitched depthwise input; its per-channel
/// weight is read at d2. One dispatch for depthwise conv, ReLU6 and 1x1
/// conv.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d2, (d1 floordiv 16) * 18 + d1 mod 16)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d2)>
// CHECK-LABEL: func @pitched_depthwise
// CHECK: %[[IMG:.*]] = tensor.extract_slice %arg0[0, 0, 0] [1, 4, 36] [1, 1, 1] : tensor<1x4x36xf32> to tensor<4x36xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[X]], #[[C]], #{{.*}}], {{.*}} ins(%arg2, %[[IMG]], %arg1 : tensor<8x4x1x1xf32>, tensor<4x36xf32>, tensor<4xf32>)
// CHECK-SAME: kiln.conv_taps
// CHECK: arith.mulf
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.matmul
func.func @pitched_depthwise(%t: tensor<1x4x36xf32>, %wd: tensor<4xf32>, %w: tensor<8x4x1x1xf32>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %e = tensor.empty() : tensor<1x4x36xf32>
  %d = linalg.generic {indexing_maps = [#id3, #ch3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t, %wd : tensor<1x4x36xf32>, tensor<4xf32>) outs(%e : tensor<1x4x36xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x4x36xf32>
  %wide = tensor.expand_shape %d [[0], [1], [2, 3]] output_shape [1, 4, 2, 18] : tensor<1x4x36xf32> into tensor<1x4x2x18xf32>
  %v = tensor.extract_slice %wide[0, 0, 0, 0] [1, 4, 2, 16] [1, 1, 1, 1] : tensor<1x4x2x18xf32> to tensor<1x4x2x16xf32>
  %e2 = tensor.empty() : tensor<1x4x2x16xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%v : tensor<1x4x2x16xf32>) outs(%e2 : tensor<1x4x2x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %lo = arith.maximumf %a, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  } -> tensor<1x4x2x16xf32>
  %col = tensor.collapse_shape %r [[0], [1], [2, 3]] : tensor<1x4x2x16xf32> into tensor<1x4x32xf32>
  %filter = tensor.collapse_shape %w [[0], [1, 2, 3]] : tensor<8x4x1x1xf32> into tensor<8x4xf32>
  %img = tensor.extract_slice %col[0, 0, 0] [1, 4, 32] [1, 1, 1] : tensor<1x4x32xf32> to tensor<4x32xf32>
  %ez = tensor.empty() : tensor<8x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%ez : tensor<8x32xf32>) -> tensor<8x32xf32>
  %m = linalg.matmul ins(%filter, %img : tensor<8x4xf32>, tensor<4x32xf32>) outs(%z : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %m : tensor<8x32xf32>
}
