//===- Passes.td - CPU code generation passes -*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===---------------------------------------------------------===//

#ifndef KILN_TARGET_CPU_PASSES_TD
#define KILN_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnCPUMatmulPass : Pass<"kiln-cpu-matmul", "mlir::ModuleOp"> {
  let summary = "Register-blocked, vectorized f32 matmul kernels for the CPU";
  let description = [{
    Rewrites each f32 `linalg.matmul` on buffers (C += A B, unit innermost
    stride) into cache-blocked loops (`tile-n` x `tile-k` x `tile-m`) around
    a register-blocked micro-kernel: `tile-rows` rows x 2 vectors of
    `vector-width` lanes held in registers as loop-carried accumulators
    across the k loop, one broadcast of A and two loads of B per k step, all
    `vector.fma`. Rows that do not fill a block run a one-row kernel; columns
    that do not fill a block use masked loads and stores, so every size is
    handled without scalar loops. A constant B (weights in a constant
    `memref.global`) is packed at compile time into a new global in the
    kernels' panel layout; the unpacked global is dropped when unused.
    Parallel tasks are (column block, row group) pairs: M is split into
    groups of whole register-tile panels when there are fewer than 4 column
    blocks (each group at least 2 cache blocks of rows, as each packs its own
    B block). Rows past the last full panel run a packed kernel of that height
    when M is static. A only needs a strided layout (it is read one scalar at
    a time), B and C unit inner strides.
    With `isa=avx512bf16` the operands are bf16 and the accumulators f32:
    B panels hold pairs of k rows interleaved (`[k/2][column][2]`, the layout
    `vdpbf16ps` reads, a zero row after an odd depth), A panels pairs of k
    per row (`[k/2][row][2]`), both converted from f32 when packed (constant
    weights at compile time, into bf16 globals), and each k pair is one
    `x86vector.avx512.dot` per accumulator with the A pair broadcast.
    A conv's taps whose B pixels lie in at most 3 runs of 2 `vector-width`
    input elements per vector (width 16 only) read each run with two masked
    loads and a `vpermi2ps` (`llvm.call_intrinsic`) instead of a gather. A
    partial column panel ending in 1 to 4 columns past its whole vectors
    runs those columns in a tail kernel on vectors of the packed A panel
    (tile rows dividing the width). Kernels on a constant packed A prefetch
    the next row panel's row at each k step.
    Matmuls in a function with a `{kiln.host}` argument whose B is not a
    constant share one private `kiln_matmul_<n>` function per operand
    shape/stride signature (operands cast to dynamic offsets), which keeps
    the code size proportional to the distinct shapes (conv taps, repeated
    layers, batch images). A module pass, since it adds globals and
    functions. Runs after bufferization and before linalg-to-loops; other
    linalg ops are left alone.
    Each matmul (and conv's taps) has a signature (its kind, shapes, strides,
    dtypes, constant operands, epilogue body and vector registers) whose hash
    is its tuning key:
    a `tuned` entry for the key gives its configuration, else with
    `cost-model` the analytic model of MatmulTuning.h picks one, else the tile
    options apply. Each choice is recorded in the module's `kiln.tuning`
    array (kilnc --report=tuning).
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", "16",
           "f32 lanes per vector (16 for AVX-512, 8 for AVX2)">,
    Option<"vectorRegisters", "vector-registers", "int64_t", "32",
           "vector registers of the CPU (32 for AVX-512, 16 for AVX2): the "
           "tuning space's and the cost model's register budget">,
    Option<"tileRows", "tile-rows", "int64_t", "8",
           "rows of C per micro-kernel">,
    Option<"tileVectors", "tile-vectors", "int64_t", "2",
           "vectors of C per micro-kernel row (accumulators = rows x vectors)">,
    Option<"tileM", "tile-m", "int64_t", "64", "rows of A per cache block">,
    Option<"tileN", "tile-n", "int64_t", "256", "columns of B per cache block">,
    Option<"tileK", "tile-k", "int64_t", "256", "depth of a cache block">,
    Option<"isa", "isa", "kiln::CPUMatmulISA", "kiln::CPUMatmulISA::F32FMA",
           "instruction set of the kernels (kilnc --precision with --cpu's features)",
           [{::llvm::cl::values(
               clEnumValN(kiln::CPUMatmulISA::F32FMA, "f32-fma",
                          "f32 operands, vector.fma"),
               clEnumValN(kiln::CPUMatmulISA::AVX512BF16, "avx512bf16",
                          "bf16 operands (pairs of k interleaved), f32 accumulators, "
                          "x86vector.avx512.dot (vdpbf16ps)"))}]>,
    Option<"parallelTasks", "parallel-tasks", "int64_t", "4",
           "parallel tasks a matmul aims for when it has fewer column blocks "
           "(its M is split into row groups)">,
    Option<"costModel", "cost-model", "bool", "false",
           "pick each matmul's configuration with the analytic cost model "
           "(kiln/Target/CPU/MatmulTuning.h) instead of the tile options, "
           "unless `tuned` names its signature">,
    ListOption<"tuned", "tuned", "std::string",
               "KEY=RxVxMxNxKxT@MICROSECONDS: the tuning database's winner for "
               "the matmuls whose signature has KEY (kilnc --tuning-db)">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect", "mlir::memref::MemRefDialect",
                           "mlir::func::FuncDialect", "mlir::x86vector::X86VectorDialect",
                           "mlir::LLVM::LLVMDialect"];
}

