// RUN: kiln-opt %s --split-input-file --verify-diagnostics --kiln-cuda-merge-kernel-modules | FileCheck %s

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

// -----

/// A launch in clusters of constant sizes (the one-row kernel's split K):
/// the sizes become the kernel's compile-time cluster dims, and the launch
/// loses its cluster operands (the runtime's plain launch honours them).
// CHECK-LABEL: func.func @clusters
// CHECK: gpu.launch_func @kiln_kernels::@kiln_entry_kernel blocks in (%{{.+}}, %{{.+}}, %{{.+}}) threads
// CHECK: gpu.func @kiln_entry_kernel(%{{.+}}: memref<4xf32>) kernel attributes {nvvm.cluster_dim = array<i32: 1, 4, 1>}
module attributes {gpu.container_module} {
  func.func @clusters(%buf: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @kiln_entry_kernel::@kiln_entry_kernel clusters in (%c1, %c4, %c1) blocks in (%c1, %c4, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<4xf32>)
    return
  }
  gpu.module @kiln_entry_kernel {
    gpu.func @kiln_entry_kernel(%arg0: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

/// An op marked with the resident blocks per SM a kernel needs (the one-row
/// kernel's barrier): the kernel's nvvm.minctasm, the mark dropped.
// CHECK-LABEL: func.func @min_blocks
// CHECK: gpu.func @kiln_entry_kernel(%{{.+}}: memref<4xf32>) kernel attributes {nvvm.minctasm = 4 : i32}
// CHECK-NEXT: gpu.barrier{{$}}
module attributes {gpu.container_module} {
  func.func @min_blocks(%buf: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kiln_entry_kernel::@kiln_entry_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<4xf32>)
    return
  }
  gpu.module @kiln_entry_kernel {
    gpu.func @kiln_entry_kernel(%arg0: memref<4xf32>) kernel {
      gpu.barrier {kiln.min_blocks_per_sm = 4 : i32}
      gpu.return
    }
  }
}

// -----

/// A cluster size known only at run time cannot be a compile-time one.
module attributes {gpu.container_module} {
  func.func @dynamic_cluster(%buf: memref<4xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    // expected-error @below {{kiln-cuda-merge-kernel-modules: a cluster size is not a constant}}
    gpu.launch_func @kiln_entry_kernel::@kiln_entry_kernel clusters in (%c1, %n, %c1) blocks in (%c1, %n, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<4xf32>)
    return
  }
  gpu.module @kiln_entry_kernel {
    gpu.func @kiln_entry_kernel(%arg0: memref<4xf32>) kernel {
      gpu.return
    }
  }
}
