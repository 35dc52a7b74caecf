// RUN: kiln-opt %s --kiln-cpu-attention --split-input-file --verify-diagnostics | FileCheck %s

/// One heavy parallel loop over (batch, head, query block): 2 tasks for 2
/// heads of 20 queries (2 vectors of 16 lanes, one block). Per task: Q^T
/// packed (scaled), scores in tiles of 12 keys x 2 query vectors (24 FMA
/// accumulators over the 16 head dims), the key-major mask broadcast per
/// key, the online softmax (max over the block, guarded base, exp), O^T
/// rescaled and accumulated in tiles of 8 head dims x 2 query vectors, then
/// O^T / l stored with merged heads ([b, i, h, d]).
// CHECK-LABEL: func @bert
// CHECK-SAME: (%[[Q:.+]]: memref<1x2x20x16xf32>, %[[K:.+]]: memref<1x2x70x16xf32>, %[[M:.+]]: memref<1x1x70x1xf32>, %[[O:.+]]: memref<1x20x2x16xf32>)
// CHECK: scf.parallel (%[[T:.+]]) = (%{{.+}}) to (%c2) step
// CHECK-NEXT: memref.alloca_scope
// CHECK-DAG: %[[QT:.+]] = memref.alloca() : memref<16x32xf32>
// CHECK-DAG: %[[ST:.+]] = memref.alloca() : memref<64x32xf32>
// CHECK-DAG: %[[OT:.+]] = memref.alloca() : memref<16x32xf32>
// CHECK: memref.load %[[Q]]
// CHECK: arith.mulf
// CHECK: memref.store %{{.+}}, %[[QT]]
// CHECK: vector.create_mask
// CHECK: scf.for %{{.+}} iter_args({{.+}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: scf.for %{{.+}} step %c12
// CHECK: scf.for {{.+}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: memref.load %[[K]]
// CHECK: math.fma
// CHECK: memref.load %[[M]]
// CHECK: arith.addf
// CHECK: vector.store %{{.+}}, %[[ST]]
// CHECK: arith.maximumf
// CHECK: arith.cmpf oeq
// CHECK: math.exp
// CHECK: math.exp
// CHECK: vector.store %{{.+}}, %[[ST]]
// CHECK: scf.for %{{.+}} step %c8
// CHECK: vector.load %[[OT]]
// CHECK: memref.load %[[K]]
// CHECK: math.fma
// CHECK: arith.divf
// CHECK: memref.store %{{.+}}, %[[O]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<1x20x2x16xf32>
// CHECK: } {kiln.heavy}
// CHECK-NOT: kiln.attention_kernel
func.func @bert(%q: memref<1x2x20x16xf32>, %k: memref<1x2x70x16xf32>, %m: memref<1x1x70x1xf32>, %o: memref<1x20x2x16xf32>) {
  kiln.attention_kernel %q, %k, %k, %m into %o {merge_heads, scale = 0.25 : f32} : memref<1x2x20x16xf32>, memref<1x2x70x16xf32>, memref<1x2x70x16xf32>, memref<1x1x70x1xf32>, memref<1x20x2x16xf32>
  return
}

// -----

/// Causal: keys after the query's lane position become -inf; a mask that
/// varies along the queries is read as a masked vector.
// CHECK-LABEL: func @causal_query_mask
// CHECK: vector.maskedload
// CHECK: arith.cmpi sgt
// CHECK: arith.select
func.func @causal_query_mask(%q: memref<1x1x5x16xf32>, %m: memref<1x1x5x5xf32>, %o: memref<1x1x5x16xf32>) {
  kiln.attention_kernel %q, %q, %q, %m into %o {is_causal, scale = 0.25 : f32} : memref<1x1x5x16xf32>, memref<1x1x5x16xf32>, memref<1x1x5x16xf32>, memref<1x1x5x5xf32>, memref<1x1x5x16xf32>
  return
}

// -----

func.func @dynamic(%q: memref<1x1x?x16xf32>, %o: memref<1x1x?x16xf32>) {
  // expected-error @+1 {{kiln-cpu-attention expects a bufferized kiln.attention_kernel with static shapes}}
  kiln.attention_kernel %q, %q, %q into %o {scale = 0.25 : f32} : memref<1x1x?x16xf32>, memref<1x1x?x16xf32>, memref<1x1x?x16xf32>, memref<1x1x?x16xf32>
  return
}

// -----

func.func @half(%q: memref<1x1x5x16xf16>, %o: memref<1x1x5x16xf16>) {
  // expected-error @+1 {{kiln-cpu-attention expects f32 elements}}
  kiln.attention_kernel %q, %q, %q into %o {scale = 0.25 : f32} : memref<1x1x5x16xf16>, memref<1x1x5x16xf16>, memref<1x1x5x16xf16>, memref<1x1x5x16xf16>
  return
}
