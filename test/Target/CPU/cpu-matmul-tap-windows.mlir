// RUN: kiln-opt %s -split-input-file --pass-pipeline="builtin.module(kiln-cpu-matmul{vector-width=16 tile-rows=6 tile-vectors=4})" | FileCheck %s
// RUN: kiln-opt %s -split-input-file --pass-pipeline="builtin.module(kiln-cpu-matmul{vector-width=8 tile-rows=6 tile-vectors=2 vector-registers=16})" | FileCheck %s --check-prefix=AVX2

// Gathered conv taps B read through windows (TapWindows, MatmulPrologue.h):
// where a vector's 16 pixels lie in at most 3 runs of 32 consecutive
// elements of the input row, each run is two masked loads and one
// vpermi2ps instead of a 16-lane gather; the windows' bases, indices and
// masks are computed once per column panel, from the lanes' offsets.

#w = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
#x = affine_map<(d0, d1, d2, d3, d4) -> (d2, (d1 floordiv 14) * 16 + d1 mod 14 + d3 * 16 + d4)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>

/// A 3x3 stride-1 conv at 14x14 on rows padded to 16: a vector of 16
/// output columns spans at most 20 input elements, one window. Per panel
/// and vector: the window's base (least offset of the valid lanes, an
/// unsigned minimum), its indices (offsets minus the base), its lanes
/// (indices below 32) and its span (the largest index + 1: the masks of
/// its two loads). Per B row: two masked loads, one permute, the lanes
/// past the columns zeroed by a select.
// CHECK-LABEL: func @narrow_rows
// CHECK: %[[P:.*]] = arith.addi %{{.*}}, %cst{{.*}} : vector<16xi32>
// CHECK: %[[Y:.*]] = arith.divui %[[P]], %cst{{.*}} : vector<16xi32>
// CHECK: %[[X:.*]] = arith.remui %[[P]], %cst{{.*}} : vector<16xi32>
// CHECK: %[[YO:.*]] = arith.muli %[[Y]], %cst{{.*}} : vector<16xi32>
// CHECK: %[[XO:.*]] = arith.muli %[[X]], %cst{{.*}} : vector<16xi32>
// CHECK: %[[PIX:.*]] = arith.addi %[[YO]], %[[XO]] : vector<16xi32>
// CHECK: %[[CAND:.*]] = arith.select %{{.*}}, %[[PIX]], %{{.*}} : vector<16xi1>, vector<16xi32>
// CHECK: %[[MIN:.*]] = vector.reduction <minui>, %[[CAND]] : vector<16xi32> into i32
// CHECK: %[[BASE:.*]] = arith.select %{{.*}}, %{{.*}}, %[[MIN]] : i32
// CHECK: %[[SPLAT:.*]] = vector.broadcast %[[BASE]] : i32 to vector<16xi32>
// CHECK: %[[IDX:.*]] = arith.subi %[[PIX]], %[[SPLAT]] : vector<16xi32>
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[IDX]], %{{.*}} : vector<16xi32>
// CHECK: %[[LANES:.*]] = arith.andi %{{.*}}, %[[IN]] : vector<16xi1>
// CHECK: vector.reduction <maxsi>
// CHECK: %[[AT:.*]] = arith.index_castui %[[BASE]] : i32 to index
// CHECK: %[[LOWMASK:.*]] = vector.create_mask
// CHECK: %[[HIGHMASK:.*]] = vector.create_mask
// CHECK: scf.for
// CHECK: %[[C:.*]] = arith.divui %{{.*}}, %c9{{.*}} : index
// CHECK: %[[START:.*]] = arith.addi %[[AT]], %{{.*}} : index
// CHECK: %[[LOW:.*]] = vector.maskedload %arg1[%[[C]], %[[START]]], %[[LOWMASK]]
// CHECK: %[[NEXT:.*]] = arith.addi %[[START]], %c16{{.*}} : index
// CHECK: %[[HIGH:.*]] = vector.maskedload %arg1[%[[C]], %[[NEXT]]], %[[HIGHMASK]]
// CHECK: %[[PERM:.*]] = llvm.call_intrinsic "llvm.x86.avx512.vpermi2var.ps.512"(%[[LOW]], %[[IDX]], %[[HIGH]]) : (vector<16xf32>, vector<16xi32>, vector<16xf32>) -> vector<16xf32>
// CHECK: arith.select %[[LANES]], %[[PERM]], %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK-COUNT-3: llvm.call_intrinsic "llvm.x86.avx512.vpermi2var.ps.512"
// CHECK-NOT: llvm.call_intrinsic
// CHECK-NOT: vector.gather
// AVX2-LABEL: func @narrow_rows
// AVX2: vector.gather
// AVX2-NOT: llvm.call_intrinsic
func.func @narrow_rows(%w: memref<8x2x3x3xf32>, %x: memref<2x256xf32>, %c: memref<8x196xf32>) {
  linalg.generic {indexing_maps = [#w, #x, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%w, %x : memref<8x2x3x3xf32>, memref<2x256xf32>) outs(%c : memref<8x196xf32>) attrs = {kiln.conv_taps} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#w = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
#x = affine_map<(d0, d1, d2, d3, d4) -> (d2, (d1 floordiv 7) * 32 + (d1 mod 7) * 2 + d3 * 16 + d4)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>

/// A 3x3 stride-2 conv to 7x7 (rows of 7 at stride 2, 32 apart): a vector
/// spans three input rows, three windows, each a permute whose lanes are
/// merged by a select: 12 permutes per B row of the 4-vector panel (the
/// narrow rows above: 4).
// CHECK-LABEL: func @three_windows
// CHECK: scf.for
// CHECK-COUNT-12: llvm.call_intrinsic "llvm.x86.avx512.vpermi2var.ps.512"
// CHECK-NOT: llvm.call_intrinsic
// CHECK-NOT: vector.gather
func.func @three_windows(%w: memref<8x2x3x3xf32>, %x: memref<2x256xf32>, %c: memref<8x49xf32>) {
  linalg.generic {indexing_maps = [#w, #x, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%w, %x : memref<8x2x3x3xf32>, memref<2x256xf32>) outs(%c : memref<8x49xf32>) attrs = {kiln.conv_taps} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#w = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
#x = affine_map<(d0, d1, d2, d3, d4) -> (d2, (d1 floordiv 2) * 40 + (d1 mod 2) * 2 + d3 * 10 + d4)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>

/// Rows of 2 pixels, 40 apart: 8 windows per vector, more than the 3 that
/// beat a gather; gathered as before.
// CHECK-LABEL: func @sparse_pixels
// CHECK: vector.gather
// CHECK-NOT: llvm.call_intrinsic
func.func @sparse_pixels(%w: memref<8x2x3x3xf32>, %x: memref<2x400xf32>, %c: memref<8x16xf32>) {
  linalg.generic {indexing_maps = [#w, #x, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%w, %x : memref<8x2x3x3xf32>, memref<2x400xf32>) outs(%c : memref<8x16xf32>) attrs = {kiln.conv_taps} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}
