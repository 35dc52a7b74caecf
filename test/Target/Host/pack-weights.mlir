// RUN: kiln-opt %s --split-input-file --kiln-pack-weights --cse | FileCheck %s

/// Two f32 constants (one a splat) move into one blob at 64-byte aligned
/// offsets: 3 floats at 0, 4 splat floats at 64. Their reads become views of
/// a new argument after the host; the globals go. The i64 shape constant
/// stays a global.
// CHECK: module attributes {kiln.weights = dense_resource<kiln_weights> : tensor<128xi8>}
// CHECK-NOT: memref.global "private" constant @w
// CHECK-NOT: memref.global "private" constant @s
// CHECK: memref.global "private" constant @shape : memref<2xi64>
// CHECK-LABEL: func.func private @kiln_entry
// CHECK-SAME: (%{{.+}}: !llvm.ptr, %[[BLOB:.+]]: memref<128xi8>, %{{.+}}: memref<3xf32>)
// CHECK: memref.view %[[BLOB]][%c0][] : memref<128xi8> to memref<3xf32>
// CHECK: scf.for
// CHECK: memref.view %[[BLOB]][%c64][] : memref<128xi8> to memref<4xf32>
// CHECK: kiln_weights: "0x400000000000803F0000004000004040{{0+}}0000004100000041000000410000004100000000
module {
  memref.global "private" constant @w : memref<3xf32> = dense<[1.0, 2.0, 3.0]> {alignment = 64 : i64}
  memref.global "private" constant @s : memref<4xf32> = dense<8.0>
  memref.global "private" constant @shape : memref<2xi64> = dense<[1, 3]>
  func.func private @kiln_entry(%host: !llvm.ptr, %y: memref<3xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %w = memref.get_global @w : memref<3xf32>
    scf.for %i = %c0 to %c3 step %c1 {
      %s = memref.get_global @s : memref<4xf32>
      %a = memref.load %w[%i] : memref<3xf32>
      %b = memref.load %s[%i] : memref<4xf32>
      %c = arith.addf %a, %b : f32
      memref.store %c, %y[%i] : memref<3xf32>
    }
    %shape = memref.get_global @shape : memref<2xi64>
    return
  }
}

// -----

/// A constant read outside the entry stays a global, and without weights
/// no argument is added.
// CHECK-NOT: kiln.weights
// CHECK: memref.global "private" constant @w
// CHECK-LABEL: func.func private @kiln_entry
// CHECK-SAME: (%{{.+}}: !llvm.ptr)
module {
  memref.global "private" constant @w : memref<3xf32> = dense<[1.0, 2.0, 3.0]>
  func.func private @kiln_entry(%host: !llvm.ptr) {
    return
  }
  func.func private @helper() {
    %w = memref.get_global @w : memref<3xf32>
    return
  }
}
