// RUN: kiln-opt %s --kiln-cuda-map-parallel-loops=block-size=2048 --verify-diagnostics

// expected-error @below {{'block-size' value is 2048, accepted range is [1, 1024]}}
func.func @too_big() {
  return
}
