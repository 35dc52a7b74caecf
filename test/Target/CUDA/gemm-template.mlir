// RUN: kiln-opt --split-input-file --kiln-cuda-gemm %s | FileCheck %s
// RUN: kiln-opt --split-input-file --kiln-cuda-gemm="chip=sm_80" %s | FileCheck %s --check-prefix=SM80
// RUN: kiln-opt --split-input-file --kiln-cuda-gemm="gemv=false" %s | FileCheck %s --check-prefix=NOGEMV
// RUN: kiln-opt --split-input-file --kiln-cuda-gemm="gemv-blocks=1" %s | FileCheck %s --check-prefix=NOSPLIT
// RUN: not kiln-opt --kiln-cuda-gemm="gemv-blocks=0" %s 2>&1 | FileCheck %s --check-prefix=BADBLOCKS
// BADBLOCKS: kiln-cuda-gemm: gemv-blocks=0, expected at least 1

// A zero-filled f16 product of tile multiples (3 k steps, so the main loop
// refills a stage): the fill goes, the kernel stores the accumulators.
// CHECK-LABEL: func.func @f16
// CHECK-NOT: linalg.fill
// CHECK: %[[A:.*]] = nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %{{.*}}] : memref<*xf16> -> <tensor = memref<128x64xf16, 3>, swizzle = swizzle_128b
// CHECK: %[[B:.*]] = nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %{{.*}}] : memref<*xf16> -> <tensor = memref<64x64xf16, 3>, swizzle = swizzle_128b
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c2{{.*}}, %{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c128{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) dynamic_shared_memory_size %c98304_i32
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 3>
// CHECK-COUNT-3: nvgpu.mbarrier.init
// CHECK: nvgpu.tma.prefetch.descriptor %[[A]]
// CHECK-COUNT-2: nvgpu.mbarrier.arrive.expect_tx
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: nvgpu.warpgroup.generate.descriptor
// CHECK: nvgpu.warpgroup.mma {{.*}} {transposeB}
// CHECK: nvgpu.tma.async.load %[[A]]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvgpu.warpgroup.mma.store
// CHECK: scf.for
// CHECK-NEXT: vector.load {{.*}} {alignment = 16 : i64} : memref<128x128xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NOT: arith.addf
// CHECK: vector.store {{.*}} {alignment = 16 : i64} : memref<256x256xf32>, vector<4xf32>
// CHECK-NOT: linalg.matmul
// SM80-LABEL: func.func @f16
// SM80: linalg.fill
// SM80: linalg.matmul
func.func @f16(%a: memref<256x192xf16>, %b: memref<192x256xf16>, %c: memref<256x256xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<256x256xf32>)
  linalg.matmul ins(%a, %b : memref<256x192xf16>, memref<192x256xf16>) outs(%c : memref<256x256xf32>)
  return
}

// -----

// bf16, batched: batch folded into the rows, grid z = batch; one k step:
// two stages. No zero fill: the output's initial value is added.
// CHECK-LABEL: func.func @bf16_batch
// CHECK: memref.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : memref<3x128x64xbf16> into memref<384x64xbf16>
// CHECK: nvgpu.tma.create.descriptor {{.*}} -> <tensor = memref<128x64xbf16, 3>
// CHECK: gpu.launch {{.*}} in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c3{{.*}})
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
// CHECK: vector.load %{{.*}} : memref<384x128xf32>, vector<4xf32>
// CHECK: arith.addf
func.func @bf16_batch(%a: memref<3x128x64xbf16>, %b: memref<3x64x128xbf16>, %c: memref<3x128x128xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<3x128x64xbf16>, memref<3x64x128xbf16>) outs(%c : memref<3x128x128xf32>)
  return
}

// -----

// Partial tiles: grid rounded up, K = 72 in two k steps (zeros past K from
// the TMA), stores under a predicate.
// CHECK-LABEL: func.func @ragged
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c2{{.*}}, %{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}})
// CHECK: scf.for
// CHECK: nvgpu.warpgroup.mma
// CHECK: arith.cmpi ult, %{{.*}}, %c200
// CHECK: arith.cmpi ult, %{{.*}}, %c136
// CHECK: scf.if
// CHECK: vector.store {{.*}} : memref<200x136xf32>, vector<4xf32>
func.func @ragged(%a: memref<200x72xf16>, %b: memref<72x136xf16>, %c: memref<200x136xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<200x136xf32>)
  linalg.matmul ins(%a, %b : memref<200x72xf16>, memref<72x136xf16>) outs(%c : memref<200x136xf32>)
  return
}

