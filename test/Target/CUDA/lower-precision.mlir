// RUN: kiln-opt --kiln-cuda-lower-precision="precision=bf16" %s | FileCheck %s
// RUN: kiln-opt --kiln-cuda-lower-precision="precision=fp16" %s | FileCheck %s --check-prefix=F16
// RUN: kiln-opt --kiln-cuda-lower-precision="precision=tf32" %s | FileCheck %s --check-prefix=TF32
// RUN: kiln-opt --kiln-cuda-lower-precision="precision=bf16 convolutions=false" %s | FileCheck %s --check-prefix=NOCONV
// RUN: not kiln-opt --kiln-cuda-lower-precision="precision=fp8" %s 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not kiln-opt --kiln-cuda-lower-precision="precision=fp32" %s 2>&1 | FileCheck %s --check-prefix=FP32

// The weight is converted now (0.1 rounds to 0.10009765625 in bf16), the
// activation by a truncf generic; the product keeps its f32 output.
// CHECK-LABEL: func.func @mm
// CHECK: %[[X:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<16x64xf32>) outs(%{{.*}} : tensor<16x64xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[W:.*]] = arith.constant dense<1.000980e-01> : tensor<64x32xbf16>
// CHECK: linalg.matmul ins(%[[X]], %[[W]] : tensor<16x64xbf16>, tensor<64x32xbf16>) outs(%{{.*}} : tensor<16x32xf32>)
// F16: arith.constant dense<9.997550e-02> : tensor<64x32xf16>
// F16: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x64xf16>, tensor<64x32xf16>)
// F16: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x8x4xf16>, tensor<2x4x8xf16>)
// BAD: Cannot find option named 'fp8'
// FP32: kiln-cuda-lower-precision: precision='fp32', expected fp16, bf16 or tf32
// tf32: operands stay f32; B is given transposed (K-major), the weight now,
// rounded to the nearest tf32 value (0.1 -> 0.0999755859375).
// TF32-LABEL: func.func @mm
// TF32: %[[WT:.*]] = arith.constant dense<0.0999755859> : tensor<32x64xf32>
// TF32: linalg.matmul indexing_maps = [#[[MA:.*]], #[[MB:.*]], #[[MC:.*]]] ins(%arg0, %[[WT]] : tensor<16x64xf32>, tensor<32x64xf32>) outs(%arg1 : tensor<16x32xf32>)
func.func @mm(%x: tensor<16x64xf32>, %init: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %w = arith.constant dense<0.1> : tensor<64x32xf32>
  %0 = linalg.matmul ins(%x, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%init : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}

// CHECK-LABEL: func.func @batch
// An activation B is transposed by a linalg.transpose.
// TF32-LABEL: func.func @batch
// TF32: %[[T:.*]] = linalg.transpose ins(%arg1 : tensor<2x4x8xf32>) outs(%{{.*}} : tensor<2x8x4xf32>) permutation = [0, 2, 1]
// TF32: linalg.batch_matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%arg0, %[[T]] : tensor<2x8x4xf32>, tensor<2x8x4xf32>)
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x8x4xbf16>, tensor<2x4x8xbf16>)
func.func @batch(%x: tensor<2x8x4xf32>, %y: tensor<2x4x8xf32>, %init: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %0 = linalg.batch_matmul ins(%x, %y : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %0 : tensor<2x8x8xf32>
}

// A K-major B (convert-kiln-to-linalg's form of a transposed batched B):
// narrowed with its maps kept; tf32 reads it as it is, no transpose.
// CHECK-LABEL: func.func @batch_k_major
// CHECK: linalg.batch_matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%{{.*}}, %{{.*}} : tensor<2x8x4xbf16>, tensor<2x8x4xbf16>)
// TF32-LABEL: func.func @batch_k_major
// TF32-NOT: linalg.transpose
// TF32: linalg.batch_matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%arg0, %arg1 : tensor<2x8x4xf32>, tensor<2x8x4xf32>)
func.func @batch_k_major(%x: tensor<2x8x4xf32>, %y: tensor<2x8x4xf32>, %init: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %0 = linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
      ins(%x, %y : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %0 : tensor<2x8x8xf32>
}

// A matmul already in bf16 accumulates in f32 (a zero fill of its own) and
// is rounded to bf16 once.
// CHECK-LABEL: func.func @model_bf16
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8x8xf32>)
// CHECK: %[[P:.*]] = linalg.matmul ins(%arg0, %arg1 : tensor<8x4xbf16>, tensor<4x8xbf16>) outs(%[[ZERO]] : tensor<8x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<8x8xf32>) outs(%{{.*}} : tensor<8x8xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @model_bf16(%x: tensor<8x4xbf16>, %y: tensor<4x8xbf16>) -> tensor<8x8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<8x8xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%e : tensor<8x8xbf16>) -> tensor<8x8xbf16>
  %0 = linalg.matmul ins(%x, %y : tensor<8x4xbf16>, tensor<4x8xbf16>) outs(%init : tensor<8x8xbf16>) -> tensor<8x8xbf16>
  return %0 : tensor<8x8xbf16>
}

