// RUN: kiln-opt %s --pass-pipeline='builtin.module(gpu.module(kiln-cuda-extern-dynamic-shared))' | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline='builtin.module(gpu.module(kiln-cuda-extern-dynamic-shared{alignment=128}))' | FileCheck %s --check-prefix=A128

// The dynamic shared memory global of convert-gpu-to-nvvm (internal,
// zero-sized, shared address space) becomes an external declaration aligned
// to 1024 bytes; other shared globals (mbarriers) and globals of other
// address spaces stay as they are.
// CHECK: gpu.module @kiln_kernels
// CHECK: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global internal @__mbarrier() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<3 x i64>
// CHECK: llvm.mlir.global internal @table() {addr_space = 1 : i32} : !llvm.array<0 x i8>
// A128: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 128 : i64}
module attributes {gpu.container_module} {
  gpu.module @kiln_kernels {
    llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
    llvm.mlir.global internal @__mbarrier() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<3 x i64>
    llvm.mlir.global internal @table() {addr_space = 1 : i32} : !llvm.array<0 x i8>
  }
}