def KilnOutlineParallelLoopsPass
    : Pass<"kiln-outline-parallel-loops", "mlir::ModuleOp"> {
  let summary = "Run 1-D scf.parallel loops on the runtime's thread pool";
  let description = [{
    Each outermost one-dimensional `scf.parallel` in a function with a
    `{kiln.host}` argument becomes a call to a launcher declaration
    `@kiln_launch_<n>(%host, %count, captured...)`, and its body the private
    function `@kiln_task_<n>(%i, captured...)`. The artifact writer defines
    each launcher after translation to LLVM IR: it packs the captured values
    and calls the host's `parallel_for` with a trampoline to the task (or
    loops itself when there is no host). Constants are cloned into the task
    rather than captured. Afterwards the `{kiln.host}` marker is removed.

    A multi-dimensional loop is split: its first dimension is distributed,
    the rest stays an inner `scf.parallel` (lowered to loops). Loops whose
    static iteration count (all dims of the nest) is below `min-iterations`
    stay serial, since a task costs more than it saves; loops marked
    `{kiln.heavy}` (the matmul column blocks) are always distributed.
  }];
  let options = [
    Option<"minIterations", "min-iterations", "int64_t", "16384",
           "distribute only loop nests with at least this many iterations">
  ];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::arith::ArithDialect"];
}

