// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-form-dispatches))" -split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

/// Bias + relu after a matmul: the generic becomes the matmul's epilogue
/// (C is its input 1) and the matmul, with its zero fill, moves right
/// before it (past the unrelated generic in between).
// CHECK-LABEL: func @bias_relu
// CHECK: math.exp
// CHECK: linalg.fill
// CHECK-NEXT: linalg.matmul
// CHECK-NEXT: linalg.generic
// CHECK-SAME: kiln.epilogue = 1 : i64
func.func @bias_relu(%a: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>, %y: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%a, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %other = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%y : tensor<16xf32>) outs(%e1 : tensor<16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = math.exp %x : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %relu = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b, %m : tensor<16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %c: f32, %o: f32):
    %s = arith.addf %c, %x : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  return %relu, %other : tensor<4x16xf32>, tensor<16xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#last = affine_map<(d0, d1, d2) -> (d2)>

/// A transformer projection: [B*S, N] -> [B, S, N] between the matmul and
/// its bias + residual add. The generic's loops collapse to the matmul's
/// two, the reshape moves below it.
// CHECK-LABEL: func @bias_residual_reshape
// CHECK: %[[RES:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x8x16xf32> into tensor<16x16xf32>
// CHECK: linalg.matmul
// CHECK-NEXT: %[[EPI:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: kiln.epilogue = 0 : i64
// CHECK: tensor.expand_shape %[[EPI]] {{\[\[}}0, 1], [2]] output_shape [2, 8, 16]
func.func @bias_residual_reshape(%a: tensor<16x32xf32>, %w: tensor<32x16xf32>, %b: tensor<16xf32>, %res: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %m = linalg.matmul ins(%a, %w : tensor<16x32xf32>, tensor<32x16xf32>) outs(%f : tensor<16x16xf32>) -> tensor<16x16xf32>
  %x = tensor.expand_shape %m [[0, 1], [2]] output_shape [2, 8, 16] : tensor<16x16xf32> into tensor<2x8x16xf32>
  %e3 = tensor.empty() : tensor<2x8x16xf32>
  %y = linalg.generic {indexing_maps = [#id3, #last, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %b, %res : tensor<2x8x16xf32>, tensor<16xf32>, tensor<2x8x16xf32>) outs(%e3 : tensor<2x8x16xf32>) {
  ^bb0(%u: f32, %v: f32, %r: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    %t = arith.addf %s, %r : f32
    linalg.yield %t : f32
  } -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1)>

/// A batch-1 conv as a matmul: the whole-tensor insert_slice of the image
/// into the batch is an expand_shape, then the channel bias is a per-row
/// epilogue input (d0).
// CHECK-LABEL: func @conv_bias
// CHECK-NOT: tensor.insert_slice
// CHECK: linalg.matmul
// CHECK-NEXT: linalg.generic {indexing_maps = [#{{.*}}, #[[ROWMAP:.*]], #{{.*}}], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: kiln.epilogue = 0 : i64
func.func @conv_bias(%w: tensor<8x27xf32>, %col: tensor<27x64xf32>, %b: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %m = linalg.matmul ins(%w, %col : tensor<8x27xf32>, tensor<27x64xf32>) outs(%f : tensor<8x64xf32>) -> tensor<8x64xf32>
  %out = tensor.empty() : tensor<1x8x64xf32>
  %ins = tensor.insert_slice %m into %out[0, 0, 0] [1, 8, 64] [1, 1, 1] : tensor<8x64xf32> into tensor<1x8x64xf32>
  %img = tensor.expand_shape %ins [[0], [1], [2, 3]] output_shape [1, 8, 8, 8] : tensor<1x8x64xf32> into tensor<1x8x8x8xf32>
  %e4 = tensor.empty() : tensor<1x8x8x8xf32>
  %y = linalg.generic {indexing_maps = [#id4, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%img, %b : tensor<1x8x8x8xf32>, tensor<8xf32>) outs(%e4 : tensor<1x8x8x8xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x8x8x8xf32>
  return %y : tensor<1x8x8x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>

/// Not epilogues: a matmul result used twice (the generic would not be its
/// only reader), a transposed write, an integer division (would trap in
/// masked lanes), an input read with a stride along its rows.
// CHECK-LABEL: func @negatives
// CHECK-NOT: kiln.epilogue
func.func @negatives(%a: tensor<4x8xf32>, %w: tensor<8x16xf32>, %ai: tensor<4x8xi32>, %big: tensor<4x32xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x16xi32>, tensor<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %m = linalg.matmul ins(%a, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %twice = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.maximumf %u, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %m2 = linalg.matmul ins(%a, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %et = tensor.empty() : tensor<16x4xf32>
  %tr = linalg.generic {indexing_maps = [#id, #t], iterator_types = ["parallel", "parallel"]}
      ins(%m2 : tensor<4x16xf32>) outs(%et : tensor<16x4xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.maximumf %u, %zero : f32
    linalg.yield %r : f32
  } -> tensor<16x4xf32>
  %m3 = linalg.matmul ins(%a, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %ei = tensor.empty() : tensor<4x16xi32>
  %div = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m3 : tensor<4x16xf32>) outs(%ei : tensor<4x16xi32>) {
  ^bb0(%u: f32, %o: i32):
    %i = arith.fptosi %u : f32 to i32
    %two = arith.constant 2 : i32
    %q = arith.divsi %i, %two : i32
    linalg.yield %q : i32
  } -> tensor<4x16xi32>
  %m4 = linalg.matmul ins(%a, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %strided = tensor.extract_slice %big[0, 0] [4, 16] [1, 2] : tensor<4x32xf32> to tensor<4x16xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m4, %strided : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  return %m, %twice, %tr, %div, %sum : tensor<4x16xf32>, tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x16xi32>, tensor<4x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#rowv = affine_map<(d0, d1) -> (d0)>
#maskm = affine_map<(d0, d1) -> (0, d1)>

/// A softmax with its scale + mask before it: the mask add, the max, the
/// exponentials, the sum and the division over the same 8 rows are one row
/// group (the fills and empty tensors between them are stepped over).
// CHECK-LABEL: func @masked_softmax
// CHECK-COUNT-5: kiln.row_group = 0 : i64
// CHECK-NOT: kiln.row_group
func.func @masked_softmax(%x: tensor<8x16xf32>, %mask: tensor<1x16xf32>) -> tensor<8x16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %masked = linalg.generic {indexing_maps = [#id, #maskm, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mask : tensor<8x16xf32>, tensor<1x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %s = arith.addf %a, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %e8 = tensor.empty() : tensor<8xf32>
  %minus = linalg.fill ins(%ninf : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %max = linalg.generic {indexing_maps = [#id, #rowv], iterator_types = ["parallel", "reduction"]}
      ins(%masked : tensor<8x16xf32>) outs(%minus : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %exp = linalg.generic {indexing_maps = [#id, #rowv, #id], iterator_types = ["parallel", "parallel"]}
      ins(%masked, %max : tensor<8x16xf32>, tensor<8xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #rowv], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<8x16xf32>) outs(%zeros : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc fastmath<reassoc> : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %y = linalg.generic {indexing_maps = [#id, #rowv, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<8x16xf32>, tensor<8xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %r = arith.divf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#rowv = affine_map<(d0, d1) -> (d0)>
#id1 = affine_map<(d0) -> (d0)>
#t = affine_map<(d0, d1) -> (d1, d0)>
#in3id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

/// Not row groups, each alone in its function: a sum without reassociation
/// (the row kernel would change the order of the additions) and its
/// neighbour; a reduction whose neighbour reads its result through a
/// reshape that splits a dim (unit-dim expands are read directly: see
/// @sum_broadcast and @shared_init_view); a neighbour reading along the wrong dim; a sum over one row
/// (no outer dim). (Dynamic outer sizes and row lengths are
/// form-dispatches-symbolic-batch.mlir.)
// CHECK-NOT: kiln.row_group
func.func @strict_sum(%x: tensor<8x16xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e8 = tensor.empty() : tensor<8xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %strict = linalg.generic {indexing_maps = [#id, #rowv], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%zeros : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %twice = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%strict : tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %twice : tensor<8xf32>
}

func.func @through_reshape(%x: tensor<8x16xf32>) -> (tensor<2x4x1xf32>, tensor<2x4x1xf32>) {
  %zero = arith.constant 0.0 : f32
  %e8 = tensor.empty() : tensor<8xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #rowv], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%zeros : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc fastmath<reassoc> : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %col = tensor.expand_shape %sum [[0, 1, 2]] output_shape [2, 4, 1] : tensor<8xf32> into tensor<2x4x1xf32>
  %e81 = tensor.empty() : tensor<2x4x1xf32>
  %sq = linalg.generic {indexing_maps = [#in3id, #in3id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%col : tensor<2x4x1xf32>) outs(%e81 : tensor<2x4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1xf32>
  return %sq, %col : tensor<2x4x1xf32>, tensor<2x4x1xf32>
}

func.func @wrong_dim(%x: tensor<8x16xf32>, %xt: tensor<16x8xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e8 = tensor.empty() : tensor<8xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #rowv], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%zeros : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc fastmath<reassoc> : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %e = tensor.empty() : tensor<8x16xf32>
  %cross = linalg.generic {indexing_maps = [#t, #rowv, #id], iterator_types = ["parallel", "parallel"]}
      ins(%xt, %sum : tensor<16x8xf32>, tensor<8xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %r = arith.divf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  return %cross : tensor<8x16xf32>
}

func.func @one_row(%v: tensor<16xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %all = linalg.generic {indexing_maps = [#id1, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%v : tensor<16xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc fastmath<reassoc> : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %sq = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%all : tensor<f32>) outs(%e0 : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %sq : tensor<f32>
}

// -----

#perm = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#head = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

/// A query projection: bias + head split [B*S, H*D] -> [B, H, S, D]. The
/// reshape does not collapse away (rows and columns are interleaved in the
/// output), so it stays as the epilogue's view of C; the output is written
/// permuted. The matmul and the reshape move right before the generic.
// CHECK-LABEL: func @head_split
// CHECK: linalg.fill
// CHECK-NEXT: linalg.matmul
// CHECK-NEXT: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2, 3]] output_shape [2, 8, 4, 16]
// CHECK-NEXT: linalg.generic
// CHECK-SAME: kiln.epilogue = 0 : i64
func.func @head_split(%a: tensor<16x32xf32>, %w: tensor<32x64xf32>, %b: tensor<4x16xf32>, %y: tensor<16xf32>) -> (tensor<2x4x8x16xf32>, tensor<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m = linalg.matmul ins(%a, %w : tensor<16x32xf32>, tensor<32x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  %x = tensor.expand_shape %m [[0, 1], [2, 3]] output_shape [2, 8, 4, 16] : tensor<16x64xf32> into tensor<2x8x4x16xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %other = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%y : tensor<16xf32>) outs(%e1 : tensor<16xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = math.exp %u : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %e4 = tensor.empty() : tensor<2x4x8x16xf32>
  %q = linalg.generic {indexing_maps = [#perm, #head, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %b : tensor<2x8x4x16xf32>, tensor<4x16xf32>) outs(%e4 : tensor<2x4x8x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<2x4x8x16xf32>
  return %q, %other : tensor<2x4x8x16xf32>, tensor<16xf32>
}

// -----

#perm = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

/// The head merge after an attention product: batch_matmul [B*H, S, D] ->
/// [B, H, S, D] -> transposed to [B, S, H, D] is the batch_matmul's
/// epilogue (a pure copy, written in the merged layout).
// CHECK-LABEL: func @head_merge
// CHECK: linalg.batch_matmul
// CHECK-NEXT: tensor.expand_shape
// CHECK-NEXT: linalg.generic
// CHECK-SAME: kiln.epilogue = 0 : i64
func.func @head_merge(%p: tensor<8x16x16xf32>, %v: tensor<8x16x16xf32>) -> tensor<2x16x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %m = linalg.batch_matmul ins(%p, %v : tensor<8x16x16xf32>, tensor<8x16x16xf32>) outs(%f : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %x = tensor.expand_shape %m [[0, 1], [2], [3]] output_shape [2, 4, 16, 16] : tensor<8x16x16xf32> into tensor<2x4x16x16xf32>
  %e4 = tensor.empty() : tensor<2x16x4x16xf32>
  %t = linalg.generic {indexing_maps = [#perm, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x4x16x16xf32>) outs(%e4 : tensor<2x16x4x16xf32>) {
  ^bb0(%u: f32, %o: f32):
    linalg.yield %u : f32
  } -> tensor<2x16x4x16xf32>
  return %t : tensor<2x16x4x16xf32>
}

// -----

#perm = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#head = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#kt = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#mask = affine_map<(d0, d1, d2) -> (0, 0, d2)>
#rows = affine_map<(d0, d1, d2) -> (d0, d1)>

/// Not epilogues: a head dim of 8 (a 16-lane vector of columns would span
/// two heads); the key transpose [B*S, N] -> [B, N, S] (C's innermost dim
/// is not the output's); the scale and mask after QK^T, which the softmax's
/// row group takes (it reads those rows anyway).
// CHECK-LABEL: func @not_head_epilogues
// CHECK-NOT: kiln.epilogue
// CHECK: kiln.row_group = 0
// CHECK-NOT: kiln.epilogue
func.func @not_head_epilogues(%a: tensor<16x32xf32>, %w: tensor<32x64xf32>, %b: tensor<8x8xf32>, %s: tensor<4x8x8xf32>, %k: tensor<4x8x8xf32>, %mask: tensor<1x1x8xf32>) -> (tensor<2x8x8x8xf32>, tensor<2x64x8xf32>, tensor<4x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m = linalg.matmul ins(%a, %w : tensor<16x32xf32>, tensor<32x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  %x = tensor.expand_shape %m [[0, 1], [2, 3]] output_shape [2, 8, 8, 8] : tensor<16x64xf32> into tensor<2x8x8x8xf32>
  %e4 = tensor.empty() : tensor<2x8x8x8xf32>
  %q = linalg.generic {indexing_maps = [#perm, #head, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %b : tensor<2x8x8x8xf32>, tensor<8x8xf32>) outs(%e4 : tensor<2x8x8x8xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8x8xf32>
  %m2 = linalg.matmul ins(%a, %w : tensor<16x32xf32>, tensor<32x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  %x2 = tensor.expand_shape %m2 [[0, 1], [2]] output_shape [2, 8, 64] : tensor<16x64xf32> into tensor<2x8x64xf32>
  %et = tensor.empty() : tensor<2x64x8xf32>
  %kT = linalg.generic {indexing_maps = [#kt, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x2 : tensor<2x8x64xf32>) outs(%et : tensor<2x64x8xf32>) {
  ^bb0(%u: f32, %o: f32):
    linalg.yield %u : f32
  } -> tensor<2x64x8xf32>
  %eb = tensor.empty() : tensor<4x8x8xf32>
  %fb = linalg.fill ins(%zero : f32) outs(%eb : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %qk = linalg.batch_matmul ins(%s, %k : tensor<4x8x8xf32>, tensor<4x8x8xf32>) outs(%fb : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %scaled = linalg.generic {indexing_maps = [#id3, #mask, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%qk, %mask : tensor<4x8x8xf32>, tensor<1x1x8xf32>) outs(%eb : tensor<4x8x8xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<4x8x8xf32>
  %e48 = tensor.empty() : tensor<4x8xf32>
  %minus = linalg.fill ins(%ninf : f32) outs(%e48 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %max = linalg.generic {indexing_maps = [#id3, #rows], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%scaled : tensor<4x8x8xf32>) outs(%minus : tensor<4x8xf32>) {
  ^bb0(%u: f32, %acc: f32):
    %r = arith.maximumf %u, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id3, #rows, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%scaled, %max : tensor<4x8x8xf32>, tensor<4x8xf32>) outs(%eb : tensor<4x8x8xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.subf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<4x8x8xf32>
  return %q, %kT, %y : tensor<2x8x8x8xf32>, tensor<2x64x8xf32>, tensor<4x8x8xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d2)>

/// A batch_matmul's elementwise consumer that no row group takes (here a
/// scale and a bias along the columns) is its epilogue.
// CHECK-LABEL: func @batch_scale
// CHECK: linalg.batch_matmul
// CHECK-NEXT: linalg.generic
// CHECK-SAME: kiln.epilogue = 0 : i64
func.func @batch_scale(%p: tensor<4x8x32xf32>, %v: tensor<4x32x32xf32>, %b: tensor<32xf32>) -> tensor<4x8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<4x8x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %m = linalg.batch_matmul ins(%p, %v : tensor<4x8x32xf32>, tensor<4x32x32xf32>) outs(%f : tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %y = linalg.generic {indexing_maps = [#id3, #col, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%m, %b : tensor<4x8x32xf32>, tensor<32xf32>) outs(%e : tensor<4x8x32xf32>) {
  ^bb0(%u: f32, %c: f32, %o: f32):
    %s = arith.mulf %u, %half : f32
    %r = arith.addf %s, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x8x32xf32>
  return %y : tensor<4x8x32xf32>
}

// -----

/// A 2x2 stride-1 conv of one image at the padded row pitch 6 (the linalg
/// stage's per-tap matmuls, tap (i, j) reading the flat input at offset
/// 6i + j) becomes one conv taps contraction; the weight and input slices
/// are gone.
// CHECK: affine_map<(d0, d1, d2, d3, d4) -> (d2, d1 + d3 * 6 + d4)>
// CHECK-LABEL: func @conv_taps
// CHECK-NOT: linalg.matmul
// CHECK: %[[IMG:.*]] = tensor.extract_slice %arg1[0, 0, 0] [1, 3, 40] [1, 1, 1] : tensor<1x3x40xf32> to tensor<3x40xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[X:.*]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg0, %[[IMG]] : tensor<4x3x2x2xf32>, tensor<3x40xf32>)
// CHECK-SAME: kiln.conv_taps
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.yield
// CHECK-NEXT: } -> tensor<4x30xf32>
// CHECK-NEXT: return
func.func @conv_taps(%w: tensor<4x3x2x2xf32>, %x: tensor<1x3x40xf32>) -> tensor<4x30xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x30xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x30xf32>) -> tensor<4x30xf32>
  %w00 = tensor.extract_slice %w[0, 0, 0, 0] [4, 3, 1, 1] [1, 1, 1, 1] : tensor<4x3x2x2xf32> to tensor<4x3xf32>
  %x00 = tensor.extract_slice %x[0, 0, 0] [1, 3, 30] [1, 1, 1] : tensor<1x3x40xf32> to tensor<3x30xf32>
  %m0 = linalg.matmul ins(%w00, %x00 : tensor<4x3xf32>, tensor<3x30xf32>) outs(%acc : tensor<4x30xf32>) -> tensor<4x30xf32>
  %w01 = tensor.extract_slice %w[0, 0, 0, 1] [4, 3, 1, 1] [1, 1, 1, 1] : tensor<4x3x2x2xf32> to tensor<4x3xf32>
  %x01 = tensor.extract_slice %x[0, 0, 1] [1, 3, 30] [1, 1, 1] : tensor<1x3x40xf32> to tensor<3x30xf32>
  %m1 = linalg.matmul ins(%w01, %x01 : tensor<4x3xf32>, tensor<3x30xf32>) outs(%m0 : tensor<4x30xf32>) -> tensor<4x30xf32>
  %w10 = tensor.extract_slice %w[0, 0, 1, 0] [4, 3, 1, 1] [1, 1, 1, 1] : tensor<4x3x2x2xf32> to tensor<4x3xf32>
  %x10 = tensor.extract_slice %x[0, 0, 6] [1, 3, 30] [1, 1, 1] : tensor<1x3x40xf32> to tensor<3x30xf32>
  %m2 = linalg.matmul ins(%w10, %x10 : tensor<4x3xf32>, tensor<3x30xf32>) outs(%m1 : tensor<4x30xf32>) -> tensor<4x30xf32>
  %w11 = tensor.extract_slice %w[0, 0, 1, 1] [4, 3, 1, 1] [1, 1, 1, 1] : tensor<4x3x2x2xf32> to tensor<4x3xf32>
  %x11 = tensor.extract_slice %x[0, 0, 7] [1, 3, 30] [1, 1, 1] : tensor<1x3x40xf32> to tensor<3x30xf32>
  %m3 = linalg.matmul ins(%w11, %x11 : tensor<4x3xf32>, tensor<3x30xf32>) outs(%m2 : tensor<4x30xf32>) -> tensor<4x30xf32>
  return %m3 : tensor<4x30xf32>
}

// -----

/// Not merged, each alone: a window missing a tap (3 matmuls of a 2x2
/// kernel), offsets that are not i*rowStep + j*colStep, and taps of two
/// different inputs.
// CHECK-LABEL: func @missing_tap
// CHECK-NOT: kiln.conv_taps
func.func @missing_tap(%w: tensor<4x3x2x2xf32>, %x: tensor<1x3x40xf32>) -> tensor<4x30xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x30xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x30xf32>) -> tensor<4x30xf32>
  %w00 = tensor.extract_slice %w[0, 0, 0, 0] [4, 3, 1, 1] [1, 1, 1, 1] : tensor<4x3x2x2xf32> to tensor<4x3xf32>
  %x00 = tensor.extract_slice %x[0, 0, 0] [1, 3, 30] [1, 1, 1] : tensor<1x3x40xf32> to tensor<3x30xf32>
  %m0 = linalg.matmul ins(%w00, %x00 : tensor<4x3xf32>, tensor<3x30xf32>) outs(%acc : tensor<4x30xf32>) -> tensor<4x30xf32>
  %w01 = tensor.extract_slice %w[0, 0, 0, 1] [4, 3, 1, 1] [1, 1, 1, 1] : tensor<4x3x2x2xf32> to tensor<4x3xf32>
  %x01 = tensor.extract_slice %x[0, 0, 1] [1, 3, 30] [1, 1, 1] : tensor<1x3x40xf32> to tensor<3x30xf32>
  %m1 = linalg.matmul ins(%w01, %x01 : tensor<4x3xf32>, tensor<3x30xf32>) outs(%m0 : tensor<4x30xf32>) -> tensor<4x30xf32>
  %w10 = tensor.extract_slice %w[0, 0, 1, 0] [4, 3, 1, 1] [1, 1, 1, 1] : tensor<4x3x2x2xf32> to tensor<4x3xf32>
  %x10 = tensor.extract_slice %x[0, 0, 6] [1, 3, 30] [1, 1, 1] : tensor<1x3x40xf32> to tensor<3x30xf32>
  %m2 = linalg.matmul ins(%w10, %x10 : tensor<4x3xf32>, tensor<3x30xf32>) outs(%m1 : tensor<4x30xf32>) -> tensor<4x30xf32>
  return %m2 : tensor<4x30xf32>
}

func.func @nonlinear_offsets(%w: tensor<4x3x2x2xf32>, %x: tensor<1x3x40xf32>) -> tensor<4x30xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x30xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x30xf32>) -> tensor<4x30xf32>
  %w00 = tensor.extract_slice %w[0, 0, 0, 0] [4, 3, 1, 1] [1, 1, 1, 1] : tensor<4x3x2x2xf32> to tensor<4x3xf32>
  %x00 = tensor.extract_slice %x[0, 0, 0] [1, 3, 30] [1, 1, 1] : tensor<1x3x40xf32> to tensor<3x30xf32>
  %m0 = linalg.matmul ins(%w00, %x00 : tensor<4x3xf32>, tensor<3x30xf32>) outs(%acc : tensor<4x30xf32>) -> tensor<4x30xf32>
  %w01 = tensor.extract_slice %w[0, 0, 0, 1] [4, 3, 1, 1] [1, 1, 1, 1] : tensor<4x3x2x2xf32> to tensor<4x3xf32>
  %x01 = tensor.extract_slice %x[0, 0, 1] [1, 3, 30] [1, 1, 1] : tensor<1x3x40xf32> to tensor<3x30xf32>
  %m1 = linalg.matmul ins(%w01, %x01 : tensor<4x3xf32>, tensor<3x30xf32>) outs(%m0 : tensor<4x30xf32>) -> tensor<4x30xf32>
  %w10 = tensor.extract_slice %w[0, 0, 1, 0] [4, 3, 1, 1] [1, 1, 1, 1] : tensor<4x3x2x2xf32> to tensor<4x3xf32>
  %x10 = tensor.extract_slice %x[0, 0, 6] [1, 3, 30] [1, 1, 1] : tensor<1x3x40xf32> to tensor<3x30xf32>
  %m2 = linalg.matmul ins(%w10, %x10 : tensor<4x3xf32>, tensor<3x30xf32>) outs(%m1 : tensor<4x30xf32>) -> tensor<4x30xf32>
  %w11 = tensor.extract_slice %w[0, 0, 1, 1] [4, 3, 1, 1] [1, 1, 1, 1] : tensor<4x3x2x2xf32> to tensor<4x3xf32>
  %x11 = tensor.extract_slice %x[0, 0, 8] [1, 3, 30] [1, 1, 1] : tensor<1x3x40xf32> to tensor<3x30xf32>
  %m3 = linalg.matmul ins(%w11, %x11 : tensor<4x3xf32>, tensor<3x30xf32>) outs(%m2 : tensor<4x30xf32>) -> tensor<4x30xf32>
  return %m3 : tensor<4x30xf32>
}

func.func @two_inputs(%w: tensor<4x3x2x2xf32>, %x: tensor<1x3x40xf32>, %y: tensor<1x3x40xf32>) -> tensor<4x30xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x30xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x30xf32>) -> tensor<4x30xf32>
  %w00 = tensor.extract_slice %w[0, 0, 0, 0] [4, 3, 1, 1] [1, 1, 1, 1] : tensor<4x3x2x2xf32> to tensor<4x3xf32>
  %x00 = tensor.extract_slice %x[0, 0, 0] [1, 3, 30] [1, 1, 1] : tensor<1x3x40xf32> to tensor<3x30xf32>
  %m0 = linalg.matmul ins(%w00, %x00 : tensor<4x3xf32>, tensor<3x30xf32>) outs(%acc : tensor<4x30xf32>) -> tensor<4x30xf32>
  %w01 = tensor.extract_slice %w[0, 0, 0, 1] [4, 3, 1, 1] [1, 1, 1, 1] : tensor<4x3x2x2xf32> to tensor<4x3xf32>
  %x01 = tensor.extract_slice %x[0, 0, 1] [1, 3, 30] [1, 1, 1] : tensor<1x3x40xf32> to tensor<3x30xf32>
  %m1 = linalg.matmul ins(%w01, %x01 : tensor<4x3xf32>, tensor<3x30xf32>) outs(%m0 : tensor<4x30xf32>) -> tensor<4x30xf32>
  %w10 = tensor.extract_slice %w[0, 0, 1, 0] [4, 3, 1, 1] [1, 1, 1, 1] : tensor<4x3x2x2xf32> to tensor<4x3xf32>
  %x10 = tensor.extract_slice %y[0, 0, 6] [1, 3, 30] [1, 1, 1] : tensor<1x3x40xf32> to tensor<3x30xf32>
  %m2 = linalg.matmul ins(%w10, %x10 : tensor<4x3xf32>, tensor<3x30xf32>) outs(%m1 : tensor<4x30xf32>) -> tensor<4x30xf32>
  %w11 = tensor.extract_slice %w[0, 0, 1, 1] [4, 3, 1, 1] [1, 1, 1, 1] : tensor<4x3x2x2xf32> to tensor<4x3xf32>
  %x11 = tensor.extract_slice %y[0, 0, 7] [1, 3, 30] [1, 1, 1] : tensor<1x3x40xf32> to tensor<3x30xf32>
  %m3 = linalg.matmul ins(%w11, %x11 : tensor<4x3xf32>, tensor<3x30xf32>) outs(%m2 : tensor<4x30xf32>) -> tensor<4x30xf32>
  return %m3 : tensor<4x30xf32>
}

// -----

#w = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
#x = affine_map<(d0, d1, d2, d3, d4) -> (d2, d1 + d3 * 18 + d4)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1)>

/// A conv's taps at the padded row pitch 18 with bias + relu + residual on
/// the [:, :, :, :16] view of its [1, F, 4, 18] result: the epilogue of the
/// taps (the expand and the slice move with the contraction).
// CHECK-LABEL: func @conv_taps_epilogue
// CHECK: linalg.generic
// CHECK-SAME: kiln.conv_taps
// CHECK: tensor.expand_shape
// CHECK-NEXT: tensor.extract_slice
// CHECK-NEXT: linalg.generic
// CHECK-SAME: kiln.epilogue = 0 : i64
func.func @conv_taps_epilogue(%w: tensor<4x3x3x3xf32>, %x: tensor<3x110xf32>, %b: tensor<4xf32>, %res: tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x72xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x72xf32>) -> tensor<4x72xf32>
  %t = linalg.generic {indexing_maps = [#w, #x, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%w, %x : tensor<4x3x3x3xf32>, tensor<3x110xf32>) outs(%acc : tensor<4x72xf32>) attrs = {kiln.conv_taps} {
  ^bb0(%a: f32, %v: f32, %o: f32):
    %m = arith.mulf %a, %v : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x72xf32>
  %wide = tensor.expand_shape %t [[0, 1], [2, 3]] output_shape [1, 4, 4, 18] : tensor<4x72xf32> into tensor<1x4x4x18xf32>
  %img = tensor.extract_slice %wide[0, 0, 0, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x4x4x18xf32> to tensor<1x4x4x16xf32>
  %e4 = tensor.empty() : tensor<1x4x4x16xf32>
  %y = linalg.generic {indexing_maps = [#id4, #chan, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%img, %b, %res : tensor<1x4x4x16xf32>, tensor<4xf32>, tensor<1x4x4x16xf32>) outs(%e4 : tensor<1x4x4x16xf32>) {
  ^bb0(%u: f32, %v: f32, %r: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    %s2 = arith.addf %s, %r : f32
    %m = arith.maximumf %s2, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x16xf32>
  return %y : tensor<1x4x4x16xf32>
}

// -----

#w = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
#x = affine_map<(d0, d1, d2, d3, d4) -> (d2, d1 + d3 * 10 + d4)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1)>

/// Not an epilogue: image rows of 8 at a pitch of 10 (a 16-lane vector
/// would span three rows).
// CHECK-LABEL: func @narrow_conv_taps
// CHECK-NOT: kiln.epilogue
func.func @narrow_conv_taps(%w: tensor<4x3x3x3xf32>, %x: tensor<3x102xf32>, %b: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x80xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x80xf32>) -> tensor<4x80xf32>
  %t = linalg.generic {indexing_maps = [#w, #x, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%w, %x : tensor<4x3x3x3xf32>, tensor<3x102xf32>) outs(%acc : tensor<4x80xf32>) attrs = {kiln.conv_taps} {
  ^bb0(%a: f32, %v: f32, %o: f32):
    %m = arith.mulf %a, %v : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x80xf32>
  %wide = tensor.expand_shape %t [[0, 1], [2, 3]] output_shape [1, 4, 8, 10] : tensor<4x80xf32> into tensor<1x4x8x10xf32>
  %img = tensor.extract_slice %wide[0, 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x10xf32> to tensor<1x4x8x8xf32>
  %e4 = tensor.empty() : tensor<1x4x8x8xf32>
  %y = linalg.generic {indexing_maps = [#id4, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%img, %b : tensor<1x4x8x8xf32>, tensor<4xf32>) outs(%e4 : tensor<1x4x8x8xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

/// A Gather with a constant index lowered to tensor.extract at the loop
/// indices in order (ViT's q = qkv[0]) is a slice of its source; one with
/// the indices permuted (a gather + transpose) stays a copy.
// CHECK-LABEL: func @indexed_copy
// CHECK: %[[Q:.*]] = tensor.extract_slice %arg0[0, 0, 0, 0] [1, 2, 4, 8] [1, 1, 1, 1] : tensor<3x2x4x8xf32> to tensor<2x4x8xf32>
// CHECK: %[[K:.*]] = linalg.generic
// CHECK: tensor.extract %arg0[%c1
// CHECK: return %[[Q]], %[[K]]
func.func @indexed_copy(%qkv: tensor<3x2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<2x4x8xf32>
  %q = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %v = tensor.extract %qkv[%c0, %i, %j, %k] : tensor<3x2x4x8xf32>
    linalg.yield %v : f32
  } -> tensor<2x4x8xf32>
  %et = tensor.empty() : tensor<2x8x4xf32>
  %kt = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%et : tensor<2x8x4xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %v = tensor.extract %qkv[%c1, %i, %k, %j] : tensor<3x2x4x8xf32>
    linalg.yield %v : f32
  } -> tensor<2x8x4xf32>
  return %q, %kt : tensor<2x4x8xf32>, tensor<2x8x4xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

/// At batch 1 the index of the unit batch loop was folded to a constant:
/// still a slice.
// CHECK-LABEL: func @indexed_copy_unit
// CHECK: tensor.extract_slice %arg0[2, 0, 0, 0, 0] [1, 1, 4, 6, 8] [1, 1, 1, 1, 1] : tensor<3x1x4x6x8xf32> to tensor<1x4x6x8xf32>
// CHECK-NOT: linalg.generic
func.func @indexed_copy_unit(%qkv: tensor<3x1x4x6x8xf32>) -> tensor<1x4x6x8xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<1x4x6x8xf32>
  %v = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x4x6x8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %k = linalg.index 3 : index
    %x = tensor.extract %qkv[%c2, %c0, %i, %j, %k] : tensor<3x1x4x6x8xf32>
    linalg.yield %x : f32
  } -> tensor<1x4x6x8xf32>
  return %v : tensor<1x4x6x8xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#perm = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

/// An epilogue whose output shares its empty tensor with the producer of
/// the batch_matmul's A gets an empty tensor of its own: the per-batch
/// kernels write it while later batches still read A, so the two must not
/// share a buffer.
// CHECK-LABEL: func @own_output
// CHECK: %[[SHARED:.*]] = tensor.empty() : tensor<2x4x4x6xf32>
// CHECK: linalg.generic {{.*}} outs(%[[SHARED]] :
// CHECK: %[[OWN:.*]] = tensor.empty() : tensor<2x4x4x6xf32>
// CHECK: linalg.batch_matmul
// CHECK-NEXT: tensor.expand_shape
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[OWN]] :
// CHECK-SAME: kiln.epilogue = 0 : i64
func.func @own_output(%s: tensor<2x4x4x6xf32>, %v: tensor<8x6x6xf32>) -> tensor<2x4x4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %shared = tensor.empty() : tensor<2x4x4x6xf32>
  %p = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x4x6xf32>) outs(%shared : tensor<2x4x4x6xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = math.exp %u : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4x6xf32>
  %a = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<2x4x4x6xf32> into tensor<8x4x6xf32>
  %e = tensor.empty() : tensor<8x4x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4x6xf32>) -> tensor<8x4x6xf32>
  %m = linalg.batch_matmul ins(%a, %v : tensor<8x4x6xf32>, tensor<8x6x6xf32>) outs(%f : tensor<8x4x6xf32>) -> tensor<8x4x6xf32>
  %x = tensor.expand_shape %m [[0, 1], [2], [3]] output_shape [2, 4, 4, 6] : tensor<8x4x6xf32> into tensor<2x4x4x6xf32>
  %t = linalg.generic {indexing_maps = [#perm, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x4x4x6xf32>) outs(%shared : tensor<2x4x4x6xf32>) {
  ^bb0(%u: f32, %o: f32):
    linalg.yield %u : f32
  } -> tensor<2x4x4x6xf32>
  return %t : tensor<2x4x4x6xf32>
}

// -----

#read = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 * 2 + d2, d5 * 2 + d3)>
#id6 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

/// A 3x3 stride-2 conv through im2col (the linalg stage's convAsMatmul) on
/// a padded 10x10 input: the matmul of W [4, 27] and the image's patches
/// becomes a conv taps contraction reading the flattened input through the
/// conv's index map (output row p floordiv 4 at 2*10 elements, column
/// p mod 4 at 2, tap (i, j) at 10i + j); the patch generic is gone and the
/// bias + relu stays the epilogue.
// CHECK: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d2, (d1 floordiv 4) * 20 + (d1 mod 4) * 2 + d3 * 10 + d4)>
// CHECK-LABEL: func @im2col_conv
// CHECK-NOT: tensor<1x3x3x3x4x4xf32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg1 {{\[}}[0], [1], [2, 3]] : tensor<1x3x10x10xf32> into tensor<1x3x100xf32>
// CHECK: %[[IMG:.*]] = tensor.extract_slice %[[FLAT]][0, 0, 0] [1, 3, 100] [1, 1, 1] : tensor<1x3x100xf32> to tensor<3x100xf32>
// CHECK: %[[T:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[X]], #{{.*}}], {{.*}} ins(%arg0, %[[IMG]] : tensor<4x3x3x3xf32>, tensor<3x100xf32>)
// CHECK-SAME: kiln.conv_taps
// CHECK: linalg.generic {{.*}} ins(%[[T]], %arg2
// CHECK-SAME: kiln.epilogue = 0 : i64
// CHECK-NOT: linalg.matmul
func.func @im2col_conv(%w: tensor<4x3x3x3xf32>, %x: tensor<1x3x10x10xf32>, %b: tensor<4xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %pe = tensor.empty() : tensor<1x3x3x3x4x4xf32>
  %patches = linalg.generic {indexing_maps = [#read, #id6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x3x10x10xf32>) outs(%pe : tensor<1x3x3x3x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x3x3x3x4x4xf32>
  %col = tensor.collapse_shape %patches [[0], [1, 2, 3], [4, 5]] : tensor<1x3x3x3x4x4xf32> into tensor<1x27x16xf32>
  %filter = tensor.collapse_shape %w [[0], [1, 2, 3]] : tensor<4x3x3x3xf32> into tensor<4x27xf32>
  %image = tensor.extract_slice %col[0, 0, 0] [1, 27, 16] [1, 1, 1] : tensor<1x27x16xf32> to tensor<27x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%filter, %image : tensor<4x27xf32>, tensor<27x16xf32>) outs(%acc : tensor<4x16xf32>) -> tensor<4x16xf32>
  %e2 = tensor.empty() : tensor<4x16xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<4x16xf32>, tensor<4xf32>) outs(%e2 : tensor<4x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

#read = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 * 2 + d2, d5 * 2 + d3)>
#id6 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>

/// A 1x1 stride-2 conv (ResNet's downsample) of two images: each image's
/// matmul becomes conv taps on its own slice of the input; the shared patch
/// buffer goes once neither reads it.
// CHECK: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d2, (d1 floordiv 3) * 12 + (d1 mod 3) * 2 + d3 * 6 + d4)>
// CHECK-LABEL: func @im2col_pointwise_batch
// CHECK-NOT: tensor<2x8x1x1x3x3xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0] [1, 8, 36] [1, 1, 1] : tensor<2x8x36xf32> to tensor<8x36xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[X]], #{{.*}}]
// CHECK-SAME: kiln.conv_taps
// CHECK: tensor.extract_slice %{{.*}}[1, 0, 0] [1, 8, 36] [1, 1, 1] : tensor<2x8x36xf32> to tensor<8x36xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[X]], #{{.*}}]
// CHECK-SAME: kiln.conv_taps
// CHECK-NOT: linalg.matmul
func.func @im2col_pointwise_batch(%w: tensor<16x8x1x1xf32>, %x: tensor<2x8x6x6xf32>) -> (tensor<16x9xf32>, tensor<16x9xf32>) {
  %zero = arith.constant 0.0 : f32
  %pe = tensor.empty() : tensor<2x8x1x1x3x3xf32>
  %patches = linalg.generic {indexing_maps = [#read, #id6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x8x6x6xf32>) outs(%pe : tensor<2x8x1x1x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x8x1x1x3x3xf32>
  %col = tensor.collapse_shape %patches [[0], [1, 2, 3], [4, 5]] : tensor<2x8x1x1x3x3xf32> into tensor<2x8x9xf32>
  %filter = tensor.collapse_shape %w [[0], [1, 2, 3]] : tensor<16x8x1x1xf32> into tensor<16x8xf32>
  %i0 = tensor.extract_slice %col[0, 0, 0] [1, 8, 9] [1, 1, 1] : tensor<2x8x9xf32> to tensor<8x9xf32>
  %e0 = tensor.empty() : tensor<16x9xf32>
  %a0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x9xf32>) -> tensor<16x9xf32>
  %m0 = linalg.matmul ins(%filter, %i0 : tensor<16x8xf32>, tensor<8x9xf32>) outs(%a0 : tensor<16x9xf32>) -> tensor<16x9xf32>
  %i1 = tensor.extract_slice %col[1, 0, 0] [1, 8, 9] [1, 1, 1] : tensor<2x8x9xf32> to tensor<8x9xf32>
  %e1 = tensor.empty() : tensor<16x9xf32>
  %a1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x9xf32>) -> tensor<16x9xf32>
  %m1 = linalg.matmul ins(%filter, %i1 : tensor<16x8xf32>, tensor<8x9xf32>) outs(%a1 : tensor<16x9xf32>) -> tensor<16x9xf32>
  return %m0, %m1 : tensor<16x9xf32>, tensor<16x9xf32>
}

// -----

#read = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 * 2 + d2, d5 * 2 + d3)>
#swapped = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5 * 2 + d3, d4 * 2 + d2)>
#id6 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>

/// Not conv taps: patches that are not a plain copy (an elementwise
/// producer fused into them), patches read transposed (not a conv's index
/// map), and a filter collapsed in another order.
// CHECK-LABEL: func @im2col_not_a_copy
// CHECK-NOT: kiln.conv_taps
// CHECK: linalg.matmul
// CHECK-LABEL: func @im2col_transposed
// CHECK-NOT: kiln.conv_taps
// CHECK: linalg.matmul
// CHECK-LABEL: func @im2col_filter_order
// CHECK-NOT: kiln.conv_taps
// CHECK: linalg.matmul
func.func @im2col_not_a_copy(%w: tensor<4x3x3x3xf32>, %x: tensor<1x3x10x10xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %pe = tensor.empty() : tensor<1x3x3x3x4x4xf32>
  %patches = linalg.generic {indexing_maps = [#read, #id6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x3x10x10xf32>) outs(%pe : tensor<1x3x3x3x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x3x3x3x4x4xf32>
  %col = tensor.collapse_shape %patches [[0], [1, 2, 3], [4, 5]] : tensor<1x3x3x3x4x4xf32> into tensor<1x27x16xf32>
  %filter = tensor.collapse_shape %w [[0], [1, 2, 3]] : tensor<4x3x3x3xf32> into tensor<4x27xf32>
  %image = tensor.extract_slice %col[0, 0, 0] [1, 27, 16] [1, 1, 1] : tensor<1x27x16xf32> to tensor<27x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%filter, %image : tensor<4x27xf32>, tensor<27x16xf32>) outs(%acc : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}

func.func @im2col_transposed(%w: tensor<4x3x3x3xf32>, %x: tensor<1x3x10x10xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %pe = tensor.empty() : tensor<1x3x3x3x4x4xf32>
  %patches = linalg.generic {indexing_maps = [#swapped, #id6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x3x10x10xf32>) outs(%pe : tensor<1x3x3x3x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x3x3x3x4x4xf32>
  %col = tensor.collapse_shape %patches [[0], [1, 2, 3], [4, 5]] : tensor<1x3x3x3x4x4xf32> into tensor<1x27x16xf32>
  %filter = tensor.collapse_shape %w [[0], [1, 2, 3]] : tensor<4x3x3x3xf32> into tensor<4x27xf32>
  %image = tensor.extract_slice %col[0, 0, 0] [1, 27, 16] [1, 1, 1] : tensor<1x27x16xf32> to tensor<27x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%filter, %image : tensor<4x27xf32>, tensor<27x16xf32>) outs(%acc : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}

func.func @im2col_filter_order(%w: tensor<4x27x1x1xf32>, %x: tensor<1x3x10x10xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %pe = tensor.empty() : tensor<1x3x3x3x4x4xf32>
  %patches = linalg.generic {indexing_maps = [#read, #id6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x3x10x10xf32>) outs(%pe : tensor<1x3x3x3x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x3x3x3x4x4xf32>
  %col = tensor.collapse_shape %patches [[0], [1, 2, 3], [4, 5]] : tensor<1x3x3x3x4x4xf32> into tensor<1x27x16xf32>
  %filter = tensor.collapse_shape %w [[0], [1, 2, 3]] : tensor<4x27x1x1xf32> into tensor<4x27xf32>
  %image = tensor.extract_slice %col[0, 0, 0] [1, 27, 16] [1, 1, 1] : tensor<1x27x16xf32> to tensor<27x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%filter, %image : tensor<4x27xf32>, tensor<27x16xf32>) outs(%acc : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#ch3 = affine_map<(d0, d1, d2) -> (d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

/// A stride-1 depthwise conv's result at the row pitch 5 ([1, 4, 20] for
/// 4x4 images), its ReLU6 on the [:, :, :, :4] view, and a 1x1 conv of
/// that: the ReLU6 joins the depthwise generic over its pitched domain,
/// and the 1x1 conv reads the pitched result as conv taps (row p / 4 at
/// 5, column p % 4): two dispatches instead of three, no compaction copy.
/// (Rows narrower than a vector: the joined generic does not become the
/// conv's B prologue, form-dispatches-prologue.mlir.)
// CHECK: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d2, (d1 floordiv 4) * 5 + d1 mod 4)>
// CHECK-LABEL: func @pitched_activation
// CHECK: %[[D:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<1x4x20xf32>, tensor<4xf32>)
// CHECK: arith.mulf
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: } -> tensor<1x4x20xf32>
// CHECK: %[[IMG:.*]] = tensor.extract_slice %[[D]][0, 0, 0] [1, 4, 20] [1, 1, 1] : tensor<1x4x20xf32> to tensor<4x20xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[X]], #{{.*}}], {{.*}} ins(%arg2, %[[IMG]] : tensor<8x4x1x1xf32>, tensor<4x20xf32>)
// CHECK-SAME: kiln.conv_taps
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.matmul
func.func @pitched_activation(%t: tensor<1x4x20xf32>, %wd: tensor<4xf32>, %w: tensor<8x4x1x1xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %e = tensor.empty() : tensor<1x4x20xf32>
  %d = linalg.generic {indexing_maps = [#id3, #ch3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t, %wd : tensor<1x4x20xf32>, tensor<4xf32>) outs(%e : tensor<1x4x20xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x4x20xf32>
  %wide = tensor.expand_shape %d [[0], [1], [2, 3]] output_shape [1, 4, 4, 5] : tensor<1x4x20xf32> into tensor<1x4x4x5xf32>
  %v = tensor.extract_slice %wide[0, 0, 0, 0] [1, 4, 4, 4] [1, 1, 1, 1] : tensor<1x4x4x5xf32> to tensor<1x4x4x4xf32>
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

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#ch3 = affine_map<(d0, d1, d2) -> (d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

/// Not joined: the activation's result is also returned (its compact
/// layout is needed), and an activation that adds a compact residual (its
/// other input depends on the image columns). Their 1x1 convs stay
/// matmuls on the compact result.
// CHECK-LABEL: func @pitched_other_reader
// CHECK: linalg.generic
// CHECK-NOT: arith.maximumf
// CHECK: } -> tensor<1x4x20xf32>
// CHECK: arith.maximumf
// CHECK: } -> tensor<1x4x4x4xf32>
// CHECK: linalg.matmul
// CHECK-LABEL: func @pitched_residual
// CHECK: } -> tensor<1x4x20xf32>
// CHECK: arith.addf
// CHECK: } -> tensor<1x4x4x4xf32>
// CHECK: linalg.matmul
func.func @pitched_other_reader(%t: tensor<1x4x20xf32>, %wd: tensor<4xf32>, %w: tensor<8x4x1x1xf32>) -> (tensor<8x16xf32>, tensor<1x4x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x20xf32>
  %d = linalg.generic {indexing_maps = [#id3, #ch3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t, %wd : tensor<1x4x20xf32>, tensor<4xf32>) outs(%e : tensor<1x4x20xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x4x20xf32>
  %wide = tensor.expand_shape %d [[0], [1], [2, 3]] output_shape [1, 4, 4, 5] : tensor<1x4x20xf32> into tensor<1x4x4x5xf32>
  %v = tensor.extract_slice %wide[0, 0, 0, 0] [1, 4, 4, 4] [1, 1, 1, 1] : tensor<1x4x4x5xf32> to tensor<1x4x4x4xf32>
  %e2 = tensor.empty() : tensor<1x4x4x4xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%v : tensor<1x4x4x4xf32>) outs(%e2 : tensor<1x4x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %lo = arith.maximumf %a, %zero : f32
    linalg.yield %lo : f32
  } -> tensor<1x4x4x4xf32>
  %col = tensor.collapse_shape %r [[0], [1], [2, 3]] : tensor<1x4x4x4xf32> into tensor<1x4x16xf32>
  %filter = tensor.collapse_shape %w [[0], [1, 2, 3]] : tensor<8x4x1x1xf32> into tensor<8x4xf32>
  %img = tensor.extract_slice %col[0, 0, 0] [1, 4, 16] [1, 1, 1] : tensor<1x4x16xf32> to tensor<4x16xf32>
  %ez = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%ez : tensor<8x16xf32>) -> tensor<8x16xf32>
  %m = linalg.matmul ins(%filter, %img : tensor<8x4xf32>, tensor<4x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %m, %r : tensor<8x16xf32>, tensor<1x4x4x4xf32>
}

func.func @pitched_residual(%t: tensor<1x4x20xf32>, %wd: tensor<4xf32>, %w: tensor<8x4x1x1xf32>, %res: tensor<1x4x4x4xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x20xf32>
  %d = linalg.generic {indexing_maps = [#id3, #ch3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t, %wd : tensor<1x4x20xf32>, tensor<4xf32>) outs(%e : tensor<1x4x20xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x4x20xf32>
  %wide = tensor.expand_shape %d [[0], [1], [2, 3]] output_shape [1, 4, 4, 5] : tensor<1x4x20xf32> into tensor<1x4x4x5xf32>
  %v = tensor.extract_slice %wide[0, 0, 0, 0] [1, 4, 4, 4] [1, 1, 1, 1] : tensor<1x4x4x5xf32> to tensor<1x4x4x4xf32>
  %e2 = tensor.empty() : tensor<1x4x4x4xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%v, %res : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) outs(%e2 : tensor<1x4x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
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

#id1 = affine_map<(d0) -> (d0)>
#bcast = affine_map<(d0, d1) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

/// A matmul with one column (EfficientNet's squeeze FC, C [8, 1]) read as
/// [8] by its bias + SiLU: the generic's loops expand by the unit dim, so
/// it reads C directly and becomes the matmul's epilogue. Not when C is
/// broadcast into a bigger iteration space (the excite multiply over
/// [8, 16]): that generic keeps its loops and stays a dispatch of its own.
// CHECK-LABEL: func @unit_column_epilogue
// CHECK: %[[M:.*]] = linalg.matmul
// CHECK: linalg.generic {{.*}} ins(%[[M]], %{{.*}} : tensor<8x1xf32>, tensor<8x1xf32>)
// CHECK-SAME: kiln.epilogue = 0 : i64
// CHECK: arith.negf
// CHECK: } -> tensor<8x1xf32>
// CHECK-LABEL: func @unit_column_broadcast
// CHECK: linalg.matmul
// CHECK: tensor.collapse_shape
// CHECK: linalg.generic
// CHECK-NOT: kiln.epilogue
// CHECK: } -> tensor<8x16xf32>
func.func @unit_column_epilogue(%w: tensor<8x32xf32>, %x: tensor<32x1xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8x1xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x1xf32>) -> tensor<8x1xf32>
  %m = linalg.matmul ins(%w, %x : tensor<8x32xf32>, tensor<32x1xf32>) outs(%acc : tensor<8x1xf32>) -> tensor<8x1xf32>
  %c = tensor.collapse_shape %m [[0, 1]] : tensor<8x1xf32> into tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %y = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%c, %b : tensor<8xf32>, tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    %n = arith.negf %s : f32
    %x2 = math.exp %n : f32
    %d = arith.addf %x2, %one : f32
    %r = arith.divf %s, %d : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %y : tensor<8xf32>
}

func.func @unit_column_broadcast(%w: tensor<8x32xf32>, %x: tensor<32x1xf32>, %act: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x1xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x1xf32>) -> tensor<8x1xf32>
  %m = linalg.matmul ins(%w, %x : tensor<8x32xf32>, tensor<32x1xf32>) outs(%acc : tensor<8x1xf32>) -> tensor<8x1xf32>
  %c = tensor.collapse_shape %m [[0, 1]] : tensor<8x1xf32> into tensor<8xf32>
  %e1 = tensor.empty() : tensor<8x16xf32>
  %y = linalg.generic {indexing_maps = [#bcast, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c, %act : tensor<8xf32>, tensor<8x16xf32>) outs(%e1 : tensor<8x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.mulf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

#in3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#sum = affine_map<(d0, d1, d2) -> (d0, d1)>
#unit = affine_map<(d0, d1, d2) -> (d0, d1, 0)>

/// A global average pool's sum [1, 4] read as [1, 4, 1] by its division:
/// the division's loops collapse, it reads the sums directly and joins the
/// reduction's row group. When the reader broadcasts the sums along the row
/// (the normalization of a layer norm or RMSNorm) it keeps its loops, reads
/// the sums directly as row scalars and joins the group too.
// CHECK-LABEL: func @pool_division_row_group
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: kiln.row_group = 0
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x4xf32>)
// CHECK-SAME: kiln.row_group = 0
// CHECK: arith.divf
// CHECK: tensor.expand_shape
// CHECK-LABEL: func @sum_broadcast
// CHECK: %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: kiln.row_group = 0
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[S]] : tensor<1x4x8xf32>, tensor<1x4xf32>)
// CHECK-SAME: kiln.row_group = 0
func.func @pool_division_row_group(%x: tensor<1x4x8xf32>) -> tensor<1x4x1xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %e = tensor.empty() : tensor<1x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4xf32>) -> tensor<1x4xf32>
  %s = linalg.generic {indexing_maps = [#in3, #sum], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<1x4x8xf32>) outs(%acc : tensor<1x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o fastmath<reassoc> : f32
    linalg.yield %r : f32
  } -> tensor<1x4xf32>
  %x3 = tensor.expand_shape %s [[0], [1, 2]] output_shape [1, 4, 1] : tensor<1x4xf32> into tensor<1x4x1xf32>
  %e3 = tensor.empty() : tensor<1x4x1xf32>
  %m = linalg.generic {indexing_maps = [#in3, #in3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x3 : tensor<1x4x1xf32>) outs(%e3 : tensor<1x4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.divf %a, %n : f32
    linalg.yield %d : f32
  } -> tensor<1x4x1xf32>
  return %m : tensor<1x4x1xf32>
}

func.func @sum_broadcast(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4xf32>) -> tensor<1x4xf32>
  %s = linalg.generic {indexing_maps = [#in3, #sum], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<1x4x8xf32>) outs(%acc : tensor<1x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o fastmath<reassoc> : f32
    linalg.yield %r : f32
  } -> tensor<1x4xf32>
  %x3 = tensor.expand_shape %s [[0], [1, 2]] output_shape [1, 4, 1] : tensor<1x4xf32> into tensor<1x4x1xf32>
  %e3 = tensor.empty() : tensor<1x4x8xf32>
  %m = linalg.generic {indexing_maps = [#in3, #unit, #in3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %x3 : tensor<1x4x8xf32>, tensor<1x4x1xf32>) outs(%e3 : tensor<1x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<1x4x8xf32>
  return %m : tensor<1x4x8xf32>
}

// -----

#window = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 * 2 + d2, d3 + d5)>
#patch = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>

/// A strided conv's patch gather reading a matmul result (random graph
/// 100557: MatMul then a 2x3 Conv of stride 2 over 3 rows) has unit loops,
/// but its window reads rows 2 * d4 + d2: dropping d4 would leave a plain d2
/// that reads 2 of the 3 rows, which the collapse of the loops that follows
/// took for all of them (a generic of 21 input rows and 14 output rows).
/// Only generics whose maps are projected permutations drop unit loops;
/// this one keeps its six.
// CHECK-LABEL: func @strided_window_of_a_matmul_result
// CHECK: linalg.matmul
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0, 1, 2], [3]] output_shape [7, 1, 3, 3]
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%{{.+}} : tensor<7x1x3x3xf32>) outs(%{{.+}} : tensor<7x1x2x3x1x1xf32>)
func.func @strided_window_of_a_matmul_result(%x: tensor<21x7xf32>, %w: tensor<7x3xf32>) -> tensor<7x1x2x3x1x1xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<21x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<21x3xf32>) -> tensor<21x3xf32>
  %m = linalg.matmul ins(%x, %w : tensor<21x7xf32>, tensor<7x3xf32>) outs(%f : tensor<21x3xf32>) -> tensor<21x3xf32>
  %image = tensor.expand_shape %m [[0, 1, 2], [3]] output_shape [7, 1, 3, 3] : tensor<21x3xf32> into tensor<7x1x3x3xf32>
  %e6 = tensor.empty() : tensor<7x1x2x3x1x1xf32>
  %patches = linalg.generic {indexing_maps = [#window, #patch], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%image : tensor<7x1x3x3xf32>) outs(%e6 : tensor<7x1x2x3x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<7x1x2x3x1x1xf32>
  return %patches : tensor<7x1x2x3x1x1xf32>
}

// -----

/// log_softmax's max and sum fill the same empty [rows] tensor, so the sum
/// may reuse the max's buffer. The subtraction read the max through a
/// unit-dim reshape (a view of that buffer, which kept them apart); it now
/// reads the max directly as a row scalar, and the three are one row group,
/// each row's max read before that row's sum is written.
// CHECK-LABEL: func @shared_init_view
// CHECK-COUNT-3: kiln.row_group = 0 : i64
// CHECK-NOT: tensor.expand_shape
func.func @shared_init_view(%x: tensor<3x4x5xf32>) -> tensor<3x4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<3x4x5xf32>) outs(%f : tensor<3x4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<3x4xf32>
  %col = tensor.expand_shape %max [[0], [1, 2]] output_shape [3, 4, 1] : tensor<3x4xf32> into tensor<3x4x1xf32>
  %e3 = tensor.empty() : tensor<3x4x5xf32>
  %sub = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %col : tensor<3x4x5xf32>, tensor<3x4x1xf32>) outs(%e3 : tensor<3x4x5xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %r = arith.subf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<3x4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%sub : tensor<3x4x5xf32>) outs(%z : tensor<3x4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc fastmath<reassoc> : f32
    linalg.yield %r : f32
  } -> tensor<3x4xf32>
  return %sum : tensor<3x4xf32>
}
