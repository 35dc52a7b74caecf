// RUN: not kiln-opt %s --kiln-cuda-row-kernels=max-threads=48 2>&1 | FileCheck %s
// CHECK: error: kiln-cuda-row-kernels: max-threads 48 is not a multiple of 32 in [32, 1024]
func.func @f() {
  return
}
