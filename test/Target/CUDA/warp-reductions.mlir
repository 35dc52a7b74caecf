// RUN: kiln-opt %s --split-input-file --kiln-cuda-warp-reductions | FileCheck %s

/// A row maximum (softmax's first reduction): one warp per row, 8 rows per
/// 256-thread block; lanes stride by 32 from -inf, five xor shuffles, the
/// loop's initial value last, lane 0 stores.
// CHECK-LABEL: func.func @row_max
// CHECK: %[[ROWS:.+]] = arith.muli %{{.+}}, %{{.+}} : index
// CHECK: %[[C8:.+]] = arith.constant 8 : index
// CHECK: %[[BLOCKS:.+]] = arith.ceildivui %[[ROWS]], %[[C8]] : index
// CHECK: %[[C256:.+]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %[[BLOCKS]], %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[C256]],
// CHECK: %[[C32:.+]] = arith.constant 32 : index
// CHECK: %[[LANE:.+]] = arith.remui %[[TX]], %[[C32]] : index
// CHECK: %[[WARP:.+]] = arith.divui %[[TX]], %[[C32]] : index
// CHECK: %[[ROW:.+]] = arith.addi %{{.+}}, %[[WARP]] : index
// CHECK: %[[IN:.+]] = arith.cmpi ult, %[[ROW]], %[[ROWS]] : index
// CHECK: scf.if %[[IN]] {
// CHECK: %[[INIT:.+]] = memref.load %arg1[%[[ROW]]] : memref<64xf32>
// CHECK: %[[START:.+]] = arith.addi %{{.+}}, %{{.+}} : index
// CHECK: %[[STRIDE:.+]] = arith.muli %{{.+}}, %[[C32]] : index
// CHECK: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[PART:.+]] = scf.for %[[K:.+]] = %[[START]] to %{{.+}} step %[[STRIDE]] iter_args(%[[ACC:.+]] = %[[NEGINF]]) -> (f32) {
// CHECK: %[[X:.+]] = memref.load %arg0[%[[ROW]], %[[K]]] : memref<64x1024xf32>
// CHECK: %[[M:.+]] = arith.maxnumf %[[X]], %[[ACC]] fastmath<reassoc> : f32
// CHECK: scf.yield %[[M]] : f32
// CHECK: %[[S16:.+]], %{{.+}} = gpu.shuffle  xor %[[PART]], %{{.+}}, %{{.+}} : f32
// CHECK: %[[R16:.+]] = arith.maxnumf %[[S16]], %[[PART]] fastmath<reassoc> : f32
// CHECK-COUNT-4: gpu.shuffle  xor
// CHECK: %[[TOTAL:.+]] = arith.maxnumf %{{.+}}, %[[INIT]] fastmath<reassoc> : f32
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[LANE]], %{{.+}} : index
// CHECK: scf.if %[[FIRST]] {
// CHECK-NEXT: memref.store %[[TOTAL]], %arg1[%[[ROW]]] : memref<64xf32>
// CHECK-NOT: scf.parallel
func.func @row_max(%x: memref<64x1024xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %init = memref.load %out[%i] : memref<64xf32>
    %r = scf.for %k = %c0 to %c1024 step %c1 iter_args(%acc = %init) -> (f32) {
      %v = memref.load %x[%i, %k] : memref<64x1024xf32>
      %m = arith.maxnumf %v, %acc fastmath<reassoc> : f32
      scf.yield %m : f32
    }
    memref.store %r, %out[%i] : memref<64xf32>
    scf.reduce
  }
  return
}

// -----

/// Two row dimensions (a sum over the last axis of a 3-D tensor): rows are
/// delinearized from the warp's row index, the sum starts from 0.
// CHECK-LABEL: func.func @sum_3d
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK-NEXT: %[[J:.+]] = arith.remui %[[ROW:.+]], %c6 : index
// CHECK-NEXT: %[[I:.+]] = arith.divui %[[ROW]], %c6 : index
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK: memref.load %arg0[%[[I]], %[[J]], %{{.+}}] : memref<4x6x512xf32>
// CHECK: arith.addf
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: memref.store %{{.+}}, %arg1[%[[I]], %[[J]]] : memref<4x6xf32>
func.func @sum_3d(%x: memref<4x6x512xf32>, %out: memref<4x6xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c512 = arith.constant 512 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c6) step (%c1, %c1) {
    %init = memref.load %out[%i, %j] : memref<4x6xf32>
    %r = scf.for %k = %c0 to %c512 step %c1 iter_args(%acc = %init) -> (f32) {
      %v = memref.load %x[%i, %j, %k] : memref<4x6x512xf32>
      %s = arith.addf %acc, %v : f32
      scf.yield %s : f32
    }
    memref.store %r, %out[%i, %j] : memref<4x6xf32>
    scf.reduce
  }
  return
}

