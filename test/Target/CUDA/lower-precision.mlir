// RUN: kiln-opt --kiln-cuda-lower-precision="precision=bf16" %s | FileCheck %s
// RUN: kiln-opt --kiln-cuda-lower-precision="precision=fp16" %s | FileCheck %s --check-prefix=F16
// RUN: not kiln-opt --kiln-cuda-lower-precision="precision=tf32" %s 2>&1 | FileCheck %s --check-prefix=BAD

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
// BAD: kiln-cuda-lower-precision: precision='tf32', expected fp16 or bf16
func.func @mm(%x: tensor<16x64xf32>, %init: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %w = arith.constant dense<0.1> : tensor<64x32xf32>
  %0 = linalg.matmul ins(%x, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%init : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}

// CHECK-LABEL: func.func @batch
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x8x4xbf16>, tensor<2x4x8xbf16>)
func.func @batch(%x: tensor<2x8x4xf32>, %y: tensor<2x4x8xf32>, %init: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %0 = linalg.batch_matmul ins(%x, %y : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
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
