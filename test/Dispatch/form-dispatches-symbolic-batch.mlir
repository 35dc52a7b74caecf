// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-form-dispatches))" -split-input-file | FileCheck %s

#in3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#sum = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

/// A global average pool with a symbolic batch: the sums [?, 4] and their
/// division, which reads them at (d0, d1), run over the same rows although
/// the types cannot show it: one row group.
// CHECK-LABEL: func @dynamic_rows_row_group
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: kiln.row_group = 0
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<?x4xf32>)
// CHECK-SAME: kiln.row_group = 0
// CHECK: arith.divf
func.func @dynamic_rows_row_group(%x: tensor<?x4x8xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %b = tensor.dim %x, %c0 : tensor<?x4x8xf32>
  %e = tensor.empty(%b) : tensor<?x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
  %s = linalg.generic {indexing_maps = [#in3, #sum], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<?x4x8xf32>) outs(%acc : tensor<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o fastmath<reassoc> : f32
    linalg.yield %r : f32
  } -> tensor<?x4xf32>
  %e2 = tensor.empty(%b) : tensor<?x4xf32>
  %m = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<?x4xf32>) outs(%e2 : tensor<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.divf %a, %n : f32
    linalg.yield %d : f32
  } -> tensor<?x4xf32>
  return %m : tensor<?x4xf32>
}

/// A softmax-like normalization over rows of a symbolic length (attention
/// scores over a symbolic sequence): the row sums and the division, which
/// reads the rows and their sums by loop, are one row group.
// CHECK-LABEL: func @dynamic_row_length_row_group
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: kiln.row_group = 0
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x4x?xf32>, tensor<?x4xf32>)
// CHECK-SAME: kiln.row_group = 0
// CHECK: arith.divf
func.func @dynamic_row_length_row_group(%x: tensor<?x4x?xf32>) -> tensor<?x4x?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %x, %c0 : tensor<?x4x?xf32>
  %l = tensor.dim %x, %c2 : tensor<?x4x?xf32>
  %e = tensor.empty(%b) : tensor<?x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
  %s = linalg.generic {indexing_maps = [#in3, #sum], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<?x4x?xf32>) outs(%acc : tensor<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o fastmath<reassoc> : f32
    linalg.yield %r : f32
  } -> tensor<?x4xf32>
  %e2 = tensor.empty(%b, %l) : tensor<?x4x?xf32>
  %m = linalg.generic {indexing_maps = [#in3, #sum, #in3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %s : tensor<?x4x?xf32>, tensor<?x4xf32>) outs(%e2 : tensor<?x4x?xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %d = arith.divf %a, %t : f32
    linalg.yield %d : f32
  } -> tensor<?x4x?xf32>
  return %m : tensor<?x4x?xf32>
}

/// Not a group: an elementwise op over [?, 4] next to the reduction that
/// reads only another tensor of that type (its rows may differ in number).
// CHECK-LABEL: func @dynamic_rows_unrelated
// CHECK-NOT: kiln.row_group
// CHECK: return
func.func @dynamic_rows_unrelated(%x: tensor<?x4x8xf32>, %y: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %b = tensor.dim %x, %c0 : tensor<?x4x8xf32>
  %e = tensor.empty(%b) : tensor<?x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
  %s = linalg.generic {indexing_maps = [#in3, #sum], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<?x4x8xf32>) outs(%acc : tensor<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o fastmath<reassoc> : f32
    linalg.yield %r : f32
  } -> tensor<?x4xf32>
  %by = tensor.dim %y, %c0 : tensor<?x4xf32>
  %e2 = tensor.empty(%by) : tensor<?x4xf32>
  %m = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<?x4xf32>) outs(%e2 : tensor<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.divf %a, %n : f32
    linalg.yield %d : f32
  } -> tensor<?x4xf32>
  return %s, %m : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#chan = affine_map<(d0, d1) -> (d1)>

/// EfficientNet's squeeze FC with a symbolic batch: a 1x1 linalg conv on
/// [?, 32, 1, 1] becomes batched conv taps [?, 8, 1]; its bias + SiLU reads
/// that as [?, 8], so its loops expand by the unit dim and it reads the
/// taps' result directly, no collapse between (as the one-column matmul's
/// epilogue does at batch 1); in a model the next 1x1 conv then takes it
/// as its B prologue.
// CHECK-LABEL: func @batched_unit_column_epilogue
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x32x1x1xf32>, tensor<?x32x1xf32>)
// CHECK-SAME: kiln.conv_taps
// CHECK-NOT: tensor.collapse_shape %[[T]]
// CHECK: linalg.generic {{.*}} ins(%[[T]], %{{.*}} : tensor<?x8x1xf32>, tensor<8x1xf32>)
// CHECK: arith.negf
func.func @batched_unit_column_epilogue(%x: tensor<?x32x1x1xf32>, %w: tensor<8x32x1x1xf32>, %bias: tensor<8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %b = tensor.dim %x, %c0 : tensor<?x32x1x1xf32>
  %e = tensor.empty(%b) : tensor<?x8x1x1xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8x1x1xf32>) -> tensor<?x8x1x1xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<?x32x1x1xf32>, tensor<8x32x1x1xf32>) outs(%acc : tensor<?x8x1x1xf32>) -> tensor<?x8x1x1xf32>
  %c = tensor.collapse_shape %y [[0], [1, 2, 3]] : tensor<?x8x1x1xf32> into tensor<?x8xf32>
  %e1 = tensor.empty(%b) : tensor<?x8xf32>
  %r = linalg.generic {indexing_maps = [#id2, #chan, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : tensor<?x8xf32>, tensor<8xf32>) outs(%e1 : tensor<?x8xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    %n = arith.negf %s : f32
    %x2 = math.exp %n : f32
    %d = arith.addf %x2, %one : f32
    %q = arith.divf %s, %d : f32
    linalg.yield %q : f32
  } -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

/// A size read of a kernel's result is read of its init instead (the
/// dispatch stage may compute that result inside another kernel, which
/// would leave a kernel running only for its size).
// CHECK-LABEL: func @size_of_result
// CHECK: %[[B:.*]] = tensor.dim %arg0
// CHECK: linalg.generic
// CHECK: return %{{.*}}, %[[B]]
func.func @size_of_result(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, index) {
  %c0 = arith.constant 0 : index
  %b = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%b) : tensor<?x4xf32>
  %m = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.negf %a : f32
    linalg.yield %d : f32
  } -> tensor<?x4xf32>
  %s = tensor.dim %m, %c0 : tensor<?x4xf32>
  return %m, %s : tensor<?x4xf32>, index
}

