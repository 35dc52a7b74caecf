// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-form-dispatch-regions))" -split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#rowv = affine_map<(d0, d1) -> (d0)>

/// Ops that stay outside: constants, an empty tensor two dispatches share,
/// a pad (fill + insert_slice into a bigger tensor), reshapes and slices
/// between dispatches. Each unmarked linalg op is a dispatch of its own,
/// of its kind; a region yields what the function reads of it.
// CHECK-LABEL: func @outside
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[E:.+]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NEXT: %[[ADD:.+]] = kiln.dispatch elementwise ["add"] (%{{.+}} = %arg0, %{{.+}} = %arg1, %{{.+}} = %[[E]]) : (tensor<4x16xf32>, tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> {
// CHECK-NEXT: linalg.generic
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[FLAT:.+]] = tensor.collapse_shape %[[ADD]]
// CHECK-NEXT: %[[P:.+]] = tensor.empty() : tensor<6x16xf32>
// CHECK-NEXT: %[[PF:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[P]] : tensor<6x16xf32>)
// CHECK-NEXT: %[[PAD:.+]] = tensor.insert_slice %[[ADD]] into %[[PF]]
// CHECK-NEXT: %[[MID:.+]] = tensor.extract_slice %[[PAD]][2, 0] [4, 16] [1, 1]
// CHECK-NEXT: %[[T:.+]] = kiln.dispatch data_movement ["transpose"] (%{{.+}} = %[[MID]], %{{.+}} = %[[E]]) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> {
// CHECK-NEXT: linalg.generic
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[SUM:.+]] = kiln.dispatch reduction ["sum"] (%[[Z:.+]] = %[[ZERO]], %[[TA:.+]] = %[[T]]) : (f32, tensor<4x16xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %[[E4:.+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[Z4:.+]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E4]] : tensor<4xf32>)
// CHECK-NEXT: linalg.generic {{.+}} ins(%[[TA]] : tensor<4x16xf32>) outs(%[[Z4]] : tensor<4xf32>)
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[ADD]], %[[FLAT]], %[[SUM]]
func.func @outside(%x: tensor<4x16xf32>, %b: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<64xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %add = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32> loc("add")
  %flat = tensor.collapse_shape %add [[0, 1]] : tensor<4x16xf32> into tensor<64xf32>
  %p = tensor.empty() : tensor<6x16xf32>
  %pf = linalg.fill ins(%zero : f32) outs(%p : tensor<6x16xf32>) -> tensor<6x16xf32>
  %padded = tensor.insert_slice %add into %pf[1, 0] [4, 16] [1, 1] : tensor<4x16xf32> into tensor<6x16xf32>
  %mid = tensor.extract_slice %padded[2, 0] [4, 16] [1, 1] : tensor<6x16xf32> to tensor<4x16xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mid : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%u: f32, %o: f32):
    linalg.yield %u : f32
  } -> tensor<4x16xf32> loc("transpose")
  %e4 = tensor.empty() : tensor<4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #rowv], iterator_types = ["parallel", "reduction"]}
      ins(%t : tensor<4x16xf32>) outs(%z4 : tensor<4xf32>) {
  ^bb0(%u: f32, %acc: f32):
    %s = arith.addf %u, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32> loc("sum")
  return %add, %flat, %sum : tensor<4x16xf32>, tensor<64xf32>, tensor<4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

/// A marked epilogue joins the matmul right before it; the views between
/// them are inside, and so is what only the dispatch reads. An empty
/// tensor and a constant for later ops that sat between them move after
/// the region; the matmul's result, which the function also reads, is a
/// second result.
// CHECK-LABEL: func @epilogue
// CHECK-NEXT: %[[R:.+]]:2 = kiln.dispatch contraction ["mm", "epi"] (%{{.+}} = %arg0, %{{.+}} = %arg1) : (tensor<4x8xf32>, tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<2x2x16xf32>) {
// CHECK-NEXT: %[[E:.+]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NEXT: %[[M:.+]] = linalg.matmul
// CHECK-NEXT: %[[V:.+]] = tensor.expand_shape %[[M]]
// CHECK-NEXT: %[[E3:.+]] = tensor.empty() : tensor<2x2x16xf32>
// CHECK-NEXT: %[[G:.+]] = linalg.generic {{.+}} ins(%[[V]] : tensor<2x2x16xf32>) outs(%[[E3]] : tensor<2x2x16xf32>) attrs = {kiln.epilogue = 0 : i64}
// CHECK: kiln.yield %[[M]], %[[G]] : tensor<4x16xf32>, tensor<2x2x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[LATER:.+]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[F:.+]] = kiln.dispatch elementwise [] (%{{.+}} = %[[ONE]], %{{.+}} = %[[LATER]])
// CHECK: return %[[R]]#0, %[[R]]#1, %[[F]]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @epilogue(%a: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<2x2x16xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<4x16xf32>
  %m = linalg.matmul ins(%a, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32> loc("mm")
  %v = tensor.expand_shape %m [[0, 1], [2]] output_shape [2, 2, 16] : tensor<4x16xf32> into tensor<2x2x16xf32>
  %later = tensor.empty() : tensor<8xf32>
  %one = arith.constant 1.0 : f32
  %e3 = tensor.empty() : tensor<2x2x16xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v : tensor<2x2x16xf32>) outs(%e3 : tensor<2x2x16xf32>) attrs = {kiln.epilogue = 0 : i64} {
  ^bb0(%u: f32, %o: f32):
    %s = math.exp %u : f32
    linalg.yield %s : f32
  } -> tensor<2x2x16xf32> loc("epi")
  %f = linalg.fill ins(%one : f32) outs(%later : tensor<8xf32>) -> tensor<8xf32>
  %n = linalg.negf ins(%f : tensor<8xf32>) outs(%later : tensor<8xf32>) -> tensor<8xf32>
  return %m, %r, %n : tensor<4x16xf32>, tensor<2x2x16xf32>, tensor<8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

/// A generic marked as the epilogue of a matmul that is not the dispatch
/// right before it (another op runs in between) is not joined: three
/// dispatches, the generic an elementwise one.
// CHECK-LABEL: func @not_joined
// CHECK: kiln.dispatch contraction
// CHECK-NEXT: linalg.matmul
// CHECK: kiln.dispatch elementwise
// CHECK-NEXT: linalg.negf
// CHECK: kiln.dispatch elementwise
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: linalg.generic
// CHECK-SAME: kiln.epilogue = 0
func.func @not_joined(%a: tensor<4x8xf32>, %w: tensor<8x16xf32>, %y: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %e = tensor.empty() : tensor<4x16xf32>
  %m = linalg.matmul ins(%a, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %n = linalg.negf ins(%y : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %e2 = tensor.empty() : tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<4x16xf32>) outs(%e2 : tensor<4x16xf32>) attrs = {kiln.epilogue = 0 : i64} {
  ^bb0(%u: f32, %o: f32):
    %s = math.exp %u : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %r, %n : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

/// Two row groups side by side are two dispatches (the group number
/// tells them apart); a fill alone is no dispatch.
// CHECK-LABEL: func @row_groups
// CHECK: kiln.dispatch row_group
// CHECK-COUNT-2: kiln.row_group = 0
// CHECK: kiln.yield
// CHECK: kiln.dispatch row_group
// CHECK-COUNT-2: kiln.row_group = 1
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: arith.constant
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: return
func.func @row_groups(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.negf ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) attrs = {kiln.row_group = 0 : i64} {
  ^bb0(%u: f32, %o: f32):
    linalg.yield %u : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%b : tensor<8xf32>) outs(%e : tensor<8xf32>) attrs = {kiln.row_group = 0 : i64} {
  ^bb0(%u: f32, %o: f32):
    linalg.yield %u : f32
  } -> tensor<8xf32>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%c : tensor<8xf32>) outs(%e : tensor<8xf32>) attrs = {kiln.row_group = 1 : i64} {
  ^bb0(%u: f32, %o: f32):
    linalg.yield %u : f32
  } -> tensor<8xf32>
  %f = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%d : tensor<8xf32>) outs(%e : tensor<8xf32>) attrs = {kiln.row_group = 1 : i64} {
  ^bb0(%u: f32, %o: f32):
    linalg.yield %u : f32
  } -> tensor<8xf32>
  %zero = arith.constant 0.0 : f32
  %g = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %f, %g : tensor<8xf32>, tensor<8xf32>
}

// -----

/// Dispatches in the branches of control flow are formed there; an
/// existing dispatch is left alone.
// CHECK-LABEL: func @nested
// CHECK: scf.if
// CHECK-NEXT: kiln.dispatch elementwise
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: linalg.negf
// CHECK: } else {
// CHECK-NEXT: scf.yield %arg1
// CHECK: kiln.dispatch elementwise ["done"]
// CHECK-NEXT: linalg.negf
// CHECK-NOT: kiln.dispatch
// CHECK: return
func.func @nested(%c: i1, %x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %r = scf.if %c -> tensor<8xf32> {
    %e = tensor.empty() : tensor<8xf32>
    %n = linalg.negf ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
    scf.yield %n : tensor<8xf32>
  } else {
    scf.yield %x : tensor<8xf32>
  }
  %d = kiln.dispatch elementwise ["done"] (%a = %x) : (tensor<8xf32>) -> tensor<8xf32> {
    %n = linalg.negf ins(%a : tensor<8xf32>) outs(%a : tensor<8xf32>) -> tensor<8xf32>
    kiln.yield %n : tensor<8xf32>
  }
  return %r, %d : tensor<8xf32>, tensor<8xf32>
}
