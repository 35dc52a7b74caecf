// RUN: not kiln-opt %s --kiln-cuda-arg-reductions=threads=48 2>&1 | FileCheck %s
// CHECK: error: kiln-cuda-arg-reductions: threads 48 is not a multiple of 32 in [32, 1024]
func.func @f() {
  return
}
