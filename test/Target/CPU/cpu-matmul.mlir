// RUN: kiln-opt %s -split-input-file --pass-pipeline="builtin.module(kiln-cpu-matmul{vector-width=16 tile-rows=6 tile-vectors=4})" | FileCheck %s

/// A buffer matmul becomes parallel column blocks of packed, register-blocked
/// kernels: 6 rows x 4 vectors = 24 accumulators carried by the k loop.
// CHECK-LABEL: func @matmul
// CHECK-NOT: linalg.matmul
// CHECK: scf.parallel
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<65536xf32>
// CHECK: vector.maskedload %{{.*}} : memref<?x?xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: scf.if
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-COUNT-24: vector.fma
/// N is dynamic: the partial column panel (fewer than 64 columns) runs the
/// kernel of as many vectors as its columns need, picked at run time.
// CHECK: } else {
// CHECK: %[[VECTORS:.+]] = arith.ceildivui %{{.+}}, %c16{{(_[0-9]+)?}} : index
// CHECK: scf.index_switch %[[VECTORS]]
// CHECK: case 1 {
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: case 2 {
// CHECK: case 3 {
// CHECK: default {
// CHECK: memref.dealloc
func.func @matmul(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  return
}

// -----

/// Other element types are left to the generic loops.
// CHECK-LABEL: func @matmul_f64
// CHECK: linalg.matmul
func.func @matmul_f64(%a: memref<4x4xf64>, %b: memref<4x4xf64>, %c: memref<4x4xf64>) {
  linalg.matmul ins(%a, %b : memref<4x4xf64>, memref<4x4xf64>) outs(%c : memref<4x4xf64>)
  return
}

// -----

/// A constant B is packed at compile time: the kernels read the packed
/// global, there is no run-time packing of B, and the unpacked global is gone.
// CHECK-LABEL: memref.global "private" constant @weights_packed : memref<65536xf32> = dense_resource<weights_packed> {alignment = 64 : i64}
// CHECK-NOT: memref.global "private" constant @weights :
// CHECK-LABEL: func @constant_b
// CHECK: memref.get_global @weights_packed
// CHECK-NOT: memref.get_global @weights :
memref.global "private" constant @weights : memref<3x70xf32> = dense<1.5>
func.func @constant_b(%a: memref<5x3xf32>, %c: memref<5x70xf32>) {
  %b = memref.get_global @weights : memref<3x70xf32>
  linalg.matmul ins(%a, %b : memref<5x3xf32>, memref<3x70xf32>) outs(%c : memref<5x70xf32>)
  return
}

// -----

/// One column block (N = 70 < 256) of M = 302 rows: the split balanced over
/// 1, 2 and 4 threads (planSplit) is 4 groups of whole 6-row panels, the 51
/// panels spread evenly (group g starts at panel g * 51 / 4), so the pool
/// gets several tasks. M % 6 = 2 rows left over run a packed 2-row kernel
/// (8 accumulators), not one-row kernels. A matmul of a few microseconds
/// (M = 100, K = 30) keeps one task.
// CHECK-LABEL: func @row_groups
// CHECK: scf.parallel (%[[T:.+]]) = (%{{.*}}) to (%c4) step
// CHECK: arith.divui %[[T]], %c4
// CHECK: %[[G:.+]] = arith.remui %[[T]], %c4
// CHECK: %[[P:.+]] = arith.muli %[[G]], %c51
// CHECK: arith.divui %[[P]], %c4
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-NOT: -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: } {kiln.heavy}
// CHECK-LABEL: func @one_group
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c1{{(_[0-9]+)?}}) step
// CHECK-NOT: arith.remui
// CHECK: } {kiln.heavy}
func.func @row_groups(%a: memref<302x300xf32>, %b: memref<300x70xf32>, %c: memref<302x70xf32>) {
  linalg.matmul ins(%a, %b : memref<302x300xf32>, memref<300x70xf32>) outs(%c : memref<302x70xf32>)
  return
}
func.func @one_group(%a: memref<100x30xf32>, %b: memref<30x70xf32>, %c: memref<100x70xf32>) {
  linalg.matmul ins(%a, %b : memref<100x30xf32>, memref<30x70xf32>) outs(%c : memref<100x70xf32>)
  return
}

// -----

