// RUN: kiln-opt %s --kiln-dispatch-pipeline | FileCheck %s
// RUN: kiln-opt %s --kiln-cuda-dispatch-pipeline | FileCheck %s --check-prefix=CUDA
// RUN: kiln-opt %s --kiln-dispatch-pipeline | kiln-opt --kiln-inline-dispatch-regions | FileCheck %s --check-prefix=INLINE

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

/// The named dispatch pipelines end with the regions: the matmul and its
/// bias + relu epilogue are one contraction dispatch, on the CPU
/// (kiln-form-dispatches) and on CUDA (sm_90a, fp32 as 3xTF32: the GEMM
/// template's epilogue, kiln-form-gemm-epilogues). Inlining leaves the
/// marked linalg ops.
// CHECK-LABEL: func @mlp
// CHECK: kiln.dispatch contraction ["fc", "relu", "bias"]
// CHECK: linalg.matmul
// CHECK: kiln.epilogue
// CHECK: kiln.yield
// CHECK-NOT: kiln.dispatch
// CUDA-LABEL: func @mlp
// CUDA: kiln.dispatch contraction ["fc", "relu", "bias"]
// CUDA: linalg.matmul
// CUDA: kiln.epilogue = 1
// CUDA: kiln.yield
// CUDA-NOT: kiln.dispatch
// INLINE-LABEL: func @mlp
// INLINE-NOT: kiln.dispatch
// INLINE: linalg.matmul
// INLINE-NEXT: linalg.generic
// INLINE-SAME: kiln.epilogue = 1
func.func @mlp(%a: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%a, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32> loc("fc")
  %add = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b, %m : tensor<16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %c: f32, %o: f32):
    %s = arith.addf %c, %x : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32> loc("bias")
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%add : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32> loc("relu")
  return %relu : tensor<4x16xf32>
}