def KilnCPURowKernelsPass : Pass<"kiln-cpu-row-kernels", "mlir::func::FuncOp"> {
  let summary = "Fuse row-wise linalg ops (softmax, norms, last-axis reductions) into vectorized row kernels";
  let description = [{
    Softmax, layer_norm and reductions over the innermost dim reach codegen as
    a run of linalg ops on buffers that all iterate the same outer "row" dims:
    `linalg.fill`s of reduction inits, `memref.copy`s, `linalg.generic`s that
    are parallel over rows and either parallel over the row (elementwise
    producers and consumers, normalization) or reduce it. Executed one op at a
    time, each op streams the whole tensor through memory, and a reduction's
    scalar chain cannot vectorize.

    This pass takes each maximal run around a row reduction whose ops only
    touch the buffers they write one row at a time (so running them row by row
    is the same as running them op by op), and emits one `scf.parallel` over
    the rows (marked `{kiln.heavy}` when the run touches at least
    `min-parallel-elements` elements, so the thread pool takes it). Per row,
    each op becomes a loop of `vector-width`-lane vectors with a masked tail;
    a reduction keeps `accumulators` partial vector accumulators and reduces
    them horizontally once per row. A row-sized scratch buffer written and
    read only inside the run (the max and sum of softmax, the statistics of
    layer_norm) becomes a per-row SSA value instead of memory.

    Pre-condition: bufferized, before buffer deallocation (so that scratch
    buffers have no other users). Ops that do not fit (reductions over other
    dims, integer division, i1 memory, strided rows) are left alone.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", "16",
           "lanes per vector (16 f32 lanes for AVX-512, 8 for AVX2)">,
    Option<"accumulators", "accumulators", "int64_t", "4",
           "partial vector accumulators per reduction (hides the add latency)">,
    Option<"minParallelElements", "min-parallel-elements", "int64_t", "32768",
           "distribute a kernel's rows on the thread pool from this many elements">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect", "mlir::memref::MemRefDialect"];
}

def KilnCPUIntegerMatmulPass : Pass<"kiln-cpu-integer-matmul", "mlir::ModuleOp"> {
  let summary = "Vectorized integer matmul kernels (vpdpbusd on bytes, or vpmaddwd on i16 pairs)";
  let description = [{
    Rewrites each `linalg.matmul` on static buffers with i16 operands and an
    i32 C (unit inner strides; an i16 `kiln.matmul`'s lowering) into two
    `scf.parallel` loops marked `{kiln.heavy}`: one packs B into panels of
    16 columns with each pair of k rows interleaved per column
    (`[panel][k/2][column][2]`, zeros past K and N; a constant B, the
    weights, is packed at compile time into a new i16 global instead, so
    only one loop runs), the other runs
    (panel, row group) tasks of 6-row x 2-vector register tiles of 8 i32
    accumulators, carried over the whole depth. Each k pair is one pair
    dot product per accumulator (`acc += x[2i] y[2i] + x[2i+1] y[2i+1]`)
    with A's pair broadcast as one i32: `llvm.x86.avx2.pmadd.wd` with
    `avx2`, else the same in portable vector ops. The matmul's marked
    epilogue (the requantization) is applied to the accumulators before the
    store; a zero fill of C before it is dropped. Runs before
    `kiln-cpu-matmul`, which would report a marked epilogue left over. A
    module pass, since it adds globals.

    With `vnni`, a matmul whose operands are both bytes shifted (a constant
    operand whose values, or each of whose rows of A / columns of B, span
    at most 256; a run-time one with a `kiln.lhs_bytes` / `kiln.rhs_bytes`
    window) runs instead on `llvm.x86.avx512.vpdpbusd.512`: A shifted to
    u8 rows padded to a multiple of 4, B shifted to s8 panels of 16 v
    columns with each quad of k rows interleaved per column (both packed at
    compile time when constant, else by loops before the product that also
    sum A's rows / B's columns), 6-row x v-vector tiles of 16 i32
    accumulators (v = 4, 3 or 2: the fewest columns computed for N), and
    the shifts' row and column terms added before the epilogue, exactly.
    With `avxvnni` (and not `vnni`), the same on ymm: `.vpdpbusd.256`,
    panels of 16 columns, 6-row x 2-vector tiles of 8 accumulators.
  }];
  let options = [
    Option<"avx2", "avx2", "bool", "false",
           "call vpmaddwd (llvm.x86.avx2.pmadd.wd) for the pair dot products">,
    Option<"vnni", "vnni", "bool", "false",
           "call vpdpbusd (llvm.x86.avx512.vpdpbusd.512) on the 8-bit values where "
           "both operands are known to be bytes">,
    Option<"avxvnni", "avxvnni", "bool", "false",
           "without vnni: the same on ymm (llvm.x86.avx512.vpdpbusd.256, AVX-VNNI's "
           "VEX form), tiles of 6 rows x 2 vectors of 8">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect", "mlir::memref::MemRefDialect",
                           "mlir::LLVM::LLVMDialect"];
}

def KilnCPUNBitsMatmulPass : Pass<"kiln-cpu-nbits-matmul", "mlir::ModuleOp"> {
  let summary = "Low-bit weight matmul kernels (MatMulNBits) that stream the packed weight once";
  let description = [{
    Rewrites each `kiln.matmul_nbits_kernel` on buffers into one
    `scf.parallel` over panels of 4 vectors of columns, marked
    `{kiln.heavy}`. Its constant weight is repacked at compile time into new
    globals: the 4- or 8-bit values per panel and depth pair (two 4-bit
    values per byte, k even in the low nibble), and per panel and block the
    scales and `-zero * scale` as f32 vectors. A k pair zero-extends one
    vector's bytes to i32 lanes, takes the nibbles, converts them to f32 and
    dequantizes them with one FMA (`q * s - z s`), then one FMA per row of
    the tile with A's element broadcast. Tiles are 4 rows x 2 vectors, then
    2 rows x 4 vectors, the last odd row 1 x 4 with even and odd k in
    separate accumulators. The
    original q, scales and zero point globals are erased once unread.
    Pre-condition: bufferized; static A and C with unit inner strides;
    constant q, scales and zero points (kiln-recognize-nbits-matmul only
    creates the op for constants). A module pass, since it adds globals.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", "16",
           "f32 lanes per vector (16 for AVX-512, 8 for AVX2)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect", "mlir::memref::MemRefDialect"];
}

def KilnCPUAttentionPass : Pass<"kiln-cpu-attention", "mlir::func::FuncOp"> {
  let summary = "Lower kiln.attention_kernel to one vectorized online-softmax kernel";
  let description = [{
    Each `kiln.attention_kernel` on buffers becomes one `scf.parallel` over
    (batch, head, block of up to 4 vectors of queries), marked
    `{kiln.heavy}` so the thread pool takes it. A task packs its queries
    transposed and scaled (`[D, Br]`), then walks the keys in blocks of 64:
    the block's scores `S^T [keys, queries]` (register tiles of keys x query
    vectors, one broadcast key element per query vector FMA), plus the
    key-major mask and the causal mask, then the online softmax with the
    running max and sum kept per query lane (no horizontal reductions: every
    reduction over keys is elementwise across rows of `S^T`), the
    accumulator `O^T [D, Br]` rescaled by `exp(m_old - m_new)` and
    `O^T += V^T P^T` (tiles of head dims x query vectors, one broadcast value
    element per FMA). At the end `O^T / l` is stored to `[B, H, Sq, D]` or,
    with `merge_heads`, `[B, Sq, H, D]`. Scratch lives in an
    `alloca_scope` per task. Pre-condition: bufferized, static shapes
    (convert-kiln-to-linalg only creates the op for those).
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", "16",
           "lanes per vector (16 f32 lanes for AVX-512, 8 for AVX2)">,
    Option<"vectorRegisters", "vector-registers", "int64_t", "32",
           "vector registers (32 for AVX-512, 16 for AVX2): the score and output "
           "tiles hold at most 3/4 and 1/2 of them">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect", "mlir::memref::MemRefDialect",
                           "mlir::math::MathDialect"];
}

#endif // KILN_TARGET_CPU_PASSES_TD