/// N = 840 is 14 column panels of 64: the tileN grid's 4 blocks would be
/// 4, 4, 4 and 2 panels (1.75 blocks of work per thread on 2 threads, the
/// longest 2); balanced blocks start at panel j * 14 / 4 (3, 4, 3 and 4
/// panels), no row groups. Each packing buffer holds the widest block.
// CHECK-LABEL: func @balanced_columns
// CHECK: scf.parallel (%[[J:.+]]) = (%{{.*}}) to (%c4) step
// CHECK: %[[P:.+]] = arith.muli %[[J]], %c14
// CHECK: %[[Q:.+]] = arith.divui %[[P]], %c4
// CHECK: arith.muli %[[Q]], %c64
// CHECK-NOT: arith.remui
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<65536xf32>
func.func @balanced_columns(%a: memref<64x300xf32>, %b: memref<300x840xf32>, %c: memref<64x840xf32>) {
  linalg.matmul ins(%a, %b : memref<64x300xf32>, memref<300x840xf32>) outs(%c : memref<64x840xf32>)
  return
}

// -----

/// A may be any strided view (it is read one scalar at a time), e.g. one tap
/// of a conv filter; B and C need unit inner strides for vector loads.
// CHECK-LABEL: func @strided_a
// CHECK-NOT: linalg.matmul
// CHECK-LABEL: func @strided_b
// CHECK: linalg.matmul
func.func @strided_a(%a: memref<8x4xf32, strided<[36, 9], offset: 4>>, %b: memref<4x64xf32>, %c: memref<8x64xf32>) {
  linalg.matmul ins(%a, %b : memref<8x4xf32, strided<[36, 9], offset: 4>>, memref<4x64xf32>) outs(%c : memref<8x64xf32>)
  return
}
func.func @strided_b(%a: memref<8x4xf32>, %b: memref<4x64xf32, strided<[128, 2]>>, %c: memref<8x64xf32>) {
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x64xf32, strided<[128, 2]>>) outs(%c : memref<8x64xf32>)
  return
}

// -----

/// In a function with a host argument, matmuls of the same shapes and
/// strides share one kernel function; views at different offsets are cast to
/// a dynamic offset. A constant B stays inline (it is packed at compile time).
// CHECK-LABEL: func.func private @taps
// CHECK-SAME: (%[[HOST:.+]]: !llvm.ptr {kiln.host}
// CHECK: %[[B0:.+]] = memref.cast %{{.*}} : memref<4x64xf32, strided<[64, 1], offset: 8>> to memref<4x64xf32, strided<[64, 1], offset: ?>>
// CHECK: call @kiln_matmul_0(%[[HOST]], %{{.*}}, %[[B0]], %{{.*}})
// CHECK: %[[B1:.+]] = memref.cast %{{.*}} : memref<4x64xf32, strided<[64, 1], offset: 16>> to memref<4x64xf32, strided<[64, 1], offset: ?>>
// CHECK: call @kiln_matmul_0(%[[HOST]], %{{.*}}, %[[B1]], %{{.*}})
// CHECK-NOT: call @kiln_matmul_1
// CHECK: memref.get_global @weights_packed
// CHECK: return
// CHECK: func.func private @kiln_matmul_0(%{{.*}}: !llvm.ptr {kiln.host}, %{{.*}}: memref<8x4xf32, strided<[4, 1], offset: ?>> {kiln.nocapture}, %{{.*}}: memref<4x64xf32, strided<[64, 1], offset: ?>> {kiln.nocapture}, %{{.*}}: memref<8x64xf32, strided<[64, 1], offset: ?>> {kiln.nocapture})
// CHECK: scf.parallel
// CHECK-COUNT-24: vector.fma
memref.global "private" constant @weights : memref<4x64xf32> = dense<1.5>
func.func private @taps(%host: !llvm.ptr {kiln.host}, %a: memref<8x4xf32>, %x: memref<8x64xf32>, %c: memref<8x64xf32>) {
  %s0 = memref.reinterpret_cast %x to offset: [8], sizes: [4, 64], strides: [64, 1] : memref<8x64xf32> to memref<4x64xf32, strided<[64, 1], offset: 8>>
  %s1 = memref.reinterpret_cast %x to offset: [16], sizes: [4, 64], strides: [64, 1] : memref<8x64xf32> to memref<4x64xf32, strided<[64, 1], offset: 16>>
  linalg.matmul ins(%a, %s0 : memref<8x4xf32>, memref<4x64xf32, strided<[64, 1], offset: 8>>) outs(%c : memref<8x64xf32>)
  linalg.matmul ins(%a, %s1 : memref<8x4xf32>, memref<4x64xf32, strided<[64, 1], offset: 16>>) outs(%c : memref<8x64xf32>)
  %w = memref.get_global @weights : memref<4x64xf32>
  linalg.matmul ins(%a, %w : memref<8x4xf32>, memref<4x64xf32>) outs(%c : memref<8x64xf32>)
  return
}