// -----

// N or K not a multiple of 8 (TMA strides), a batch with a ragged K, or f32
// operands: the generic path keeps them.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: gpu.launch
// CHECK: linalg.matmul
// CHECK: linalg.matmul
// CHECK: linalg.batch_matmul
// CHECK: linalg.matmul
func.func @kept(%a: memref<100x64xf16>, %b: memref<64x100xf16>, %c: memref<100x100xf32>,
                %d: memref<100x36xf16>, %e: memref<36x128xf16>, %f: memref<100x128xf32>,
                %g: memref<2x64x72xf16>, %h: memref<2x72x64xf16>, %i: memref<2x64x64xf32>,
                %x: memref<128x64xf32>, %y: memref<64x128xf32>, %z: memref<128x128xf32>) {
  linalg.matmul ins(%a, %b : memref<100x64xf16>, memref<64x100xf16>) outs(%c : memref<100x100xf32>)
  linalg.matmul ins(%d, %e : memref<100x36xf16>, memref<36x128xf16>) outs(%f : memref<100x128xf32>)
  linalg.batch_matmul ins(%g, %h : memref<2x64x72xf16>, memref<2x72x64xf16>) outs(%i : memref<2x64x64xf32>)
  linalg.matmul ins(%x, %y : memref<128x64xf32>, memref<64x128xf32>) outs(%z : memref<128x128xf32>)
  return
}

// -----

// The product's dispatch has an epilogue (the generic with its kiln.dispatch
// id, marked kiln.epilogue by the dispatch stage: bias, relu, cast to f16):
// the kernel computes it and stores its result; the product's buffer, its
// fill and the generic go.
// CHECK-LABEL: func.func @fused
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch
// CHECK: nvgpu.warpgroup.mma.store
// CHECK: scf.for
// CHECK: vector.extract
// CHECK: memref.load %arg2[
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: arith.truncf
// CHECK: vector.from_elements {{.*}} : vector<4xf16>
// CHECK: vector.store {{.*}} {alignment = 8 : i64} : memref<128x256xf16>, vector<4xf16>
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @fused(%a: memref<128x64xf16>, %b: memref<64x256xf16>, %bias: memref<256xf32>,
                 %out: memref<128x256xf16>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<128x256xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<128x256xf32>)
  linalg.matmul {kiln.dispatch = {id = 0 : i64, kind = "contraction", nodes = []}}
      ins(%a, %b : memref<128x64xf16>, memref<64x256xf16>) outs(%c : memref<128x256xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<128x256xf32>, memref<256xf32>) outs(%out : memref<128x256xf16>)
      attrs = {kiln.dispatch = {id = 0 : i64, kind = "contraction", nodes = []}, kiln.epilogue = 0 : i64} {
  ^bb0(%x: f32, %y: f32, %o: f16):
    %s = arith.addf %x, %y : f32
    %r = arith.maximumf %s, %zero : f32
    %h = arith.truncf %r : f32 to f16
    linalg.yield %h : f16
  }
  memref.dealloc %c : memref<128x256xf32>
  return
}

// -----

// An elementwise consumer that is no epilogue of the product's dispatch (no
// kiln.dispatch id, as in IR written without regions): not fused, the
// product is stored.
// CHECK-LABEL: func.func @unmarked
// CHECK: gpu.launch
// CHECK: vector.store {{.*}} : memref<128x128xf32>, vector<4xf32>
// CHECK: linalg.generic
func.func @unmarked(%a: memref<128x64xf16>, %b: memref<64x128xf16>, %out: memref<128x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<128x128xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<128x128xf32>)
  linalg.matmul ins(%a, %b : memref<128x64xf16>, memref<64x128xf16>) outs(%c : memref<128x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<128x128xf32>) outs(%out : memref<128x128xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %c : memref<128x128xf32>
  return
}

// -----

// The product also feeds something else: no fusion, the product is stored.
// CHECK-LABEL: func.func @not_fused
// CHECK: memref.alloc
// CHECK: gpu.launch
// CHECK: vector.store {{.*}} : memref<128x128xf32>, vector<4xf32>
// CHECK: linalg.generic
func.func @not_fused(%a: memref<128x64xf16>, %b: memref<64x128xf16>, %out: memref<128x128xf32>,
                     %copy: memref<128x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<128x128xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<128x128xf32>)
  linalg.matmul ins(%a, %b : memref<128x64xf16>, memref<64x128xf16>) outs(%c : memref<128x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<128x128xf32>) outs(%out : memref<128x128xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  }
  linalg.copy ins(%c : memref<128x128xf32>) outs(%copy : memref<128x128xf32>)
  memref.dealloc %c : memref<128x128xf32>
  return
}

