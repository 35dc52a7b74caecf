// RUN: kilnc %s --emit=codegen --report=memory -o /dev/null 2>&1 | FileCheck %s
// RUN: kilnc %s --emit=codegen --report=memory --report-format=json -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: not kilnc %s --emit=dispatch --report=memory 2>&1 | FileCheck %s --check-prefix=STAGE

/// Four chained matmuls: the three temporaries between them are planned
/// into the arena, two live at a time (the last matmul writes the output
/// buffer itself) (each matmul has its own zero fill since
/// kiln-split-fills, so no shared filled buffer stays live);
/// the shared matmul kernel's two packing buffers are allocated per
/// call (heap).
// CHECK: memory report: 3 intermediate buffers, 12288 bytes in all (each 64-byte aligned); arena (peak) 8192 bytes (33.3% less)
// CHECK-NEXT: heap allocations left to run time (dynamic sizes, per-task scratch): 2
// JSON: "arena_bytes": 8192,
// JSON: "buffer_bytes": 12288,
// JSON: "buffers": 3,
// JSON: "heap_allocs": 2
// STAGE: error: --report=memory describes the codegen stage's arena plan; it needs --emit=codegen or a later stage
func.func @main(%x: tensor<32x32xf32>, %w: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a = kiln.matmul %x, %w : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %b = kiln.matmul %a, %w : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %c = kiln.matmul %b, %w : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %y = kiln.matmul %c, %w : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %y : tensor<32x32xf32>
}