// -----

/// A constant A (a 1x1 conv's weights [F, C, 1, 1], collapsed) is packed at
/// compile time into the kernels' A panels (6-row panels of one depth block,
/// here the whole depth, then the leftover row; A[m][k] = 2m + k), once for
/// both matmuls, and passed to the shared kernel viewed as [M, K]; the
/// kernel reads row ir's panel at pc * 7 + ir * depth and packs no A block. A matmul of the same
/// shapes with a run-time A gets another kernel function.
// CHECK-LABEL: memref.global "private" constant @conv_w_packed_a : memref<14xf32>
// CHECK-NOT: memref.global "private" constant @conv_w :
// CHECK-LABEL: func.func private @conv_1x1
// CHECK: %[[P0:.+]] = memref.get_global @conv_w_packed_a : memref<14xf32>
// CHECK: %[[A0:.+]] = memref.expand_shape %[[P0]] {{\[\[}}0, 1]] output_shape [7, 2]
// CHECK: %[[C0:.+]] = memref.cast %[[A0]]
// CHECK: call @kiln_matmul_0(%{{.*}}, %[[C0]],
// CHECK: memref.get_global @conv_w_packed_a : memref<14xf32>
// CHECK: call @kiln_matmul_0(
// CHECK: call @kiln_matmul_1(%{{.*}}, %{{.*}}, 
// CHECK-LABEL: func.func private @kiln_matmul_0
// CHECK-NOT: memref<16896xf32>
// CHECK: %[[PANELS:.+]] = memref.collapse_shape %arg1 {{\[\[}}0, 1]] : memref<7x2xf32, strided<[2, 1], offset: ?>> into memref<14xf32, strided<[1], offset: ?>>
// CHECK: %[[IRD:.+]] = arith.muli %arg{{[0-9]+}}, %{{[0-9]+}} : index
// CHECK: %[[PCM:.+]] = arith.muli %arg{{[0-9]+}}, %c7{{(_[0-9]+)?}} : index
// CHECK: arith.addi %[[PCM]], %[[IRD]] : index
// CHECK: memref.load %[[PANELS]]
// CHECK-LABEL: func.func private @kiln_matmul_1
// CHECK: memref<16896xf32>
// CHECK: conv_w_packed_a: "0x040000000000000000000040000080400000C04000000041000020410000803F000040400000A0400000E04000001041000030410000404100005041"
memref.global "private" constant @conv_w : memref<7x2x1x1xf32> = dense<[[[[0.0]], [[1.0]]], [[[2.0]], [[3.0]]], [[[4.0]], [[5.0]]], [[[6.0]], [[7.0]]], [[[8.0]], [[9.0]]], [[[10.0]], [[11.0]]], [[[12.0]], [[13.0]]]]>
func.func private @conv_1x1(%host: !llvm.ptr {kiln.host}, %x: memref<4x64xf32>, %a: memref<7x2xf32>, %c: memref<7x64xf32>, %d: memref<7x64xf32>) {
  %w = memref.get_global @conv_w : memref<7x2x1x1xf32>
  %w2 = memref.collapse_shape %w [[0], [1, 2, 3]] : memref<7x2x1x1xf32> into memref<7x2xf32>
  %s0 = memref.reinterpret_cast %x to offset: [0], sizes: [2, 64], strides: [64, 1] : memref<4x64xf32> to memref<2x64xf32, strided<[64, 1]>>
  %s1 = memref.reinterpret_cast %x to offset: [128], sizes: [2, 64], strides: [64, 1] : memref<4x64xf32> to memref<2x64xf32, strided<[64, 1], offset: 128>>
  linalg.matmul ins(%w2, %s0 : memref<7x2xf32>, memref<2x64xf32, strided<[64, 1]>>) outs(%c : memref<7x64xf32>)
  linalg.matmul ins(%w2, %s1 : memref<7x2xf32>, memref<2x64xf32, strided<[64, 1], offset: 128>>) outs(%d : memref<7x64xf32>)
  linalg.matmul ins(%a, %s1 : memref<7x2xf32>, memref<2x64xf32, strided<[64, 1], offset: 128>>) outs(%d : memref<7x64xf32>)
  return
}

// -----

