// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-copies-to-linalg))" | FileCheck %s

/// A copy into a strided view becomes linalg.copy (no memrefCopy runtime call).
// CHECK-LABEL: func @strided_copy
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%{{.*}} : memref<2x3xf32>) outs(%{{.*}} : memref<2x3xf32, strided<[5, 1], offset: 1>>)
func.func @strided_copy(%src: memref<2x3xf32>, %dst: memref<2x5xf32>) {
  %view = memref.subview %dst[0, 1] [2, 3] [1, 1] : memref<2x5xf32> to memref<2x3xf32, strided<[5, 1], offset: 1>>
  memref.copy %src, %view : memref<2x3xf32> to memref<2x3xf32, strided<[5, 1], offset: 1>>
  return
}
