// RUN: not kiln-opt %s --kiln-kv-cache-dtype=precision=fp32 2>&1 | FileCheck %s
// CHECK: error: kiln-kv-cache-dtype: precision=fp32, expected fp16 or bf16
func.func @main() {
  return
}
