// RUN: kiln-opt %s --split-input-file --kiln-cuda-row-kernels --canonicalize --cse | FileCheck %s

/// Softmax over rows of 64 f32 (the codegen's six buffer ops): one launch,
/// a warp per row and 8 rows per block; the row is read once with 16-byte
/// loads, max and sum by xor shuffles, the result stored once with 16-byte
/// stores (the exp written into %y in between stays in registers); the
/// statistics buffer, used only by the group, goes.
// CHECK-LABEL: func.func @softmax
// CHECK-NOT: linalg.
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}}) threads(%[[TX:.+]], %[[TY:.+]], %{{.+}}) in ({{.*}} = %c32, {{.*}} = %c8, {{.*}})
// CHECK: %[[J:.+]] = arith.muli %[[TX]], %c4 : index
// CHECK: %[[IN:.+]] = arith.cmpi ult, %[[J]], %c64 : index
// CHECK: vector.load %arg0[%[[TY]], %[[J]]] {alignment = 16 : i64} : memref<8x64xf32>, vector<4xf32>
// CHECK-NOT: vector.load
// CHECK-COUNT-5: gpu.shuffle  xor {{.*}} : f32
// CHECK: math.exp
// CHECK-COUNT-5: gpu.shuffle  xor {{.*}} : f32
// CHECK-NOT: gpu.barrier
// CHECK: scf.if %[[IN]] {
// CHECK-NEXT: vector.from_elements
// CHECK-NEXT: vector.store %{{.+}}, %arg1[%[[TY]], %[[J]]] {alignment = 16 : i64} : memref<8x64xf32>, vector<4xf32>
// CHECK-NOT: vector.store
// CHECK: gpu.terminator
// CHECK-NOT: memref.dealloc
func.func @softmax(%x: memref<8x64xf32>, %y: memref<8x64xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %m = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  linalg.fill ins(%ninf : f32) outs(%m : memref<8xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x64xf32>) outs(%m : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maxnumf %in, %out fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %m : memref<8x64xf32>, memref<8xf32>) outs(%y : memref<8x64xf32>) {
  ^bb0(%in: f32, %in_2: f32, %out: f32):
    %0 = arith.subf %in, %in_2 : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  }
  linalg.fill ins(%zero : f32) outs(%m : memref<8xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%y : memref<8x64xf32>) outs(%m : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %m : memref<8x64xf32>, memref<8xf32>) outs(%y : memref<8x64xf32>) {
  ^bb0(%in: f32, %in_2: f32, %out: f32):
    %0 = arith.divf %one, %in_2 : f32
    %1 = arith.mulf %in, %0 : f32
    linalg.yield %1 : f32
  }
  memref.dealloc %m : memref<8xf32>
  return
}

// -----

/// layer_norm over rows of 768 with the residual add before it: 64 threads
/// (3 chunks of 4) per row and 4 rows per block, the sum a scratch row in
/// registers, each statistic across the two warps through shared memory,
/// gamma and beta read once, y stored once.
// CHECK-LABEL: func.func @residual_layer_norm
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c64, {{.*}} = %c4, {{.*}}) workgroup(%[[SH:.+]] : memref<16xf32, #gpu.address_space<workgroup>>)
// CHECK-COUNT-3: vector.load %arg0
// CHECK-COUNT-3: vector.load %arg1
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: memref.store %{{.+}}, %[[SH]]
// CHECK: gpu.barrier
// CHECK-COUNT-2: memref.load %[[SH]]
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: gpu.barrier
// CHECK-COUNT-3: vector.load %arg2
// CHECK-COUNT-3: vector.load %arg3
// CHECK: math.rsqrt
// CHECK-COUNT-3: vector.store %{{.+}}, %arg4
// CHECK-NOT: vector.store
// CHECK-NOT: memref.store
// CHECK: gpu.terminator
// CHECK-NOT: memref.dealloc
func.func @residual_layer_norm(%a: memref<4x768xf32>, %r: memref<4x768xf32>, %g: memref<768xf32>, %bt: memref<768xf32>, %y: memref<4x768xf32>) {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 768.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %s = memref.alloc() {alignment = 64 : i64} : memref<4x768xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %r : memref<4x768xf32>, memref<4x768xf32>) outs(%s : memref<4x768xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.addf %in, %in_1 : f32
    linalg.yield %0 : f32
  }
  %z = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%z : memref<4xf32>)
  %sum = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  linalg.copy ins(%z : memref<4xf32>) outs(%sum : memref<4xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%s : memref<4x768xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %sum : memref<4x768xf32>, memref<4xf32>) outs(%y : memref<4x768xf32>) {
  ^bb0(%in: f32, %in_3: f32, %out: f32):
    %0 = arith.divf %in_3, %n : f32
    %1 = arith.subf %in, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%y : memref<4x768xf32>) outs(%z : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    %1 = arith.addf %0, %out fastmath<reassoc> : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %z, %g, %bt : memref<4x768xf32>, memref<4xf32>, memref<768xf32>, memref<768xf32>) outs(%y : memref<4x768xf32>) {
  ^bb0(%in: f32, %in_3: f32, %in_4: f32, %in_5: f32, %out: f32):
    %0 = arith.divf %in_3, %n : f32
    %1 = arith.addf %0, %eps : f32
    %2 = math.rsqrt %1 : f32
    %3 = arith.mulf %in, %2 : f32
    %4 = arith.mulf %3, %in_4 : f32
    %5 = arith.addf %4, %in_5 : f32
    linalg.yield %5 : f32
  }
  memref.dealloc %s : memref<4x768xf32>
  memref.dealloc %z : memref<4xf32>
  memref.dealloc %sum : memref<4xf32>
  return
}

