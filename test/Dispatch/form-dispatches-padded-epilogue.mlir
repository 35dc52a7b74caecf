// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-form-dispatches))" | FileCheck %s

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

/// A 1x1 conv's epilogue (bias, ReLU6) whose result the next conv pads:
/// it iterates over the image [F, H, W] (C read through an expand_shape)
/// and writes the [1, F, H, W] slice that is inserted into the padding.
/// Rows of 56 columns are not a whole number of 16-column vectors: the
/// kernel's vectors wrap into the next row (at most two rows each).
// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[CH:.+]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2) -> (0, d0, d1, d2)>
// CHECK-LABEL: func @expand_into_padding
// CHECK: %[[M:.+]] = linalg.matmul
// CHECK: %[[C:.+]] = tensor.expand_shape %[[M]] {{\[}}[0], [1, 2]] output_shape [8, 56, 56]
// CHECK: %[[G:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[CH]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[C]], %{{.*}} : tensor<8x56x56xf32>, tensor<8xf32>) outs(%{{.*}} : tensor<1x8x56x56xf32>)
// CHECK-SAME: kiln.epilogue = 0 : i64
// CHECK: arith.minimumf
// CHECK: tensor.insert_slice %[[G]] into %{{.*}}[0, 0, 1, 1] [1, 8, 56, 56] [1, 1, 1, 1]
func.func @expand_into_padding(%w: tensor<8x16xf32>, %x: tensor<16x3136xf32>, %b: tensor<8xf32>) -> tensor<1x8x59x58xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %e = tensor.empty() : tensor<8x3136xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x3136xf32>) -> tensor<8x3136xf32>
  %m = linalg.matmul ins(%w, %x : tensor<8x16xf32>, tensor<16x3136xf32>) outs(%f : tensor<8x3136xf32>) -> tensor<8x3136xf32>
  %e2 = tensor.empty() : tensor<8x3136xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<8x3136xf32>, tensor<8xf32>) outs(%e2 : tensor<8x3136xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    %t = arith.maximumf %s, %zero : f32
    %c = arith.minimumf %t, %six : f32
    linalg.yield %c : f32
  } -> tensor<8x3136xf32>
  %img = tensor.expand_shape %r [[0, 1], [2, 3]] output_shape [1, 8, 56, 56] : tensor<8x3136xf32> into tensor<1x8x56x56xf32>
  %pe = tensor.empty() : tensor<1x8x59x58xf32>
  %pf = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x8x59x58xf32>) -> tensor<1x8x59x58xf32>
  %p = tensor.insert_slice %img into %pf[0, 0, 1, 1] [1, 8, 56, 56] [1, 1, 1, 1] : tensor<1x8x56x56xf32> into tensor<1x8x59x58xf32>
  return %p : tensor<1x8x59x58xf32>
}

/// Rows of 14 columns: a vector spans up to three rows (at most four do).
// CHECK-LABEL: func @narrow_rows
// CHECK: linalg.generic {indexing_maps = [#[[ID3]], #[[CH]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: outs(%{{.*}} : tensor<1x8x14x14xf32>)
func.func @narrow_rows(%w: tensor<8x16xf32>, %x: tensor<16x196xf32>, %b: tensor<8xf32>) -> tensor<1x8x17x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x196xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x196xf32>) -> tensor<8x196xf32>
  %m = linalg.matmul ins(%w, %x : tensor<8x16xf32>, tensor<16x196xf32>) outs(%f : tensor<8x196xf32>) -> tensor<8x196xf32>
  %e2 = tensor.empty() : tensor<8x196xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<8x196xf32>, tensor<8xf32>) outs(%e2 : tensor<8x196xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    %t = arith.maximumf %s, %zero : f32
    linalg.yield %t : f32
  } -> tensor<8x196xf32>
  %img = tensor.expand_shape %r [[0, 1], [2, 3]] output_shape [1, 8, 14, 14] : tensor<8x196xf32> into tensor<1x8x14x14xf32>
  %pe = tensor.empty() : tensor<1x8x17x16xf32>
  %pf = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x8x17x16xf32>) -> tensor<1x8x17x16xf32>
  %p = tensor.insert_slice %img into %pf[0, 0, 1, 1] [1, 8, 14, 14] [1, 1, 1, 1] : tensor<1x8x14x14xf32> into tensor<1x8x17x16xf32>
  return %p : tensor<1x8x17x16xf32>
}

/// Rows of 4 columns: a vector would span five rows, so the epilogue stays
/// over [F, P] and its result is copied into the padding.
// CHECK-LABEL: func @narrowest_rows_stay
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: kiln.epilogue = 0 : i64
// CHECK: tensor.expand_shape {{.*}} {{\[}}[0, 1], [2, 3]] output_shape [1, 8, 4, 4]
// CHECK: tensor.insert_slice
func.func @narrowest_rows_stay(%w: tensor<8x16xf32>, %x: tensor<16x16xf32>, %b: tensor<8xf32>) -> tensor<1x8x7x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %m = linalg.matmul ins(%w, %x : tensor<8x16xf32>, tensor<16x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<8x16xf32>, tensor<8xf32>) outs(%e2 : tensor<8x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    %t = arith.maximumf %s, %zero : f32
    linalg.yield %t : f32
  } -> tensor<8x16xf32>
  %img = tensor.expand_shape %r [[0, 1], [2, 3]] output_shape [1, 8, 4, 4] : tensor<8x16xf32> into tensor<1x8x4x4xf32>
  %pe = tensor.empty() : tensor<1x8x7x6xf32>
  %pf = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x8x7x6xf32>) -> tensor<1x8x7x6xf32>
  %p = tensor.insert_slice %img into %pf[0, 0, 1, 1] [1, 8, 4, 4] [1, 1, 1, 1] : tensor<1x8x4x4xf32> into tensor<1x8x7x6xf32>
  return %p : tensor<1x8x7x6xf32>
}
