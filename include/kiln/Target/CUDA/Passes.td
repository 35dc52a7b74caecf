//===- Passes.td - CUDA code generation passes -*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------===//

#ifndef KILN_TARGET_CUDA_PASSES_TD
#define KILN_TARGET_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnCUDAPromoteAccumulatorsPass
    : Pass<"kiln-cuda-promote-accumulators", "mlir::func::FuncOp"> {
  let summary = "Keep a reduction's accumulator in a register across its loop";
  let description = [{
    Linalg's loops reduce into memory: each iteration of a matmul's or
    conv's `k` loop loads `C[i, j]`, adds, and stores it back. When an
    `scf.for` body loads and later stores the same loop-invariant element,
    and nothing else in the loop touches that buffer (no access to any view
    of the same allocation), the element is loaded once before the loop,
    carried as an `iter_args` value and stored once after it. Innermost loops
    first, so nested reduction loops (conv's kh, kw, c) promote outward.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::memref::MemRefDialect"];
}

def KilnCUDAForwardOutputCopiesPass
    : Pass<"kiln-cuda-forward-output-copies", "mlir::func::FuncOp"> {
  let summary = "Write a result into its output buffer instead of copying it there";
  let description = [{
    Bufferization leaves a model output as a temporary (`memref.alloc`)
    that the last op writes, then a `linalg.copy` of it into the out-param:
    on the GPU one more kernel reading and writing the whole tensor (an
    elementwise chain on 256 MiB ran at a third of copy bandwidth). When the
    copy's target is a function argument of the same type (static, or with
    symbolic dims: a copy's operands have one shape) that nothing uses
    before the copy, and every other use of the temporary
    (not through a view) precedes the copy in the same block, those uses
    write and read the argument instead, and the copy and the temporary
    (its dealloc too) go. The GEMM template does the same for its own
    results; this covers the generic kernels (softmax, layer_norm,
    elementwise chains, transposes).
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::memref::MemRefDialect"];
}

def KilnCUDAHostShapesPass
    : Pass<"kiln-cuda-host-shapes", "mlir::func::FuncOp"> {
  let summary = "Compute the shape elements host code reads as host scalars";
  let description = [{
    On the CUDA target every tensor becomes a device buffer, so host code
    may not read tensor elements. Computed shapes (ONNX `Shape -> Gather ->
    Concat -> Reshape`, `ConstantOfShape`, `Expand`, `Range` bounds) do:
    a `tensor.extract` at constant indices directly in the function body
    sizes an allocation or bounds a loop. On tensors, before bufferization,
    each such read of a small static tensor (at most 64 integer, index or
    float elements) is replaced by the computation of that one element:
    through the producing linalg op's body (the iteration that writes it;
    reductions of at most 64 steps unrolled), `insert_slice` (concat),
    `extract_slice`, static reshapes, down to `tensor.dim`s and constants.
    A `tensor.reshape` to a dynamic shape given by a small shape tensor
    becomes a `collapse_shape` to one dim and an `expand_shape` sized by
    that tensor's elements, read the same way. Reads the host cannot
    compute (an element of a model input, of a tensor loaded from memory)
    stay and are refused by kiln-cuda-serial-kernels.

    Pre-condition: tensors (before bufferization).
    Post-condition: no top-level `tensor.extract` at constant indices of
    a small tensor produced by a linalg op, slice, insert_slice or static
    reshape; no `tensor.reshape` with a dynamic result and a small shape.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::tensor::TensorDialect"];
}

def KilnCUDASerialKernelsPass
    : Pass<"kiln-cuda-serial-kernels", "mlir::func::FuncOp"> {
  let summary = "Move host code that touches buffers into one-thread kernels";
  let description = [{
    On the CUDA target every buffer lives in device memory, so the host
    function may only allocate, free, take views of buffers and launch
    kernels. This pass wraps each maximal run of other top-level operations
    that read or write buffers (the `scf.for` of a full reduction, a
    `memref.store` of an initial value, ...) in a single-iteration
    `scf.parallel` marked `{kiln.serial}`, which kiln-cuda-map-parallel-loops
    turns into a one-thread kernel. Host `memref.alloca`s become
    `memref.alloc`s (the host stack is not device memory), and reshapes to
    static shapes `memref.reinterpret_cast`s (they need not read their
    shape operand). The `{kiln.host}` argument marker is dropped: CUDA host
    code does not use the thread pool.

    Pre-condition: buffers and loops (after linalg-to-parallel-loops).
    Post-condition: every top-level op of a function that touches a buffer
    is an `scf.parallel`, an allocation, a deallocation, a global, a view or
    a `memref.dim`. Fails with a diagnostic when a wrapped op's result is
    used outside the run (host code depending on tensor values), and on a
    `memref.reshape` to a dynamic shape (its sizes would be host loads of
    the device shape buffer; kiln-cuda-host-shapes leaves none whose shape
    the host can compute).
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def KilnCUDAMapParallelLoopsPass
    : Pass<"kiln-cuda-map-parallel-loops", "mlir::func::FuncOp"> {
  let summary = "Map top-level scf.parallel loops onto CUDA blocks and threads";
  let description = [{
    Each top-level `scf.parallel` becomes one kernel: its dimensions are
    collapsed into one, tiled by `block-size`, the tile loop mapped to
    `block x` and the intra-tile loop to `thread x` (a guard replaces partial
    tiles, so every block has `block-size` threads). Loops marked
    `{kiln.serial}` map to a single block of one thread. Nested
    `scf.parallel` loops run sequentially inside the kernel.
    `convert-parallel-loops-to-gpu` then creates the `gpu.launch` ops.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256", "threads per block">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::affine::AffineDialect"];
}

def KilnCUDAArgReductionsPass
    : Pass<"kiln-cuda-arg-reductions", "mlir::func::FuncOp"> {
  let summary = "ArgMax and ArgMin over the last axis as one block per row";
  let description = [{
    On buffers, before linalg becomes loops. Matches the `linalg.generic`
    ArgMax/ArgMin lower to: one input (a float of at most 32 bits, static
    last dim below 2^31), two outputs (the best value and its integer
    index) over the leading dims, the last loop a reduction, and a body of
    exactly `cmpf ogt|oge|olt|ole (in, best)`, `linalg.index` of the last
    loop and two selects. It becomes a `gpu.launch` of one block of
    `threads` threads per row: thread t folds elements t, t + threads, ...
    from the initial value, eight per loop trip whose loads (indices clamped
    into the row, the ones past it not folded) are issued before the first
    compare, the (value, index) pairs are combined with
    `gpu.shuffle xor` within warps and through shared memory across them
    (the pair of the smaller index acting as the accumulator, so ties and
    NaNs go as in the serial loop), and thread 0 folds the total into the
    initial pair and stores it. A `linalg.fill` of an output right before
    the generic is read as its constant and erased; a value buffer that
    only the fill and the generic use is never stored and goes.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", "1024",
           "threads per row (a multiple of 32 in [32, 1024])">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect"];
}

def KilnCUDARowKernelsPass
    : Pass<"kiln-cuda-row-kernels", "mlir::func::FuncOp"> {
  let summary = "Softmax, layer_norm and other row groups as one kernel each";
  let description = [{
    On buffers, before linalg becomes loops. A row group starts at a
    `linalg.generic` that reduces its last loop (static shapes, float
    combiner `addf`, `mulf`, `max*f`, `min*f` of at most 32 bits) and grows
    over the neighbouring `linalg.fill`, `linalg.copy` and elementwise
    `linalg.generic` ops over the same outer (row) dims and the same row
    length, stepping over ops without memory effects, allocations and the
    trace hooks, as long as every buffer the group writes is accessed one
    row at a time (then running the ops row after row equals running them
    op after op). The group becomes one `gpu.launch` inserted at its last op:
    a row gets T threads (a multiple of 32, at most `max-threads`), 256 / T
    rows share a block; each thread holds its part of the row in registers
    (at most 4 chunks of 16 bytes, or 16 elements where the row cannot be
    read in 16-byte vectors: ragged lengths, unaligned views), so the row is
    read from memory once per buffer and every intermediate row stays in
    registers; reductions combine lanes with `gpu.shuffle xor` and warps
    through shared memory; each buffer is stored once, after its last write
    in the group, and buffers only the group uses (`memref.alloc`) are never
    stored. Rows longer than that stay on the generic path.
  }];
  let options = [
    Option<"maxThreads", "max-threads", "int64_t", "1024",
           "most threads per row (a multiple of 32 in [32, 1024])">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::vector::VectorDialect",
                           "mlir::memref::MemRefDialect"];
}

def KilnCUDAVectorElementwisePass
    : Pass<"kiln-cuda-vector-elementwise", "mlir::func::FuncOp"> {
  let summary = "Elementwise generics with 16-byte accesses in a grid-stride loop";
  let description = [{
    On buffers, before linalg becomes loops. A top-level `linalg.generic`
    (or `linalg.copy`, generalized first) with only parallel loops, a static
    innermost range (outer ranges may be dynamic: the vector count and grid
    are then host arithmetic on the output's dims), a scalar body (no memory
    effects; `linalg.index` allowed), identity output maps and input maps
    made of loop dims and constants with the innermost dim, where it
    appears, last, becomes a `gpu.launch` of 256-thread blocks (at most
    `max-blocks`) whose threads step through the iteration space in vectors
    of 16 bytes of the widest operand read along the innermost dim
    (`vector<4xf32>`, `vector<8xf16>`): a `vector.load` per such operand, one
    scalar load per operand broadcast across it, the body cloned per
    element, a `vector.store` per result (alignment: the vector's bytes).
    Needs the innermost range to be a multiple of the vector width and
    every operand read along it to have a unit inner stride and an offset
    and outer strides that are multiples of it; where some of those are
    dynamic the host checks them and launches either this kernel or one
    that moves one element per vector. Anything else keeps the generic path.
  }];
  let options = [
    Option<"maxBlocks", "max-blocks", "int64_t", "8192",
           "most blocks of a launch; threads loop over the rest">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::vector::VectorDialect",
                           "mlir::memref::MemRefDialect"];
}

def KilnCUDAWarpReductionsPass
    : Pass<"kiln-cuda-warp-reductions", "mlir::func::FuncOp"> {
  let summary = "One warp per row for row reductions, combined with shuffles";
  let description = [{
    Matches each top-level `scf.parallel` (lower bounds 0, steps 1, not
    `{kiln.serial}`) whose body is: read-only ops (loads, arithmetic), one
    `scf.for` with a single `iter_args` value folded by `arith.addf`,
    `mulf`, `maxnumf`, `maximumf`, `minnumf` or `minimumf` (the loop body
    only reads memory), then ops without regions that use the result (the
    store). That is a row reduction (softmax, layernorm, reduce ops after
    `kiln-cuda-promote-accumulators`). It becomes a `gpu.launch` of
    `block-size` threads, one warp per row: lane l folds elements l,
    l + 32, ... from the combine's identity (adjacent lanes read adjacent
    elements), five `gpu.shuffle xor` steps combine the lanes, the loop's
    initial value is combined last, and lane 0 runs the ops after the loop.
    Summation order changes (as in any parallel reduction). Rows shorter
    than `min-row-length` (static trip counts) keep one thread per row.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256",
           "threads per block (a multiple of 32): block-size / 32 rows per block">,
    Option<"minRowLength", "min-row-length", "int64_t", "64",
           "shortest static row that gets a warp">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect"];
}

def KilnCUDAMergeKernelModulesPass
    : Pass<"kiln-cuda-merge-kernel-modules", "mlir::ModuleOp"> {
  let summary = "Put every outlined kernel into one gpu.module";
  let description = [{
    `gpu-kernel-outlining` makes one `gpu.module` per kernel, each with a
    kernel of the same name. This pass moves them all into one module,
    `@kiln_kernels`, each kernel renamed after the module it came from
    (`@kiln_entry_kernel_3`), and retargets the launches. One module is one
    PTX file (valid input for ptxas), one cubin and one load at run time.

    A launch in thread-block clusters (`clusters in (...)`, constant sizes:
    the one-row kernel's split K) gives its sizes to its kernel as
    compile-time cluster dims (`nvvm.cluster_dim`, PTX
    `.reqnctapercluster`) and drops its cluster operands: the runtime's
    plain `cuLaunchKernel` launches such a kernel in clusters. A cluster
    size that is not a constant is an error. A kernel with an op marked
    `kiln.min_blocks_per_sm = N` (the one-row kernel) gets
    `nvvm.minctasm = N` (PTX `.minnctapersm`: ptxas may then spend up to
    65536 / (N * threads) registers), the mark dropped.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::NVVM::NVVMDialect"];
}

def KilnCUDADeviceConstantsPass
    : Pass<"kiln-cuda-device-constants", "mlir::ModuleOp"> {
  let summary = "Host code reads constant globals through their device copies";
  let description = [{
    Runs on the host side after lowering to the LLVM dialect. Every
    `llvm.mlir.addressof` of a constant global with an initializer (the
    model's weights) in a host `llvm.func` is followed by a call
    `@kiln_cuda_constant(%host_ptr, %bytes) -> !llvm.ptr`, and the address's
    users take the call's result: the device copy that the runtime uploads
    once per session. The artifact writer defines `kiln_cuda_constant`.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def KilnCUDAExternDynamicSharedPass
    : Pass<"kiln-cuda-extern-dynamic-shared", "mlir::gpu::GPUModuleOp"> {
  let summary = "Dynamic shared memory as PTX's extern shared array";
  let description = [{
    Runs on the kernels after convert-gpu-to-nvvm. The zero-sized internal
    shared global that `gpu.dynamic_shared_memory` lowers to becomes an
    external declaration aligned to `alignment` bytes, which NVPTX prints
    as `.extern .shared .align A .b8 name[]`: the block's dynamic shared
    memory, placed by ptxas after all static shared data. As an internal
    global shared by several kernels of one module it would be a static
    variable among the others (the GEMM template's mbarriers), and the TMA
    buffers behind it misaligned.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "1024",
           "alignment of the dynamic shared memory in bytes">
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def KilnCUDALowerPrecisionPass
    : Pass<"kiln-cuda-lower-precision", "mlir::func::FuncOp"> {
  let summary = "Matmul operands in f16 or bf16, accumulation and results in f32";
  let description = [{
    `kilnc --precision=fp16|bf16`. Runs on tensors. Every `linalg.matmul`
    and `linalg.batch_matmul` with f32 operands and default indexing maps
    gets its two inputs converted to `precision`: a constant operand (a
    weight: `dense` or `dense_resource`, possibly through reshapes and
    `linalg.transpose`) is converted at compile time (round to nearest even)
    into a `dense_resource` blob and the unused f32 original is erased; an
    operand computed by an elementwise, data-movement or row-group generic
    that only products read is rounded by that generic (`truncf` before its
    yield); narrow values widened (an f16 KV cache), through moves, are moved
    narrow; any other operand gets an elementwise `arith.truncf` generic. The product keeps its
    f32 output (the model's dtype): the named op extends each f16/bf16
    operand to f32 before the multiply-add, which is what `wgmma` with f32
    accumulators computes. A matmul already in `precision` (a model in f16
    or bf16) accumulates in f32 instead of its own dtype and its result is
    rounded once by a `truncf` generic (which kiln-cuda-gemm's epilogue
    computes). Other ops are untouched.

    `tf32`: operands stay f32 (tf32 wgmma reads f32 memory), but an f32
    matmul with static shapes and K and N multiples of 4 multiplies by B
    transposed (indexing maps of C = A * B^T): a constant B is transposed
    now, any other by a `linalg.transpose`, since tf32 wgmma reads both
    operands K-major.

    With `convolutions` (kilnc sets it for sm_90a), every
    `linalg.conv_2d_nchw_fchw` with f32 operands, static shapes and
    K = C*KH*KW a multiple of 8 (f16/bf16) or 4 (tf32) becomes an im2col
    `linalg.generic` writing col [N, OH*OW, K] in `precision` and one
    `linalg.batch_matmul` per image with the filters (converted now) shared:
    maps (b, m, n, k) -> W[m, k], col[b, n, k], Y[b, m, n]; its f32 result
    is the convolution's, expanded back to [N, F, OH, OW].

    With `matmuls=false` only convolutions are rewritten: kilnc's
    `--precision=fp32` path runs it with `tf32` after kiln-cuda-split-f32.
  }];
  let options = [
    Option<"precision", "precision", "::kiln::Precision", "::kiln::Precision::FP16",
           "fp16, bf16 or tf32", [{::llvm::cl::values(
             clEnumValN(::kiln::Precision::FP32, "fp32", "f32 (rejected: nothing to lower)"),
             clEnumValN(::kiln::Precision::TF32, "tf32", "f32 operands read as tf32"),
             clEnumValN(::kiln::Precision::FP16, "fp16", "f16 operands"),
             clEnumValN(::kiln::Precision::BF16, "bf16", "bf16 operands"))}]>,
    Option<"convolutions", "convolutions", "bool", "true",
           "2-D convolutions as im2col + products (for kiln-cuda-gemm on sm_90a)">,
    Option<"matmuls", "matmuls", "bool", "true",
           "(batch) matmuls too; false: convolutions only (after kiln-cuda-split-f32)">
  ];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect",
                           "mlir::linalg::LinalgDialect", "mlir::arith::ArithDialect",
                           "mlir::tensor::TensorDialect"];
}

def KilnCUDASplitF32Pass : Pass<"kiln-cuda-split-f32", "mlir::func::FuncOp"> {
  let summary = "Exact-f32 products as error-compensated tf32 products (3xTF32)";
  let description = [{
    `kilnc --precision=fp32` on sm_90a. Runs on tensors. Each f32 operand x
    splits into big = x rounded to tf32 and small = x - big rounded to tf32
    (both read exactly by tf32 wgmma), and A * B becomes
    As * Bb + Ab * Bs + Ab * Bb (f32 accumulation; the dropped As * Bs is
    below 2^-22 of |A| |B|): one tf32 product over a K three times as
    long, A' = [As | Ab | Ab] and B' = [Bb ; Bs ; Bb], small terms first.

    A `linalg.matmul` or `linalg.batch_matmul` with default maps, static f32
    operands and K and N multiples of 4 becomes a product of A' (M x 3K)
    and B'^T (N x 3K) with the maps of C = A * B^T, which kiln-cuda-gemm
    takes with `tf32`. A constant operand (a weight) is split and
    transposed now; any other is split by an elementwise `linalg.generic`
    writing [..., 3, K, ...] (then collapsed), and B^T is a
    `linalg.transpose`.

    With `convolutions`, a `linalg.conv_2d_nchw_fchw` on static f32
    tensors becomes one with three times the channels, x' = [xb ; xs ; xb]
    and W' = [Ws | Wb | Wb], for kiln-cuda-lower-precision (tf32,
    `matmuls=false`) to turn into im2col + products. Other ops, and
    products these rules refuse, keep the SIMT path.
  }];
  let options = [
    Option<"convolutions", "convolutions", "bool", "true",
           "2-D convolutions too (with three times the channels)">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::arith::ArithDialect",
                           "mlir::tensor::TensorDialect"];
}

def KilnCUDAGemmPass : Pass<"kiln-cuda-gemm", "mlir::func::FuncOp"> {
  let summary = "Hopper GEMM template: TMA, mbarrier pipeline, wgmma";
  let description = [{
    Runs on buffers, before linalg becomes loops. Each `linalg.matmul` or
    `linalg.batch_matmul` with f16 or bf16 inputs, an f32 output, static
    contiguous shapes with N and K multiples of 8 (TMA's 16-byte strides;
    K a multiple of 64 with a batch) becomes host code that builds two TMA tensor maps
    (`nvgpu.tma.create.descriptor`, 128-byte swizzle) and a `gpu.launch` of
    one warpgroup per 128x128 output tile (grid z = batch): a pipeline of
    `stages` shared-memory buffers filled by `nvgpu.tma.async.load` and
    tracked by an mbarrier group, `nvgpu.warpgroup.mma` (f32 accumulators)
    on each 128x128x64 step, and an epilogue that stores the accumulators
    through shared memory to the output with 16-byte stores. Partial edge
    tiles load zeros past the matrix (TMA out-of-bounds fill) and store
    under a predicate. A zero
    `linalg.fill` of the output right before the product is dropped; any
    other initial value is added in the epilogue. When the product is a
    temporary whose only reader is the next op, an elementwise
    `linalg.generic` (bias, activation, cast to f16/bf16), the epilogue
    computes that generic's body on the accumulators and stores its result
    instead: the product never reaches memory. Other matmuls are left to
    the generic (SIMT) path. Only for `chip` = sm_90a (wgmma).

    Products whose B is given transposed (indexing maps of C = A * B^T,
    which kiln-cuda-lower-precision makes for tf32 and for convolutions;
    batched, A may have no batch dimension) read B K-major: `wgmma`
    m64n128k16 (f16/bf16) or m64n128k8 (tf32) on hand-built descriptors,
    K a multiple of 8 (16-bit) or 4 (f32), N unconstrained. f32 operands
    take the template only with `tf32` (kilnc --precision=tf32). A
    `linalg.transpose` that makes such a B at run time becomes a kernel
    moving 32x32 tiles through shared memory.

    A product whose A has a single row (a decode step's projections: f16 or
    bf16, unbatched, N-major B, N a multiple of 8) is bound by memory
    bandwidth, and 128-column tiles give it too few blocks to stream B at
    the device's rate: it gets the one-row kernel instead (`gemv`, on by
    default), 256 threads per 16 columns of B, each reading 8 columns of
    every 128th row with 16-byte loads, eight rows in flight, sums combined
    by warp shuffles and shared memory, the epilogue applied per column.
    When ceil(N / 16) blocks are fewer than `gemv-blocks`, K is split over
    up to 8 blocks of one thread-block cluster (grid y), their f32 sums
    added in slice 0 through distributed shared memory before the epilogue
    (the rule is in GemvEmitter.cpp). With symbolic rows M both kernels are launched,
    the one not wanted (one-row kernel when M is 1, template otherwise) with
    an empty grid.
  }];
  let options = [
    Option<"chip", "chip", "::kiln::Chip", "::kiln::Chip()",
           "the kernels' GPU architecture (sm_XY or sm_XYa; default sm_90a)">,
    Option<"tf32", "tf32", "bool", "false",
           "f32 products with a transposed B through tf32 wgmma">,
    Option<"stages", "stages", "int64_t", "3", "shared-memory pipeline depth (2..4)">,
    Option<"gemv", "gemv", "bool", "true",
           "products whose A has one row (M = 1, or symbolic M found to be 1 at run "
           "time) through the one-row kernel">,
    Option<"gemvBlocks", "gemv-blocks", "int64_t", "528",
           "the one-row kernel splits K until it has at least this many blocks "
           "(at most 8 slices; default 528, four 256-thread blocks per SM of an H100)">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::nvgpu::NVGPUDialect",
                           "mlir::NVVM::NVVMDialect", "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect", "mlir::vector::VectorDialect",
                           "mlir::scf::SCFDialect", "mlir::arith::ArithDialect"];
}

def KilnCUDAAttentionPass : Pass<"kiln-cuda-attention", "mlir::func::FuncOp"> {
  let summary = "kiln.attention_kernel as one flash-attention kernel (mma.sync)";
  let description = [{
    Runs on buffers, before linalg becomes loops. Each bufferized
    `kiln.attention_kernel` (static shapes, head dim 64 or 128, identity
    layouts) becomes one `gpu.launch` in the structure of FlashAttention-2:
    a block of 4 warps per (batch * head, 64 query rows), each warp owning
    16 query rows. A warp loads its Q fragments once (rounded to f16 or
    bf16 while loading), then walks the keys in blocks of 64: the block's K
    and V rows go through shared memory (rounded while they are stored),
    S = Q K^T by `mma.sync` m16n8k16 (f32 accumulators), scale and the
    additive mask applied and keys past the end (and, causal, after the
    query) set to -inf, an online softmax on the accumulator fragments
    (row max and sum over the 4 lanes of a quad by shuffles), and O += P V
    with P rounded in registers and used directly as the A fragments
    (the m16n8 accumulators of two adjacent key tiles are the m16n8k16 A
    layout). A causal kernel skips the key blocks above the diagonal. At the
    end each row is divided by its sum and stored (rows past Sq are not).
    Operands with f16 or bf16 elements are computed in their own type; f32
    ones in `precision`.
  }];
  let options = [
    Option<"precision", "precision", "::kiln::Precision", "::kiln::Precision::FP16",
           "fp16 or bf16: the type f32 operands are rounded to", [{::llvm::cl::values(
             clEnumValN(::kiln::Precision::FP32, "fp32", "(rejected)"),
             clEnumValN(::kiln::Precision::TF32, "tf32", "(rejected)"),
             clEnumValN(::kiln::Precision::FP16, "fp16", "f16 operands"),
             clEnumValN(::kiln::Precision::BF16, "bf16", "bf16 operands"))}]>
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::NVVM::NVVMDialect",
                           "mlir::LLVM::LLVMDialect", "mlir::memref::MemRefDialect",
                           "mlir::vector::VectorDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::math::MathDialect"];
}

#endif // KILN_TARGET_CUDA_PASSES_TD