/// A zero fill of C right before the matmul is dropped: the kernels start
/// their first depth block (pc == 0) from zero accumulators instead of
/// loading C. A fill of another value, or of another buffer, stays.
// CHECK-LABEL: func @zero_fill
// CHECK-NOT: linalg.fill
// CHECK: scf.parallel
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %{{.*}}, %c0
// CHECK: scf.if %[[FIRST]] -> (vector<16xf32>
// CHECK: scf.yield %cst{{.*}}, %cst
// CHECK: } else {
// CHECK: vector.load
// CHECK-LABEL: func @other_fills
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg2
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg3
// CHECK-NOT: arith.cmpi eq
// CHECK: return
func.func @zero_fill(%a: memref<8x4xf32>, %b: memref<4x64xf32>, %c: memref<8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x64xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x64xf32>) outs(%c : memref<8x64xf32>)
  return
}
func.func @other_fills(%a: memref<8x4xf32>, %b: memref<4x64xf32>, %c: memref<8x64xf32>, %d: memref<8x64xf32>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%one : f32) outs(%c : memref<8x64xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x64xf32>) outs(%c : memref<8x64xf32>)
  linalg.fill ins(%zero : f32) outs(%d : memref<8x64xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x64xf32>) outs(%c : memref<8x64xf32>)
  return
}

// -----

/// The dispatch's trace hook, the allocation of another buffer and views
/// between the zero fill and the matmul do not keep the fill; an op that
/// may write memory (here a call) does.
// CHECK-LABEL: func @zero_fill_across_hooks
// CHECK-NOT: linalg.fill
// CHECK: call @kiln_trace_begin
// CHECK: scf.parallel
// CHECK: scf.if %{{.*}} -> (vector<16xf32>
// CHECK-LABEL: func @zero_fill_kept
// CHECK: linalg.fill
// CHECK: call @writes
func.func private @kiln_trace_begin(!llvm.ptr, i32)
func.func private @writes(memref<8x64xf32>)
func.func @zero_fill_across_hooks(%host: !llvm.ptr, %a: memref<8x4xf32>, %b: memref<4x64xf32>, %c: memref<8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %id = arith.constant 0 : i32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x64xf32>)
  %other = memref.alloc() : memref<8x64xf32>
  %view = memref.subview %c[0, 0] [8, 32] [1, 1] : memref<8x64xf32> to memref<8x32xf32, strided<[64, 1]>>
  call @kiln_trace_begin(%host, %id) : (!llvm.ptr, i32) -> ()
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x64xf32>) outs(%c : memref<8x64xf32>)
  memref.dealloc %other : memref<8x64xf32>
  return
}
func.func @zero_fill_kept(%a: memref<8x4xf32>, %b: memref<4x64xf32>, %c: memref<8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x64xf32>)
  call @writes(%c) : (memref<8x64xf32>) -> ()
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x64xf32>) outs(%c : memref<8x64xf32>)
  return
}

// -----

/// With N static, the partial column panel (the last) runs a kernel of only
/// the vectors its columns need: N = 68 = 64 + 4 runs 6 x 1 masked
/// accumulators there, not 6 x 4 mostly masked ones; N = 80 = 64 + 16 one
/// unmasked vector. Both still read the packed B panel at its 64-float pitch.
/// (K = 4 is not whole 8-depth chunks of a 6-row A panel, so the 4 columns
/// do not take the tail kernel of cpu-matmul-tail-columns.mlir.)
// CHECK-LABEL: func @partial_panel_masked
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: } else {
// CHECK: vector.create_mask
// CHECK-NOT: vector.create_mask
// CHECK: scf.for %[[K:.+]] = {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK: arith.muli %[[K]], %c64
// CHECK-COUNT-6: vector.fma
// CHECK-NOT: vector.fma
// CHECK: vector.maskedstore
func.func @partial_panel_masked(%a: memref<12x4xf32>, %b: memref<4x68xf32>, %c: memref<12x68xf32>) {
  linalg.matmul ins(%a, %b : memref<12x4xf32>, memref<4x68xf32>) outs(%c : memref<12x68xf32>)
  return
}

// -----

// CHECK-LABEL: func @partial_panel_full_vector
// CHECK: } else {
// CHECK-NOT: vector.create_mask
// CHECK: scf.for %[[K:.+]] = {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK: arith.muli %[[K]], %c64
// CHECK-NOT: vector.maskedstore
// CHECK: memref.dealloc
func.func @partial_panel_full_vector(%a: memref<12x8xf32>, %b: memref<8x80xf32>, %c: memref<12x80xf32>) {
  linalg.matmul ins(%a, %b : memref<12x8xf32>, memref<8x80xf32>) outs(%c : memref<12x80xf32>)
  return
}
