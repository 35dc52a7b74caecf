// RUN: kiln-opt %s --split-input-file --kiln-cuda-map-parallel-loops=block-size=128 --verify-diagnostics | FileCheck %s

/// A 2-D loop is collapsed to one dim, tiled by the block size, and mapped
/// to blocks (tiles) and threads (elements of a tile, guarded).
// CHECK-LABEL: func.func @two_dims
// CHECK: scf.parallel (%[[B:.+]]) = (%{{.+}}) to (%{{.+}}) step (%[[C128:.+]]) {
// CHECK: scf.parallel (%[[T:.+]]) = (%{{.+}}) to (%[[C128]])
// CHECK: scf.if
// CHECK: memref.store
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
func.func @two_dims(%out: memref<5x300xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c300 = arith.constant 300 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c5, %c300) step (%c1, %c1) {
    memref.store %one, %out[%i, %j] : memref<5x300xf32>
    scf.reduce
  }
  return
}

// -----

/// A serial loop is one block; a parallel loop nested in it becomes an scf.for.
// CHECK-LABEL: func.func @serial
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK-NOT: scf.parallel
// CHECK: memref.store
// CHECK: } {kiln.serial, mapping = [#gpu.loop_dim_map<processor = block_x
func.func @serial(%out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%k) = (%c0) to (%c1) step (%c1) {
    scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
      memref.store %one, %out[%i] : memref<4xf32>
      scf.reduce
    }
    scf.reduce
  } {kiln.serial}
  return
}
