// RUN: kilnc %s --emit=dispatch --report=fusion -o /dev/null 2>&1 | FileCheck %s
// RUN: kilnc %s --emit=dispatch --report=fusion --report-format=json -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: kilnc %s --target=cuda --emit=dispatch --report=fusion -o /dev/null 2>&1 | FileCheck %s --check-prefix=CUDA
// RUN: kilnc %s --emit=dispatch | FileCheck %s --check-prefix=EMIT
// RUN: not kilnc %s --emit=graph --report=fusion 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: not kilnc %s --emit=dispatch --report=fusion --report-format=xml 2>&1 | FileCheck %s --check-prefix=FORMAT

/// Each dispatch is listed with its kind, op, the ops fused in, shapes and
/// the nodes it covers: matmul + bias add become one gemm (so both nodes are
/// behind its product), the gemm's bias epilogue, the scale and the relu one
/// elementwise generic, which the CPU matmul kernel applies to its output
/// tiles: one dispatch. So does the CUDA GEMM template (sm_90a, fp32 as
/// 3xTF32: K = 8 and N = 16 are multiples of 4): one dispatch too.

// CHECK: fusion report: 1 dispatches
// CHECK-NEXT: #0 contraction: linalg.matmul (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> + epilogue linalg.generic (tensor<4x16xf32>, tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>  nodes: fc, bias, relu, scale
// JSON: "count": 1
// JSON: "fused": [
// JSON-NEXT: {
// JSON-NEXT: "op": "linalg.generic",
// JSON: "kind": "contraction"
// JSON: "op": "linalg.matmul"
// CUDA: fusion report: 1 dispatches
// CUDA-NEXT: #0 contraction: linalg.matmul (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> + epilogue linalg.generic (tensor<4x16xf32>, tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>  nodes: fc, bias, relu, scale
// EMIT: kiln.dispatch contraction ["fc", "bias", "relu", "scale"]
// EMIT: linalg.matmul
// EMIT: kiln.epilogue
// EMIT: kiln.yield
// EMIT-NOT: kiln.dispatch
// STAGE: error: --report=fusion describes the dispatch stage; it needs --emit=dispatch or a later stage
// FORMAT: error: --report-format='xml', expected text or json
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %m = kiln.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> loc("fc")
  %a = kiln.add %m, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32> loc("bias")
  %two = kiln.constant dense<2.0> : tensor<f32>
  %s = kiln.mul %a, %two : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32> loc("scale")
  %r = kiln.relu %s : tensor<4x16xf32> loc("relu")
  return %r : tensor<4x16xf32>
}
