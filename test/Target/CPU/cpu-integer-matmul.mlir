// RUN: kiln-opt %s -split-input-file --pass-pipeline="builtin.module(kiln-cpu-integer-matmul{avx2=true})" | FileCheck %s
// RUN: kiln-opt %s -split-input-file --pass-pipeline="builtin.module(kiln-cpu-integer-matmul)" | FileCheck %s --check-prefix=PORTABLE

/// A run-time B: one parallel loop packs it (two rows of 16 columns
/// interleaved per k pair, masked at N = 40, the odd last k with a zero
/// row), the other runs the tiles: 6 x 2 accumulators of vector<8xi32>, a
/// vpmaddwd per accumulator and k pair, A's pair broadcast as one i32. The
/// zero fill of C is dropped; C is stored with masks at the column edge.
// CHECK-LABEL: func @runtime_b
// CHECK-NOT: linalg.fill
// CHECK: %[[PACK:.*]] = memref.alloc() {alignment = 64 : i64} : memref<{{[0-9]+}}xi16>
// CHECK: scf.parallel
// CHECK: vector.maskedload %{{.*}} : memref<77x40xi16>, vector<16xi1>, vector<16xi16> into vector<16xi16>
// CHECK: vector.interleave %{{.*}}, %{{.*}} : vector<16xi16> -> vector<32xi16>
// CHECK: {kiln.heavy}
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} -> (vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>)
// CHECK: vector.load %[[PACK]][%{{.*}}] : memref<{{[0-9]+}}xi16>, vector<16xi16>
// CHECK: %[[PAIR:.*]] = vector.load %{{.*}} : memref<13x77xi16>, vector<2xi16>
// CHECK: %[[WORD:.*]] = vector.bitcast %[[PAIR]] : vector<2xi16> to vector<1xi32>
// CHECK: vector.broadcast %[[WORD]] : vector<1xi32> to vector<8xi32>
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%{{.*}}, %{{.*}}) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// CHECK: vector.maskedstore %{{.*}} : memref<13x40xi32>, vector<8xi1>, vector<8xi32>
// CHECK: {kiln.heavy}
// CHECK: memref.dealloc %[[PACK]]
// CHECK-NOT: linalg.matmul
// PORTABLE-LABEL: func @runtime_b
// PORTABLE-NOT: llvm.call_intrinsic
// PORTABLE: vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4, 6, 8, 10, 12, 14] : vector<16xi16>, vector<16xi16>
// PORTABLE: arith.extsi %{{.*}} : vector<8xi16> to vector<8xi32>
// PORTABLE: arith.muli %{{.*}} : vector<8xi32>
func.func @runtime_b(%a: memref<13x77xi16>, %b: memref<77x40xi16>, %c: memref<13x40xi32>) {
  %zero = arith.constant 0 : i32
  linalg.fill ins(%zero : i32) outs(%c : memref<13x40xi32>)
  linalg.matmul ins(%a, %b : memref<13x77xi16>, memref<77x40xi16>) outs(%c : memref<13x40xi32>)
  return
}

// -----

/// A constant B is packed at compile time into an i16 global of pair
/// panels (the original global, now unread, is dropped): no packing loop.
/// The marked epilogue (the requantization) runs on the accumulators and
/// stores i8 into its output; C is never written.
// CHECK: memref.global "private" constant @w_pairs : memref<64xi16> = dense_resource<w_pairs>
// CHECK-NOT: memref.global "private" constant @w :
// CHECK-LABEL: func @constant_b_epilogue
// CHECK-NOT: vector.interleave
// CHECK: memref.get_global @w_pairs
// CHECK: scf.parallel
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK: arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: math.roundeven %{{.*}} : vector<8xf32>
// CHECK: arith.fptosi %{{.*}} : vector<8xf32> to vector<8xi8>
// CHECK: vector.store %{{.*}}, %arg2[%{{.*}}] : memref<7x16xi8>, vector<8xi8>
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
memref.global "private" constant @w : memref<4x16xi16> = dense<[[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16], [-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, -16], [255, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -255], [3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3]]>
func.func @constant_b_epilogue(%a: memref<7x4xi16>, %scale: memref<16xf32>, %d: memref<7x16xi8>) {
  %b = memref.get_global @w : memref<4x16xi16>
  %c = memref.alloc() : memref<7x16xi32>
  %zero = arith.constant 0 : i32
  linalg.fill ins(%zero : i32) outs(%c : memref<7x16xi32>)
  linalg.matmul ins(%a, %b : memref<7x4xi16>, memref<4x16xi16>) outs(%c : memref<7x16xi32>)
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %scale : memref<7x16xi32>, memref<16xf32>) outs(%d : memref<7x16xi8>)
      attrs = {kiln.epilogue = 0 : i64} {
  ^bb0(%x: i32, %s: f32, %o: i8):
    %f = arith.sitofp %x : i32 to f32
    %m = arith.mulf %f, %s : f32
    %r = math.roundeven %m : f32
    %lo = arith.constant -128.0 : f32
    %hi = arith.constant 127.0 : f32
    %l = arith.maximumf %r, %lo : f32
    %h = arith.minimumf %l, %hi : f32
    %q = arith.fptosi %h : f32 to i8
    linalg.yield %q : i8
  }
  memref.dealloc %c : memref<7x16xi32>
  return
}
