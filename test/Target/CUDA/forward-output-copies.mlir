// RUN: kiln-opt %s --split-input-file --kiln-cuda-forward-output-copies | FileCheck %s

/// An elementwise result copied into the out-param: the generic writes the
/// out-param, the copy, the temporary and its dealloc go; the trace hooks
/// stay where they were.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.+]]: memref<16x64xf32>, %[[OUT:.+]]: memref<16x64xf32>)
// CHECK-NOT: memref.alloc
// CHECK: call @begin
// CHECK: linalg.generic {{.+}} ins(%[[X]] : memref<16x64xf32>) outs(%[[OUT]] : memref<16x64xf32>)
// CHECK: call @end
// CHECK-NOT: linalg.copy
// CHECK-NOT: memref.dealloc
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func private @begin()
func.func private @end()
func.func @chain(%x: memref<16x64xf32>, %out: memref<16x64xf32>) {
  %t = memref.alloc() {alignment = 64 : i64} : memref<16x64xf32>
  call @begin() : () -> ()
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x64xf32>) outs(%t : memref<16x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.mulf %in, %in : f32
    linalg.yield %r : f32
  }
  call @end() : () -> ()
  linalg.copy ins(%t : memref<16x64xf32>) outs(%out : memref<16x64xf32>)
  memref.dealloc %t : memref<16x64xf32>
  return
}

// -----

/// Several uses before the copy (softmax: written, reduced, updated in
/// place): all move to the out-param.
// CHECK-LABEL: func.func @in_place
// CHECK-SAME: %[[OUT:[^:]+]]: memref<8xf32>)
// CHECK-NOT: memref.alloc
// CHECK: linalg.fill {{.+}} outs(%[[OUT]] : memref<8xf32>)
// CHECK: linalg.generic {{.+}} outs(%[[OUT]] : memref<8xf32>)
// CHECK-NOT: linalg.copy
func.func @in_place(%x: memref<8xf32>, %out: memref<8xf32>) {
  %c = arith.constant 1.0 : f32
  %t = memref.alloc() : memref<8xf32>
  linalg.fill ins(%c : f32) outs(%t : memref<8xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.addf %in, %o : f32
    linalg.yield %r : f32
  }
  linalg.copy ins(%t : memref<8xf32>) outs(%out : memref<8xf32>)
  memref.dealloc %t : memref<8xf32>
  return
}

// -----

/// Left alone: a temporary read after the copy, one seen through a view, an
/// out-param used before the copy, a copy from an argument.
// CHECK-LABEL: func.func @kept
// CHECK: %[[A:.+]] = memref.alloc
// CHECK: linalg.copy ins(%[[A]] : memref<8xf32>) outs(%arg1 : memref<8xf32>)
// CHECK: memref.load %[[A]]
// CHECK: memref.alloc
// CHECK: linalg.copy ins(%expand_shape : memref<2x4xf32>) outs(%arg2 : memref<2x4xf32>)
// CHECK: %[[D:.+]] = memref.alloc
// CHECK: linalg.copy ins(%[[D]] : memref<8xf32>) outs(%arg3 : memref<8xf32>)
// CHECK: linalg.copy ins(%arg0 : memref<8xf32>) outs(%arg4 : memref<8xf32>)
func.func @kept(%x: memref<8xf32>, %o1: memref<8xf32>, %o2: memref<2x4xf32>,
                %o3: memref<8xf32>, %o5: memref<8xf32>) -> f32 {
  %c = arith.constant 1.0 : f32
  %i = arith.constant 0 : index
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<8xf32>)
  linalg.copy ins(%a : memref<8xf32>) outs(%o1 : memref<8xf32>)
  %v = memref.load %a[%i] : memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  %bv = memref.expand_shape %b [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
  linalg.fill ins(%c : f32) outs(%bv : memref<2x4xf32>)
  linalg.copy ins(%bv : memref<2x4xf32>) outs(%o2 : memref<2x4xf32>)
  %d = memref.alloc() : memref<8xf32>
  linalg.fill ins(%c : f32) outs(%o3 : memref<8xf32>)
  linalg.fill ins(%c : f32) outs(%d : memref<8xf32>)
  linalg.copy ins(%d : memref<8xf32>) outs(%o3 : memref<8xf32>)
  linalg.copy ins(%x : memref<8xf32>) outs(%o5 : memref<8xf32>)
  return %v : f32
}

// -----

/// Symbolic dims (a model compiled with symbolic batch): the temporary has
/// the out-param's type, so the copy goes too.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[X:.+]]: memref<?x64xf32>, %[[OUT:.+]]: memref<?x64xf32>)
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic {{.+}} ins(%[[X]] : memref<?x64xf32>) outs(%[[OUT]] : memref<?x64xf32>)
// CHECK-NOT: linalg.copy
func.func @dynamic(%x: memref<?x64xf32>, %out: memref<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x64xf32>
  %t = memref.alloc(%n) {alignment = 64 : i64} : memref<?x64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x64xf32>) outs(%t : memref<?x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.mulf %in, %in : f32
    linalg.yield %r : f32
  }
  linalg.copy ins(%t : memref<?x64xf32>) outs(%out : memref<?x64xf32>)
  memref.dealloc %t : memref<?x64xf32>
  return
}
