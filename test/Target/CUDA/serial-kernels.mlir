// RUN: kiln-opt %s --split-input-file --kiln-cuda-serial-kernels --verify-diagnostics | FileCheck %s

/// A full reduction (host scf.for) and the store of its initial value become
/// one single-iteration parallel loop; allocation and deallocation stay.
// CHECK-LABEL: func.func @reduce
// CHECK: %[[ACC:.+]] = memref.alloc() : memref<f32>
// CHECK: scf.parallel (%{{.+}}) = (%{{.+}}) to (%{{.+}}) step (%{{.+}}) {
// CHECK-NEXT: memref.store
// CHECK-NEXT: scf.for
// CHECK: } {kiln.serial}
// CHECK-NEXT: memref.dealloc %[[ACC]]
func.func @reduce(%x: memref<8xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<f32>
  memref.store %zero, %acc[] : memref<f32>
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %a = memref.load %acc[] : memref<f32>
    %s = arith.addf %v, %a : f32
    memref.store %s, %acc[] : memref<f32>
  }
  memref.dealloc %acc : memref<f32>
  return
}

// -----

/// Existing parallel loops are left alone; host allocas become allocations
/// freed before the return.
// CHECK-LABEL: func.func @alloca
// CHECK: %[[BUF:.+]] = memref.alloc() : memref<4xf32>
// CHECK: scf.parallel
// CHECK-NOT: kiln.serial
// CHECK: memref.dealloc %[[BUF]]
// CHECK-NEXT: return
func.func @alloca(%out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %buf = memref.alloca() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %one, %buf[%i] : memref<4xf32>
    scf.reduce
  }
  return
}

// -----

/// A value read from a buffer that host code then uses cannot stay on the host.
func.func @escapes(%x: memref<2xindex>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @below {{host code on the CUDA target would read a device buffer: this op's result is used outside a kernel}}
  %n = memref.load %x[%c0] : memref<2xindex>
  %buf = memref.alloc(%n) : memref<?xf32>
  memref.dealloc %buf : memref<?xf32>
  return
}

// -----

/// A reshape to a static shape needs not read its shape buffer on the host.
// CHECK-LABEL: func.func @reshape
// CHECK: memref.reinterpret_cast %{{.+}} to offset: [0], sizes: [1, 8], strides: [8, 1]
// CHECK-NOT: kiln.serial
func.func @reshape(%x: memref<1x8x1x1xf32>, %shape: memref<2xi64>) -> memref<1x8xf32> {
  %r = memref.reshape %x(%shape) : (memref<1x8x1x1xf32>, memref<2xi64>) -> memref<1x8xf32>
  return %r : memref<1x8xf32>
}

// -----

/// A reshape to a computed shape would load its sizes from the device shape
/// buffer in host code (kiln-cuda-host-shapes leaves only those whose shape
/// the host cannot compute, here a model input).
func.func @computed_reshape(%x: memref<8xf32>, %shape: memref<2xi64>) -> memref<?x?xf32> {
  // expected-error @below {{a reshape to a computed shape on the CUDA target would read the shape from device memory in host code}}
  %r = memref.reshape %x(%shape) : (memref<8xf32>, memref<2xi64>) -> memref<?x?xf32>
  return %r : memref<?x?xf32>
}

// -----

/// The dispatch trace hooks stay host calls and split the serial runs
/// around them: each dispatch's work is its own kernel between its hooks.
// CHECK-LABEL: func.func @traced
// CHECK: call @kiln_trace_begin(%arg0, %{{.+}}) : (!llvm.ptr, i32) -> ()
// CHECK: scf.parallel
// CHECK-NEXT: memref.store
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: } {kiln.serial}
// CHECK-NEXT: call @kiln_trace_end(%arg0, %{{.+}}) : (!llvm.ptr, i32) -> ()
// CHECK-NEXT: call @kiln_trace_begin(%arg0, %{{.+}}) : (!llvm.ptr, i32) -> ()
// CHECK: scf.parallel
// CHECK-NEXT: memref.store
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: } {kiln.serial}
// CHECK-NEXT: call @kiln_trace_end
func.func private @kiln_trace_begin(!llvm.ptr, i32)
func.func private @kiln_trace_end(!llvm.ptr, i32)
func.func @traced(%host: !llvm.ptr, %out: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = arith.constant 0 : i32
  %d1 = arith.constant 1 : i32
  %one = arith.constant 1.0 : f32
  call @kiln_trace_begin(%host, %d0) : (!llvm.ptr, i32) -> ()
  memref.store %one, %out[%c0] : memref<2xf32>
  call @kiln_trace_end(%host, %d0) : (!llvm.ptr, i32) -> ()
  call @kiln_trace_begin(%host, %d1) : (!llvm.ptr, i32) -> ()
  memref.store %one, %out[%c1] : memref<2xf32>
  call @kiln_trace_end(%host, %d1) : (!llvm.ptr, i32) -> ()
  return
}

// -----

/// The host's choice between two launches (a vector kernel where the rows
/// are aligned, a scalar one otherwise): the launches' bodies read buffers
/// on the device, the scf.if stays in host code.
// CHECK-LABEL: func.func @launch_choice
// CHECK-NOT: scf.parallel
// CHECK: scf.if %arg1 {
// CHECK: gpu.launch
// CHECK: } else {
// CHECK: gpu.launch
func.func @launch_choice(%x: memref<4xf32>, %aligned: i1) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  scf.if %aligned {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      memref.store %one, %x[%c0] : memref<4xf32>
      gpu.terminator
    }
  } else {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%c0] : memref<4xf32>
      memref.store %v, %x[%c0] : memref<4xf32>
      gpu.terminator
    }
  }
  return
}
