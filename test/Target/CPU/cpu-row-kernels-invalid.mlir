// RUN: kiln-opt %s --kiln-cpu-row-kernels="vector-width=0" -verify-diagnostics
// RUN: not kiln-opt %s --kiln-cpu-row-kernels="accumulators=17" 2>&1 | FileCheck %s

/// Option values outside their ranges are reported on the function, by name.
// CHECK: error: kiln-cpu-row-kernels: 'accumulators' value is 17, accepted range is [1, 16]
// expected-error @+1 {{kiln-cpu-row-kernels: 'vector-width' value is 0, accepted range is [1, 64]}}
func.func @f() {
  return
}
