// RUN: kiln-opt %s -split-input-file --pass-pipeline="builtin.module(kiln-cpu-matmul{vector-width=16 tile-rows=6 tile-vectors=4 isa=avx512bf16})" | FileCheck %s
// RUN: kiln-opt %s -split-input-file --pass-pipeline="builtin.module(kiln-cpu-matmul{vector-width=16 tile-rows=6 tile-vectors=1 tile-n=16 tile-k=4 isa=avx512bf16})" | FileCheck %s --check-prefix=SMALL

/// isa=avx512bf16: B is packed at run time as bf16 pairs of k rows
/// interleaved per column (two rows of 16 f32 columns -> 32 bf16 lanes), A
/// as bf16 pairs of k per row; the kernel steps over k pairs with 6 x 4 f32
/// accumulators, each A pair broadcast as one 32-bit lane, 24
/// x86vector.avx512.dot (vdpbf16ps) per step.
// CHECK-LABEL: func @matmul
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<65536xbf16>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<16896xbf16>
// CHECK: %[[ODD:.+]] = arith.truncf %{{.+}} : vector<16xf32> to vector<16xbf16>
// CHECK: %[[EVEN:.+]] = arith.truncf %{{.+}} : vector<16xf32> to vector<16xbf16>
// CHECK: %[[PAIRS:.+]] = vector.interleave %[[EVEN]], %[[ODD]] : vector<16xbf16> -> vector<32xbf16>
// CHECK: vector.store %[[PAIRS]], %{{.+}} : memref<65536xbf16>, vector<32xbf16>
// CHECK: %[[APAIR:.+]] = arith.truncf %{{.+}} : vector<2xf32> to vector<2xbf16>
// CHECK: vector.store %[[APAIR]], %{{.+}} : memref<16896xbf16>, vector<2xbf16>
// CHECK: %[[STEPS:.+]] = arith.ceildivui %{{.+}}, %c2{{.*}} : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[STEPS]] step %{{.+}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: %[[B0:.+]] = vector.load %{{.+}} : memref<65536xbf16>, vector<32xbf16>
// CHECK: %[[A0:.+]] = vector.load %{{.+}} : memref<16896xbf16>, vector<2xbf16>
// CHECK: %[[WORD:.+]] = vector.bitcast %[[A0]] : vector<2xbf16> to vector<1xi32>
// CHECK: %[[LANE:.+]] = vector.extract %[[WORD]][0] : i32 from vector<1xi32>
// CHECK: %[[SPLAT:.+]] = vector.broadcast %[[LANE]] : i32 to vector<16xi32>
// CHECK: %[[ABCAST:.+]] = vector.bitcast %[[SPLAT]] : vector<16xi32> to vector<32xbf16>
// CHECK: x86vector.avx512.dot %{{.+}}, %[[ABCAST]], %[[B0]] : vector<32xbf16> -> vector<16xf32>
// CHECK-COUNT-23: x86vector.avx512.dot
// CHECK-NOT: vector.fma
// CHECK: scf.yield
/// Rows past the 6-row panels of a dynamic M read A unpacked: each pair is
/// converted in the kernel (the second element zero past an odd depth).
// CHECK: vector.from_elements %{{.+}}, %{{.+}} : vector<2xf32>
// CHECK: arith.truncf %{{.+}} : vector<2xf32> to vector<2xbf16>
// CHECK: x86vector.avx512.dot
func.func @matmul(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  return
}

// -----

/// A constant B is packed at compile time into a bf16 global in the same
/// layout. With 16-column panels and 4-deep blocks, B = [[1, 2], [3, 4],
/// [5, 6]] (K = 3: odd) is pair 0 = (1, 3) (2, 4), 14 zero columns, pair 1 =
/// (5, 0) (6, 0), 14 zero columns; bf16 little-endian: 1.0 = 803F, 3.0 =
/// 4040, 2.0 = 0040, 4.0 = 8040, 5.0 = A040, 6.0 = C040 (after the blob's
/// 4-byte alignment header).
// SMALL: memref.global "private" constant @weights_packed : memref<64xbf16>
// SMALL-NOT: memref.global "private" constant @weights :
// SMALL-LABEL: func @constant_b
// SMALL: memref.get_global @weights_packed : memref<64xbf16>
// SMALL: x86vector.avx512.dot
// SMALL: weights_packed: "0x02000000803F4040004080400000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000A0400000C04000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
memref.global "private" constant @weights : memref<3x2xf32> = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]>
func.func @constant_b(%a: memref<5x3xf32>, %c: memref<5x2xf32>) {
  %b = memref.get_global @weights : memref<3x2xf32>
  linalg.matmul ins(%a, %b : memref<5x3xf32>, memref<3x2xf32>) outs(%c : memref<5x2xf32>)
  return
}
