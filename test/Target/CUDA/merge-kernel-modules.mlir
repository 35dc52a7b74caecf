// RUN: kiln-opt %s --kiln-cuda-merge-kernel-modules | FileCheck %s

/// Two outlined kernels (same name, two modules) end up in one module, named
/// after their old modules; the launches follow.
// CHECK-LABEL: func.func @host
// CHECK: gpu.launch_func @kiln_kernels::@kiln_entry_kernel blocks
// CHECK: gpu.launch_func @kiln_kernels::@kiln_entry_kernel_0 blocks
// CHECK: gpu.module @kiln_kernels {
// CHECK: gpu.func @kiln_entry_kernel(%{{.+}}: memref<4xf32>) kernel
// CHECK: gpu.func @kiln_entry_kernel_0(%{{.+}}: memref<4xf32>) kernel
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @host(%buf: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kiln_entry_kernel::@kiln_entry_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<4xf32>)
    gpu.launch_func @kiln_entry_kernel_0::@kiln_entry_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<4xf32>)
    return
  }
  gpu.module @kiln_entry_kernel {
    gpu.func @kiln_entry_kernel(%arg0: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @kiln_entry_kernel_0 {
    gpu.func @kiln_entry_kernel(%arg0: memref<4xf32>) kernel {
      gpu.return
    }
  }
}
