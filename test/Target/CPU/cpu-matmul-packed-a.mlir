// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(kiln-cpu-matmul{vector-width=16 tile-rows=6 tile-vectors=4 tile-k=2})" | FileCheck %s

/// A constant A is packed at compile time depth block after depth block
/// (tile-k = 2 here): the block at depth pc starts at pc * M, and holds the
/// 6-row panels of all rows at that depth, then the leftover row's panel.
/// A[m][k] = 3m + k (M = 7, K = 3), so the blob is block 0 (depth 2):
/// 0 3 6 9 12 15 | 1 4 7 10 13 16 | 18 19, then block 1 (depth 1):
/// 2 5 8 11 14 17 | 20. A kernel's panel is at pc * 7 + ir * depth.
/// The weights stream from memory: each k step prefetches the next row
/// panel's row k (depth * 6 elements ahead), clamped to the last element.
// CHECK-LABEL: memref.global "private" constant @conv_w_packed_a : memref<21xf32>
// CHECK-LABEL: func.func private @kiln_matmul_0
// CHECK: %[[IRD:.+]] = arith.muli %arg{{[0-9]+}}, %{{[0-9]+}} : index
// CHECK: %[[PCM:.+]] = arith.muli %arg{{[0-9]+}}, %c7{{(_[0-9]+)?}} : index
// CHECK: %[[PANEL:.+]] = arith.addi %[[PCM]], %[[IRD]] : index
// CHECK: %[[AHEAD:.+]] = arith.muli %{{.+}}, %c6{{(_[0-9]+)?}} : index
// CHECK: scf.for {{.*}} iter_args
// CHECK: %[[ROW:.+]] = arith.addi %[[PANEL]], %{{.+}} : index
// CHECK: %[[AT:.+]] = arith.addi %[[ROW]], %[[AHEAD]] : index
// CHECK: %[[CLAMPED:.+]] = arith.minui %[[AT]], %c20{{(_[0-9]+)?}} : index
// CHECK: memref.prefetch %[[A:.+]][%[[CLAMPED]]], read, locality<3>, data : memref<21xf32, strided<[1], offset: ?>>
// CHECK: memref.load %[[A]][
// CHECK: conv_w_packed_a: "0x0400000000000000000040400000C0400000104100004041000070410000803F000080400000E0400000204100005041000080410000904100009841000000400000A040000000410000304100006041000088410000A041"
memref.global "private" constant @conv_w : memref<7x3x1x1xf32> = dense<[[[[0.0]], [[1.0]], [[2.0]]], [[[3.0]], [[4.0]], [[5.0]]], [[[6.0]], [[7.0]], [[8.0]]], [[[9.0]], [[10.0]], [[11.0]]], [[[12.0]], [[13.0]], [[14.0]]], [[[15.0]], [[16.0]], [[17.0]]], [[[18.0]], [[19.0]], [[20.0]]]]>
func.func private @conv_1x1(%host: !llvm.ptr {kiln.host}, %x: memref<3x64xf32>, %c: memref<7x64xf32>) {
  %w = memref.get_global @conv_w : memref<7x3x1x1xf32>
  %w2 = memref.collapse_shape %w [[0], [1, 2, 3]] : memref<7x3x1x1xf32> into memref<7x3xf32>
  linalg.matmul ins(%w2, %x : memref<7x3xf32>, memref<3x64xf32>) outs(%c : memref<7x64xf32>)
  return
}

// -----

#w = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
#x = affine_map<(d0, d1, d2, d3, d4) -> (d2, d1 + d3 * 6 + d4)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>

/// A conv's taps with constant weights of M = 12 rows, whole 6-row panels:
/// the kernels read only the packed panels, so the unpacked weights leave
/// the module (no one-row loop on them is emitted for rows that a static M
/// does not have; it kept them alive beside the packed copy).
// CHECK-LABEL: memref.global "private" constant @taps_w_packed_a : memref<48xf32>
// CHECK-NOT: memref.global "private" constant @taps_w :
// CHECK-LABEL: func.func private @taps
// CHECK-NOT: memref.get_global @taps_w :
// CHECK: memref.get_global @taps_w_packed_a
// CHECK-NOT: memref.get_global @taps_w :
memref.global "private" constant @taps_w : memref<12x1x2x2xf32> = dense<1.0>
func.func private @taps(%x: memref<1x40xf32>, %c: memref<12x30xf32>) {
  %w = memref.get_global @taps_w : memref<12x1x2x2xf32>
  linalg.generic {indexing_maps = [#w, #x, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%w, %x : memref<12x1x2x2xf32>, memref<1x40xf32>) outs(%c : memref<12x30xf32>) attrs = {kiln.conv_taps} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}
