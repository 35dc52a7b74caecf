// RUN: kiln-opt %s --pass-pipeline="builtin.module(kiln-cpu-matmul{vector-width=16 tile-rows=6 tile-vectors=4})" | FileCheck %s --check-prefix=DEFAULT
// RUN: kiln-opt %s --pass-pipeline="builtin.module(kiln-cpu-matmul{vector-width=16 tile-rows=6 tile-vectors=4 tuned=5109c3f1ddaaab4e=8x2x64x128x128x2@12.5})" | FileCheck %s --check-prefix=TUNED
// RUN: kiln-opt %s --pass-pipeline="builtin.module(kiln-cpu-matmul{vector-width=16 tile-rows=6 tile-vectors=4 tuned=0000000000000000=8x2x64x128x128x2@12.5})" | FileCheck %s --check-prefix=DEFAULT
// RUN: kiln-opt %s --pass-pipeline="builtin.module(kiln-cpu-matmul{vector-width=16 tile-rows=6 tile-vectors=4 cost-model=true})" | FileCheck %s --check-prefix=MODEL
// RUN: not kiln-opt %s --pass-pipeline="builtin.module(kiln-cpu-matmul{tuned=5109c3f1ddaaab4e=8x2x64})" 2>&1 | FileCheck %s --check-prefix=MALFORMED
// RUN: not kiln-opt %s --pass-pipeline="builtin.module(kiln-cpu-matmul{tuned=5109c3f1ddaaab4e=20x2x64x128x128x2@1})" 2>&1 | FileCheck %s --check-prefix=NOTINSPACE
// RUN: kiln-opt %s --pass-pipeline="builtin.module(kiln-cpu-matmul{vector-width=8 vector-registers=16 tile-rows=6 tile-vectors=2 cost-model=true})" | FileCheck %s --check-prefix=AVX2
// RUN: not kiln-opt %s --pass-pipeline="builtin.module(kiln-cpu-matmul{vector-width=8 vector-registers=16 tuned=5109c3f1ddaaab4e=6x4x64x256x256x4@1})" 2>&1 | FileCheck %s --check-prefix=NOTINSPACE16

/// The matmul's signature (shapes, strides, dtypes, weights, fresh C, vector
/// width) hashes to its key. Without a `tuned` entry for the key, the tile
/// options apply (6 rows x 4 vectors: 24 accumulators) and the choice is
/// recorded as the default.
// DEFAULT: kiln.tuning = [{config = "6x4x64x256x256x4", {{.*}} key = "5109c3f1ddaaab4e", m = 96 : i64, n = 72 : i64, {{.*}} signature = "matmul b=f32[80x72|72,1] a=f32[96x80|80,1] c=f32[96x72|72,1] constant-a=0 constant-b=0 fresh=0 vector-width=16", source = "default"}]
// DEFAULT: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)

/// The database's winner for the key: 8 rows x 2 vectors (16 accumulators),
/// column blocks of at most 128 (the B pack buffer holds the one block's 3
/// panels of 32 columns x 128 deep: N = 72 fits one), with its measured
/// time; no kernel has more accumulators.
// TUNED: kiln.tuning = [{config = "8x2x64x128x128x2", {{.*}} source = "tuned", time_us = 1.250000e+01 : f64}]
// TUNED: memref.alloc() {alignment = 64 : i64} : memref<12288xf32>
// TUNED: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// TUNED-NOT: vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>

/// The cost model keeps the fallback for a matmul this small.
// MODEL: config = "6x4x64x256x256x4", {{.*}} source = "predicted"

/// With 16 vector registers of 8 lanes (AVX2) the signature names the
/// register count, so the key differs from the 32-register one above; the
/// cost model keeps the 6 x 2 fallback (12 accumulators), and a 32-register
/// tile is outside the space (6*4 + 4 + 1 = 29 > 16).
// AVX2: kiln.tuning = [{config = "6x2x64x256x256x4", {{.*}} signature = "matmul b=f32[80x72|72,1] a=f32[96x80|80,1] c=f32[96x72|72,1] constant-a=0 constant-b=0 fresh=0 vector-width=8 vector-registers=16", source = "predicted"}]
// AVX2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2-NOT: vector<16xf32>
// NOTINSPACE16: error: kiln-cpu-matmul: tuned entry '5109c3f1ddaaab4e=6x4x64x256x256x4@1': configuration 6x4x64x256x256x4 is not in the space cpu-matmul-2 supports (registers or blocks)

// MALFORMED: error: kiln-cpu-matmul: tuned entry '5109c3f1ddaaab4e=8x2x64': expected KEY=RxVxMxNxKxT@MICROSECONDS
// NOTINSPACE: error: kiln-cpu-matmul: tuned entry '5109c3f1ddaaab4e=20x2x64x128x128x2@1': configuration 20x2x64x128x128x2 is not in the space cpu-matmul-2 supports (registers or blocks)
func.func @matmul(%a: memref<96x80xf32>, %b: memref<80x72xf32>, %c: memref<96x72xf32>) {
  linalg.matmul ins(%a, %b : memref<96x80xf32>, memref<80x72xf32>) outs(%c : memref<96x72xf32>)
  return
}
