// RUN: kiln-opt %s --split-input-file --kiln-instrument-dispatches | FileCheck %s

/// Without kiln.dispatch ids (IR that had no regions), each linalg op but
/// the fill is a dispatch of its own, bracketed by the trace hooks with its
/// index; the names (op, then the fused model nodes) become a module attribute,
/// and so do their (FLOPs, bytes) estimates: the 4x8x16 matmul 2*4*8*16 FLOPs,
/// reading x, w and the filled accumulator and writing it (4*(32+128+2*64)
/// bytes); the relu one max per element, 64 elements read and written.
// CHECK: module attributes {kiln.dispatch_costs = array<i64: 1024, 1152, 64, 512>, kiln.dispatches = ["matmul fc", "generic bias,relu"]}
// CHECK-LABEL: func.func private @kiln_entry
// CHECK-SAME: (%[[HOST:.+]]: !llvm.ptr {kiln.host}
// CHECK: linalg.fill
// CHECK: %[[ID0:.+]] = arith.constant 0 : i32
// CHECK-NEXT: call @kiln_trace_begin(%[[HOST]], %[[ID0]]) : (!llvm.ptr, i32) -> ()
// CHECK-NEXT: linalg.matmul
// CHECK-NEXT: call @kiln_trace_end(%[[HOST]], %[[ID0]])
// CHECK: %[[ID1:.+]] = arith.constant 1 : i32
// CHECK-NEXT: call @kiln_trace_begin(%[[HOST]], %[[ID1]])
// CHECK-NEXT: linalg.generic
// CHECK: call @kiln_trace_end(%[[HOST]], %[[ID1]])
// CHECK: func.func private @kiln_trace_begin(!llvm.ptr, i32)
// CHECK: func.func private @kiln_trace_end(!llvm.ptr, i32)
#map = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func private @kiln_entry(%host: !llvm.ptr {kiln.host}, %x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
    %m = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32> loc("fc")
    %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
        ins(%m : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = arith.maximumf %in, %zero : f32
      linalg.yield %v : f32
    } -> tensor<4x16xf32> loc(fused["bias", "relu"])
    return %r : tensor<4x16xf32>
  }
}

// -----

/// Without a host argument (before kiln-prepare-entry) nothing changes.
// CHECK-NOT: kiln.dispatches
// CHECK-NOT: kiln_trace_begin
func.func private @kiln_entry(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

/// A matmul and its marked epilogue that came out of one kiln.dispatch
/// (one id) are one dispatch: one begin/end pair around both, named after
/// the root with the region's nodes.
// CHECK: module attributes {kiln.dispatch_costs = array<i64: 1088, 1664>, kiln.dispatches = ["matmul fc,bias,relu"]}
// CHECK: %[[ID:.+]] = arith.constant 0 : i32
// CHECK-NEXT: call @kiln_trace_begin(%{{.*}}, %[[ID]])
// CHECK-NEXT: linalg.matmul
// CHECK-NEXT: linalg.generic
// CHECK: call @kiln_trace_end(%{{.*}}, %[[ID]])
// CHECK-NOT: call @kiln_trace_begin
#map = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func private @kiln_entry(%host: !llvm.ptr {kiln.host}, %x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
    %m = linalg.matmul {kiln.dispatch = {id = 0 : i64, kind = "contraction", nodes = ["fc", "bias", "relu"]}}
        ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32> loc("fc")
    %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
        ins(%m : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>)
        attrs = {kiln.dispatch = {id = 0 : i64, kind = "contraction", nodes = ["fc", "bias", "relu"]}, kiln.epilogue = 0 : i64} {
    ^bb0(%in: f32, %out: f32):
      %v = arith.maximumf %in, %zero : f32
      linalg.yield %v : f32
    } -> tensor<4x16xf32> loc(fused["bias", "relu"])
    return %r : tensor<4x16xf32>
  }
}

// -----

/// The members of a row group are one dispatch (the fill between them is
/// inside it: no hook may split what the row kernels emit as one loop).
// CHECK: module attributes {kiln.dispatch_costs = array<i64: 64, 432>, kiln.dispatches = ["generic max,sub"]}
// CHECK: call @kiln_trace_begin
// CHECK-NEXT: linalg.generic
// CHECK: linalg.fill
// CHECK-NEXT: linalg.generic
// CHECK: } -> tensor<4x8xf32>
// CHECK-NEXT: call @kiln_trace_end
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
module {
  func.func private @kiln_entry(%host: !llvm.ptr {kiln.host}, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %ninf = arith.constant 0xFF800000 : f32
    %e = tensor.empty() : tensor<4xf32>
    %e2 = tensor.empty() : tensor<4x8xf32>
    %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<4x8xf32>) outs(%f : tensor<4xf32>)
        attrs = {kiln.dispatch = {id = 0 : i64, kind = "row_group", nodes = ["max", "sub"]}, kiln.row_group = 0 : i64} {
    ^bb0(%in: f32, %acc: f32):
      %v = arith.maximumf %in, %acc : f32
      linalg.yield %v : f32
    } -> tensor<4xf32> loc("max")
    %g = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %s = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %m : tensor<4x8xf32>, tensor<4xf32>) outs(%g : tensor<4x8xf32>)
        attrs = {kiln.dispatch = {id = 0 : i64, kind = "row_group", nodes = ["max", "sub"]}, kiln.row_group = 0 : i64} {
    ^bb0(%in: f32, %mx: f32, %out: f32):
      %v = arith.subf %in, %mx : f32
      linalg.yield %v : f32
    } -> tensor<4x8xf32> loc("sub")
    return %s : tensor<4x8xf32>
  }
}

// -----

/// The grouping is read from the ids, not found again: a marked epilogue
/// of another dispatch (id 1) gets hooks of its own, as does every op
/// without an id.
// CHECK: module attributes {kiln.dispatch_costs = array<i64: 1024, 1152, 64, 512, 64, 512>, kiln.dispatches = ["matmul fc", "generic relu", "#2 generic"]}
// CHECK-COUNT-3: call @kiln_trace_begin
// CHECK-NOT: call @kiln_trace_begin
#map = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func private @kiln_entry(%host: !llvm.ptr {kiln.host}, %x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
    %m = linalg.matmul {kiln.dispatch = {id = 0 : i64, kind = "contraction", nodes = ["fc"]}}
        ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32> loc("fc")
    %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
        ins(%m : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>)
        attrs = {kiln.dispatch = {id = 1 : i64, kind = "elementwise", nodes = ["relu"]}, kiln.epilogue = 0 : i64} {
    ^bb0(%in: f32, %out: f32):
      %v = arith.maximumf %in, %zero : f32
      linalg.yield %v : f32
    } -> tensor<4x16xf32> loc("relu")
    %s = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
        ins(%r : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) attrs = {kiln.epilogue = 0 : i64} {
    ^bb0(%in: f32, %out: f32):
      %v = arith.maximumf %in, %zero : f32
      linalg.yield %v : f32
    } -> tensor<4x16xf32>
    return %s : tensor<4x16xf32>
  }
}