// -----

// The product copied to a function argument (a model output) right after:
// the kernel writes the argument, the temporary and the copy go.
// CHECK-LABEL: func.func @to_output
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch
// CHECK: vector.store %{{.*}}, %arg2[
// CHECK-NOT: linalg.copy
// CHECK-NOT: memref.dealloc
func.func @to_output(%a: memref<128x64xf16>, %b: memref<64x128xf16>, %out: memref<128x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<128x128xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<128x128xf32>)
  linalg.matmul ins(%a, %b : memref<128x64xf16>, memref<64x128xf16>) outs(%c : memref<128x128xf32>)
  linalg.copy ins(%c : memref<128x128xf32>) outs(%out : memref<128x128xf32>)
  memref.dealloc %c : memref<128x128xf32>
  return
}

// -----

// The dispatch's epilogue writes in place into the product's buffer, which
// is then copied to the model output: the epilogue writes the output
// directly.
// CHECK-LABEL: func.func @in_place
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch
// CHECK: memref.load %arg2[
// CHECK: arith.maximumf
// CHECK: vector.store %{{.*}}, %arg3[
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.copy
func.func @in_place(%a: memref<128x64xf16>, %b: memref<64x128xf16>, %bias: memref<128xf32>,
                    %out: memref<128x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<128x128xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<128x128xf32>)
  linalg.matmul {kiln.dispatch = {id = 0 : i64, kind = "contraction", nodes = []}}
      ins(%a, %b : memref<128x64xf16>, memref<64x128xf16>) outs(%c : memref<128x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<128x128xf32>, memref<128xf32>) outs(%c : memref<128x128xf32>)
      attrs = {kiln.dispatch = {id = 0 : i64, kind = "contraction", nodes = []}, kiln.epilogue = 0 : i64} {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  linalg.copy ins(%c : memref<128x128xf32>) outs(%out : memref<128x128xf32>)
  memref.dealloc %c : memref<128x128xf32>
  return
}

// -----

// One zero tensor bufferized once and copied into each product's output:
// each copy counts as a zero fill (no initial value added), and the zero
// buffer goes with its last copy.
// CHECK-LABEL: func.func @zero_copies
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.copy
// CHECK: gpu.launch
// CHECK-NOT: arith.addf
// CHECK: gpu.launch
// CHECK-NOT: arith.addf
// CHECK-NOT: memref.alloc() : memref<128x128xf32>
// CHECK: return
func.func @zero_copies(%a: memref<128x64xf16>, %b: memref<64x128xf16>, %c: memref<128x128xf32>,
                       %d: memref<128x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %z = memref.alloc() : memref<128x128xf32>
  linalg.fill ins(%zero : f32) outs(%z : memref<128x128xf32>)
  linalg.copy ins(%z : memref<128x128xf32>) outs(%c : memref<128x128xf32>)
  linalg.matmul ins(%a, %b : memref<128x64xf16>, memref<64x128xf16>) outs(%c : memref<128x128xf32>)
  linalg.copy ins(%z : memref<128x128xf32>) outs(%d : memref<128x128xf32>)
  linalg.matmul ins(%a, %b : memref<128x64xf16>, memref<64x128xf16>) outs(%d : memref<128x128xf32>)
  memref.dealloc %z : memref<128x128xf32>
  return
}

// -----

