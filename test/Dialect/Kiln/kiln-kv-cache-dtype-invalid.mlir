// RUN: not kiln-opt %s --kiln-kv-cache-dtype=dtype=f8 2>&1 | FileCheck %s
// CHECK: error: kiln-kv-cache-dtype: dtype 'f8', expected f16 or bf16
func.func @main() {
  return
}
