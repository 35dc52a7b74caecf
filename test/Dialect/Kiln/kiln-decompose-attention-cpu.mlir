// RUN: kiln-opt %s --kiln-decompose-attention="keep-f32=true head-dim-multiple=16 max-head-dim=256" --split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-decompose-attention --split-input-file | FileCheck %s --check-prefix=ALL

/// The CPU policy's kernel shapes keep what the CPU attention kernel
/// computes (static f32 rank-4 operands, head dim a multiple of 16 up to
/// 256, an f32 additive mask or none, causal or not) and decompose the
/// rest; without keep options everything goes.
// CHECK-LABEL: func @bert_mask
// CHECK: kiln.attention
// CHECK-NOT: kiln.softmax
// ALL-LABEL: func @bert_mask
// ALL-NOT: kiln.attention
// ALL: kiln.softmax
func.func @bert_mask(%q: tensor<1x12x128x64xf32>, %m: tensor<1x1x1x128xf32>) -> tensor<1x12x128x64xf32> {
  %o = kiln.attention %q, %q, %q, %m {scale = 0.125 : f32} : (tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x1x1x128xf32>) -> tensor<1x12x128x64xf32>
  return %o : tensor<1x12x128x64xf32>
}

// -----

// CHECK-LABEL: func @causal_no_mask
// CHECK: kiln.attention %{{.+}}, %{{.+}}, %{{.+}} {is_causal = true
func.func @causal_no_mask(%q: tensor<2x4x9x32xf32>, %k: tensor<2x4x9x32xf32>) -> tensor<2x4x9x32xf32> {
  %o = kiln.attention %q, %k, %k {is_causal = true} : (tensor<2x4x9x32xf32>, tensor<2x4x9x32xf32>, tensor<2x4x9x32xf32>) -> tensor<2x4x9x32xf32>
  return %o : tensor<2x4x9x32xf32>
}

// -----

/// A mask of rank 2 that varies along the queries (GPT-2's) is kept.
// CHECK-LABEL: func @query_mask
// CHECK: kiln.attention
func.func @query_mask(%q: tensor<1x2x5x16xf32>, %k: tensor<1x2x7x16xf32>, %m: tensor<5x7xf32>) -> tensor<1x2x5x16xf32> {
  %o = kiln.attention %q, %k, %k, %m {scale = 0.25 : f32} : (tensor<1x2x5x16xf32>, tensor<1x2x7x16xf32>, tensor<1x2x7x16xf32>, tensor<5x7xf32>) -> tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}

// -----

/// Decomposed: rank 3, a head dim that is not a multiple of 16, a boolean
/// mask, a dynamic length, broadcast heads, f16.
// CHECK-LABEL: func @rank3
// CHECK-NOT: kiln.attention
// CHECK: kiln.softmax
// CHECK-LABEL: func @head_dim_24
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
// CHECK-LABEL: func @half
// CHECK-NOT: kiln.attention
// CHECK: kiln.softmax
func.func @rank3(%q: tensor<2x5x16xf32>) -> tensor<2x5x16xf32> {
  %o = kiln.attention %q, %q, %q : (tensor<2x5x16xf32>, tensor<2x5x16xf32>, tensor<2x5x16xf32>) -> tensor<2x5x16xf32>
  return %o : tensor<2x5x16xf32>
}
func.func @head_dim_24(%q: tensor<1x2x5x24xf32>) -> tensor<1x2x5x24xf32> {
  %o = kiln.attention %q, %q, %q : (tensor<1x2x5x24xf32>, tensor<1x2x5x24xf32>, tensor<1x2x5x24xf32>) -> tensor<1x2x5x24xf32>
  return %o : tensor<1x2x5x24xf32>
}
func.func @bool_mask(%q: tensor<1x2x5x16xf32>, %m: tensor<5x5xi1>) -> tensor<1x2x5x16xf32> {
  %o = kiln.attention %q, %q, %q, %m : (tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>, tensor<5x5xi1>) -> tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}
func.func @dynamic_length(%q: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %o = kiln.attention %q, %q, %q : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}
func.func @broadcast_heads(%q: tensor<1x2x5x16xf32>, %k: tensor<1x1x5x16xf32>) -> tensor<1x2x5x16xf32> {
  %o = kiln.attention %q, %k, %k : (tensor<1x2x5x16xf32>, tensor<1x1x5x16xf32>, tensor<1x1x5x16xf32>) -> tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}
func.func @half(%q: tensor<1x2x5x16xf16>) -> tensor<1x2x5x16xf16> {
  %o = kiln.attention %q, %q, %q : (tensor<1x2x5x16xf16>, tensor<1x2x5x16xf16>, tensor<1x2x5x16xf16>) -> tensor<1x2x5x16xf16>
  return %o : tensor<1x2x5x16xf16>
}
