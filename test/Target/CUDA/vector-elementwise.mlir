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
/// transposed read, a body that reads memory, a view whose static offset
/// is not a multiple of the vector, a dynamic last dim.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: gpu.launch
// CHECK-COUNT-5: linalg.generic

func.func @left_alone(%x: memref<3x30xf32>, %y: memref<3x30xf32>, %t: memref<8x8xf32>, %u: memref<8x8xf32>, %v: memref<4x8xf32, strided<[8, 1], offset: 2>>, %w: memref<4x8xf32>, %p: memref<4xf32>, %q: memref<4xf32>, %d: memref<4x?xf32>, %e: memref<4x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<3x30xf32>) outs(%y : memref<3x30xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : memref<8x8xf32>) outs(%u : memref<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v : memref<4x8xf32, strided<[8, 1], offset: 2>>) outs(%w : memref<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%p : memref<4xf32>) outs(%q : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c0 = arith.constant 0 : index
    %0 = memref.load %p[%c0] : memref<4xf32>
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%d : memref<4x?xf32>) outs(%e : memref<4x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

/// Dynamic outer dims (a decoder's batch and sequence): the vectors and the
/// grid are host arithmetic on the output's dims (at least one block), the
/// loop strides over the whole grid.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK-DAG: %[[B:.+]] = memref.dim %arg1, %c0 : memref<?x?x64xf16>
// CHECK-DAG: %[[S:.+]] = memref.dim %arg1, %c1 : memref<?x?x64xf16>
// CHECK: %[[V0:.+]] = arith.muli %[[B]], %c8 : index
// CHECK: %[[V:.+]] = arith.muli %[[V0]], %[[S]] : index
// CHECK: %[[W:.+]] = arith.ceildivui %[[V]], %c256 : index
// CHECK: %[[M:.+]] = arith.minui %[[W]], %c{{[0-9]+}} : index
// CHECK: %[[G:.+]] = arith.maxui %[[M]], %c1 : index
// CHECK: %[[STEP:.+]] = arith.muli %[[G]], %c256 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[G]], {{.*}}) threads
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[V]] step %[[STEP]] {
// CHECK: vector.load %arg0{{.*}} {alignment = 16 : i64} : memref<?x?x64xf16>, vector<8xf16>
// CHECK: vector.store %{{.+}}, %arg1{{.*}} {alignment = 16 : i64} : memref<?x?x64xf16>, vector<8xf16>
func.func @dynamic_rows(%x: memref<?x?x64xf16>, %y: memref<?x?x64xf16>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : memref<?x?x64xf16>) outs(%y : memref<?x?x64xf16>) {
  ^bb0(%in: f16, %out: f16):
    %0 = arith.negf %in : f16
    linalg.yield %0 : f16
  }
  return
}

// -----

/// A view with dynamic strides and offset (the past's rows of a KV cache's
/// concatenation): the host checks that they are multiples of the vector
/// and launches the vector kernel, or else one element per thread and step.
// CHECK-LABEL: func.func @cache_rows
// CHECK: %{{.+}}, %[[OFF:.+]], %{{.+}}:4, %[[ST:.+]]:4 = memref.extract_strided_metadata %arg1
// CHECK-DAG: arith.remui %[[OFF]], %c8
// CHECK-DAG: arith.remui %[[ST]]#0, %c8
// CHECK-DAG: arith.remui %[[ST]]#1, %c8
// CHECK: scf.if %{{.+}} {
// CHECK: gpu.launch
// CHECK: vector.load %arg0{{.*}} : memref<?x4x?x16xf16>, vector<8xf16>
// CHECK: vector.store {{.*}} : memref<?x4x?x16xf16, strided<[?, ?, 16, 1], offset: ?>>, vector<8xf16>
// CHECK: } else {
// CHECK: gpu.launch
// CHECK: vector.load %arg0{{.*}} : memref<?x4x?x16xf16>, vector<1xf16>
// CHECK: vector.store {{.*}} : memref<?x4x?x16xf16, strided<[?, ?, 16, 1], offset: ?>>, vector<1xf16>
func.func @cache_rows(%past: memref<?x4x?x16xf16>, %present: memref<?x4x?x16xf16, strided<[?, ?, 16, 1], offset: ?>>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%past : memref<?x4x?x16xf16>) outs(%present : memref<?x4x?x16xf16, strided<[?, ?, 16, 1], offset: ?>>) {
  ^bb0(%in: f16, %out: f16):
    linalg.yield %in : f16
  }
  return
}

// -----

/// A copy (what bufferization makes of a concatenation's insert: the past
/// copied into the present) is vectorized like a generic.
// CHECK-LABEL: func.func @past_copy
// CHECK-NOT: linalg.copy
// CHECK: scf.if
// CHECK: vector.load %arg0{{.*}} : memref<?x4x?x16xf16>, vector<8xf16>
// CHECK: vector.store {{.*}} : memref<?x4x?x16xf16, strided<[?, ?, 16, 1]>>, vector<8xf16>
func.func @past_copy(%past: memref<?x4x?x16xf16>, %present: memref<?x4x?x16xf16, strided<[?, ?, 16, 1]>>) {
  linalg.copy ins(%past : memref<?x4x?x16xf16>) outs(%present : memref<?x4x?x16xf16, strided<[?, ?, 16, 1]>>)
  return
}