// Symbolic rows M (a classifier's product after the flatten of a symbolic
// batch, or a decoder's projection) with the bias + relu epilogue of its
// dispatch. Both kernels are launched, the one not wanted with an empty grid
// (which the runtime skips): the one-row kernel when A has one row (8 blocks
// of 16 columns, 256 threads, the 8 warps' sums meeting in 512 bytes of
// shared memory, then the epilogue per column; K = 64 is one row step, so K
// is not split), else the template, whose grid's x
// is ceil(M / 128) from A's size at run time, each row stored (through the
// epilogue) while it is below M.
// CHECK-LABEL: func.func @symbolic_rows
// CHECK: %[[ROWS:.+]] = memref.dim %arg0, %{{.+}} : memref<?x64xf16>
// CHECK: %[[ONE:.+]] = arith.cmpi eq, %[[ROWS]], %c1
// CHECK: %[[MORE:.+]] = arith.cmpi ne, %[[ROWS]], %c1
// CHECK: %[[BLOCKS:.+]] = arith.select %[[ONE]], %c8, %c0{{.*}} : index
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[BLOCKS]], %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) dynamic_shared_memory_size %c512_i32
// CHECK: vector.load %arg1[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<64x128xf16>, vector<8xf16>
// CHECK: vector.fma {{.*}} : vector<8xf32>
// CHECK-COUNT-32: gpu.shuffle  xor
// CHECK: gpu.barrier
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: memref.store %{{.*}}, %arg3[%{{.*}}, %{{.*}}] : memref<?x128xf32>
// CHECK: gpu.terminator
// CHECK: %[[M:.+]] = memref.dim %arg0, %{{.+}} : memref<?x64xf16>
// CHECK: %[[UP:.+]] = arith.addi %[[M]], %c127
// CHECK: %[[TILES:.+]] = arith.divui %[[UP]], %c128
// CHECK: %[[GRID:.+]] = arith.select %[[MORE]], %[[TILES]], %c0{{.*}} : index
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GRID]], %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}})
// CHECK: nvgpu.warpgroup.mma
// CHECK: arith.cmpi ult, %{{.*}}, %[[M]]
// CHECK: scf.if
// CHECK: arith.maximumf
// CHECK: vector.store {{.*}} : memref<?x128xf32>, vector<4xf32>
// CHECK-NOT: linalg.
func.func @symbolic_rows(%a: memref<?x64xf16>, %b: memref<64x128xf16>, %bias: memref<128xf32>,
                         %out: memref<?x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %m = memref.dim %out, %c0 : memref<?x128xf32>
  %c = memref.alloc(%m) : memref<?x128xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<?x128xf32>)
  linalg.matmul {kiln.dispatch = {id = 0 : i64, kind = "contraction", nodes = []}}
      ins(%a, %b : memref<?x64xf16>, memref<64x128xf16>) outs(%c : memref<?x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<?x128xf32>, memref<128xf32>) outs(%out : memref<?x128xf32>)
      attrs = {kiln.dispatch = {id = 0 : i64, kind = "contraction", nodes = []}, kiln.epilogue = 0 : i64} {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %c : memref<?x128xf32>
  return
}

// -----

// One row (M = 1) and K = 200: only the one-row kernel. 1024 columns are 64
// blocks, fewer than gemv-blocks (528), and K is two row steps of 128: K is
// split in 2 slices (grid y, one cluster of 1 x 2 x 1) of one step each,
// the second passing K, so each thread guards its row. The slices' sums
// meet in slice 0 through distributed shared memory between two cluster
// barriers; slice 0 stores.
// CHECK-LABEL: func.func @one_row
// CHECK-NOT: nvgpu.tma.create.descriptor
// CHECK: gpu.launch clusters(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}}) blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c64, %{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) dynamic_shared_memory_size %c576_i32
// CHECK: %[[SLICE:.+]] = gpu.block_id  y
// CHECK: %[[FIRST:.+]] = arith.muli %[[SLICE]], %c128
// CHECK-NOT: scf.for
// CHECK: arith.cmpi ult, %{{.*}}, %c200
// CHECK: scf.if {{.*}} -> (vector<8xbf16>, bf16)
// CHECK: vector.load
// CHECK: vector.fma
// CHECK-COUNT-32: gpu.shuffle  xor
// CHECK: gpu.barrier {kiln.min_blocks_per_sm = 4 : i32}
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<16xf32, #gpu.address_space<workgroup>>
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK: arith.cmpi eq, %{{.*}}, %c0
// CHECK: scf.if
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK-COUNT-2: nvvm.mapa %{{.*}}, %{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: memref.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}] : memref<1x1024xf32>
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK-NOT: nvgpu.warpgroup.mma
// CHECK-NOT: linalg.
// NOGEMV-LABEL: func.func @one_row
// NOGEMV: nvgpu.tma.create.descriptor
// NOGEMV: nvgpu.warpgroup.mma
/// With gemv-blocks=1, K is never split: 64 blocks, no cluster.
// NOSPLIT-LABEL: func.func @one_row
// NOSPLIT: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c64, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) dynamic_shared_memory_size %c512_i32
// NOSPLIT-NOT: nvvm.cluster
// NOSPLIT: gpu.terminator
func.func @one_row(%a: memref<1x200xbf16>, %b: memref<200x1024xbf16>, %c: memref<1x1024xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<1x1024xf32>)
  linalg.matmul ins(%a, %b : memref<1x200xbf16>, memref<200x1024xbf16>)
                outs(%c : memref<1x1024xf32>)
  return
}

