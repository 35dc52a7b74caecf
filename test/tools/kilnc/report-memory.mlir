// RUN: kilnc %s --emit=codegen --report=memory -o /dev/null 2>&1 | FileCheck %s
// RUN: kilnc %s --emit=codegen --report=memory --report-format=json -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: not kilnc %s --emit=dispatch --report=memory 2>&1 | FileCheck %s --check-prefix=STAGE

/// Four chained matmuls: three 4 KiB temporaries and, per matmul, the
/// 256 KiB B and 72 KiB A packing buffers (top-level here: one column block).
/// Only one matmul's packing buffers and at most three temporaries are live
/// at once, so the arena is about a quarter of the sum.
// CHECK: memory report: 12 intermediate buffers, 1359872 bytes in all (each 64-byte aligned); arena (peak) 348160 bytes (74.4% less)
// CHECK-NEXT: heap allocations left to run time (dynamic sizes, per-task scratch): 0
// JSON: "arena_bytes": 348160,
// JSON: "buffer_bytes": 1359872,
// JSON: "buffers": 12,
// JSON: "heap_allocs": 0
// STAGE: error: --report=memory describes the codegen stage's arena plan; it needs --emit=codegen or a later stage
func.func @main(%x: tensor<32x32xf32>, %w: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a = kiln.matmul %x, %w : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %b = kiln.matmul %a, %w : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %c = kiln.matmul %b, %w : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %y = kiln.matmul %c, %w : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %y : tensor<32x32xf32>
}