// tf32: a non-splat weight is transposed element by element; K or N not a
// multiple of 4 and non-f32 products are left alone.
// TF32-LABEL: func.func @tf32_weight
// TF32: arith.constant dense<{{\[}}[0.000000e+00, 4.000000e+00, 8.000000e+00, 1.200000e+01], [1.000000e+00, 5.000000e+00, 9.000000e+00, 1.300000e+01], [2.000000e+00, 6.000000e+00, 1.000000e+01, 1.400000e+01], [3.000000e+00, 7.000000e+00, 1.100000e+01, 1.500000e+01]]> : tensor<4x4xf32>
// TF32: linalg.matmul indexing_maps
// TF32: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x6xf32>, tensor<6x4xf32>)
func.func @tf32_weight(%x: tensor<8x4xf32>, %y: tensor<8x6xf32>, %z: tensor<6x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0], [12.0, 13.0, 14.0, 15.0]]> : tensor<4x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %0 = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%init : tensor<8x4xf32>) -> tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = linalg.matmul ins(%y, %z : tensor<8x6xf32>, tensor<6x4xf32>) outs(%init2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0, %1 : tensor<8x4xf32>, tensor<8x4xf32>
}

// tf32: symbolic rows M (a classifier after the flatten of a symbolic
// batch) multiply by B^T too; bf16 converts A keeping its rows' size.
// TF32-LABEL: func.func @symbolic_rows
// TF32: linalg.matmul indexing_maps = {{.*}} ins(%arg0, %{{.*}} : tensor<?x4xf32>, tensor<4x4xf32>) outs(%{{.*}} : tensor<?x4xf32>)
// CHECK-LABEL: func.func @symbolic_rows
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x4xbf16>, tensor<4x4xbf16>) outs(%{{.*}} : tensor<?x4xf32>)
func.func @symbolic_rows(%x: tensor<?x4xf32>, %init: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0], [12.0, 13.0, 14.0, 15.0]]> : tensor<4x4xf32>
  %0 = linalg.matmul ins(%x, %w : tensor<?x4xf32>, tensor<4x4xf32>) outs(%init : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// A convolution (sm_90a: `convolutions`, on by default) becomes an im2col
// generic writing [N, OH, OW, C, KH, KW] in the precision, collapsed to
// [N, P, K], and one product per image with the filters (converted now,
// [F, K]) shared: the A map has no batch dimension. Its f32 result is
// expanded back to [N, F, OH, OW].
// CHECK-LABEL: func.func @conv
// CHECK: %[[COL:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x16x10x10xf32>) outs(%{{.*}} : tensor<2x8x8x16x3x3xbf16>)
// CHECK: arith.truncf
// CHECK: %[[C2:.*]] = tensor.collapse_shape %[[COL]] {{\[\[}}0], [1, 2], [3, 4, 5]] : tensor<2x8x8x16x3x3xbf16> into tensor<2x64x144xbf16>
// CHECK: %[[W:.*]] = arith.constant dense<2.500000e-01> : tensor<32x144xbf16>
// CHECK: %[[P:.*]] = linalg.batch_matmul indexing_maps = [#[[MW:.*]], #{{.*}}, #{{.*}}] ins(%[[W]], %[[C2]] : tensor<32x144xbf16>, tensor<2x64x144xbf16>) outs(%{{.*}} : tensor<2x32x64xf32>)
// CHECK: tensor.expand_shape %[[P]] {{\[\[}}0], [1], [2, 3]] output_shape [2, 32, 8, 8]
// TF32-LABEL: func.func @conv
// TF32: linalg.batch_matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<32x144xf32>, tensor<2x64x144xf32>)
// With convolutions off (other chips) it stays.
// NOCONV-LABEL: func.func @conv
// NOCONV: linalg.conv_2d_nchw_fchw
func.func @conv(%x: tensor<2x16x10x10xf32>) -> tensor<2x32x8x8xf32> {
  %w = arith.constant dense<0.25> : tensor<32x16x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x32x8x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<2x16x10x10xf32>, tensor<32x16x3x3xf32>) outs(%init : tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32>
  return %0 : tensor<2x32x8x8xf32>
}

// An RGB stem, K = 3*7*7 = 147: the input gets zero channels up to 8 (f16:
// K = 392, a multiple of 8; tf32: 4, K = 196), the filters too, now.
// CHECK-LABEL: func.func @stem
// CHECK: tensor.insert_slice %arg0 into %{{.*}}[0, 0, 0, 0] [1, 3, 20, 20] [1, 1, 1, 1] : tensor<1x3x20x20xf32> into tensor<1x8x20x20xf32>
// CHECK: linalg.batch_matmul {{.*}} : tensor<4x392xbf16>, tensor<1x49x392xbf16>)
// TF32-LABEL: func.func @stem
// TF32: linalg.batch_matmul {{.*}} : tensor<4x196xf32>, tensor<1x49x196xf32>)
func.func @stem(%x: tensor<1x3x20x20xf32>) -> tensor<1x4x7x7xf32> {
  %w = arith.constant dense<1.0> : tensor<4x3x7x7xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x7x7xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x7x7xf32>) -> tensor<1x4x7x7xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%x, %w : tensor<1x3x20x20xf32>, tensor<4x3x7x7xf32>) outs(%init : tensor<1x4x7x7xf32>) -> tensor<1x4x7x7xf32>
  return %0 : tensor<1x4x7x7xf32>
}

