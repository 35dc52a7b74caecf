// RUN: not kiln-opt %s --kiln-cuda-vector-elementwise=max-blocks=0 2>&1 | FileCheck %s
// CHECK: error: kiln-cuda-vector-elementwise: max-blocks 0 is not positive
func.func @f() {
  return
}