// -----

/// Rows of 30 (not a multiple of 4): scalar loads under the row's end, the
/// spare rows of the last block clamp to the last row and store nothing;
/// the fill's store is dead (the reduction rewrites the row's value).
// CHECK-LABEL: func.func @ragged_sum
// CHECK: gpu.launch {{.*}} threads(%[[TX:.+]], %[[TY:.+]], %{{.+}}) in ({{.*}} = %c32, {{.*}} = %c8, {{.*}})
// CHECK: %[[VALID:.+]] = arith.cmpi ult, %[[TY]], %c3 : index
// CHECK: %[[ROW:.+]] = arith.minui %[[TY]], %c2 : index
// CHECK: %[[IN:.+]] = arith.cmpi ult, %[[TX]], %c30 : index
// CHECK: scf.if %[[IN]] -> (f32) {
// CHECK-NEXT: memref.load %arg0[%[[ROW]], %[[TX]]] : memref<3x30xf32>
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[TX]], %c0 : index
// CHECK: %[[STORE:.+]] = arith.andi %[[VALID]], %[[FIRST]] : i1
// CHECK: scf.if %[[STORE]] {
// CHECK-NEXT: memref.store %{{.+}}, %arg1[%[[ROW]]] : memref<3xf32>
// CHECK-NOT: memref.store
func.func @ragged_sum(%x: memref<3x30xf32>, %s: memref<3xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<3xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<3x30xf32>) outs(%s : memref<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

/// f16 rows: 8 elements per 16-byte load; partials are widened to f32 for
/// each shuffle and for shared memory; the initial value is read from %s.
// CHECK-LABEL: func.func @half_max
// CHECK: workgroup(%[[SH:.+]] : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK-COUNT-4: vector.load {{.*}} : memref<2x2048xf16>, vector<8xf16>
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: gpu.shuffle  xor {{.*}} : f32
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK: memref.store %{{.+}}, %[[SH]]
// CHECK: memref.load %arg1
// CHECK: memref.store %{{.+}}, %arg1
func.func @half_max(%x: memref<2x2048xf16>, %s: memref<2xf16>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<2x2048xf16>) outs(%s : memref<2xf16>) {
  ^bb0(%in: f16, %out: f16):
    %0 = arith.maximumf %in, %out : f16
    linalg.yield %0 : f16
  }
  return
}

// -----

/// Rows of 65536 f32 exceed 4 x 16 bytes for 1024 threads: left alone.
// CHECK-LABEL: func.func @long_rows
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
func.func @long_rows(%x: memref<2x65536xf32>, %s: memref<2xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<2x65536xf32>) outs(%s : memref<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

/// A dynamic row count, a reduction over a middle axis, an integer sum:
/// left alone.
// CHECK-LABEL: func.func @others
// CHECK-NOT: gpu.launch
// CHECK-COUNT-3: linalg.generic
func.func @others(%x: memref<?x64xf32>, %s: memref<?xf32>, %y: memref<4x8x16xf32>, %t: memref<4x16xf32>, %i: memref<4x64xi32>, %u: memref<4xi32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<?x64xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y : memref<4x8x16xf32>) outs(%t : memref<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%i : memref<4x64xi32>) outs(%u : memref<4xi32>) {
  ^bb0(%in: i32, %out: i32):
    %0 = arith.addi %in, %out : i32
    linalg.yield %0 : i32
  }
  return
}

// -----

/// The group ends before an op that reads the written row transposed.
// CHECK-LABEL: func.func @stops
// CHECK: gpu.launch
// CHECK: vector.store %{{.+}}, %arg2
// CHECK: gpu.terminator
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel"]} ins(%arg2
func.func @stops(%x: memref<64x64xf32>, %s: memref<64xf32>, %y: memref<64x64xf32>, %z: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<64x64xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<64x64xf32>, memref<64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.subf %in, %in_1 : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : memref<64x64xf32>) outs(%z : memref<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}
