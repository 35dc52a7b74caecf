// RUN: kiln-opt %s -split-input-file --pass-pipeline="builtin.module(kiln-cpu-matmul{vector-width=16 tile-rows=4 tile-vectors=4})" | FileCheck %s
// RUN: kiln-opt %s -split-input-file --pass-pipeline="builtin.module(kiln-cpu-matmul{vector-width=16 tile-rows=6 tile-vectors=4})" | FileCheck %s --check-prefix=SIX

// The tail columns of a partial column panel (MatmulTailColumns.h): N = 49
// is 3 vectors and 1 column. The panel's 3 vectors run the micro-kernel
// unmasked; column 48 runs the tail kernel: its B values repeated 4 times
// (one per tile row, 16 / 4 = 4 depths per vector of the packed A panel),
// 4 independent FMA chains of A vectors times those, summed, each row's
// lanes reduced (halves added: 16 -> 8 -> 4 lanes, lane r = row r), and
// C's column 48 written through a one-lane mask.
// CHECK-LABEL: func @one_tail_column
// CHECK: %[[BREP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
// CHECK: } else {
// CHECK: %[[COL:.*]] = arith.addi %{{.*}}, %c48{{.*}} : index
// CHECK: %[[B48:.*]] = memref.load %arg1[%{{.*}}, %c48{{.*}}] : memref<16x49xf32>
// CHECK: %[[REP:.*]] = vector.broadcast %[[B48]] : f32 to vector<4xf32>
// CHECK: vector.store %[[REP]], %[[BREP]][%{{.*}}] : memref<1024xf32>, vector<4xf32>
// CHECK: scf.for
// CHECK: vector.load %arg2[%{{.*}}, %{{.*}}] : memref<8x49xf32>, vector<16xf32>
// CHECK-NOT: vector.maskedload %arg2
// CHECK: vector.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}] : memref<8x49xf32>, vector<16xf32>
// CHECK-NOT: vector.maskedstore %arg2
// CHECK: %[[CHAINS:.*]]:4 = scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: %[[A:.*]] = vector.load %{{.*}}[%{{.*}}] : memref<16384xf32>, vector<16xf32>
// CHECK: %[[R:.*]] = vector.load %[[BREP]][%{{.*}}] : memref<1024xf32>, vector<16xf32>
// CHECK: vector.fma %[[A]], %[[R]], %{{.*}} : vector<16xf32>
// CHECK-COUNT-3: vector.fma
// CHECK: scf.yield
// CHECK: vector.extract_strided_slice %{{.*}} {offsets = [8], sizes = [8], strides = [1]} : vector<16xf32> to vector<8xf32>
// CHECK: vector.extract_strided_slice %{{.*}} {offsets = [4], sizes = [4], strides = [1]} : vector<8xf32> to vector<4xf32>
// CHECK: vector.extract %{{.*}}[0] : f32 from vector<4xf32>
// CHECK: %[[MASK:.*]] = vector.create_mask %c1{{.*}} : vector<16xi1>
// CHECK: vector.maskedload %arg2[%{{.*}}, %[[COL]]], %[[MASK]]
// CHECK: vector.maskedstore %arg2[%{{.*}}, %[[COL]]], %[[MASK]], %{{.*}} : memref<8x49xf32>, vector<16xi1>, vector<16xf32>
// CHECK-COUNT-3: vector.maskedstore %arg2[%{{.*}}, %[[COL]]], %[[MASK]]

// 6-row tiles leave 2 of the 8 rows to a 2-row kernel: the tail kernel
// runs on both, each with its own repeated B (6 and 2 copies per depth).
// SIX-LABEL: func @one_tail_column
// SIX: } else {
// SIX: vector.broadcast %{{.*}} : f32 to vector<6xf32>
// SIX: vector.extract_strided_slice %{{.*}} {offsets = [6], sizes = [6], strides = [1]} : vector<12xf32> to vector<6xf32>
// SIX: vector.broadcast %{{.*}} : f32 to vector<2xf32>
// SIX: vector.extract_strided_slice %{{.*}} {offsets = [2], sizes = [2], strides = [1]} : vector<4xf32> to vector<2xf32>
func.func @one_tail_column(%a: memref<8x16xf32>, %b: memref<16x49xf32>, %c: memref<8x49xf32>) {
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x49xf32>) outs(%c : memref<8x49xf32>)
  return
}

// -----

// 6-row tiles over M = 12: a chunk of the A panel is lcm(6, 16) = 48
// elements, 3 vectors of 8 depths, each its own FMA chain per column; the
// chunk's 3 accumulators joined into 48 lanes (lane e: row e mod 6) and
// halved to 6 lanes, one per row.
// SIX-LABEL: func @six_row_tiles
// SIX: } else {
// SIX: vector.broadcast %{{.*}} : f32 to vector<6xf32>
// SIX: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// SIX-COUNT-3: vector.fma
// SIX: scf.yield
// SIX: vector.insert_strided_slice %{{.*}}, %{{.*}} {offsets = [0], strides = [1]} : vector<16xf32> into vector<48xf32>
// SIX: vector.insert_strided_slice %{{.*}}, %{{.*}} {offsets = [16], strides = [1]} : vector<16xf32> into vector<48xf32>
// SIX: vector.insert_strided_slice %{{.*}}, %{{.*}} {offsets = [32], strides = [1]} : vector<16xf32> into vector<48xf32>
// SIX: vector.extract_strided_slice %{{.*}} {offsets = [24], sizes = [24], strides = [1]} : vector<48xf32> to vector<24xf32>
// SIX: vector.extract_strided_slice %{{.*}} {offsets = [12], sizes = [12], strides = [1]} : vector<24xf32> to vector<12xf32>
// SIX: vector.extract_strided_slice %{{.*}} {offsets = [6], sizes = [6], strides = [1]} : vector<12xf32> to vector<6xf32>
// SIX-COUNT-6: vector.maskedstore %arg2
func.func @six_row_tiles(%a: memref<12x16xf32>, %b: memref<16x49xf32>, %c: memref<12x49xf32>) {
  linalg.matmul ins(%a, %b : memref<12x16xf32>, memref<16x49xf32>) outs(%c : memref<12x49xf32>)
  return
}

// -----

// 8 columns past the whole vectors: more than kMaxTailColumns (4), the
// last vector is masked.
// CHECK-LABEL: func @many_tail_columns
// CHECK-NOT: vector.extract_strided_slice
// CHECK: vector.maskedstore %arg2
// CHECK-NOT: vector.extract_strided_slice
func.func @many_tail_columns(%a: memref<8x16xf32>, %b: memref<16x56xf32>, %c: memref<8x56xf32>) {
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x56xf32>) outs(%c : memref<8x56xf32>)
  return
}

// -----

// A depth of 6 is not whole vectors of a 4-row A panel (4 depths each):
// masked as before.
// CHECK-LABEL: func @ragged_depth
// CHECK-NOT: vector.extract_strided_slice
// CHECK: vector.maskedstore %arg2
// CHECK-NOT: vector.extract_strided_slice
func.func @ragged_depth(%a: memref<8x6xf32>, %b: memref<6x49xf32>, %c: memref<8x49xf32>) {
  linalg.matmul ins(%a, %b : memref<8x6xf32>, memref<6x49xf32>) outs(%c : memref<8x49xf32>)
  return
}
