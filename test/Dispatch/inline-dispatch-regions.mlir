// RUN: kiln-opt %s --split-input-file --kiln-inline-dispatch-regions | FileCheck %s

/// Each region's body replaces it in place: region arguments become the
/// operands, results the yielded values; nested dispatches dissolve too.
/// Each kernel op keeps its region's identity: ids in program order, the
/// region's kind and nodes; the views and empty tensors around it do not.
// CHECK-LABEL: func @inline
// CHECK-NEXT: %[[E:.+]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NEXT: %[[M:.+]] = linalg.matmul {kiln.dispatch = {id = 0 : i64, kind = "contraction", nodes = ["mm"]}} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[E]] : tensor<4x16xf32>)
// CHECK-NEXT: %[[V:.+]] = tensor.expand_shape %[[M]]
// CHECK-NEXT: %[[N:.+]] = scf.if %arg2
// CHECK-NEXT: %[[G:.+]] = linalg.negf {kiln.dispatch = {id = 1 : i64, kind = "elementwise", nodes = []}} ins(%[[M]] : tensor<4x16xf32>) outs(%[[E]] : tensor<4x16xf32>)
// CHECK-NEXT: scf.yield %[[G]]
// CHECK: return %[[M]], %[[V]], %[[N]]
// CHECK-NOT: kiln.
func.func @inline(%a: tensor<4x8xf32>, %w: tensor<8x16xf32>, %c: i1) -> (tensor<4x16xf32>, tensor<2x2x16xf32>, tensor<4x16xf32>) {
  %e = tensor.empty() : tensor<4x16xf32>
  %r:2 = kiln.dispatch contraction ["mm"] (%x = %a, %y = %w, %o = %e) : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<2x2x16xf32>) {
    %m = linalg.matmul ins(%x, %y : tensor<4x8xf32>, tensor<8x16xf32>) outs(%o : tensor<4x16xf32>) -> tensor<4x16xf32>
    %v = tensor.expand_shape %m [[0, 1], [2]] output_shape [2, 2, 16] : tensor<4x16xf32> into tensor<2x2x16xf32>
    kiln.yield %m, %v : tensor<4x16xf32>, tensor<2x2x16xf32>
  }
  %n = scf.if %c -> tensor<4x16xf32> {
    %g = kiln.dispatch elementwise [] (%x = %r#0, %o = %e) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> {
      %g = linalg.negf ins(%x : tensor<4x16xf32>) outs(%o : tensor<4x16xf32>) -> tensor<4x16xf32>
      kiln.yield %g : tensor<4x16xf32>
    }
    scf.yield %g : tensor<4x16xf32>
  } else {
    scf.yield %e : tensor<4x16xf32>
  }
  return %r#0, %r#1, %n : tensor<4x16xf32>, tensor<2x2x16xf32>, tensor<4x16xf32>
}

// -----

/// The members of one region share its id (a matmul and its epilogue, a
/// row group); a fill inside the region is set-up, not a kernel op.
// CHECK-LABEL: func @members
// CHECK: linalg.fill ins
// CHECK: linalg.matmul {kiln.dispatch = {id = 0 : i64, kind = "contraction", nodes = ["fc", "relu"]}}
// CHECK: linalg.generic
// CHECK-SAME: kiln.dispatch = {id = 0 : i64, kind = "contraction", nodes = ["fc", "relu"]}, kiln.epilogue = 0 : i64
// CHECK: linalg.transpose
// CHECK-SAME: {kiln.dispatch = {id = 1 : i64, kind = "data_movement", nodes = ["t"]}}
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @members(%a: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<16x4xf32> {
  %r = kiln.dispatch contraction ["fc", "relu"] (%x = %a, %y = %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
    %m = linalg.matmul ins(%x, %y : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
    %g = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
        ins(%m : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) attrs = {kiln.epilogue = 0 : i64} {
    ^bb0(%in: f32, %out: f32):
      %v = arith.maximumf %in, %zero : f32
      linalg.yield %v : f32
    } -> tensor<4x16xf32>
    kiln.yield %g : tensor<4x16xf32>
  }
  %t = kiln.dispatch data_movement ["t"] (%x = %r) : (tensor<4x16xf32>) -> tensor<16x4xf32> {
    %e = tensor.empty() : tensor<16x4xf32>
    %u = linalg.transpose ins(%x : tensor<4x16xf32>) outs(%e : tensor<16x4xf32>) permutation = [1, 0]
    kiln.yield %u : tensor<16x4xf32>
  }
  return %t : tensor<16x4xf32>
}
