// RUN: kiln-opt --split-input-file --kiln-cuda-gemm="tf32=true" %s | FileCheck %s
// RUN: kiln-opt --split-input-file --kiln-cuda-gemm %s | FileCheck %s --check-prefix=OFF
// RUN: not kiln-opt --kiln-cuda-gemm="tf32=true stages=5" %s 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not kiln-opt --kiln-cuda-gemm="chip=gfx90a" %s 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: 'gfx90a': expected sm_XY with XY >= 60, e.g. sm_90a or sm_80

// tf32 (kilnc --precision=tf32): an f32 product whose B comes transposed
// (C = A * B^T, as kiln-cuda-lower-precision makes it). Both operands are
// K-major: TMA boxes of 128 rows by 32 f32 (one 128-byte swizzled row) for
// A and B^T, one B load per stage, and 8 wgmma m64n128k8 (two 64-row halves
// by four k8 steps) on hand-built descriptors per k step.
// CHECK-LABEL: func.func @tf32
// CHECK-NOT: linalg.fill
// CHECK: %[[A:.*]] = nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %{{.*}}] : memref<*xf32> -> <tensor = memref<128x32xf32, 3>, swizzle = swizzle_128b
// CHECK: %[[B:.*]] = nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %{{.*}}] : memref<*xf32> -> <tensor = memref<128x32xf32, 3>, swizzle = swizzle_128b
// CHECK: gpu.launch {{.*}} in (%{{.*}} = %c2{{.*}}, %{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}}) {{.*}} dynamic_shared_memory_size %c98304_i32
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 3>
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}[%{{.*}}], %c32768
// CHECK-NEXT: nvgpu.tma.async.load %[[A]]
// CHECK-NEXT: nvgpu.tma.async.load %[[B]]
// CHECK: nvgpu.mbarrier.arrive.expect_tx
// CHECK-NEXT: nvgpu.tma.async.load %[[A]]
// CHECK-NEXT: nvgpu.tma.async.load %[[B]]
// CHECK-NEXT: nvgpu.warpgroup.mma.init.accumulator
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: builtin.unrealized_conversion_cast %{{.*}} : !nvgpu.warpgroup.accumulator<fragmented = vector<128x128xf32>> to !llvm.struct<(struct<(f32,
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 8>, D[<f32>, <one>], A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: builtin.unrealized_conversion_cast %{{.*}} to !nvgpu.warpgroup.accumulator<fragmented = vector<128x128xf32>>
// CHECK-NOT: nvgpu.warpgroup.mma {{.*}}transposeB
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvgpu.warpgroup.mma.store
// CHECK: vector.store {{.*}} : memref<256x256xf32>, vector<4xf32>
// CHECK-NOT: linalg.matmul
// Without tf32, f32 products stay generic.
// OFF-LABEL: func.func @tf32
// OFF: linalg.matmul
// STAGES: kiln-cuda-gemm: stages=5, expected 2, 3 or 4
#mA = affine_map<(m, n, k) -> (m, k)>
#mB = affine_map<(m, n, k) -> (n, k)>
#mC = affine_map<(m, n, k) -> (m, n)>
func.func @tf32(%a: memref<256x96xf32>, %bt: memref<256x96xf32>, %c: memref<256x256xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<256x256xf32>)
  linalg.matmul indexing_maps = [#mA, #mB, #mC]
      ins(%a, %bt : memref<256x96xf32>, memref<256x96xf32>) outs(%c : memref<256x256xf32>)
  return
}

// -----

// Batched and ragged: B^T's rows are (batch, n), K = 20 pads with zeros in
// both operands (one k step: two stages), N = 132 a multiple of 4.
// CHECK-LABEL: func.func @tf32_batch
// CHECK: memref.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : memref<2x132x20xf32> into memref<264x20xf32>
// CHECK: gpu.launch {{.*}} in (%{{.*}} = %c2{{.*}}, %{{.*}} = %c2{{.*}}, %{{.*}} = %c2{{.*}})
// CHECK: num_barriers = 2
// CHECK: nvvm.wgmma.mma_async
// CHECK: scf.if
#bA = affine_map<(b, m, n, k) -> (b, m, k)>
#bB = affine_map<(b, m, n, k) -> (b, n, k)>
#bC = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @tf32_batch(%a: memref<2x200x20xf32>, %bt: memref<2x132x20xf32>, %c: memref<2x200x132xf32>) {
  linalg.batch_matmul indexing_maps = [#bA, #bB, #bC]
      ins(%a, %bt : memref<2x200x20xf32>, memref<2x132x20xf32>) outs(%c : memref<2x200x132xf32>)
  return
}

// -----

// N = 30 (not a multiple of 4) with a K-major B: one element at a time, each
// under its own predicate.
// CHECK-LABEL: func.func @ragged_n
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvgpu.warpgroup.mma.store
// CHECK: scf.if
// CHECK: vector.extract
// CHECK: scf.if
// CHECK-NEXT: memref.store %{{.*}} : memref<64x30xf32>
#nA = affine_map<(m, n, k) -> (m, k)>
#nB = affine_map<(m, n, k) -> (n, k)>
#nC = affine_map<(m, n, k) -> (m, n)>
func.func @ragged_n(%a: memref<64x32xf32>, %bt: memref<30x32xf32>, %d: memref<64x30xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%d : memref<64x30xf32>)
  linalg.matmul indexing_maps = [#nA, #nB, #nC]
      ins(%a, %bt : memref<64x32xf32>, memref<30x32xf32>) outs(%d : memref<64x30xf32>)
  return
}

// -----

// f16 with a K-major B and one A for every batch (a convolution as
// kiln-cuda-lower-precision writes it: filters x im2col^T per image): A's
// rows are not offset by the batch, 64-element k steps, wgmma m64n128k16
// with B not transposed.
// CHECK-LABEL: func.func @f16_broadcast
// CHECK: nvgpu.tma.create.descriptor {{.*}} -> <tensor = memref<128x64xf16, 3>
// CHECK: nvgpu.tma.create.descriptor {{.*}} -> <tensor = memref<128x64xf16, 3>
// CHECK: gpu.launch {{.*}} in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c2{{.*}}, %{{.*}} = %c4{{.*}})
// CHECK: %[[BLOCKM:.*]] = gpu.block_id  x
// CHECK: %[[MTILE:.*]] = arith.muli %[[BLOCKM]], %c128
// CHECK: nvgpu.tma.async.load %{{.*}}[%{{.*}}, %[[MTILE]]]
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK: vector.store {{.*}} : memref<256x196xf32>, vector<4xf32>
#fA = affine_map<(b, m, n, k) -> (m, k)>
#fB = affine_map<(b, m, n, k) -> (b, n, k)>
#fC = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @f16_broadcast(%w: memref<64x576xf16>, %col: memref<4x196x576xf16>, %y: memref<4x64x196xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<4x64x196xf32>)
  linalg.batch_matmul indexing_maps = [#fA, #fB, #fC]
      ins(%w, %col : memref<64x576xf16>, memref<4x196x576xf16>) outs(%y : memref<4x64x196xf32>)
  return
}

// -----

// What stays generic: f32 with default maps (B N-major), other maps (A
// transposed), K not a multiple of 4.
// CHECK-LABEL: func.func @tf32_kept
// CHECK-NOT: gpu.launch
// CHECK-COUNT-3: linalg.matmul
#kA = affine_map<(m, n, k) -> (k, m)>
#kB = affine_map<(m, n, k) -> (k, n)>
#kC = affine_map<(m, n, k) -> (m, n)>
#tA = affine_map<(m, n, k) -> (m, k)>
#tB = affine_map<(m, n, k) -> (n, k)>
func.func @tf32_kept(%a: memref<64x32xf32>, %b: memref<32x64xf32>, %c: memref<64x64xf32>,
                     %at: memref<32x64xf32>, %r: memref<64x30xf32>, %rt: memref<64x30xf32>) {
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x64xf32>) outs(%c : memref<64x64xf32>)
  linalg.matmul indexing_maps = [#kA, #kB, #kC]
      ins(%at, %b : memref<32x64xf32>, memref<32x64xf32>) outs(%c : memref<64x64xf32>)
  linalg.matmul indexing_maps = [#tA, #tB, #kC]
      ins(%r, %rt : memref<64x30xf32>, memref<64x30xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// B made K-major at run time (kiln-cuda-lower-precision's linalg.transpose
// of an activation): a kernel of 32x8 threads moving 32x32 tiles through
// shared memory (rows of 33 elements) replaces the transpose; the zero fill
// before the product still goes.
// CHECK-LABEL: func.func @transposed_at_run_time
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.transpose
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c3{{.*}}, %{{.*}} = %c2{{.*}}, %{{.*}} = %c2{{.*}}) threads({{.*}}) in (%{{.*}} = %c32{{.*}}, %{{.*}} = %c8{{.*}}, %{{.*}} = %c1{{.*}}) dynamic_shared_memory_size %c4224_i32
// CHECK: memref.view {{.*}} to memref<32x33xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: memref.store {{.*}} : memref<32x33xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK-COUNT-4: memref.store {{.*}} : memref<2x96x64xf32>
// CHECK: gpu.launch
// CHECK: nvvm.wgmma.mma_async
#rA = affine_map<(b, m, n, k) -> (b, m, k)>
#rB = affine_map<(b, m, n, k) -> (b, n, k)>
#rC = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @transposed_at_run_time(%a: memref<2x128x64xf32>, %b: memref<2x64x96xf32>, %c: memref<2x128x96xf32>) {
  %zero = arith.constant 0.0 : f32
  %bt = memref.alloc() : memref<2x96x64xf32>
  linalg.transpose ins(%b : memref<2x64x96xf32>) outs(%bt : memref<2x96x64xf32>) permutation = [0, 2, 1]
  linalg.fill ins(%zero : f32) outs(%c : memref<2x128x96xf32>)
  linalg.batch_matmul indexing_maps = [#rA, #rB, #rC]
      ins(%a, %bt : memref<2x128x64xf32>, memref<2x96x64xf32>) outs(%c : memref<2x128x96xf32>)
  memref.dealloc %bt : memref<2x96x64xf32>
  return
}

// -----

// A convolution's epilogue (the dispatch's: same kiln.dispatch id, marked
// kiln.epilogue): the product [N, F, OH*OW] reaches its bias +
// residual + relu generic through memref.expand_shape to [N, F, OH, OW]. The
// generic is rewritten over the product's rank (the residual and the output
// through memref.collapse_shape, the bias by channel), so the epilogue
// computes it; the product's buffer and fill go, and so does the zero fill
// of the output, which the generic overwrites entirely.
// CHECK-LABEL: func.func @conv_epilogue
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[RES:.*]] = memref.collapse_shape %arg3 {{\[}}[0], [1], [2, 3]] : memref<4x64x14x14xf32> into memref<4x64x196xf32>
// CHECK-DAG: %[[OUT:.*]] = memref.collapse_shape %arg4 {{\[}}[0], [1], [2, 3]] : memref<4x64x14x14xf32> into memref<4x64x196xf32>
// CHECK: gpu.launch
// CHECK: nvgpu.warpgroup.mma.store
// CHECK: memref.load %arg2[
// CHECK: memref.load %[[RES]][
// CHECK: arith.maximumf
// CHECK: vector.store {{.*}}, %[[OUT]][
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref.alloc
#eA = affine_map<(b, m, n, k) -> (m, k)>
#eB = affine_map<(b, m, n, k) -> (b, n, k)>
#eC = affine_map<(b, m, n, k) -> (b, m, n)>
#e4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#eBias = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @conv_epilogue(%w: memref<64x576xf16>, %col: memref<4x196x576xf16>, %bias: memref<64xf32>,
                         %res: memref<4x64x14x14xf32>, %y: memref<4x64x14x14xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<4x64x14x14xf32>)
  %p = memref.alloc() : memref<4x64x196xf32>
  linalg.fill ins(%zero : f32) outs(%p : memref<4x64x196xf32>)
  linalg.batch_matmul indexing_maps = [#eA, #eB, #eC]
      ins(%w, %col : memref<64x576xf16>, memref<4x196x576xf16>) outs(%p : memref<4x64x196xf32>)
      {kiln.dispatch = {id = 0 : i64, kind = "conv", nodes = []}}
  %e = memref.expand_shape %p [[0], [1], [2, 3]] output_shape [4, 64, 14, 14] : memref<4x64x196xf32> into memref<4x64x14x14xf32>
  linalg.generic {indexing_maps = [#e4, #eBias, #e4, #e4],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%e, %bias, %res : memref<4x64x14x14xf32>, memref<64xf32>, memref<4x64x14x14xf32>)
      outs(%y : memref<4x64x14x14xf32>) attrs = {kiln.dispatch = {id = 0 : i64, kind = "conv", nodes = []}, kiln.epilogue = 0 : i64} {
  ^bb0(%x: f32, %b: f32, %r: f32, %o: f32):
    %s = arith.addf %x, %b : f32
    %t = arith.addf %s, %r : f32
    %u = arith.maximumf %t, %zero : f32
    linalg.yield %u : f32
  }
  memref.dealloc %p : memref<4x64x196xf32>
  return
}

// -----

// The same convolution with a symbolic batch: one launch whose grid's z is
// the image count read from col at run time, the tensor maps made of the
// dynamic 2-D views, the epilogue applied as at a static batch.
// CHECK-LABEL: func.func @conv_epilogue_symbolic_batch
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[OUT:.*]] = memref.collapse_shape %arg4 {{\[}}[0], [1], [2, 3]] : memref<?x64x14x14xf32> into memref<?x64x196xf32>
// CHECK-DAG: %[[B2:.*]] = memref.collapse_shape %arg1 {{\[}}[0, 1], [2]] : memref<?x196x576xf16> into memref<?x576xf16>
// CHECK: nvgpu.tma.create.descriptor
// CHECK: %[[N:.*]] = memref.dim %arg1, %c0{{.*}} : memref<?x196x576xf16>
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c2{{.*}}, %{{.*}} = %[[N]])
// CHECK: nvvm.wgmma.mma_async
// CHECK: arith.maximumf
// CHECK: vector.store {{.*}}, %[[OUT]][
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref.alloc
#sA = affine_map<(b, m, n, k) -> (m, k)>
#sB = affine_map<(b, m, n, k) -> (b, n, k)>
#sC = affine_map<(b, m, n, k) -> (b, m, n)>
#s4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#sBias = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @conv_epilogue_symbolic_batch(%w: memref<64x576xf16>, %col: memref<?x196x576xf16>,
                                        %bias: memref<64xf32>, %res: memref<?x64x14x14xf32>,
                                        %y: memref<?x64x14x14xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = memref.dim %col, %c0 : memref<?x196x576xf16>
  linalg.fill ins(%zero : f32) outs(%y : memref<?x64x14x14xf32>)
  %p = memref.alloc(%n) : memref<?x64x196xf32>
  linalg.fill ins(%zero : f32) outs(%p : memref<?x64x196xf32>)
  linalg.batch_matmul indexing_maps = [#sA, #sB, #sC]
      ins(%w, %col : memref<64x576xf16>, memref<?x196x576xf16>) outs(%p : memref<?x64x196xf32>)
      {kiln.dispatch = {id = 0 : i64, kind = "conv", nodes = []}}
  %e = memref.expand_shape %p [[0], [1], [2, 3]] output_shape [%n, 64, 14, 14] : memref<?x64x196xf32> into memref<?x64x14x14xf32>
  linalg.generic {indexing_maps = [#s4, #sBias, #s4, #s4],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%e, %bias, %res : memref<?x64x14x14xf32>, memref<64xf32>, memref<?x64x14x14xf32>)
      outs(%y : memref<?x64x14x14xf32>) attrs = {kiln.dispatch = {id = 0 : i64, kind = "conv", nodes = []}, kiln.epilogue = 0 : i64} {
  ^bb0(%x: f32, %b: f32, %r: f32, %o: f32):
    %s = arith.addf %x, %b : f32
    %t = arith.addf %s, %r : f32
    %u = arith.maximumf %t, %zero : f32
    linalg.yield %u : f32
  }
  memref.dealloc %p : memref<?x64x196xf32>
  return
}

// -----

// As above, and a later buffer sized by shape queries of C and of its
// expand_shape (a squeeze-excite conv over a symbolic batch): the queries
// are answered by C's allocation size and the reshape's output shape, so C
// and its view go with the product.
// CHECK-LABEL: func.func @conv_epilogue_shape_queries
// CHECK-SAME: (%{{.*}}: memref<64x576xf16>, %[[COL:.*]]: memref<?x196x576xf16>,
// CHECK: %[[N:.*]] = memref.dim %[[COL]], %c0
// CHECK: nvvm.wgmma.mma_async
// CHECK-NOT: memref.alloc(%{{.*}}) {{.*}}: memref<?x64x196xf32>
// CHECK: memref.alloc(%[[N]], %[[N]]) : memref<?x?xf32>
#qA = affine_map<(b, m, n, k) -> (m, k)>
#qB = affine_map<(b, m, n, k) -> (b, n, k)>
#qC = affine_map<(b, m, n, k) -> (b, m, n)>
#q4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#qBias = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @conv_epilogue_shape_queries(%w: memref<64x576xf16>, %col: memref<?x196x576xf16>,
                                       %bias: memref<64xf32>, %y: memref<?x64x14x14xf32>) -> memref<?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = memref.dim %col, %c0 : memref<?x196x576xf16>
  %p = memref.alloc(%n) : memref<?x64x196xf32>
  linalg.fill ins(%zero : f32) outs(%p : memref<?x64x196xf32>)
  linalg.batch_matmul indexing_maps = [#qA, #qB, #qC]
      ins(%w, %col : memref<64x576xf16>, memref<?x196x576xf16>) outs(%p : memref<?x64x196xf32>)
      {kiln.dispatch = {id = 0 : i64, kind = "conv", nodes = []}}
  %e = memref.expand_shape %p [[0], [1], [2, 3]] output_shape [%n, 64, 14, 14] : memref<?x64x196xf32> into memref<?x64x14x14xf32>
  linalg.generic {indexing_maps = [#q4, #qBias, #q4],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%e, %bias : memref<?x64x14x14xf32>, memref<64xf32>)
      outs(%y : memref<?x64x14x14xf32>) attrs = {kiln.dispatch = {id = 0 : i64, kind = "conv", nodes = []}, kiln.epilogue = 0 : i64} {
  ^bb0(%x: f32, %b: f32, %o: f32):
    %s = arith.addf %x, %b : f32
    linalg.yield %s : f32
  }
  %d0 = memref.dim %e, %c0 : memref<?x64x14x14xf32>
  %d1 = memref.dim %p, %c0 : memref<?x64x196xf32>
  %later = memref.alloc(%d0, %d1) : memref<?x?xf32>
  memref.dealloc %p : memref<?x64x196xf32>
  return %later : memref<?x?xf32>
}

// -----

// The fill of a buffer that is read before it is overwritten stays.
// CHECK-LABEL: func.func @live_fill
// CHECK: linalg.fill
func.func @live_fill(%in: memref<64xf32>, %out: memref<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<64xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%t : memref<64xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%in : memref<64xf32>) outs(%t : memref<64xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  memref.dealloc %t : memref<64xf32>
  return
}
