// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-form-dispatches{epilogue-column-align=32}))" | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-form-dispatches{epilogue-column-align=16}))" | FileCheck %s --check-prefix=ALIGN16
// RUN: not kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-form-dispatches{epilogue-column-align=0}))" 2>&1 | FileCheck %s --check-prefix=BAD

#perm = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#head = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

/// The column alignment is the target policy's (its matmul kernel's vector
/// width): a head split [B*S, H*D] -> [B, H, S, D] with D = 16 is an
/// epilogue at an alignment of 16, not at 32 (a vector would span two heads).
// CHECK-LABEL: func @head_split
// CHECK: linalg.generic
// CHECK-NOT: kiln.epilogue
// ALIGN16-LABEL: func @head_split
// ALIGN16: linalg.generic
// ALIGN16-SAME: kiln.epilogue = 0 : i64
func.func @head_split(%a: tensor<16x32xf32>, %w: tensor<32x64xf32>, %b: tensor<4x16xf32>) -> tensor<2x4x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m = linalg.matmul ins(%a, %w : tensor<16x32xf32>, tensor<32x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  %x = tensor.expand_shape %m [[0, 1], [2, 3]] output_shape [2, 8, 4, 16] : tensor<16x64xf32> into tensor<2x8x4x16xf32>
  %e4 = tensor.empty() : tensor<2x4x8x16xf32>
  %q = linalg.generic {indexing_maps = [#perm, #head, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %b : tensor<2x8x4x16xf32>, tensor<4x16xf32>) outs(%e4 : tensor<2x4x8x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<2x4x8x16xf32>
  return %q : tensor<2x4x8x16xf32>
}

/// A column count below 1 is an error.
// BAD: error: kiln-form-dispatches: epilogue-column-align=0, expected a positive column count