// -----

/// Two 1x1 convs without bias over a batch of 2 (the linalg stage's
/// per-image matmuls): canonicalization folded the second conv's read of
/// image 1 of the first conv's result back to that image's matmul. It is
/// still image 1 of the batch, so each conv becomes one batched conv taps
/// contraction and no per-image matmul is left.
// CHECK-LABEL: func @inserted_image_read_directly
// CHECK-NOT: linalg.matmul
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x4x1x1xf32>, tensor<2x4x16xf32>)
// CHECK-SAME: kiln.conv_taps
// CHECK-NOT: linalg.matmul
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x8x1x1xf32>, tensor<2x8x16xf32>)
// CHECK-SAME: kiln.conv_taps
// CHECK-NOT: linalg.matmul
// CHECK: return
func.func @inserted_image_read_directly(%x: tensor<2x4x16xf32>, %w1: tensor<8x4x1x1xf32>, %w2: tensor<8x8x1x1xf32>) -> tensor<2x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %a1 = tensor.collapse_shape %w1 [[0], [1, 2, 3]] : tensor<8x4x1x1xf32> into tensor<8x4xf32>
  %a2 = tensor.collapse_shape %w2 [[0], [1, 2, 3]] : tensor<8x8x1x1xf32> into tensor<8x8xf32>
  %e = tensor.empty() : tensor<8x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %out1 = tensor.empty() : tensor<2x8x16xf32>
  %x0 = tensor.extract_slice %x[0, 0, 0] [1, 4, 16] [1, 1, 1] : tensor<2x4x16xf32> to tensor<4x16xf32>
  %m0 = linalg.matmul ins(%a1, %x0 : tensor<8x4xf32>, tensor<4x16xf32>) outs(%acc : tensor<8x16xf32>) -> tensor<8x16xf32>
  %i0 = tensor.insert_slice %m0 into %out1[0, 0, 0] [1, 8, 16] [1, 1, 1] : tensor<8x16xf32> into tensor<2x8x16xf32>
  %x1 = tensor.extract_slice %x[1, 0, 0] [1, 4, 16] [1, 1, 1] : tensor<2x4x16xf32> to tensor<4x16xf32>
  %m1 = linalg.matmul ins(%a1, %x1 : tensor<8x4xf32>, tensor<4x16xf32>) outs(%acc : tensor<8x16xf32>) -> tensor<8x16xf32>
  %i1 = tensor.insert_slice %m1 into %i0[1, 0, 0] [1, 8, 16] [1, 1, 1] : tensor<8x16xf32> into tensor<2x8x16xf32>
  %out2 = tensor.empty() : tensor<2x8x16xf32>
  %y0 = tensor.extract_slice %i1[0, 0, 0] [1, 8, 16] [1, 1, 1] : tensor<2x8x16xf32> to tensor<8x16xf32>
  %n0 = linalg.matmul ins(%a2, %y0 : tensor<8x8xf32>, tensor<8x16xf32>) outs(%acc : tensor<8x16xf32>) -> tensor<8x16xf32>
  %j0 = tensor.insert_slice %n0 into %out2[0, 0, 0] [1, 8, 16] [1, 1, 1] : tensor<8x16xf32> into tensor<2x8x16xf32>
  %n1 = linalg.matmul ins(%a2, %m1 : tensor<8x8xf32>, tensor<8x16xf32>) outs(%acc : tensor<8x16xf32>) -> tensor<8x16xf32>
  %j1 = tensor.insert_slice %n1 into %j0[1, 0, 0] [1, 8, 16] [1, 1, 1] : tensor<8x16xf32> into tensor<2x8x16xf32>
  return %j1 : tensor<2x8x16xf32>
}

