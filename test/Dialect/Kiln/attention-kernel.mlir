// RUN: kiln-opt %s --split-input-file --verify-diagnostics | FileCheck %s

/// kiln.attention_kernel round-trips on tensors and on buffers.
// CHECK-LABEL: func @tensors
// CHECK: kiln.attention_kernel %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} into %{{.+}} {merge_heads, scale = 1.250000e-01 : f32} : tensor<2x3x5x16xf32>, tensor<2x3x7x16xf32>, tensor<2x3x7x16xf32>, tensor<2x1x7x5xf32>, tensor<2x5x3x16xf32> -> tensor<2x5x3x16xf32>
func.func @tensors(%q: tensor<2x3x5x16xf32>, %k: tensor<2x3x7x16xf32>, %m: tensor<2x1x7x5xf32>, %o: tensor<2x5x3x16xf32>) -> tensor<2x5x3x16xf32> {
  %r = kiln.attention_kernel %q, %k, %k, %m into %o {merge_heads, scale = 0.125 : f32} : tensor<2x3x5x16xf32>, tensor<2x3x7x16xf32>, tensor<2x3x7x16xf32>, tensor<2x1x7x5xf32>, tensor<2x5x3x16xf32> -> tensor<2x5x3x16xf32>
  return %r : tensor<2x5x3x16xf32>
}
// CHECK-LABEL: func @buffers
// CHECK: kiln.attention_kernel %{{.+}}, %{{.+}}, %{{.+}} into %{{.+}} {is_causal, scale = 1.000000e+00 : f32} : memref<1x2x5x16xf32>, memref<1x2x5x16xf32>, memref<1x2x5x16xf32>, memref<1x2x5x16xf32>{{$}}
func.func @buffers(%q: memref<1x2x5x16xf32>, %o: memref<1x2x5x16xf32>) {
  kiln.attention_kernel %q, %q, %q into %o {is_causal, scale = 1.0 : f32} : memref<1x2x5x16xf32>, memref<1x2x5x16xf32>, memref<1x2x5x16xf32>, memref<1x2x5x16xf32>
  return
}

// CHECK-LABEL: func @half
// CHECK: kiln.attention_kernel {{.+}} : memref<1x2x5x64xf16>, memref<1x2x5x64xf16>, memref<1x2x5x64xf16>, memref<1x1x5x1xf32>, memref<1x2x5x64xf16>{{$}}
func.func @half(%q: memref<1x2x5x64xf16>, %m: memref<1x1x5x1xf32>, %o: memref<1x2x5x64xf16>) {
  kiln.attention_kernel %q, %q, %q, %m into %o {scale = 1.0 : f32} : memref<1x2x5x64xf16>, memref<1x2x5x64xf16>, memref<1x2x5x64xf16>, memref<1x1x5x1xf32>, memref<1x2x5x64xf16>
  return
}

// -----

func.func @rank(%q: tensor<5x16xf32>, %o: tensor<5x16xf32>) -> tensor<5x16xf32> {
  // expected-error @+1 {{expects a rank-4 query, got 'tensor<5x16xf32>'}}
  %r = kiln.attention_kernel %q, %q, %q into %o {scale = 1.0 : f32} : tensor<5x16xf32>, tensor<5x16xf32>, tensor<5x16xf32>, tensor<5x16xf32> -> tensor<5x16xf32>
  return %r : tensor<5x16xf32>
}

// -----

func.func @element(%q: tensor<1x1x5x16xf64>, %o: tensor<1x1x5x16xf64>) -> tensor<1x1x5x16xf64> {
  // expected-error @+1 {{expects f32, f16 or bf16 elements, got 'f64' in query}}
  %r = kiln.attention_kernel %q, %q, %q into %o {scale = 1.0 : f32} : tensor<1x1x5x16xf64>, tensor<1x1x5x16xf64>, tensor<1x1x5x16xf64>, tensor<1x1x5x16xf64> -> tensor<1x1x5x16xf64>
  return %r : tensor<1x1x5x16xf64>
}

// -----

func.func @element_mismatch(%q: tensor<1x1x5x16xf16>, %k: tensor<1x1x5x16xf32>, %o: tensor<1x1x5x16xf16>) -> tensor<1x1x5x16xf16> {
  // expected-error @+1 {{expects the element type of query in key, got 'f32'}}
  %r = kiln.attention_kernel %q, %k, %k into %o {scale = 1.0 : f32} : tensor<1x1x5x16xf16>, tensor<1x1x5x16xf32>, tensor<1x1x5x16xf32>, tensor<1x1x5x16xf16> -> tensor<1x1x5x16xf16>
  return %r : tensor<1x1x5x16xf16>
}

// -----

func.func @key(%q: tensor<1x2x5x16xf32>, %k: tensor<1x2x7x32xf32>, %o: tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32> {
  // expected-error @+1 {{key 'tensor<1x2x7x32xf32>' does not match query 'tensor<1x2x5x16xf32>'}}
  %r = kiln.attention_kernel %q, %k, %k into %o {scale = 1.0 : f32} : tensor<1x2x5x16xf32>, tensor<1x2x7x32xf32>, tensor<1x2x7x32xf32>, tensor<1x2x5x16xf32> -> tensor<1x2x5x16xf32>
  return %r : tensor<1x2x5x16xf32>
}

// -----

func.func @init(%q: tensor<1x2x5x16xf32>, %o: tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32> {
  // expected-error @+1 {{init 'tensor<1x2x5x16xf32>' does not match the output shape of query 'tensor<1x2x5x16xf32>' with merged heads}}
  %r = kiln.attention_kernel %q, %q, %q into %o {merge_heads, scale = 1.0 : f32} : tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32> -> tensor<1x2x5x16xf32>
  return %r : tensor<1x2x5x16xf32>
}

// -----

func.func @mask(%q: tensor<1x2x5x16xf32>, %m: tensor<1x1x5x3xf32>, %o: tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32> {
  // expected-error @+1 {{mask 'tensor<1x1x5x3xf32>' is not key-major [B|1, H|1, Sk, Sq|1] for query 'tensor<1x2x5x16xf32>' and key 'tensor<1x2x5x16xf32>'}}
  %r = kiln.attention_kernel %q, %q, %q, %m into %o {scale = 1.0 : f32} : tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>, tensor<1x1x5x3xf32>, tensor<1x2x5x16xf32> -> tensor<1x2x5x16xf32>
  return %r : tensor<1x2x5x16xf32>
}

// -----

func.func @mixed(%q: tensor<1x2x5x16xf32>, %o: memref<1x2x5x16xf32>) {
  // expected-error @+1 {{mixes tensors and buffers (query)}}
  kiln.attention_kernel %q, %q, %q into %o {scale = 1.0 : f32} : tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>, memref<1x2x5x16xf32>
  return
}

// -----

func.func @no_result(%q: tensor<1x2x5x16xf32>, %o: tensor<1x2x5x16xf32>) {
  // expected-error @+1 {{on tensors has one result, of the init's type}}
  kiln.attention_kernel %q, %q, %q into %o {scale = 1.0 : f32} : tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>
  return
}

// -----

func.func @buffer_result(%q: memref<1x2x5x16xf32>, %o: memref<1x2x5x16xf32>) {
  // expected-error @+1 {{on buffers has no results}}
  %r = kiln.attention_kernel %q, %q, %q into %o {scale = 1.0 : f32} : memref<1x2x5x16xf32>, memref<1x2x5x16xf32>, memref<1x2x5x16xf32>, memref<1x2x5x16xf32> -> tensor<1x2x5x16xf32>
  return
}
