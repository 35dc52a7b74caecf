// RUN: kiln-opt %s --kiln-outline-parallel-loops | FileCheck %s

/// The parallel loop becomes a launcher call with its trip count and captured
/// values; the body a task taking the iteration index; constants are cloned.
// CHECK-LABEL: func.func private @kiln_entry
// CHECK-SAME: (%[[HOST:.+]]: !llvm.ptr, %[[BUF:.+]]: memref<8xf32>)
// CHECK-NOT: kiln.host
// CHECK: %[[COUNT:.+]] = arith.ceildivsi
// CHECK: call @kiln_launch_0(%[[HOST]], %[[COUNT]], %[[BUF]], %{{.*}}, %{{.*}}) : (!llvm.ptr, index, memref<8xf32>, index, index) -> ()
// CHECK-NOT: scf.parallel
// CHECK-LABEL: func @no_host
// CHECK: scf.parallel
// CHECK-LABEL: func.func private @kiln_task_0
// CHECK-SAME: (%[[I:.+]]: index, %[[B:.+]]: memref<8xf32>, %[[LB:.+]]: index, %[[STEP:.+]]: index)
// CHECK: arith.constant 1.000000e+00 : f32
// CHECK: %[[MUL:.+]] = arith.muli %[[I]], %[[STEP]]
// CHECK: %[[IV:.+]] = arith.addi %[[LB]], %[[MUL]]
// CHECK: memref.store %{{.*}}, %[[B]][%[[IV]]]
// CHECK: func.func private @kiln_launch_0(!llvm.ptr, index, memref<8xf32>, index, index)
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
