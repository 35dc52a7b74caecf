// RUN: kiln-opt %s --split-input-file --kiln-pack-weights="half-floats=true" --cse --allow-unregistered-dialect | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-pack-weights --cse --allow-unregistered-dialect | FileCheck %s --check-prefix=CPU

/// half-floats (the CUDA target): f16 and bf16 weights (inline or
/// dense_resource, a splat expanded) join the blob after the f32 ones, each
/// at a 64-byte aligned offset; kiln.weights_segments gives each element
/// type's run as [offset, bytes, kiln_dtype]. Without it (the CPU) they
/// stay globals and nothing records segments.
// CHECK: module attributes {kiln.weights = dense_resource<kiln_weights> : tensor<256xi8>, kiln.weights_segments = array<i64: 0, 64, 1, 64, 128, 2, 192, 64, 3>}
// CHECK-NOT: memref.global
// CHECK-LABEL: func.func private @kiln_entry
// CHECK-SAME: (%{{.+}}: !llvm.ptr, %[[BLOB:.+]]: memref<256xi8>)
// CHECK-DAG: memref.view %[[BLOB]][%c0][] : memref<256xi8> to memref<2xf32>
// CHECK-DAG: memref.view %[[BLOB]][%c64][] : memref<256xi8> to memref<2x2xf16>
// CHECK-DAG: memref.view %[[BLOB]][%c128][] : memref<256xi8> to memref<3xf16>
// CHECK-DAG: memref.view %[[BLOB]][%c192][] : memref<256xi8> to memref<2xbf16>
// f16 [1, 0.1, -2, inf], then 3 x 1.0 at 128, bf16 [1, 0.1] at 192.
// CHECK: kiln_weights: "0x400000000000803F00000040{{0+}}003C662E00C0007C{{0+}}003C003C003C{{0+}}803FCD3D{{0+}}"
// CPU: module attributes {kiln.weights = dense_resource<kiln_weights> : tensor<64xi8>}
// CPU-NOT: kiln.weights_segments
// CPU: memref.global "private" constant @h
// CPU: memref.global "private" constant @s
// CPU: memref.global "private" constant @b
module {
  memref.global "private" constant @h : memref<2x2xf16> = dense_resource<half> {alignment = 64 : i64}
  memref.global "private" constant @f : memref<2xf32> = dense<[1.0, 2.0]>
  memref.global "private" constant @s : memref<3xf16> = dense<1.0>
  memref.global "private" constant @b : memref<2xbf16> = dense<[1.0, 0.1]>
  func.func private @kiln_entry(%host: !llvm.ptr) {
    %h = memref.get_global @h : memref<2x2xf16>
    %f = memref.get_global @f : memref<2xf32>
    %s = memref.get_global @s : memref<3xf16>
    %b = memref.get_global @b : memref<2xbf16>
    "test.use"(%h, %f, %s, %b) : (memref<2x2xf16>, memref<2xf32>, memref<3xf16>, memref<2xbf16>) -> ()
    return
  }
}
{-#
  dialect_resources: {
    builtin: {
      half: "0x02000000003C662E00C0007C"
    }
  }
#-}

// -----

/// Only f16 weights: one f16 segment (the artifact records it: the blob is
/// not all f32). f64 constants are not weights: they stay globals.
// CHECK: module attributes {kiln.weights = dense_resource<kiln_weights> : tensor<64xi8>, kiln.weights_segments = array<i64: 0, 64, 2>}
// CHECK: memref.global "private" constant @d
// CPU-NOT: kiln.weights
module {
  memref.global "private" constant @h : memref<2xf16> = dense<[1.0, 2.0]>
  memref.global "private" constant @d : memref<2xf64> = dense<[1.0, 2.0]>
  func.func private @kiln_entry(%host: !llvm.ptr) {
    %h = memref.get_global @h : memref<2xf16>
    %d = memref.get_global @d : memref<2xf64>
    "test.use"(%h, %d) : (memref<2xf16>, memref<2xf64>) -> ()
    return
  }
}
