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

/// ... and so is a marked epilogue that came out of another kiln.dispatch
/// than the matmul (kiln-inline-dispatch-regions): the kernel applies only
/// the epilogue of its own dispatch.
func.func @other_dispatch(%a: memref<8x4xf32>, %b: memref<4x64xf32>, %c: memref<8x64xf32>, %d: memref<8x64xf32>) {
  linalg.matmul {kiln.dispatch = {id = 0 : i64, kind = "contraction", nodes = ["mm"]}}
      ins(%a, %b : memref<8x4xf32>, memref<4x64xf32>) outs(%c : memref<8x64xf32>)
  // expected-error @below {{matmul epilogue could not be fused into the matmul kernel}}
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<8x64xf32>) outs(%d : memref<8x64xf32>)
      attrs = {kiln.dispatch = {id = 1 : i64, kind = "elementwise", nodes = ["relu"]}, kiln.epilogue = 0 : i64} {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

#perm = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#head = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

/// Bias + head split: the epilogue reads C [16, 64] as [2, 8, 4, 16] and
/// writes [2, 4, 8, 16]. Each tile row splits into (b, s), each column
/// vector into (h, d); the bias is loaded at (h, d), the result stored at
/// (b, h, s, d).
// CHECK-LABEL: func @head_split
// CHECK-NOT: linalg.generic
// CHECK: scf.if
// CHECK: %[[S:.*]] = arith.remui %{{.*}}, %c8{{.*}} : index
// CHECK: %[[B:.*]] = arith.divui %{{.*}}, %c8{{.*}} : index
// CHECK: %[[D:.*]] = arith.remui %{{.*}}, %c16{{.*}} : index
// CHECK: %[[H:.*]] = arith.divui %{{.*}}, %c16{{.*}} : index
// CHECK: %[[BIAS:.*]] = vector.load %arg3[%[[H]], %[[D]]] : memref<4x16xf32>, vector<16xf32>
// CHECK: %[[SUM:.*]] = arith.addf %{{.*}}, %[[BIAS]] : vector<16xf32>
// CHECK: vector.store %[[SUM]], %arg4[%[[B]], %[[H]], %[[S]], %[[D]]] : memref<2x4x8x16xf32>, vector<16xf32>
// CHECK-NOT: linalg.generic
func.func @head_split(%a: memref<16x32xf32>, %b: memref<32x64xf32>, %c: memref<16x64xf32>, %bias: memref<4x16xf32>, %d: memref<2x4x8x16xf32>) {
  linalg.matmul ins(%a, %b : memref<16x32xf32>, memref<32x64xf32>) outs(%c : memref<16x64xf32>)
  %x = memref.expand_shape %c [[0, 1], [2, 3]] output_shape [2, 8, 4, 16] : memref<16x64xf32> into memref<2x8x4x16xf32>
  linalg.generic {indexing_maps = [#perm, #head, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %bias : memref<2x8x4x16xf32>, memref<4x16xf32>) outs(%d : memref<2x4x8x16xf32>)
      attrs = {kiln.epilogue = 0 : i64} {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#perm = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

/// Head merge after a batch_matmul: each batch (b, h) is one shared matmul
/// kernel whose epilogue stores into the [1, 16, 1, 16] slice of the
/// merged [2, 16, 4, 16] output at (b, 0, h, 0); the zero fill of C is
/// dropped (the kernels start from zero accumulators).
// CHECK-LABEL: func.func private @head_merge
// CHECK-NOT: linalg.fill
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c1 {
// CHECK: %[[H:.*]] = arith.remui %[[I]], %c4 : index
// CHECK: %[[B:.*]] = arith.divui %[[I]], %c4 : index
// CHECK: %[[OUT:.*]] = memref.subview %arg4[%[[B]], 0, %[[H]], 0] [1, 16, 1, 16] [1, 1, 1, 1] : memref<2x16x4x16xf32> to memref<1x16x1x16xf32, strided<[1024, 64, 16, 1], offset: ?>>
// CHECK: call @kiln_matmul_0(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[OUT]])
// CHECK-NEXT: }
// CHECK-NOT: linalg.generic
// CHECK: func.func private @kiln_matmul_0(
// CHECK: vector.store %{{.*}}, %arg4[%c0{{.*}}, %{{.*}}, %c0{{.*}}, %{{.*}}] : memref<1x16x1x16xf32, strided<[1024, 64, 16, 1], offset: ?>>, vector<16xf32>
func.func private @head_merge(%host: !llvm.ptr {kiln.host}, %p: memref<8x16x16xf32>, %v: memref<8x16x16xf32>, %c: memref<8x16x16xf32>, %d: memref<2x16x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x16x16xf32>)
  linalg.batch_matmul ins(%p, %v : memref<8x16x16xf32>, memref<8x16x16xf32>) outs(%c : memref<8x16x16xf32>)
  %x = memref.expand_shape %c [[0, 1], [2], [3]] output_shape [2, 4, 16, 16] : memref<8x16x16xf32> into memref<2x4x16x16xf32>
  linalg.generic {indexing_maps = [#perm, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<2x4x16x16xf32>) outs(%d : memref<2x16x4x16xf32>) attrs = {kiln.epilogue = 0 : i64} {
  ^bb0(%u: f32, %o: f32):
    linalg.yield %u : f32
  }
  return
}

// -----

#perm = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

/// A head split the kernel cannot store (heads of 8 columns: a vector would
/// span two of them) is an error when marked.
func.func @narrow_heads(%a: memref<16x32xf32>, %b: memref<32x64xf32>, %c: memref<16x64xf32>, %d: memref<2x8x8x8xf32>) {
  linalg.matmul ins(%a, %b : memref<16x32xf32>, memref<32x64xf32>) outs(%c : memref<16x64xf32>)
  %x = memref.expand_shape %c [[0, 1], [2, 3]] output_shape [2, 8, 8, 8] : memref<16x64xf32> into memref<2x8x8x8xf32>
  // expected-error @below {{matmul epilogue could not be fused into the matmul kernel}}
  linalg.generic {indexing_maps = [#perm, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<2x8x8x8xf32>) outs(%d : memref<2x8x8x8xf32>) attrs = {kiln.epilogue = 0 : i64} {
  ^bb0(%u: f32, %o: f32):
    linalg.yield %u : f32
  }
  return
}

// -----

#w = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
#x = affine_map<(d0, d1, d2, d3, d4) -> (d2, d1 + d3 * 6 + d4)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>

/// A conv's taps (kiln.conv_taps) are one matmul with K = C*kh*kw = 12: A
/// is the weights collapsed to [4, 12], B row k is input row k / 4 shifted
/// by 6 * (k % 4 / 2) + k % 4 % 2 columns, packed with masked vector loads
/// from the input. The zero fill of C is dropped.
// CHECK-LABEL: func @conv_taps
// CHECK-NOT: linalg.fill
// CHECK: memref.collapse_shape %arg0 {{\[\[}}0], [1, 2, 3]] : memref<4x3x2x2xf32> into memref<4x12xf32>
// CHECK: %[[C:.*]] = arith.divui %[[ROW:.*]], %c4{{.*}} : index
// CHECK: %[[T:.*]] = arith.remui %[[ROW]], %c4{{.*}} : index
// CHECK: %[[I:.*]] = arith.divui %[[T]], %c2{{.*}} : index
// CHECK: %[[J:.*]] = arith.remui %[[T]], %c2{{.*}} : index
// CHECK: arith.muli %[[I]], %c6
// CHECK: vector.maskedload %arg1[%[[C]], %{{.*}}]{{.*}} : memref<3x40xf32>
// CHECK-NOT: linalg.generic
func.func @conv_taps(%w: memref<4x3x2x2xf32>, %x: memref<3x40xf32>, %c: memref<4x30xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x30xf32>)
  linalg.generic {indexing_maps = [#w, #x, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%w, %x : memref<4x3x2x2xf32>, memref<3x40xf32>) outs(%c : memref<4x30xf32>) attrs = {kiln.conv_taps} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#w = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
#x = affine_map<(d0, d1, d2, d3, d4) -> (d2, d1 + d3 * 18 + d4)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1)>

/// The taps' epilogue at the padded row pitch 18 (the image rows are 16
/// wide): each column vector p0 is split at the end of image row
/// y0 = p0 / 18 (x0 = p0 % 18): lanes [0, 16 - x0) in row y0 from x0,
/// lanes [18 - x0, 18 - x0 + 16) in row min(y0 + 1, 3) addressed from
/// x0 - 18. The residual is loaded in both parts and blended; the result
/// goes out in two masked stores.
// CHECK-LABEL: func @conv_taps_pitch
// CHECK-NOT: linalg.generic
// CHECK: %[[X:.*]] = arith.remui %[[P:.*]], %c18{{.*}} : index
// CHECK: %[[Y:.*]] = arith.divui %[[P]], %c18{{.*}} : index
// CHECK: %[[Y1:.*]] = arith.addi %[[Y]], %c1{{.*}} : index
// CHECK: %[[YB:.*]] = arith.minui %[[Y1]], %c3{{.*}} : index
// CHECK: %[[XB:.*]] = arith.subi %[[X]], %c18{{.*}} : index
// CHECK: %[[FIRST:.*]] = vector.create_mask
// CHECK: %[[SECOND:.*]] = arith.xori
// CHECK: %[[A:.*]] = vector.maskedload %arg4[%c0{{.*}}, %{{.*}}, %[[Y]], %[[X]]], %[[FIRST]]
// CHECK: %[[B:.*]] = vector.maskedload %arg4[%c0{{.*}}, %{{.*}}, %[[YB]], %[[XB]]], %[[SECOND]]
// CHECK: arith.select %[[SECOND]], %[[B]], %[[A]]
// CHECK: vector.maskedstore %arg5[%c0{{.*}}, %{{.*}}, %[[Y]], %[[X]]], %[[FIRST]]
// CHECK: vector.maskedstore %arg5[%c0{{.*}}, %{{.*}}, %[[YB]], %[[XB]]], %[[SECOND]]
func.func @conv_taps_pitch(%w: memref<4x3x3x3xf32>, %x: memref<3x110xf32>, %c: memref<4x72xf32>, %b: memref<4xf32>, %res: memref<1x4x4x16xf32>, %d: memref<1x4x4x16xf32>) {
  linalg.generic {indexing_maps = [#w, #x, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%w, %x : memref<4x3x3x3xf32>, memref<3x110xf32>) outs(%c : memref<4x72xf32>) attrs = {kiln.conv_taps} {
  ^bb0(%a: f32, %v: f32, %o: f32):
    %m = arith.mulf %a, %v : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  %wide = memref.expand_shape %c [[0, 1], [2, 3]] output_shape [1, 4, 4, 18] : memref<4x72xf32> into memref<1x4x4x18xf32>
  %img = memref.subview %wide[0, 0, 0, 0] [1, 4, 4, 16] [1, 1, 1, 1] : memref<1x4x4x18xf32> to memref<1x4x4x16xf32, strided<[288, 72, 18, 1]>>
  linalg.generic {indexing_maps = [#id4, #chan, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%img, %b, %res : memref<1x4x4x16xf32, strided<[288, 72, 18, 1]>>, memref<4xf32>, memref<1x4x4x16xf32>) outs(%d : memref<1x4x4x16xf32>) attrs = {kiln.epilogue = 0 : i64} {
  ^bb0(%u: f32, %v: f32, %r: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    %s2 = arith.addf %s, %r : f32
    linalg.yield %s2 : f32
  }
  return
}

// -----

#w = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
#x = affine_map<(d0, d1, d2, d3, d4) -> (d2, (d1 floordiv 4) * 20 + (d1 mod 4) * 2 + d3 * 10 + d4)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>

/// The taps of a 3x3 stride-2 conv on a padded 10x10 input (an implicit
/// GEMM, no im2col buffer): B row k = (c, i, j) reads, per vector of
/// output columns p, input row c at 10i + j + (p / 4) * 20 + (p % 4) * 2;
/// the lanes' offsets are computed once per column panel, and lie in two
/// windows of 32 elements (rows 0-1 and 2-3 of the 4x4 output): two masked
/// loads and a vpermi2ps per window (cpu-matmul-tap-windows.mlir), no
/// gather.
// CHECK-LABEL: func @conv_taps_strided
// CHECK-NOT: linalg.generic
// CHECK: %[[P:.*]] = arith.addi %{{.*}}, %cst{{.*}} : vector<16xi32>
// CHECK: %[[Y:.*]] = arith.divui %[[P]], %cst{{.*}} : vector<16xi32>
// CHECK: %[[X:.*]] = arith.remui %[[P]], %cst{{.*}} : vector<16xi32>
// CHECK: %[[YO:.*]] = arith.muli %[[Y]], %cst{{.*}} : vector<16xi32>
// CHECK: %[[XO:.*]] = arith.muli %[[X]], %cst{{.*}} : vector<16xi32>
// CHECK: %[[PIX:.*]] = arith.addi %[[YO]], %[[XO]] : vector<16xi32>
// CHECK: vector.reduction <minui>
// CHECK: scf.for
// CHECK: %[[C:.*]] = arith.divui %{{.*}}, %c9{{.*}} : index
// CHECK: vector.maskedload %arg1[%[[C]], %{{.*}}]
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpermi2var.ps.512"
// CHECK-NOT: vector.gather
func.func @conv_taps_strided(%w: memref<4x3x3x3xf32>, %x: memref<3x100xf32>, %c: memref<4x16xf32>) {
  linalg.generic {indexing_maps = [#w, #x, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%w, %x : memref<4x3x3x3xf32>, memref<3x100xf32>) outs(%c : memref<4x16xf32>) attrs = {kiln.conv_taps} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#w = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
#bad = affine_map<(d0, d1, d2, d3, d4) -> (d2, (d1 floordiv 4) * 20 + (d1 mod 3) * 2 + d3 * 10 + d4)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>

/// Not run as conv taps (left to the generic lowering): a map whose row
/// and column are not one delinearization of p (floordiv 4, mod 3).
// CHECK-LABEL: func @conv_taps_two_widths
// CHECK: linalg.generic
// CHECK-NOT: vector.gather
func.func @conv_taps_two_widths(%w: memref<4x3x3x3xf32>, %x: memref<3x100xf32>, %c: memref<4x16xf32>) {
  linalg.generic {indexing_maps = [#w, #bad, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%w, %x : memref<4x3x3x3xf32>, memref<3x100xf32>) outs(%c : memref<4x16xf32>) attrs = {kiln.conv_taps} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

/// An epilogue writing A's buffer cannot run in the kernel (other tiles
/// still read A): an error, not a silently wrong result.
func.func @output_is_a(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>) {
  linalg.matmul ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>)
  // expected-error @below {{matmul epilogue could not be fused into the matmul kernel}}
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<8x8xf32>) outs(%a : memref<8x8xf32>) attrs = {kiln.epilogue = 0 : i64} {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

/// Constant weights of conv taps are packed at compile time into the A
/// panels the kernels read (one global for both convs on them; the
/// unpacked global is gone): the 6-row panel of row ir at pc * 7 + ir * depth
/// (one depth block, K = 2), then the 1-row leftover panel. A[m][k] = 2m + k, so the blob
/// is 0 2 4 6 8 10 1 3 5 7 9 11 12 13. No A block is packed at run time.
// CHECK-LABEL: memref.global "private" constant @conv_w_packed_a : memref<14xf32> = dense_resource<conv_w_packed_a> {alignment = 64 : i64}
// CHECK-NOT: memref.global "private" constant @conv_w :
// CHECK-LABEL: func @conv_taps_constant_weights
// CHECK-NOT: memref<16896xf32>
// CHECK: memref.get_global @conv_w_packed_a : memref<14xf32>
// CHECK: %[[IRD:.+]] = arith.muli %arg{{[0-9]+}}, %{{[0-9]+}} : index
// CHECK: %[[PCM:.+]] = arith.muli %arg{{[0-9]+}}, %c7{{(_[0-9]+)?}} : index
// CHECK: arith.addi %[[PCM]], %[[IRD]] : index
// CHECK: memref.get_global @conv_w_packed_a : memref<14xf32>
// CHECK-NOT: memref<16896xf32>
// CHECK: conv_w_packed_a: "0x040000000000000000000040000080400000C04000000041000020410000803F000040400000A0400000E04000001041000030410000404100005041"
#w = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
#x = affine_map<(d0, d1, d2, d3, d4) -> (d2, d1 + d3 * 6 + d4)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>
memref.global "private" constant @conv_w : memref<7x1x1x2xf32> = dense<[[[[0.0, 1.0]]], [[[2.0, 3.0]]], [[[4.0, 5.0]]], [[[6.0, 7.0]]], [[[8.0, 9.0]]], [[[10.0, 11.0]]], [[[12.0, 13.0]]]]>
func.func @conv_taps_constant_weights(%x: memref<1x40xf32>, %c: memref<7x30xf32>, %d: memref<7x30xf32>) {
  %w = memref.get_global @conv_w : memref<7x1x1x2xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<7x30xf32>)
  linalg.generic {indexing_maps = [#w, #x, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%w, %x : memref<7x1x1x2xf32>, memref<1x40xf32>) outs(%c : memref<7x30xf32>) attrs = {kiln.conv_taps} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#w, #x, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%w, %x : memref<7x1x1x2xf32>, memref<1x40xf32>) outs(%d : memref<7x30xf32>) attrs = {kiln.conv_taps} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

/// A Gemm concatenated with another value (random graphs 100452, 100695,
/// 101439): bufferization writes the epilogue into its slice of the concat
/// buffer and copies the other piece in between the matmul and the
/// epilogue. The copy touches nothing the matmul does, so the matmul moves
/// past it: the epilogue is applied in the kernel and stores into the
/// slice.
// CHECK-LABEL: func @concat_piece_between
// CHECK-SAME: %[[OTHER:[^:]+]]: memref<8x16xf32>
// CHECK: linalg.copy ins(%[[OTHER]] : memref<8x16xf32>)
// CHECK: %[[PIECE:.+]] = memref.subview %{{.+}}[0, 16] [8, 64] [1, 1]
// CHECK: vector.store %{{.+}}, %[[PIECE]][
// CHECK-NOT: linalg.generic
func.func @concat_piece_between(%a: memref<8x4xf32>, %b: memref<4x64xf32>, %bias: memref<64xf32>,
                                %other: memref<8x16xf32>, %out: memref<8x80xf32>) {
  %c = memref.alloc() {alignment = 64 : i64} : memref<8x64xf32>
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x64xf32>) outs(%c : memref<8x64xf32>)
  %cat = memref.alloc() {alignment = 64 : i64} : memref<8x80xf32>
  %first = memref.subview %cat[0, 0] [8, 16] [1, 1] : memref<8x80xf32> to memref<8x16xf32, strided<[80, 1]>>
  linalg.copy ins(%other : memref<8x16xf32>) outs(%first : memref<8x16xf32, strided<[80, 1]>>)
  %second = memref.subview %cat[0, 16] [8, 64] [1, 1] : memref<8x80xf32> to memref<8x64xf32, strided<[80, 1], offset: 16>>
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<8x64xf32>, memref<64xf32>) outs(%second : memref<8x64xf32, strided<[80, 1], offset: 16>>)
      attrs = {kiln.epilogue = 0 : i64} {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %sum = arith.addf %x, %y : f32
    linalg.yield %sum : f32
  }
  linalg.copy ins(%cat : memref<8x80xf32>) outs(%out : memref<8x80xf32>)
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

/// A copy in between that reads C cannot run before the matmul: an error.
func.func @copy_of_c_between(%a: memref<8x4xf32>, %b: memref<4x64xf32>, %c: memref<8x64xf32>,
                             %e: memref<8x64xf32>, %d: memref<8x64xf32>) {
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x64xf32>) outs(%c : memref<8x64xf32>)
  linalg.copy ins(%c : memref<8x64xf32>) outs(%e : memref<8x64xf32>)
  // expected-error @below {{matmul epilogue could not be fused into the matmul kernel}}
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<8x64xf32>) outs(%d : memref<8x64xf32>) attrs = {kiln.epilogue = 0 : i64} {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#ch = affine_map<(d0, d1, d2) -> (d0)>
#img = affine_map<(d0, d1, d2) -> (0, d0, d1, d2)>

/// A 1x1 conv's epilogue writing its image rows of 20 columns into the
/// interior of the next conv's zero padding (row pitch 22): C's columns are
/// split into rows that are not a whole number of vectors, so a vector at
/// p0 wraps like one at a pitch of 20 (x0 = p0 % 20, y0 = p0 / 20): one
/// plain store where it lies inside a row, else two masked stores, the
/// second in row min(y0 + 1, 1) addressed from x0 - 20.
// CHECK-LABEL: func @wrapping_rows
// CHECK-NOT: linalg.generic
// CHECK: %[[X:.*]] = arith.remui %[[P:.*]], %c20{{.*}} : index
// CHECK: %[[Y:.*]] = arith.divui %[[P]], %c20{{.*}} : index
// CHECK: %[[Y1:.*]] = arith.addi %[[Y]], %c1{{.*}} : index
// CHECK: %[[YB:.*]] = arith.minui %[[Y1]], %c1{{.*}} : index
// CHECK: %[[XB:.*]] = arith.subi %[[X]], %c20{{.*}} : index
// CHECK: %[[FIRST:.*]] = vector.create_mask
// CHECK: %[[SECOND:.*]] = arith.xori
// CHECK: scf.if
// CHECK: vector.store %{{.*}}, %arg4[%c0{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x4x2x20xf32, strided<[176, 44, 22, 1], offset: 23>>
// CHECK: } else {
// CHECK: vector.maskedstore %arg4[%c0{{.*}}, %{{.*}}, %[[Y]], %[[X]]], %[[FIRST]]
// CHECK: vector.maskedstore %arg4[%c0{{.*}}, %{{.*}}, %[[YB]], %[[XB]]], %[[SECOND]]
func.func @wrapping_rows(%a: memref<4x8xf32>, %b: memref<8x40xf32>, %c: memref<4x40xf32>, %bias: memref<4xf32>, %d: memref<1x4x2x20xf32, strided<[176, 44, 22, 1], offset: 23>>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x40xf32>) outs(%c : memref<4x40xf32>)
  %rows = memref.expand_shape %c [[0], [1, 2]] output_shape [4, 2, 20] : memref<4x40xf32> into memref<4x2x20xf32>
  linalg.generic {indexing_maps = [#id3, #ch, #img], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%rows, %bias : memref<4x2x20xf32>, memref<4xf32>) outs(%d : memref<1x4x2x20xf32, strided<[176, 44, 22, 1], offset: 23>>)
      attrs = {kiln.epilogue = 0 : i64} {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %sum = arith.addf %x, %y : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#ch = affine_map<(d0, d1, d2) -> (d0)>
#img = affine_map<(d0, d1, d2) -> (0, d0, d1, d2)>

/// Image rows of 7 columns (row pitch 9 in the padding): a vector of 16
/// columns spans up to four rows, stored with four masked stores, the
/// k-th in row min(y0 + k, 2) addressed from x0 - 7k.
// CHECK-LABEL: func @narrow_wrapping_rows
// CHECK-NOT: linalg.generic
// CHECK: %[[X:.*]] = arith.remui %[[P:.*]], %c7{{.*}} : index
// CHECK: arith.subi %[[X]], %c7{{.*}} : index
// CHECK: arith.subi %[[X]], %c14{{.*}} : index
// CHECK: arith.subi %[[X]], %c21{{.*}} : index
// CHECK: scf.if
// CHECK: } else {
// CHECK-COUNT-4: vector.maskedstore %arg4
func.func @narrow_wrapping_rows(%a: memref<4x8xf32>, %b: memref<8x21xf32>, %c: memref<4x21xf32>, %bias: memref<4xf32>, %d: memref<1x4x3x7xf32, strided<[180, 45, 9, 1], offset: 10>>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x21xf32>) outs(%c : memref<4x21xf32>)
  %rows = memref.expand_shape %c [[0], [1, 2]] output_shape [4, 3, 7] : memref<4x21xf32> into memref<4x3x7xf32>
  linalg.generic {indexing_maps = [#id3, #ch, #img], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%rows, %bias : memref<4x3x7xf32>, memref<4xf32>) outs(%d : memref<1x4x3x7xf32, strided<[180, 45, 9, 1], offset: 10>>)
      attrs = {kiln.epilogue = 0 : i64} {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %sum = arith.addf %x, %y : f32
    linalg.yield %sum : f32
  }
  return
}