// The same stem with a symbolic batch: the zero channels, col and the
// product keep the input's image count, so the product is still one
// batch_matmul over all images (one GEMM launch, the images its grid's z).
// CHECK-LABEL: func.func @stem_symbolic_batch
// CHECK: tensor.insert_slice %arg0 into %{{.*}}[0, 0, 0, 0] [%{{.*}}, 3, 20, 20] [1, 1, 1, 1] : tensor<?x3x20x20xf32> into tensor<?x8x20x20xf32>
// CHECK: tensor.empty(%{{.*}}) : tensor<?x7x7x8x7x7xbf16>
// CHECK: tensor.collapse_shape {{.*}} : tensor<?x7x7x8x7x7xbf16> into tensor<?x49x392xbf16>
// CHECK: tensor.empty(%{{.*}}) : tensor<?x4x49xf32>
// CHECK: linalg.batch_matmul {{.*}} : tensor<4x392xbf16>, tensor<?x49x392xbf16>) outs(%{{.*}} : tensor<?x4x49xf32>)
// CHECK: tensor.expand_shape {{.*}} : tensor<?x4x49xf32> into tensor<?x4x7x7xf32>
// TF32-LABEL: func.func @stem_symbolic_batch
// TF32: linalg.batch_matmul {{.*}} : tensor<4x196xf32>, tensor<?x49x196xf32>)
// NOCONV-LABEL: func.func @stem_symbolic_batch
// NOCONV: linalg.conv_2d_nchw_fchw
func.func @stem_symbolic_batch(%x: tensor<?x3x20x20xf32>) -> tensor<?x4x7x7xf32> {
  %w = arith.constant dense<1.0> : tensor<4x3x7x7xf32>
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3x20x20xf32>
  %e = tensor.empty(%n) : tensor<?x4x7x7xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x4x7x7xf32>) -> tensor<?x4x7x7xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%x, %w : tensor<?x3x20x20xf32>, tensor<4x3x7x7xf32>) outs(%init : tensor<?x4x7x7xf32>) -> tensor<?x4x7x7xf32>
  return %0 : tensor<?x4x7x7xf32>
}

// -----

