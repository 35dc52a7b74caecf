// RUN: kiln-opt --split-input-file --kiln-cuda-attention %s | FileCheck %s
// RUN: kiln-opt --split-input-file --kiln-cuda-attention=precision=bf16 %s | FileCheck %s --check-prefix=BF16

// f32 operands (kilnc --precision=fp16 on an f32 model) with BERT's
// key-major mask, ragged lengths (Sq = 100: 2 query blocks, the last
// partial; Sk = 100: 2 key blocks, keys past 100 masked): one launch of
// 128 threads per (query block, batch * head), two 64x72 f16 tiles of
// shared memory, Q fragments rounded to f16 once, then per key block K and
// V stored rounded into shared memory, 8 x 4 mma.sync for S, the online
// softmax (two xor shuffles for the max), 4 x 8 mma.sync for O += P V;
// O / l stored 2 elements at a time under a row predicate.
// CHECK-LABEL: func.func @bert
// CHECK-NOT: kiln.attention_kernel
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c2{{.*}}, %{{.*}} = %c24{{.*}}, %{{.*}} = %c1{{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c128{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) dynamic_shared_memory_size %c18432_i32
// CHECK: memref.view {{.*}} to memref<64x72xf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-16: arith.truncf {{.*}} : vector<2xf32> to vector<2xf16>
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<2x12x100x64xf32>, vector<4xf32>
// CHECK: arith.truncf {{.*}} : vector<4xf32> to vector<4xf16>
// CHECK: vector.store {{.*}} : memref<64x72xf16, #gpu.address_space<workgroup>>, vector<4xf16>
// CHECK: gpu.barrier
// CHECK-COUNT-32: nvvm.mma.sync {{.*}} shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: memref.load %{{.*}} : memref<2x1x100x1xf32>
// CHECK: arith.cmpi ult, %{{.*}}, %c100
// CHECK: gpu.shuffle xor
// CHECK: gpu.shuffle xor
// CHECK: math.exp2
// CHECK-COUNT-32: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: arith.cmpi ult, %{{.*}}, %c100
// CHECK: scf.if
// CHECK: vector.store {{.*}} {alignment = 8 : i64} : memref<2x12x100x64xf32>, vector<2xf32>
// BF16-LABEL: func.func @bert
// BF16: arith.truncf {{.*}} : vector<2xf32> to vector<2xbf16>
// BF16: llvm.bitcast {{.*}} : vector<2xbf16> to i32
// BF16: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.*}} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
func.func @bert(%q: memref<2x12x100x64xf32>, %k: memref<2x12x100x64xf32>, %v: memref<2x12x100x64xf32>, %m: memref<2x1x100x1xf32>, %o: memref<2x12x100x64xf32>) {
  kiln.attention_kernel %q, %k, %v, %m into %o {scale = 0.125 : f32} : memref<2x12x100x64xf32>, memref<2x12x100x64xf32>, memref<2x12x100x64xf32>, memref<2x1x100x1xf32>, memref<2x12x100x64xf32>
  return
}

// -----

// f16 operands, head dim 128, causal, no mask, Sk a multiple of 64: key
// blocks stop at the diagonal (min(2, query block + 1)), no length check on
// the keys, only the causal one; 16-bit operands are computed in f16 (also
// with precision=bf16); the output is stored as f16.
// CHECK-LABEL: func.func @causal
// CHECK: dynamic_shared_memory_size %c34816_i32
// CHECK: memref<64x136xf16, #gpu.address_space<workgroup>>
// CHECK: %[[UP:.*]] = arith.minui %c2{{.*}}, %{{.*}} : index
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %[[UP]]
// CHECK-NOT: arith.truncf {{.*}} : vector<4xf32>
// CHECK: nvvm.mma.sync
// CHECK-NOT: arith.cmpi ult, {{.*}}, %c128 :
// CHECK: arith.cmpi ule
// CHECK: scf.yield
// CHECK: arith.truncf {{.*}} : vector<2xf32> to vector<2xf16>
// CHECK: vector.store {{.*}} {alignment = 4 : i64} : memref<1x2x128x128xf16>, vector<2xf16>
// BF16-LABEL: func.func @causal
// BF16-NOT: bf16
// BF16: nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32)
func.func @causal(%q: memref<1x2x128x128xf16>, %o: memref<1x2x128x128xf16>) {
  kiln.attention_kernel %q, %q, %q into %o {is_causal, scale = 0.088 : f32} : memref<1x2x128x128xf16>, memref<1x2x128x128xf16>, memref<1x2x128x128xf16>, memref<1x2x128x128xf16>
  return
}

// -----

// merge_heads: the output is [B, Sq, H, D], stored at (b, row, h, column);
// a mask that varies along the queries is read at the query's row.
// CHECK-LABEL: func.func @merged
// CHECK: memref.load %{{.*}} : memref<1x1x64x64xf32>
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<1x64x2x64xf32>, vector<2xf32>
func.func @merged(%q: memref<1x2x64x64xf32>, %m: memref<1x1x64x64xf32>, %o: memref<1x64x2x64xf32>) {
  kiln.attention_kernel %q, %q, %q, %m into %o {merge_heads, scale = 0.125 : f32} : memref<1x2x64x64xf32>, memref<1x2x64x64xf32>, memref<1x2x64x64xf32>, memref<1x1x64x64xf32>, memref<1x64x2x64xf32>
  return
}
