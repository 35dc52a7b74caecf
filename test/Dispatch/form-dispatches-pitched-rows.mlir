// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-form-dispatches))" -split-input-file | FileCheck %s

#ch4 = affine_map<(d0, d1, d2, d3) -> (d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

/// A strided depthwise conv over rows wider than its image (the CPU lowering
/// computes rows of whole vectors plus one column: here [1, 4, 4, 5] for 4
/// image columns, a 4-D generic) sliced to [:, :, :, :4], its ReLU6 and a
/// 1x1 conv of that: the slice reads the rows as the pitched form
/// ([1, 4, 20] expanded back), so the ReLU6 joins the 4-D generic and the
/// 1x1 conv reads the pitched result as conv taps (row p / 4 at 5, column
/// p % 4), as for a stride-1 depthwise conv.
// CHECK: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d2, (d1 floordiv 4) * 5 + d1 mod 4)>
// CHECK-LABEL: func @wide_rows_activation
// CHECK: %[[D:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %arg1 : tensor<1x4x4x5xf32>, tensor<4xf32>)
// CHECK: arith.mulf
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: } -> tensor<1x4x4x5xf32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[D]] {{\[\[}}0], [1], [2, 3]] : tensor<1x4x4x5xf32> into tensor<1x4x20xf32>
// CHECK: %[[IMG:.*]] = tensor.extract_slice %[[FLAT]][0, 0, 0] [1, 4, 20] [1, 1, 1] : tensor<1x4x20xf32> to tensor<4x20xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[X]], #{{.*}}], {{.*}} ins(%arg2, %[[IMG]] : tensor<8x4x1x1xf32>, tensor<4x20xf32>)
// CHECK-SAME: kiln.conv_taps
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.matmul
func.func @wide_rows_activation(%t: tensor<1x4x4x5xf32>, %wd: tensor<4xf32>, %w: tensor<8x4x1x1xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %e = tensor.empty() : tensor<1x4x4x5xf32>
  %d = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%t, %wd : tensor<1x4x4x5xf32>, tensor<4xf32>) outs(%e : tensor<1x4x4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x5xf32>
  %v = tensor.extract_slice %d[0, 0, 0, 0] [1, 4, 4, 4] [1, 1, 1, 1] : tensor<1x4x4x5xf32> to tensor<1x4x4x4xf32>
  %e2 = tensor.empty() : tensor<1x4x4x4xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%v : tensor<1x4x4x4xf32>) outs(%e2 : tensor<1x4x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %lo = arith.maximumf %a, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  } -> tensor<1x4x4x4xf32>
  %col = tensor.collapse_shape %r [[0], [1], [2, 3]] : tensor<1x4x4x4xf32> into tensor<1x4x16xf32>
  %filter = tensor.collapse_shape %w [[0], [1, 2, 3]] : tensor<8x4x1x1xf32> into tensor<8x4xf32>
  %img = tensor.extract_slice %col[0, 0, 0] [1, 4, 16] [1, 1, 1] : tensor<1x4x16xf32> to tensor<4x16xf32>
  %ez = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%ez : tensor<8x16xf32>) -> tensor<8x16xf32>
  %m = linalg.matmul ins(%filter, %img : tensor<8x4xf32>, tensor<4x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %m : tensor<8x16xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

/// A slice that also drops rows, or a wide result another op reads whole,
/// is no pitched view: nothing joins, and no reshape is left behind.
// CHECK-LABEL: func @not_pitched
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 4, 3, 4] [1, 1, 1, 1]
func.func @not_pitched(%t: tensor<1x4x4x5xf32>) -> tensor<1x4x3x4xf32> {
  %e = tensor.empty() : tensor<1x4x4x5xf32>
  %d = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%t : tensor<1x4x4x5xf32>) outs(%e : tensor<1x4x4x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x5xf32>
  %v = tensor.extract_slice %d[0, 0, 0, 0] [1, 4, 3, 4] [1, 1, 1, 1] : tensor<1x4x4x5xf32> to tensor<1x4x3x4xf32>
  return %v : tensor<1x4x3x4xf32>
}