// -----

/// A squeeze FC (1x1 conv) over a batch of 2 whose filters canonicalization
/// folded into a 2-D constant [F, C] (no collapse of a [F, C, 1, 1] left):
/// the images' matmuls read it as one [F, C, 1, 1] constant and become one
/// batched conv taps contraction, as with the collapse.
// CHECK-LABEL: func @folded_pointwise_filter
// CHECK-NOT: linalg.matmul
// CHECK: %[[W:.+]] = arith.constant dense<{{.+}}> : tensor<2x8x1x1xf32>
// CHECK-NOT: linalg.matmul
// CHECK: linalg.generic {{.*}} ins(%[[W]], %{{.*}} : tensor<2x8x1x1xf32>, tensor<2x8x1xf32>)
// CHECK-SAME: kiln.conv_taps
// CHECK-NOT: linalg.matmul
// CHECK: return
func.func @folded_pointwise_filter(%x: tensor<2x8x1xf32>) -> tensor<2x2x1xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]]> : tensor<2x8xf32>
  %e = tensor.empty() : tensor<2x1xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x1xf32>) -> tensor<2x1xf32>
  %out = tensor.empty() : tensor<2x2x1xf32>
  %x0 = tensor.extract_slice %x[0, 0, 0] [1, 8, 1] [1, 1, 1] : tensor<2x8x1xf32> to tensor<8x1xf32>
  %m0 = linalg.matmul ins(%w, %x0 : tensor<2x8xf32>, tensor<8x1xf32>) outs(%acc : tensor<2x1xf32>) -> tensor<2x1xf32>
  %i0 = tensor.insert_slice %m0 into %out[0, 0, 0] [1, 2, 1] [1, 1, 1] : tensor<2x1xf32> into tensor<2x2x1xf32>
  %x1 = tensor.extract_slice %x[1, 0, 0] [1, 8, 1] [1, 1, 1] : tensor<2x8x1xf32> to tensor<8x1xf32>
  %m1 = linalg.matmul ins(%w, %x1 : tensor<2x8xf32>, tensor<8x1xf32>) outs(%acc : tensor<2x1xf32>) -> tensor<2x1xf32>
  %i1 = tensor.insert_slice %m1 into %i0[1, 0, 0] [1, 2, 1] [1, 1, 1] : tensor<2x1xf32> into tensor<2x2x1xf32>
  return %i1 : tensor<2x2x1xf32>
}
