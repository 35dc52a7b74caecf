// RUN: kiln-opt %s --kiln-decompose-attention="keep-f32=true keep-half-floats=true head-dim-multiple=64 max-head-dim=128" --split-input-file | FileCheck %s
// RUN: not kiln-opt %s --kiln-decompose-attention="keep-half-floats=true" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not kiln-opt %s --kiln-decompose-attention="keep-f32=true head-dim-multiple=64 max-head-dim=32" --split-input-file 2>&1 | FileCheck %s --check-prefix=BADMAX

/// The CUDA policy's kernel shapes (--precision=fp16|bf16 on sm_80 or later)
/// keep what the CUDA attention kernel computes (static rank-4 operands,
/// head dim 64 or 128, f16/bf16 elements or f32 ones rounded while loading,
/// an additive mask or none, causal or not) and decompose the rest.
// CHECK-LABEL: func @bert_mask
// CHECK: kiln.attention
// CHECK-NOT: kiln.softmax
func.func @bert_mask(%q: tensor<1x12x128x64xf32>, %m: tensor<1x1x1x128xf32>) -> tensor<1x12x128x64xf32> {
  %o = kiln.attention %q, %q, %q, %m {scale = 0.125 : f32} : (tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x1x1x128xf32>) -> tensor<1x12x128x64xf32>
  return %o : tensor<1x12x128x64xf32>
}

// -----

// CHECK-LABEL: func @half_causal_128
// CHECK: kiln.attention %{{.+}}, %{{.+}}, %{{.+}} {is_causal = true
func.func @half_causal_128(%q: tensor<2x4x100x128xf16>, %k: tensor<2x4x257x128xf16>) -> tensor<2x4x100x128xf16> {
  %o = kiln.attention %q, %k, %k {is_causal = true} : (tensor<2x4x100x128xf16>, tensor<2x4x257x128xf16>, tensor<2x4x257x128xf16>) -> tensor<2x4x100x128xf16>
  return %o : tensor<2x4x100x128xf16>
}

// -----

// CHECK-LABEL: func @bf16_query_mask
// CHECK: kiln.attention
func.func @bf16_query_mask(%q: tensor<1x2x5x64xbf16>, %k: tensor<1x2x7x64xbf16>, %m: tensor<5x7xbf16>) -> tensor<1x2x5x64xbf16> {
  %o = kiln.attention %q, %k, %k, %m {scale = 0.25 : f32} : (tensor<1x2x5x64xbf16>, tensor<1x2x7x64xbf16>, tensor<1x2x7x64xbf16>, tensor<5x7xbf16>) -> tensor<1x2x5x64xbf16>
  return %o : tensor<1x2x5x64xbf16>
}

// -----

/// Decomposed: head dims other than 64 and 128, a boolean mask, a dynamic
/// length, broadcast heads, f64.
// CHECK-LABEL: func @head_dim_32
// CHECK-NOT: kiln.attention
// CHECK: kiln.softmax
// CHECK-LABEL: func @bool_mask
// CHECK-NOT: kiln.attention
// CHECK: kiln.softmax
// CHECK-LABEL: func @dynamic_length
// CHECK-NOT: kiln.attention
// CHECK: kiln.softmax
// CHECK-LABEL: func @broadcast_heads
// CHECK-NOT: kiln.attention
// CHECK: kiln.softmax
// CHECK-LABEL: func @double
// CHECK-NOT: kiln.attention
// CHECK: kiln.softmax
func.func @head_dim_32(%q: tensor<1x2x5x32xf32>) -> tensor<1x2x5x32xf32> {
  %o = kiln.attention %q, %q, %q : (tensor<1x2x5x32xf32>, tensor<1x2x5x32xf32>, tensor<1x2x5x32xf32>) -> tensor<1x2x5x32xf32>
  return %o : tensor<1x2x5x32xf32>
}
func.func @bool_mask(%q: tensor<1x2x5x64xf32>, %m: tensor<5x5xi1>) -> tensor<1x2x5x64xf32> {
  %o = kiln.attention %q, %q, %q, %m : (tensor<1x2x5x64xf32>, tensor<1x2x5x64xf32>, tensor<1x2x5x64xf32>, tensor<5x5xi1>) -> tensor<1x2x5x64xf32>
  return %o : tensor<1x2x5x64xf32>
}
func.func @dynamic_length(%q: tensor<1x2x?x64xf32>) -> tensor<1x2x?x64xf32> {
  %o = kiln.attention %q, %q, %q {scale = 0.125 : f32} : (tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>) -> tensor<1x2x?x64xf32>
  return %o : tensor<1x2x?x64xf32>
}
func.func @broadcast_heads(%q: tensor<1x2x5x64xf32>, %k: tensor<1x1x5x64xf32>) -> tensor<1x2x5x64xf32> {
  %o = kiln.attention %q, %k, %k : (tensor<1x2x5x64xf32>, tensor<1x1x5x64xf32>, tensor<1x1x5x64xf32>) -> tensor<1x2x5x64xf32>
  return %o : tensor<1x2x5x64xf32>
}
func.func @double(%q: tensor<1x2x5x64xf64>) -> tensor<1x2x5x64xf64> {
  %o = kiln.attention %q, %q, %q : (tensor<1x2x5x64xf64>, tensor<1x2x5x64xf64>, tensor<1x2x5x64xf64>) -> tensor<1x2x5x64xf64>
  return %o : tensor<1x2x5x64xf64>
}

/// Kernel shapes that admit no head dim are an error.
// BAD: error: kiln-decompose-attention: head-dim-multiple=0 max-head-dim=0, expected 1 <= head-dim-multiple <= max-head-dim
// BADMAX: error: kiln-decompose-attention: head-dim-multiple=64 max-head-dim=32, expected 1 <= head-dim-multiple <= max-head-dim
