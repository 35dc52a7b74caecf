// RUN: kiln-opt --split-input-file --kiln-cuda-attention --verify-diagnostics %s
// RUN: not kiln-opt --kiln-cuda-attention=precision=fp32 %s 2>&1 | FileCheck %s --check-prefix=PRECISION

// PRECISION: error: kiln-cuda-attention: precision must be fp16 or bf16, got 'fp32'

func.func @head_dim(%q: memref<1x2x64x32xf32>, %o: memref<1x2x64x32xf32>) {
  // expected-error @+1 {{kiln-cuda-attention supports head dims 64 and 128, got 32}}
  kiln.attention_kernel %q, %q, %q into %o {scale = 0.125 : f32} : memref<1x2x64x32xf32>, memref<1x2x64x32xf32>, memref<1x2x64x32xf32>, memref<1x2x64x32xf32>
  return
}

// -----

func.func @tensors(%q: tensor<1x2x64x64xf32>, %o: tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32> {
  // expected-error @+1 {{kiln-cuda-attention expects a bufferized kiln.attention_kernel on static row-major buffers without offsets}}
  %r = kiln.attention_kernel %q, %q, %q into %o {scale = 0.125 : f32} : tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32> -> tensor<1x2x64x64xf32>
  return %r : tensor<1x2x64x64xf32>
}

// -----

func.func @strided(%q: memref<1x2x64x64xf32, strided<[16384, 8192, 128, 1]>>, %o: memref<1x2x64x64xf32>) {
  // expected-error @+1 {{kiln-cuda-attention expects a bufferized kiln.attention_kernel on static row-major buffers without offsets}}
  kiln.attention_kernel %q, %q, %q into %o {scale = 0.125 : f32} : memref<1x2x64x64xf32, strided<[16384, 8192, 128, 1]>>, memref<1x2x64x64xf32, strided<[16384, 8192, 128, 1]>>, memref<1x2x64x64xf32, strided<[16384, 8192, 128, 1]>>, memref<1x2x64x64xf32>
  return
}
