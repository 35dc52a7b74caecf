// RUN: kiln-opt %s --split-input-file --allow-unregistered-dialect --kiln-distinct-result-buffers | FileCheck %s
// RUN: kiln-opt %s --split-input-file --allow-unregistered-dialect --kiln-distinct-result-buffers --buffer-results-to-out-params=hoist-static-allocs | FileCheck %s --check-prefix=OUT

/// One alloc returned twice and once more later: the repeats are copies of
/// their own; the first stays. Out-params then take the alloc's place and
/// the copies read the first output.
// CHECK-LABEL: func.func private @twice
// CHECK: %[[A:.+]] = memref.alloc() : memref<4xf32>
// CHECK: %[[B:.+]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT: memref.copy %[[A]], %[[B]]
// CHECK: %[[C:.+]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT: memref.copy %[[A]], %[[C]]
// CHECK-NEXT: return %[[A]], %[[B]], %arg0, %[[C]]
// OUT-LABEL: func.func private @twice
// OUT-SAME: (%[[X:.+]]: memref<4xf32>, %[[O0:.+]]: memref<4xf32>, %[[O1:.+]]: memref<4xf32>, %[[O2:.+]]: memref<4xf32>, %[[O3:.+]]: memref<4xf32>)
// OUT-NOT: memref.alloc
// OUT: "test.fill"(%[[O0]])
// OUT-NEXT: memref.copy %[[O0]], %[[O1]]
// OUT-NEXT: memref.copy %[[O0]], %[[O3]]
// OUT-NEXT: memref.copy %[[X]], %[[O2]]
// OUT-NEXT: return
func.func private @twice(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  "test.fill"(%a) : (memref<4xf32>) -> ()
  return %a, %a, %x, %a : memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>
}

// -----

/// A dynamic buffer's copy reads its sizes from it; distinct results and
/// non-memref results are left alone.
// CHECK-LABEL: func.func private @dynamic
// CHECK: %[[D:.+]] = memref.dim %arg0, %c1
// CHECK: %[[C:.+]] = memref.alloc(%[[D]]) {alignment = 64 : i64} : memref<2x?xf32>
// CHECK-NEXT: memref.copy %arg0, %[[C]]
// CHECK-NEXT: return %arg0, %[[C]], %arg1, %arg1
func.func private @dynamic(%x: memref<2x?xf32>, %n: index) -> (memref<2x?xf32>, memref<2x?xf32>, index, index) {
  return %x, %x, %n, %n : memref<2x?xf32>, memref<2x?xf32>, index, index
}
