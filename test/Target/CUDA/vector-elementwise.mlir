// RUN: kiln-opt %s --split-input-file --kiln-cuda-vector-elementwise --canonicalize --cse | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cuda-vector-elementwise=max-blocks=16 --canonicalize --cse | FileCheck %s --check-prefix=GRID

/// The elementwise chain of bench/cuda_ops.py: 4 f32 per thread and step,
/// one 16-byte load and store, the body cloned per element; 65536 vectors
/// in 256 blocks of 256 threads, or 16 blocks that loop.
// CHECK-LABEL: func.func @chain
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c256, {{.*}}) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in ({{.*}} = %c256,
// CHECK: scf.for %[[V:.+]] = %{{.+}} to %c65536 step %c65536 {
// CHECK: %[[COL:.+]] = arith.remui %[[V]], %c1024 : index
// CHECK: %[[J:.+]] = arith.muli %[[COL]], %c4 : index
// CHECK: %[[ROW:.+]] = arith.divui %[[V]], %c1024 : index
// CHECK: vector.load %arg0[%[[ROW]], %[[J]]] {alignment = 16 : i64} : memref<64x4096xf32>, vector<4xf32>
// CHECK-COUNT-4: arith.maximumf
// CHECK: vector.store %{{.+}}, %arg1[%[[ROW]], %[[J]]] {alignment = 16 : i64} : memref<64x4096xf32>, vector<4xf32>
// CHECK-NOT: linalg.generic
// GRID-LABEL: func.func @chain
// GRID: gpu.launch blocks({{.*}}) in ({{.*}} = %c16, {{.*}}) threads
// GRID: scf.for %{{.+}} = %{{.+}} to %c65536 step %c4096 {
func.func @chain(%x: memref<64x4096xf32>, %y: memref<64x4096xf32>) {
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<64x4096xf32>) outs(%y : memref<64x4096xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %half : f32
    %1 = arith.addf %0, %one : f32
    %2 = arith.maximumf %1, %zero : f32
    %3 = arith.mulf %2, %in : f32
    linalg.yield %3 : f32
  }
  return
}


// -----

/// Mixed widths: vectors of 4 (the widest operand is f32), so the f16
/// result is stored 8 bytes at a time; the bias is read along the row, the
/// per-row scale once per vector, linalg.index is the element's column.
// CHECK-LABEL: func.func @bias_to_half
// CHECK: vector.load %arg0{{.*}} {alignment = 16 : i64} : memref<2x16x64xf32>, vector<4xf32>
// CHECK: vector.load %arg1[%[[J:.+]]] {alignment = 16 : i64} : memref<64xf32>, vector<4xf32>
// CHECK: memref.load %arg2
// CHECK-NOT: memref.load
// CHECK: arith.index_cast %[[J]] : index to i32
// CHECK-COUNT-4: arith.truncf
// CHECK: vector.store %{{.+}}, %arg3{{.*}} {alignment = 8 : i64} : memref<2x16x64xf16>, vector<4xf16>

func.func @bias_to_half(%x: memref<2x16x64xf32>, %b: memref<64xf32>, %s: memref<2x16xf32>, %y: memref<2x16x64xf16>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %b, %s : memref<2x16x64xf32>, memref<64xf32>, memref<2x16xf32>) outs(%y : memref<2x16x64xf16>) {
  ^bb0(%in: f32, %bias: f32, %scale: f32, %out: f16):
    %i = linalg.index 2 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    %0 = arith.addf %in, %bias : f32
    %1 = arith.mulf %0, %scale : f32
    %2 = arith.addf %1, %f : f32
    %3 = arith.truncf %2 : f32 to f16
    linalg.yield %3 : f16
  }
  return
}


// -----

/// Left to the generic path: a row of 30 (not a multiple of 4), a
/// transposed read, a dynamic shape, a view with a dynamic offset, a body
/// that reads memory.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: gpu.launch
// CHECK-COUNT-5: linalg.generic

func.func @left_alone(%x: memref<3x30xf32>, %y: memref<3x30xf32>, %t: memref<8x8xf32>, %u: memref<8x8xf32>, %d: memref<?x8xf32>, %e: memref<?x8xf32>, %v: memref<4x8xf32, strided<[8, 1], offset: ?>>, %w: memref<4x8xf32>, %p: memref<4xf32>, %q: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<3x30xf32>) outs(%y : memref<3x30xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : memref<8x8xf32>) outs(%u : memref<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%d : memref<?x8xf32>) outs(%e : memref<?x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v : memref<4x8xf32, strided<[8, 1], offset: ?>>) outs(%w : memref<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%p : memref<4xf32>) outs(%q : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c0 = arith.constant 0 : index
    %0 = memref.load %p[%c0] : memref<4xf32>
    linalg.yield %0 : f32
  }
  return
}
