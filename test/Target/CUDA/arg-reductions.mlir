// RUN: kiln-opt %s --split-input-file --kiln-cuda-arg-reductions --canonicalize --cse | FileCheck %s

/// ArgMax over the last axis of a symbolic number of rows (a decoder's
/// greedy pick over its logits), as KilnToLinalg lowers it: one block of 1024
/// threads per row, each thread folding a strided part of the row, eight
/// loads (indices clamped into the row) before the eight compares of a trip; the
/// pairs combined by five xor shuffles of the value and five of the index,
/// then through shared memory; the fills read as constants and gone, the
/// value buffer never stored.
// CHECK-LABEL: func.func @argmax
// CHECK-SAME: (%[[X:.+]]: memref<?x?x50257xf32>, %[[OUT:.+]]: memref<?x?xi64>)
// CHECK-NOT: linalg.fill
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %{{.+}}, {{.*}} = %c1, {{.*}} = %c1) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in ({{.*}} = %c1024, {{.*}}) workgroup(%[[SV:.+]] : memref<32xf32, #gpu.address_space<workgroup>>, %[[SI:.+]] : memref<32xi32, #gpu.address_space<workgroup>>)
// CHECK: scf.for %[[J:.+]] = %[[TX]] to %c50257 step %c8192 iter_args(%{{.+}} = %cst, %{{.+}} = %c-1_i32) -> (f32, i32)
// CHECK: %[[IN:.+]] = arith.cmpi ult, %[[J]], %c50257
// CHECK: %[[AT:.+]] = arith.select %[[IN]], %[[J]], %c50256
// CHECK: memref.load %[[X]][%{{.+}}, %{{.+}}, %[[AT]]]
// CHECK-COUNT-7: memref.load %[[X]]
// CHECK: arith.cmpf ogt
// CHECK-COUNT-10: gpu.shuffle  xor
// CHECK: memref.store %{{.+}}, %[[SV]]
// CHECK: memref.store %{{.+}}, %[[SI]]
// CHECK: gpu.barrier
// CHECK: arith.extsi %{{.+}} : i32 to i64
// CHECK: memref.store %{{.+}}, %[[OUT]]
// CHECK-NOT: memref.store
// CHECK: gpu.terminator
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref.dealloc
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#kept = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @argmax(%x: memref<?x?x50257xf32>, %out: memref<?x?xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0 : i64
  %b = memref.dim %x, %c0 : memref<?x?x50257xf32>
  %s = memref.dim %x, %c1 : memref<?x?x50257xf32>
  %v = memref.alloc(%b, %s) {alignment = 64 : i64} : memref<?x?xf32>
  linalg.fill ins(%ninf : f32) outs(%v : memref<?x?xf32>)
  linalg.fill ins(%zero : i64) outs(%out : memref<?x?xi64>)
  linalg.generic {indexing_maps = [#id, #kept, #kept], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<?x?x50257xf32>) outs(%v, %out : memref<?x?xf32>, memref<?x?xi64>) {
  ^bb0(%in: f32, %best: f32, %index: i64):
    %better = arith.cmpf ogt, %in, %best : f32
    %j = linalg.index 2 : index
    %ji = arith.index_cast %j : index to i64
    %nv = arith.select %better, %in, %best : f32
    %ni = arith.select %better, %ji, %index : i64
    linalg.yield %nv, %ni : f32, i64
  }
  memref.dealloc %v : memref<?x?xf32>
  return
}

// -----

/// ArgMin with select_last_index (a non-strict compare) on f16 values read
/// after: the pair travels as (f32, i32), the value is stored back as f16,
/// and initial values written earlier are loaded per row.
// CHECK-LABEL: func.func @argmin_last
// CHECK: gpu.launch
// CHECK-SAME: blocks({{.*}}) in ({{.*}} = %c4,
// CHECK: %[[V0:.+]] = memref.load %arg1
// CHECK: arith.extf %[[V0]] : f16 to f32
// CHECK: arith.cmpf ole
// CHECK-COUNT-10: gpu.shuffle  xor
// CHECK: memref.load %arg2
// CHECK: memref.store %{{.+}}, %arg2
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK: memref.store %{{.+}}, %arg1
func.func @argmin_last(%x: memref<4x1000xf16>, %v: memref<4xf16>, %out: memref<4xi32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x1000xf16>) outs(%v, %out : memref<4xf16>, memref<4xi32>) {
  ^bb0(%in: f16, %best: f16, %index: i32):
    %better = arith.cmpf ole, %in, %best : f16
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %nv = arith.select %better, %in, %best : f16
    %ni = arith.select %better, %ji, %index : i32
    linalg.yield %nv, %ni : f16, i32
  }
  return
}

// -----

/// Left alone: a row of symbolic length, f64 values, a body that does more
/// than pick (a sum of the index), a reduction over a middle axis.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: gpu.launch
// CHECK-COUNT-4: linalg.generic
func.func @kept(%a: memref<4x?xf32>, %b: memref<4x8xf64>, %c: memref<4x8x2xf32>,
                %v: memref<4xf32>, %vd: memref<4xf64>, %v2: memref<4x2xf32>,
                %i: memref<4xi64>, %i2: memref<4x2xi64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x?xf32>) outs(%v, %i : memref<4xf32>, memref<4xi64>) {
  ^bb0(%in: f32, %best: f32, %index: i64):
    %better = arith.cmpf ogt, %in, %best : f32
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %nv = arith.select %better, %in, %best : f32
    %ni = arith.select %better, %ji, %index : i64
    linalg.yield %nv, %ni : f32, i64
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%b : memref<4x8xf64>) outs(%vd, %i : memref<4xf64>, memref<4xi64>) {
  ^bb0(%in: f64, %best: f64, %index: i64):
    %better = arith.cmpf ogt, %in, %best : f64
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %nv = arith.select %better, %in, %best : f64
    %ni = arith.select %better, %ji, %index : i64
    linalg.yield %nv, %ni : f64, i64
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%b : memref<4x8xf64>) outs(%vd, %i : memref<4xf64>, memref<4xi64>) {
  ^bb0(%in: f64, %best: f64, %index: i64):
    %better = arith.cmpf ogt, %in, %best : f64
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %sum = arith.addi %ji, %index : i64
    %nv = arith.select %better, %in, %best : f64
    %ni = arith.select %better, %sum, %index : i64
    linalg.yield %nv, %ni : f64, i64
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%c : memref<4x8x2xf32>) outs(%v2, %i2 : memref<4x2xf32>, memref<4x2xi64>) {
  ^bb0(%in: f32, %best: f32, %index: i64):
    %better = arith.cmpf ogt, %in, %best : f32
    %j = linalg.index 2 : index
    %ji = arith.index_cast %j : index to i64
    %nv = arith.select %better, %in, %best : f32
    %ni = arith.select %better, %ji, %index : i64
    linalg.yield %nv, %ni : f32, i64
  }
  return
}