// -----

/// The threshold: 8448 columns are 528 blocks, enough, so K = 2104 (17 row
/// steps) is not split: an unrolled loop of 2 iterations, each loading 8 rows
/// of B before multiplying them, then the 17th step guarding its rows (past
/// K = 2104); the sums stored directly, no cluster.
// CHECK-LABEL: func.func @one_row_long
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c528, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) dynamic_shared_memory_size %c512_i32
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c2{{.*}} step %c1
// CHECK-COUNT-8: vector.load
// CHECK: vector.fma
// CHECK: scf.yield
// CHECK: arith.cmpi ult, %{{.*}}, %c2104
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}] : memref<1x8448xf32>
// CHECK-NOT: nvvm.cluster
// CHECK: gpu.terminator
func.func @one_row_long(%a: memref<1x2104xf16>, %b: memref<2104x8448xf16>, %c: memref<1x8448xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<1x8448xf32>)
  linalg.matmul ins(%a, %b : memref<1x2104xf16>, memref<2104x8448xf16>)
                outs(%c : memref<1x8448xf32>)
  return
}

// -----

/// Just below the threshold: 8432 columns are 527 blocks, so K = 256 (two
/// row steps) is split in 2 slices of one step, both inside K (no guard).
// CHECK-LABEL: func.func @one_row_threshold
// CHECK: gpu.launch clusters(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}}) blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c527, %{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}})
// CHECK-NOT: arith.cmpi ult, %{{.*}}, %c256
// CHECK: vector.fma
// CHECK-COUNT-2: nvvm.cluster.wait
func.func @one_row_threshold(%a: memref<1x256xf16>, %b: memref<256x8432xf16>, %c: memref<1x8432xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<1x8432xf32>)
  linalg.matmul ins(%a, %b : memref<1x256xf16>, memref<256x8432xf16>)
                outs(%c : memref<1x8432xf32>)
  return
}

// -----

/// 8448 columns are enough blocks, but K = 1536 is 12 row steps: one group
/// of 8 in a loop of one trip (which LLVM unrolls) and 4 more would be 12
/// rows loaded at once, more than 64 registers hold; K is split in 2 slices
/// of 6 steps instead, straight code.
// CHECK-LABEL: func.func @one_row_straight
// CHECK: gpu.launch clusters(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}}) blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c528, %{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}})
// CHECK-NOT: scf.for
// CHECK-COUNT-6: vector.load
// CHECK-NOT: vector.load
// CHECK: gpu.barrier
func.func @one_row_straight(%a: memref<1x1536xf16>, %b: memref<1536x8448xf16>, %c: memref<1x8448xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<1x8448xf32>)
  linalg.matmul ins(%a, %b : memref<1x1536xf16>, memref<1536x8448xf16>)
                outs(%c : memref<1x8448xf32>)
  return
}

// -----

/// K = 15360 (120 row steps) with 256 columns: 8 slices (the most) would
/// be 15 steps each; 16 instead (two groups of 8 in a loop), so 8 slices
/// cover 128 steps and the last one's second group passes K: every row of
/// the loop is guarded.
// CHECK-LABEL: func.func @one_row_guarded_loop
// CHECK: gpu.launch clusters(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c8{{.*}}, %{{.*}} = %c1{{.*}}) blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c16{{.*}}, %{{.*}} = %c8{{.*}}, %{{.*}} = %c1{{.*}})
// CHECK: %[[SLICE:.+]] = gpu.block_id  y
// CHECK: arith.muli %[[SLICE]], %c2048
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c2{{.*}} step %c1
// CHECK-COUNT-8: arith.cmpi ult, %{{.*}}, %c15360
// CHECK: vector.fma
// CHECK: scf.yield
// CHECK-NOT: vector.load
// CHECK: gpu.barrier
func.func @one_row_guarded_loop(%a: memref<1x15360xf16>, %b: memref<15360x256xf16>, %c: memref<1x256xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<1x256xf32>)
  linalg.matmul ins(%a, %b : memref<1x15360xf16>, memref<15360x256xf16>)
                outs(%c : memref<1x256xf32>)
  return
}

// -----

