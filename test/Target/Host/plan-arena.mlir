// RUN: kiln-opt %s --split-input-file --kiln-plan-arena --cse | FileCheck %s

/// Three buffers: %a and %b are live together, %c starts after %a's last
/// use, so it reuses %a's bytes. Largest first: %b (4096 B) at 0, %a (1024 B)
/// above it at 4096, %c (1024 B) fits %a's freed range. The arena is a new
/// argument after the host, the allocs become views, the deallocs go.
// CHECK: module attributes {kiln.memory_plan = {arena_bytes = 5120 : i64, buffer_bytes = 6144 : i64, buffers = 3 : i64, heap_allocs = 0 : i64}}
// CHECK-LABEL: func.func private @kiln_entry
// CHECK-SAME: (%[[HOST:.+]]: !llvm.ptr, %[[ARENA:.+]]: memref<5120xi8>, %[[X:.+]]: memref<256xf32>, %[[Y:.+]]: memref<256xf32>)
// CHECK: memref.view %[[ARENA]][%c4096][] : memref<5120xi8> to memref<256xf32>
// CHECK: memref.view %[[ARENA]][%c0][] : memref<5120xi8> to memref<1024xf32>
// CHECK: memref.view %[[ARENA]][%c4096][] : memref<5120xi8> to memref<16x16xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
// CHECK: return
module {
  func.func private @kiln_entry(%host: !llvm.ptr, %x: memref<256xf32>, %y: memref<256xf32>) {
    %a = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
    memref.copy %x, %a : memref<256xf32> to memref<256xf32>
    %b = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
    %sub = memref.subview %b[0] [256] [1] : memref<1024xf32> to memref<256xf32, strided<[1]>>
    memref.copy %a, %sub : memref<256xf32> to memref<256xf32, strided<[1]>>
    %c = memref.alloc() {alignment = 64 : i64} : memref<16x16xf32>
    %flat = memref.collapse_shape %c [[0, 1]] : memref<16x16xf32> into memref<256xf32>
    memref.copy %sub, %flat : memref<256xf32, strided<[1]>> to memref<256xf32>
    memref.copy %flat, %y : memref<256xf32> to memref<256xf32>
    memref.dealloc %a : memref<256xf32>
    memref.dealloc %b : memref<1024xf32>
    memref.dealloc %c : memref<16x16xf32>
    return
  }
}

// -----

/// A use inside a loop counts at the loop: %t is used in the loop after
/// %u's alloc, so both are live together and do not share bytes.
// CHECK: kiln.memory_plan = {arena_bytes = 128 : i64, buffer_bytes = 128 : i64, buffers = 2 : i64, heap_allocs = 0 : i64}
// CHECK-LABEL: func.func private @kiln_entry
// CHECK: memref.view %{{.+}}[%c0][] : memref<128xi8> to memref<16xf32>
// CHECK: memref.view %{{.+}}[%c64][] : memref<128xi8> to memref<4xf32>
module {
  func.func private @kiln_entry(%host: !llvm.ptr, %x: memref<16xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %t = memref.alloc() : memref<16xf32>
    memref.copy %x, %t : memref<16xf32> to memref<16xf32>
    %u = memref.alloc() : memref<4xf32>
    scf.for %i = %c0 to %c4 step %c1 {
      %v = memref.load %t[%i] : memref<16xf32>
      memref.store %v, %u[%i] : memref<4xf32>
    }
    %w = memref.load %u[%c0] : memref<4xf32>
    memref.store %w, %x[%c0] : memref<16xf32>
    memref.dealloc %t : memref<16xf32>
    memref.dealloc %u : memref<4xf32>
    return
  }
}

// -----

/// Stay on the heap: a dynamic size, an alloc inside a loop (per-iteration
/// scratch) and a buffer passed to an external function. No arena argument
/// is added.
// CHECK: kiln.memory_plan = {arena_bytes = 0 : i64, buffer_bytes = 0 : i64, buffers = 0 : i64, heap_allocs = 3 : i64}
// CHECK-LABEL: func.func private @kiln_entry
// CHECK-SAME: (%{{.+}}: !llvm.ptr, %{{.+}}: index)
// CHECK-COUNT-3: memref.alloc
// CHECK-NOT: memref.view
module {
  func.func private @use(memref<8xf32>)
  func.func private @kiln_entry(%host: !llvm.ptr, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %d = memref.alloc(%n) : memref<?xf32>
    memref.dealloc %d : memref<?xf32>
    scf.for %i = %c0 to %n step %c1 {
      %s = memref.alloc() : memref<8xf32>
      memref.dealloc %s : memref<8xf32>
    }
    %e = memref.alloc() : memref<8xf32>
    func.call @use(%e) : (memref<8xf32>) -> ()
    memref.dealloc %e : memref<8xf32>
    return
  }
}

// -----

/// Functions other than @kiln_entry are left alone (no plan recorded).
// CHECK-NOT: kiln.memory_plan
// CHECK-LABEL: func.func @other
// CHECK: memref.alloc
func.func @other() {
  %a = memref.alloc() : memref<8xf32>
  memref.dealloc %a : memref<8xf32>
  return
}

// -----

/// A buffer passed to a call stays in the arena only when the callee marks
/// that argument `kiln.nocapture` (the shared matmul kernels of
/// kiln-cpu-matmul); any other call may keep it, so it stays on the heap.
// CHECK: module attributes {kiln.memory_plan = {arena_bytes = 1024 : i64, buffer_bytes = 1024 : i64, buffers = 1 : i64, heap_allocs = 1 : i64}}
// CHECK-LABEL: func.func private @kiln_entry
// CHECK: %[[VIEW:.+]] = memref.view %{{.*}}[%c0][] : memref<1024xi8> to memref<256xf32>
// CHECK: %[[CAST:.+]] = memref.cast %[[VIEW]]
// CHECK: call @kernel(%[[CAST]])
// CHECK: %[[HEAP:.+]] = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
// CHECK: call @keeps(%[[HEAP]])
module {
  func.func private @kernel(%b: memref<256xf32, strided<[1], offset: ?>> {kiln.nocapture}) {
    return
  }
  func.func private @keeps(%b: memref<256xf32>) {
    return
  }
  func.func private @kiln_entry(%host: !llvm.ptr) {
    %a = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
    %cast = memref.cast %a : memref<256xf32> to memref<256xf32, strided<[1], offset: ?>>
    call @kernel(%cast) : (memref<256xf32, strided<[1], offset: ?>>) -> ()
    memref.dealloc %a : memref<256xf32>
    %b = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
    call @keeps(%b) : (memref<256xf32>) -> ()
    memref.dealloc %b : memref<256xf32>
    return
  }
}
