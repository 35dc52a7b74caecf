// RUN: not kiln-opt %s --pass-pipeline='builtin.module(gpu.module(kiln-cuda-extern-dynamic-shared{alignment=100}))' 2>&1 | FileCheck %s
// RUN: not kiln-opt %s --pass-pipeline='builtin.module(gpu.module(kiln-cuda-extern-dynamic-shared{alignment=8}))' 2>&1 | FileCheck %s --check-prefix=SMALL

// CHECK: error: kiln-cuda-extern-dynamic-shared: alignment=100, expected a power of two of at least 16
// SMALL: error: kiln-cuda-extern-dynamic-shared: alignment=8, expected a power of two of at least 16
module attributes {gpu.container_module} {
  gpu.module @kiln_kernels {
    llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
  }
}
