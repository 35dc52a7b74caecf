// RUN: kiln-opt %s --split-input-file --kiln-free-after-last-use | FileCheck %s

/// Two heap buffers (a symbolic batch) that buffer deallocation freed at the
/// end of the run: %a is freed right after the copy that reads it last,
/// before %b is allocated (the runtime can hand %a's block to %b), %b after
/// its last use, read through a view inside a loop (the loop counts).
// CHECK-LABEL: func.func private @kiln_entry
// CHECK: %[[A:.+]] = memref.alloc(%{{.+}}) {alignment = 64 : i64} : memref<?x256xf32>
// CHECK: memref.copy %{{.+}}, %[[A]]
// CHECK: memref.copy %[[A]], %{{.+}}
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK: %[[B:.+]] = memref.alloc(%{{.+}}) {alignment = 64 : i64} : memref<?x256xf32>
// CHECK: scf.for
// CHECK: memref.load %{{.+}}
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: memref.copy %{{.+}}, %{{.+}} : memref<?x256xf32> to memref<?x256xf32>
// CHECK-NEXT: return
module {
  func.func private @kiln_entry(%host: !llvm.ptr, %x: memref<?x256xf32>, %y: memref<?x256xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %x, %c0 : memref<?x256xf32>
    %a = memref.alloc(%n) {alignment = 64 : i64} : memref<?x256xf32>
    memref.copy %x, %a : memref<?x256xf32> to memref<?x256xf32>
    memref.copy %a, %y : memref<?x256xf32> to memref<?x256xf32>
    %b = memref.alloc(%n) {alignment = 64 : i64} : memref<?x256xf32>
    memref.copy %y, %b : memref<?x256xf32> to memref<?x256xf32>
    %flat = memref.collapse_shape %b [[0, 1]] : memref<?x256xf32> into memref<?xf32>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %flat[%i] : memref<?xf32>
      memref.store %v, %y[%i, %c0] : memref<?x256xf32>
    }
    memref.copy %x, %y : memref<?x256xf32> to memref<?x256xf32>
    memref.dealloc %a : memref<?x256xf32>
    memref.dealloc %b : memref<?x256xf32>
    return
  }
}

// -----

/// Left as they are: a buffer an unknown function may keep, and one whose
/// free is conditional (not a plain dealloc in the entry's body).
// CHECK-LABEL: func.func private @kiln_entry
// CHECK: call @keep(%[[K:[a-z0-9_]+]])
// CHECK: memref.copy
// CHECK: scf.if
// CHECK-NEXT: memref.dealloc
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[K]]
// CHECK-NEXT: return
module {
  func.func private @keep(memref<?xf32>)
  func.func private @kiln_entry(%host: !llvm.ptr, %x: memref<?xf32>, %y: memref<?xf32>, %c: i1) {
    %c0 = arith.constant 0 : index
    %n = memref.dim %x, %c0 : memref<?xf32>
    %k = memref.alloc(%n) : memref<?xf32>
    call @keep(%k) : (memref<?xf32>) -> ()
    %m = memref.alloc(%n) : memref<?xf32>
    memref.copy %x, %m : memref<?xf32> to memref<?xf32>
    memref.copy %m, %y : memref<?xf32> to memref<?xf32>
    memref.copy %x, %y : memref<?xf32> to memref<?xf32>
    scf.if %c {
      memref.dealloc %m : memref<?xf32>
    }
    memref.dealloc %k : memref<?xf32>
    return
  }
}
