// RUN: kilnc %s --emit=codegen --report=cost -o /dev/null 2>&1 | FileCheck %s
// RUN: kilnc %s --emit=codegen --report=cost --report-format=json -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: not kilnc %s --emit=dispatch --report=cost 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: kilnc %s --target=cuda --cuda-f32-gemm=simt --emit=codegen --report=cost -o /dev/null 2>&1 | FileCheck %s --check-prefix=CUDA
// RUN: kilnc %s --target=cuda --emit=codegen --report=cost -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPLIT

/// A 32x32x32 matmul: 2*32^3 FLOPs; A and B read, C read (its zero init is
/// the accumulator) and written: 4 x 4096 bytes. exp + add fuse into one
/// generic, the matmul's epilogue (one dispatch): 2 FLOPs per element; two
/// inputs read, one output written. A dispatch's cost is the sum of its ops'
/// (the product passed to the epilogue in registers counts too).
// CHECK: cost report: 1 dispatches (FLOPs of the payload, bytes of compulsory traffic; -1: dynamic)
// CHECK-NEXT: id flops bytes flop/B dispatch
// CHECK-NEXT: 0 67584 28672 2.36 #0 matmul
// CHECK-NOT: #1
// JSON: "bytes": 28672,
// JSON-NEXT: "flops": 67584,
// JSON-NEXT: "id": 0,
// JSON-NEXT: "name": "#0 matmul"
// STAGE: error: --report=cost describes the codegen stage's instrumented dispatches; it needs --emit=codegen or a later stage
/// For the CUDA target: the same trace ids as the artifact's dispatch spans (kiln-run --trace); the
/// epilogue is its own dispatch there (the GEMM template fuses it later, or not).
// CUDA: cost report: 2 dispatches
// CUDA-NEXT: id flops bytes flop/B dispatch
// CUDA-NEXT: 0 65536 16384 4.00 #0 matmul
// CUDA-NEXT: 1 2048 12288 0.17 #1 generic
/// fp32 on sm_90a by default (3xTF32): the split of A (x) and of B (w,
/// an input here), B' transposed, and one product over K = 96: three times
/// the FLOPs, read from operands three times as large; the exp + add is the
/// GEMM template's epilogue there too (one dispatch with the product).
// SPLIT: cost report: 4 dispatches
// SPLIT-NEXT: id flops bytes flop/B dispatch
// SPLIT-NEXT: 0 6144 16384 0.38 #0 generic
// SPLIT-NEXT: 1 6144 16384 0.38 #1 generic
// SPLIT-NEXT: 2 0 24576 0.00 #2 transpose
// SPLIT-NEXT: 3 198656 45056 4.41 #3 matmul
func.func @main(%x: tensor<32x32xf32>, %w: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a = kiln.matmul %x, %w : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %b = kiln.exp %a : tensor<32x32xf32>
  %y = kiln.add %b, %x : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %y : tensor<32x32xf32>
}