// Two products reading one activation (an attention layer's Q and K
// projections): one truncf generic serves both.
// CHECK-LABEL: func.func @shared_activation
// CHECK-COUNT-1: arith.truncf
// CHECK-NOT: arith.truncf
// CHECK: linalg.matmul ins(%[[X:[0-9a-z_]+]], %{{.*}} : tensor<64x32xbf16>
// CHECK: linalg.matmul ins(%[[X]], %{{.*}} : tensor<64x32xbf16>
func.func @shared_activation(%x: tensor<64x32xf32>) -> (tensor<64x16xf32>, tensor<64x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %wq = arith.constant dense<0.5> : tensor<32x16xf32>
  %wk = arith.constant dense<0.25> : tensor<32x16xf32>
  %e = tensor.empty() : tensor<64x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x16xf32>) -> tensor<64x16xf32>
  %q = linalg.matmul ins(%x, %wq : tensor<64x32xf32>, tensor<32x16xf32>) outs(%f : tensor<64x16xf32>) -> tensor<64x16xf32>
  %k = linalg.matmul ins(%x, %wk : tensor<64x32xf32>, tensor<32x16xf32>) outs(%f : tensor<64x16xf32>) -> tensor<64x16xf32>
  return %q, %k : tensor<64x16xf32>, tensor<64x16xf32>
}

// A bf16 model's product with an elementwise consumer (bias + relu): the
// consumer reads the f32 product and rounds it first, so no rounding kernel
// stands between the GEMM and the epilogue kiln-cuda-gemm makes of it.
// CHECK-LABEL: func.func @model_bf16_epilogue
// CHECK: %[[P:.*]] = linalg.matmul ins(%arg0, %arg1 : tensor<8x4xbf16>, tensor<4x8xbf16>) outs(%{{.*}} : tensor<8x8xf32>)
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[P]], %arg2 : tensor<8x8xf32>, tensor<8xbf16>) outs(%{{.*}} : tensor<8x8xbf16>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[B:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[IN]] : f32 to bf16
// CHECK-NEXT: arith.addf %[[R]], %[[B]] : bf16
func.func @model_bf16_epilogue(%x: tensor<8x4xbf16>, %y: tensor<4x8xbf16>, %b: tensor<8xbf16>) -> tensor<8x8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<8x8xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%e : tensor<8x8xbf16>) -> tensor<8x8xbf16>
  %0 = linalg.matmul ins(%x, %y : tensor<8x4xbf16>, tensor<4x8xbf16>) outs(%init : tensor<8x8xbf16>) -> tensor<8x8xbf16>
  %1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%0, %b : tensor<8x8xbf16>, tensor<8xbf16>) outs(%e : tensor<8x8xbf16>) {
  ^bb0(%p: bf16, %bias: bf16, %out: bf16):
    %s = arith.addf %p, %bias : bf16
    %c0 = arith.constant 0.0 : bf16
    %r = arith.maximumf %s, %c0 : bf16
    linalg.yield %r : bf16
  } -> tensor<8x8xbf16>
  return %1 : tensor<8x8xbf16>
}

// Two readers of the product: it is rounded by a kernel of its own.
// CHECK-LABEL: func.func @model_bf16_two_readers
// CHECK: %[[P:.*]] = linalg.matmul {{.*}} outs(%{{.*}} : tensor<8x8xf32>)
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<8x8xf32>) outs(%{{.*}} : tensor<8x8xbf16>)
// CHECK: linalg.generic {{.*}} ins(%[[R]], %[[R]] : tensor<8x8xbf16>, tensor<8x8xbf16>)
func.func @model_bf16_two_readers(%x: tensor<8x4xbf16>, %y: tensor<4x8xbf16>) -> tensor<8x8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<8x8xbf16>
  %init = linalg.fill ins(%zero : bf16) outs(%e : tensor<8x8xbf16>) -> tensor<8x8xbf16>
  %0 = linalg.matmul ins(%x, %y : tensor<8x4xbf16>, tensor<4x8xbf16>) outs(%init : tensor<8x8xbf16>) -> tensor<8x8xbf16>
  %1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%0, %0 : tensor<8x8xbf16>, tensor<8x8xbf16>) outs(%e : tensor<8x8xbf16>) {
  ^bb0(%p: bf16, %q: bf16, %out: bf16):
    %s = arith.mulf %p, %q : bf16
    linalg.yield %s : bf16
  } -> tensor<8x8xbf16>
  return %1 : tensor<8x8xbf16>
}
