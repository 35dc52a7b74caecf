// RUN: kiln-opt %s --split-input-file --kiln-cuda-promote-accumulators | FileCheck %s

/// A matmul's k loop carries C[i, j] in a register: one load before, one
/// store after.
// CHECK-LABEL: func.func @matmul
// CHECK: scf.parallel (%[[I:.+]], %[[J:.+]]) =
// CHECK: %[[INIT:.+]] = memref.load %[[C:.+]][%[[I]], %[[J]]]
// CHECK: %[[SUM:.+]] = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[INIT]]) -> (f32) {
// CHECK-NOT: memref.store
// CHECK: %[[NEXT:.+]] = arith.addf %[[ACC]]
// CHECK: scf.yield %[[NEXT]]
// CHECK: memref.store %[[SUM]], %[[C]][%[[I]], %[[J]]]
func.func @matmul(%a: memref<4x8xf32>, %b: memref<8x5xf32>, %c: memref<4x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c5) step (%c1, %c1) {
    scf.for %k = %c0 to %c8 step %c1 {
      %x = memref.load %a[%i, %k] : memref<4x8xf32>
      %y = memref.load %b[%k, %j] : memref<8x5xf32>
      %acc = memref.load %c[%i, %j] : memref<4x5xf32>
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      memref.store %s, %c[%i, %j] : memref<4x5xf32>
    }
    scf.reduce
  }
  return
}

// -----

/// The loop also reads a view of the accumulated buffer: nothing changes.
// CHECK-LABEL: func.func @aliased
// CHECK: scf.for
// CHECK-NOT: iter_args
// CHECK: memref.store
func.func @aliased(%c: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %view = memref.subview %c[0] [8] [1] : memref<8xf32> to memref<8xf32, strided<[1]>>
  scf.for %k = %c0 to %c8 step %c1 {
    %x = memref.load %view[%k] : memref<8xf32, strided<[1]>>
    %acc = memref.load %c[%c0] : memref<8xf32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %c[%c0] : memref<8xf32>
  }
  return
}
