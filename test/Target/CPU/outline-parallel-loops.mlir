// RUN: kiln-opt %s --kiln-outline-parallel-loops="min-iterations=1" | FileCheck %s
// RUN: kiln-opt %s --kiln-outline-parallel-loops | FileCheck %s --check-prefix=SMALL

/// With the default threshold, 4 iterations are not worth a task.
// SMALL-LABEL: func.func private @kiln_entry
// SMALL: scf.parallel
// SMALL-NOT: kiln_launch

/// The parallel loop becomes a launcher call with its trip count and captured
/// values; the body a task taking the iteration index; constants are cloned.
// CHECK-LABEL: func.func private @kiln_entry
// CHECK-SAME: (%[[HOST:.+]]: !llvm.ptr, %[[BUF:.+]]: memref<8xf32>)
// CHECK-NOT: kiln.host
// CHECK: %[[COUNT:.+]] = arith.ceildivsi
// CHECK: call @kiln_launch_0(%[[HOST]], %[[COUNT]], %[[BUF]]) : (!llvm.ptr, index, memref<8xf32>) -> ()
// CHECK-NOT: scf.parallel
// CHECK-LABEL: func @no_host
// CHECK: scf.parallel
// CHECK-LABEL: func.func private @kiln_task_0
// CHECK-SAME: (%[[I:.+]]: index, %[[B:.+]]: memref<8xf32>)
// CHECK-DAG: arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK: %[[MUL:.+]] = arith.muli %[[I]], %[[C2]]
// CHECK: %[[IV:.+]] = arith.addi %{{.*}}, %[[MUL]]
// CHECK: memref.store %{{.*}}, %[[B]][%[[IV]]]
// CHECK: func.func private @kiln_launch_0(!llvm.ptr, index, memref<8xf32>)
func.func private @kiln_entry(%host: !llvm.ptr {kiln.host}, %buf: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c2 = arith.constant 2 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c2) {
    memref.store %one, %buf[%i] : memref<8xf32>
    scf.reduce
  }
  return
}

/// Without a host argument nothing changes (checked above: functions print
/// in order, the outlined ones last).
func.func @no_host(%buf: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %one, %buf[%i] : memref<8xf32>
    scf.reduce
  }
  return
}

/// A 2-D nest is distributed over its first dimension only.
// CHECK-LABEL: func.func private @kiln_task_1
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}})
// CHECK: memref.store
func.func private @two_d(%host: !llvm.ptr {kiln.host}, %buf: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    memref.store %one, %buf[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  return
}

/// A leading dimension that runs once (a batch of 1) is not the distributed
/// one: the tasks run over the next dimension, the unit one becomes its
/// lower bound.
// CHECK-LABEL: func.func private @kiln_task_2
// CHECK-SAME: (%[[J:.+]]: index,
// CHECK: %[[IV:.+]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: scf.parallel (%[[K:.+]]) =
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %[[IV]], %[[K]]] : memref<1x4x8xf32>
func.func private @unit_batch(%host: !llvm.ptr {kiln.host}, %buf: memref<1x4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%n, %i, %j) = (%c0, %c0, %c0) to (%c1, %c4, %c8) step (%c1, %c1, %c1) {
    memref.store %one, %buf[%n, %i, %j] : memref<1x4x8xf32>
    scf.reduce
  }
  return
}

/// The split of a 7-D nest maps each inner induction variable to its own
/// inner loop variable, in order (a dangling copy of them once crashed here).
// CHECK-LABEL: func.func private @kiln_task_3
// CHECK-SAME: (%[[I:[^:]+]]: index, %[[A:[^:]+]]: memref<2x3x2x2x2x2x2xf32>, %[[O:[^:]+]]: memref<2x3x2x2x2x2x2xf32>)
// CHECK: %[[IV:.+]] = arith.addi
// CHECK: scf.parallel (%[[B:[^,]+]], %[[C:[^,]+]], %[[D:[^,]+]], %[[E:[^,]+]], %[[F:[^,]+]], %[[G:[^)]+]]) =
// CHECK: memref.load %[[A]][%[[IV]], %[[B]], %[[C]], %[[D]], %[[E]], %[[F]], %[[G]]]
// CHECK: memref.store %{{.+}}, %[[O]][%[[IV]], %[[B]], %[[C]], %[[D]], %[[E]], %[[F]], %[[G]]]
func.func private @seven_d(%host: !llvm.ptr {kiln.host}, %a: memref<2x3x2x2x2x2x2xf32>,
                           %o: memref<2x3x2x2x2x2x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  scf.parallel (%i0, %i1, %i2, %i3, %i4, %i5, %i6) = (%c0, %c0, %c0, %c0, %c0, %c0, %c0)
      to (%c2, %c3, %c2, %c2, %c2, %c2, %c2) step (%c1, %c1, %c1, %c1, %c1, %c1, %c1) {
    %v = memref.load %a[%i0, %i1, %i2, %i3, %i4, %i5, %i6] : memref<2x3x2x2x2x2x2xf32>
    memref.store %v, %o[%i0, %i1, %i2, %i3, %i4, %i5, %i6] : memref<2x3x2x2x2x2x2xf32>
    scf.reduce
  }
  return
}