// -----

/// An f16 row sum (softmax of an f16 model): shfl.sync moves 32 bits, so
/// each partial is widened to f32 for the shuffle and narrowed back before
/// the combine, which stays in f16. An f64 row keeps one thread per row.
// CHECK-LABEL: func.func @sum_f16
// CHECK: gpu.launch
// CHECK: %[[PART:.+]] = scf.for {{.+}} -> (f16) {
// CHECK: %[[W:.+]] = arith.extf %[[PART]] : f16 to f32
// CHECK: %[[S:.+]], %{{.+}} = gpu.shuffle  xor %[[W]], %{{.+}}, %{{.+}} : f32
// CHECK-NEXT: %[[N:.+]] = arith.truncf %[[S]] : f32 to f16
// CHECK-NEXT: arith.addf %[[PART]], %[[N]] : f16
// CHECK-COUNT-4: gpu.shuffle  xor %{{.+}} : f32
// CHECK-LABEL: func.func @sum_f64
// CHECK-NOT: gpu.launch
// CHECK: scf.parallel
func.func @sum_f16(%x: memref<64x1024xf16>, %out: memref<64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f16
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %r = scf.for %k = %c0 to %c1024 step %c1 iter_args(%acc = %zero) -> (f16) {
      %v = memref.load %x[%i, %k] : memref<64x1024xf16>
      %s = arith.addf %acc, %v : f16
      scf.yield %s : f16
    }
    memref.store %r, %out[%i] : memref<64xf16>
    scf.reduce
  }
  return
}
func.func @sum_f64(%x: memref<64x1024xf64>, %out: memref<64xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f64
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %r = scf.for %k = %c0 to %c1024 step %c1 iter_args(%acc = %zero) -> (f64) {
      %v = memref.load %x[%i, %k] : memref<64x1024xf64>
      %s = arith.addf %acc, %v : f64
      scf.yield %s : f64
    }
    memref.store %r, %out[%i] : memref<64xf64>
    scf.reduce
  }
  return
}

// -----

/// Left alone: declarations, a short static row, a loop that stores, a combine that is
/// not associative (sub), a serial kernel, and a matmul-like reduction whose
/// loads stride along k (B[k, j]; adjacent outputs already coalesce).
// CHECK-LABEL: func.func private @declared
// CHECK-LABEL: func.func @unchanged
// CHECK-NOT: gpu.launch
// CHECK-COUNT-5: scf.parallel
// CHECK-NOT: gpu.launch
func.func private @declared(memref<8xf32>)
func.func @unchanged(%x: memref<64x1024xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %r = scf.for %k = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%i, %k] : memref<64x1024xf32>
      %s = arith.addf %acc, %v : f32
      scf.yield %s : f32
    }
    memref.store %r, %out[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %r = scf.for %k = %c0 to %c1024 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%i, %k] : memref<64x1024xf32>
      memref.store %v, %out[%i] : memref<64xf32>
      %s = arith.addf %acc, %v : f32
      scf.yield %s : f32
    }
    memref.store %r, %out[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %r = scf.for %k = %c0 to %c1024 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%i, %k] : memref<64x1024xf32>
      %s = arith.subf %acc, %v : f32
      scf.yield %s : f32
    }
    memref.store %r, %out[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %r = scf.for %k = %c0 to %c1024 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%c0, %k] : memref<64x1024xf32>
      %s = arith.addf %acc, %v : f32
      scf.yield %s : f32
    }
    memref.store %r, %out[%c0] : memref<64xf32>
    scf.reduce
  } {kiln.serial}
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %r = scf.for %k = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%k, %i] : memref<64x1024xf32>
      %s = arith.addf %acc, %v : f32
      scf.yield %s : f32
    }
    memref.store %r, %out[%i] : memref<64xf32>
    scf.reduce
  }
  return
}