/// A key/value projection of a ~1B Llama at decode with symbolic rows: K =
/// 2048, N = 256 is 16 blocks, so K is split in 8 slices (the most, one
/// cluster of 1 x 8 x 1) of 2 row steps each; the one-row kernel's grid x is
/// empty unless M is 1. Slice 0 adds the 8 slices' sums in order, then
/// applies the dispatch's bias epilogue once and stores.
// CHECK-LABEL: func.func @one_row_split_epilogue
// CHECK: %[[ONE:.+]] = arith.cmpi eq, %{{.+}}, %c1
// CHECK: %[[BLOCKS:.+]] = arith.select %[[ONE]], %c16, %c0{{.*}} : index
// CHECK: gpu.launch clusters(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c8{{.*}}, %{{.*}} = %c1{{.*}}) blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[BLOCKS]], %{{.*}} = %c8{{.*}}, %{{.*}} = %c1{{.*}})
// CHECK: %[[SLICE:.+]] = gpu.block_id  y
// CHECK: arith.muli %[[SLICE]], %c256
// CHECK-NOT: scf.for
// CHECK-COUNT-2: vector.load
// CHECK-NOT: vector.load
// CHECK: nvvm.cluster.wait
// CHECK-COUNT-8: nvvm.mapa
// CHECK: llvm.load
// CHECK: arith.addf
// CHECK: memref.load %arg2
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %arg3[%{{.*}}, %{{.*}}] : memref<?x256xf32>
// CHECK: nvvm.cluster.wait
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: nvgpu.warpgroup.mma
func.func @one_row_split_epilogue(%a: memref<?x2048xf16>, %b: memref<2048x256xf16>,
                                  %bias: memref<256xf32>, %out: memref<?x256xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %m = memref.dim %out, %c0 : memref<?x256xf32>
  %c = memref.alloc(%m) : memref<?x256xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<?x256xf32>)
  linalg.matmul {kiln.dispatch = {id = 0 : i64, kind = "contraction", nodes = []}}
      ins(%a, %b : memref<?x2048xf16>, memref<2048x256xf16>) outs(%c : memref<?x256xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<?x256xf32>, memref<256xf32>) outs(%out : memref<?x256xf32>)
      attrs = {kiln.dispatch = {id = 0 : i64, kind = "contraction", nodes = []}, kiln.epilogue = 0 : i64} {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  memref.dealloc %c : memref<?x256xf32>
  return
}

// -----

// Attention's scores at decode against an f16 KV cache read K-major (the
// cache's rows are B's: convert-kiln-to-linalg's form of Q K^T on CUDA),
// static: batch * heads = 24, M = 1, N = 40 keys, K = 64. Batched, so not
// the one-row kernel: the template, one 128x128 tile per batch, wgmma with
// B K-major, rows past N (the next batch's keys) in products never stored.
// CHECK-LABEL: func.func @decode_scores_k_major
// CHECK: memref.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : memref<24x40x64xf16> into memref<960x64xf16>
// CHECK: nvgpu.tma.create.descriptor {{.*}} -> <tensor = memref<128x64xf16, 3>
// CHECK: gpu.launch {{.*}} in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c24{{.*}})
// CHECK: nvvm.wgmma.mma_async {{.*}} B[<f16>, <one>, <col>]
// CHECK-NOT: linalg.batch_matmul
#kA = affine_map<(b, m, n, k) -> (b, m, k)>
#kB = affine_map<(b, m, n, k) -> (b, n, k)>
#kC = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @decode_scores_k_major(%q: memref<24x1x64xf16>, %k: memref<24x40x64xf16>, %s: memref<24x1x40xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<24x1x40xf32>)
  linalg.batch_matmul indexing_maps = [#kA, #kB, #kC]
      ins(%q, %k : memref<24x1x64xf16>, memref<24x40x64xf16>) outs(%s : memref<24x1x40xf32>)
  return
}

// -----

// The same product on a strided view of a larger cache (rows of 48 keys per
// batch): not dense rows, so the template does not take it; the generic
// loops (linalg lowered later) read it through the view.
// CHECK-LABEL: func.func @k_major_strided_view
// CHECK-NOT: nvgpu.tma.create.descriptor
// CHECK: linalg.batch_matmul indexing_maps
func.func @k_major_strided_view(%q: memref<24x1x64xf16>, %k: memref<24x40x64xf16, strided<[3072, 64, 1]>>, %s: memref<24x1x40xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<24x1x40xf32>)
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : memref<24x1x64xf16>, memref<24x40x64xf16, strided<[3072, 64, 1]>>) outs(%s : memref<24x1x40xf32>)
  return
}
