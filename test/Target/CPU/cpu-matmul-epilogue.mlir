// RUN: kiln-opt %s -split-input-file -verify-diagnostics --pass-pipeline="builtin.module(kiln-cpu-matmul{vector-width=16 tile-rows=6 tile-vectors=4})" | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>

/// A marked epilogue (bias along the columns, a per-row scale, relu) is
/// applied in the last depth block of each tile, to whole vectors, and the
/// result stored into its output D: the generic is gone, C is only written
/// by the other depth blocks. The deallocation of A between them moves after
/// the kernel.
// CHECK-LABEL: func @bias_scale_relu
// CHECK-NOT: linalg.generic
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %{{.*}}, %c600 : index
// CHECK: scf.for {{.*}} -> (vector<16xf32>
// CHECK: scf.if %[[LAST]] {
// CHECK: %[[BIAS:.*]] = vector.load %{{.*}} : memref<64xf32>, vector<16xf32>
// CHECK: %[[S:.*]] = memref.load %{{.*}} : memref<300xf32>
// CHECK: %[[SPLAT:.*]] = vector.broadcast %[[S]] : f32 to vector<16xf32>
// CHECK: %[[SUM:.*]] = arith.addf %{{.*}}, %[[BIAS]] : vector<16xf32>
// CHECK: %[[MUL:.*]] = arith.mulf %[[SUM]], %[[SPLAT]] : vector<16xf32>
// CHECK: %[[ZERO:.*]] = vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK: %[[RELU:.*]] = arith.maximumf %[[MUL]], %[[ZERO]] : vector<16xf32>
// CHECK: vector.store %[[RELU]], %[[D:.*]][
// CHECK: } else {
// CHECK: vector.store %{{.*}}, %[[C:.*]][
// CHECK: memref.dealloc %arg0
// CHECK-NOT: linalg.generic
func.func @bias_scale_relu(%a: memref<300x600xf32>, %b: memref<600x64xf32>, %c: memref<300x64xf32>, %bias: memref<64xf32>, %scale: memref<300xf32>, %d: memref<300x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.matmul ins(%a, %b : memref<300x600xf32>, memref<600x64xf32>) outs(%c : memref<300x64xf32>)
  memref.dealloc %a : memref<300x600xf32>
  linalg.generic {indexing_maps = [#id, #col, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias, %scale : memref<300x64xf32>, memref<64xf32>, memref<300xf32>) outs(%d : memref<300x64xf32>)
      attrs = {kiln.epilogue = 0 : i64} {
  ^bb0(%x: f32, %y: f32, %s: f32, %o: f32):
    %sum = arith.addf %x, %y : f32
    %mul = arith.mulf %sum, %s : f32
    %r = arith.maximumf %mul, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

/// A shared kernel function (B is not a constant) takes the epilogue's
/// other inputs and output as arguments; the residual is masked at the
/// column edge (70 columns), and the constant of the body is cloned in.
// CHECK-LABEL: func.func private @residual
// CHECK: call @kiln_matmul_0(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, memref<8x4xf32, strided<[4, 1], offset: ?>>, memref<4x70xf32, strided<[70, 1], offset: ?>>, memref<8x70xf32, strided<[70, 1], offset: ?>>, memref<8x70xf32, strided<[70, 1], offset: ?>>, memref<8x70xf32, strided<[70, 1], offset: ?>>) -> ()
// CHECK-NOT: linalg.generic
// CHECK: func.func private @kiln_matmul_0(
// CHECK-NEXT: arith.constant 5.000000e-01 : f32
// CHECK: vector.maskedload %{{.*}} : memref<8x70xf32, strided<[70, 1], offset: ?>>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: arith.addf %{{.*}} : vector<16xf32>
// CHECK: arith.mulf %{{.*}} : vector<16xf32>
// CHECK: vector.maskedstore
func.func private @residual(%host: !llvm.ptr {kiln.host}, %a: memref<8x4xf32>, %b: memref<4x70xf32>, %c: memref<8x70xf32>, %res: memref<8x70xf32>, %d: memref<8x70xf32>) {
  %half = arith.constant 0.5 : f32
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x70xf32>) outs(%c : memref<8x70xf32>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%res, %c : memref<8x70xf32>, memref<8x70xf32>) outs(%d : memref<8x70xf32>)
      attrs = {kiln.epilogue = 1 : i64} {
  ^bb0(%r: f32, %x: f32, %o: f32):
    %sum = arith.addf %x, %r : f32
    %h = arith.mulf %sum, %half : f32
    linalg.yield %h : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

/// A marked epilogue the kernel cannot apply (something else writes C in
/// between) is an error: the dispatch stage counted the two as one kernel.
func.func @not_fusable(%a: memref<8x4xf32>, %b: memref<4x64xf32>, %c: memref<8x64xf32>, %d: memref<8x64xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x64xf32>) outs(%c : memref<8x64xf32>)
  linalg.fill ins(%one : f32) outs(%c : memref<8x64xf32>)
  // expected-error @below {{matmul epilogue could not be fused into the matmul kernel}}
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<8x64xf32>) outs(%d : memref<8x64xf32>) attrs = {kiln.epilogue = 0 : i64} {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

/// kiln-cpu-matmul runs after kiln-cpu-row-kernels and checks the groups
/// the dispatch stage counted as one kernel: a row group member left over
/// is an error...
func.func @row_group_left(%x: memref<8x16xf32>, %y: memref<8x16xf32>) {
  // expected-error @below {{row group 3 was not emitted as one row kernel}}
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x16xf32>) outs(%y : memref<8x16xf32>) attrs = {kiln.row_group = 3 : i64} {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

/// ... and so are two kernels between the trace hooks of one grouped dispatch.
module {
  func.func private @kiln_entry(%host: !llvm.ptr {kiln.host}, %x: memref<8x16xf32>, %y: memref<8x16xf32>) {
    %c0 = arith.constant 0 : i32
    call @kiln_trace_begin(%host, %c0) {kiln.dispatch_group} : (!llvm.ptr, i32) -> ()
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<8x16xf32>) outs(%y : memref<8x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.mulf %a, %a : f32
      linalg.yield %r : f32
    }
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%y : memref<8x16xf32>) outs(%x : memref<8x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.addf %a, %a : f32
      linalg.yield %r : f32
    }
    // expected-error @below {{dispatch 0 became 2 kernels in the generated code}}
    call @kiln_trace_end(%host, %c0) : (!llvm.ptr, i32) -> ()
    return
  }
  func.func private @kiln_trace_begin(!llvm.ptr, i32)
  func.func private @kiln_trace_end(!llvm.ptr, i32)
}
