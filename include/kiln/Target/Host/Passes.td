//===- Passes.td - Passes every target's host side runs -*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===---------------------------------------------------------===//

#ifndef KILN_TARGET_HOST_PASSES_TD
#define KILN_TARGET_HOST_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnPrepareEntryPass : Pass<"kiln-prepare-entry", "mlir::ModuleOp"> {
  let summary = "Make the model's entry function the private @kiln_entry";
  let description = [{
    Codegen turns the model function into `@kiln_entry`, called only by the
    artifact's `kiln_run` wrapper (which the artifact writer adds after
    translation to LLVM IR). Making it private lets bufferization write the
    results straight into caller-provided buffers
    (`buffer-results-to-out-params` only rewrites private functions) and lets
    LLVM inline it into the wrapper.

    Pre-condition: the module has exactly one public `func.func` (the model),
    or one named `main`. Post-condition: it is `private @kiln_entry` with a
    new first argument `!llvm.ptr {kiln.host}`, the runtime's
    `kiln_abi_host *`, which parallel loops use. Every tensor argument
    but one that an output updates in place (a result's
    `kiln.aliases_input`, a KV cache) is marked `bufferization.writable =
    false`: bufferization never writes into the caller's inputs.

    The run-time checks of `convert-kiln-to-linalg` (`call @kiln_check(%ok,
    %got, %expected) {kiln.check_message}`) become `call
    @kiln_check_hook(%host, %ok, %id, %got, %expected)`; the module attribute
    `kiln.check_messages` lists the messages by id, and checks whose
    condition is a constant true are dropped. A check outside the model
    function is an error.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::func::FuncDialect",
                           "mlir::LLVM::LLVMDialect"];
}

def KilnDistinctResultBuffersPass : Pass<"kiln-distinct-result-buffers", "mlir::ModuleOp"> {
  let summary = "Give each returned buffer that is returned again a copy of its own";
  let description = [{
    Runs right before `buffer-results-to-out-params{hoist-static-allocs}`,
    which replaces a returned `memref.alloc` by the caller's output buffer
    and erases it: a buffer returned twice (one value listed as two model
    outputs, or two zero-size outputs merged by CSE) would be used after
    that. Every memref operand of a `func.return` that repeats an earlier
    one becomes a fresh `memref.alloc` (64-byte aligned, dynamic sizes
    read with `memref.dim`) holding a `memref.copy` of it.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def KilnDropAliasedResultsPass : Pass<"kiln-drop-aliased-results", "mlir::ModuleOp"> {
  let summary = "Drop results that are an input's buffer updated in place";
  let description = [{
    Runs between one-shot bufferization and `buffer-results-to-out-params`.
    A function result marked `kiln.aliases_input = k` (kilnc
    --kv-cache-length: a KV cache updated in place) must be returned as the
    buffer of model input `k` itself (arguments marked `kiln.host` are not
    counted), possibly through `memref.cast`: it is dropped from the
    function, so no out-param and no copy of the buffer is made; the
    artifact's run wrapper passes the output's buffer as the input's.
    Error: a marked result that bufferization gave a buffer of its own, or
    an input index the function does not have.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def KilnCacheRowWritesPass : Pass<"kiln-cache-row-writes", "mlir::func::FuncOp"> {
  let summary = "A KV cache write (the new row at each sequence's position) writes that row only";
  let description = [{
    On buffers. `kiln.kv_cache_write` lowers to a `linalg.generic` over the
    whole cache, in place: the yield is `select(index(r) == position, value,
    out)` with `out` the cache's own element. Such a generic (all parallel,
    one static output read only by that select, an identity output map, the
    row loop `r` used by that one `linalg.index` and by no input's map; the
    rest of the body is whatever its dispatch fused in) becomes an
    `scf.parallel` over the other loops: each point loads its sequence's
    position and, when it is inside the cache (`0 <= position < rows`),
    computes the body at row `position` and stores that element. The new
    rows are written and nothing else is read or written (a decode step's
    whole cache was, every step). The result is the same: rows outside the
    position kept their elements before, and are not touched now.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::affine::AffineDialect",
                           "mlir::memref::MemRefDialect", "mlir::arith::ArithDialect"];
}

def KilnSplitFillsPass : Pass<"kiln-split-fills", "mlir::func::FuncOp"> {
  let summary = "Give each user of a tensor linalg.fill its own fill";
  let description = [{
    Identical fills are merged by CSE (one zero `[256, 3136]` tensor for
    every 1x1 conv of that shape), and one-shot bufferization then fills one
    buffer and copies it into a new buffer for each op that writes it in
    place: a read and a write of the whole tensor per conv, and its matmul
    reads the copied zeros as C. This pass clones the fill (and its
    `tensor.empty`) right before each user instead, so that each user gets
    a freshly filled buffer of its own (no copy), and each product's zero
    fill sits right before it, inside its dispatch: `kiln-cpu-matmul` drops
    it, the CUDA GEMM template (`kiln-cuda-gemm`) finds C zero-filled by its
    own dispatch. Both targets run it before bufferization.

    With `padding-in-place` (the CPU's pipeline), a fill that is the
    destination of an `insert_slice` whose source is written in place from
    an empty tensor (a chain of destination-style ops,
    e.g. a conv epilogue writing its output slice into the next conv's zero
    padding) goes before that chain's first op instead (moved there even
    where it has one use), so that empty-tensor elimination computes the
    chain in the filled tensor rather than copying it in. Where an
    insertion (of such a chain or of any other value: a model input padded
    for a conv) writes the destination's whole inner image (static, every
    dim whole but the last two), only the border around it is filled (one
    fill per band, each inserted into the destination).

    Post-condition: every tensor `linalg.fill` has at most one use.
  }];
  let options = [
    Option<"paddingInPlace", "padding-in-place", "bool", /*default=*/"false",
           "Fill a padding that an in-place chain writes its image into before that "
           "chain, and only around the image">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def KilnCopiesToLinalgPass : Pass<"kiln-copies-to-linalg", "mlir::func::FuncOp"> {
  let summary = "Rewrite memref.copy as linalg.copy";
  let description = [{
    Bufferization copies into strided views (padding, concatenation). The
    upstream LLVM lowering turns a non-contiguous `memref.copy` into a call to
    `memrefCopy` from MLIR's C runner library, which an artifact cannot
    assume. As `linalg.copy` it becomes loops like every other kernel (and
    LLVM recognizes contiguous ones as memcpy).

    Post-condition: no `memref.copy` is left.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def KilnApproximateMathPass : Pass<"kiln-approximate-math", "mlir::func::FuncOp"> {
  let summary = "Replace f32 math functions by polynomial approximations";
  let description = [{
    `math.exp`, `tanh`, `erf`, `log`, ... become arithmetic (upstream's
    polynomial approximations, accurate to a few ulp in f32), so loops that
    use them vectorize instead of calling libm once per element.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
}

def KilnInstrumentDispatchesPass
    : Pass<"kiln-instrument-dispatches", "mlir::ModuleOp"> {
  let summary = "Call the runtime's trace hooks around each dispatch";
  let description = [{
    Each dispatch of the fusion stage directly in `@kiln_entry` -- the
    kernel ops (linalg ops other than fills, attention kernels) that came
    out of one `kiln.dispatch` (their `kiln.dispatch` id, set by
    kiln-inline-dispatch-regions), or a kernel op without an id on its own
    -- gets `func.call @kiln_trace_begin(%host, %id)` before its first op
    and `@kiln_trace_end(%host, %id)` after its last; the artifact
    writer defines the hooks, which do nothing unless the run is traced
    (`kiln_abi_host::trace`), so untraced runs pay one predictable branch
    per dispatch. The dispatch names (the root op and the region's model
    nodes) become the module attribute `kiln.dispatches`, indexed by id,
    and their FLOP and byte estimates `kiln.dispatch_costs`
    (`kilnc --report=cost`).

    Pre-condition: kiln-prepare-entry ran (the host argument exists); runs
    on tensors, before bufferization, so the calls bracket each kernel with
    its output allocation.
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::arith::ArithDialect",
                           "mlir::LLVM::LLVMDialect"];
}

def KilnPackWeightsPass : Pass<"kiln-pack-weights", "mlir::ModuleOp"> {
  let summary = "Put the f32 constants into one aligned byte blob addressed by offset";
  let description = [{
    Every constant f32 `memref.global` that only `@kiln_entry` reads (through
    `memref.get_global`) moves into one blob, at a 64-byte aligned offset;
    each read becomes a `memref.view` of a new entry argument
    `memref<Nxi8>` (inserted after the host) at that offset, and the global
    is erased. The blob becomes the module attribute `kiln.weights` (a
    `dense_resource` of i8). The artifact writer embeds the blob as one byte
    array, writes it to a side file (`kilnc --weights=external`), or leaves
    it out (`--weights=none`); the wrapper passes its address. Other
    constants (integers, used as indices and shapes) stay globals.

    With `half-floats` (the CUDA target, whose `--precision=fp16|bf16`
    weights are converted at compile time), f16 and bf16 constants move
    into the blob too, at 64-byte aligned offsets like the f32 ones; the
    module attribute `kiln.weights_segments` then lists the blob's runs of
    one element type (`[offset, bytes, kiln_abi_dtype]` triples), which the
    artifact writer records for `--weights=none`, whose runtime-generated
    values must be valid in each element type.
  }];
  let options = [
    Option<"halfFloats", "half-floats", "bool", /*default=*/"false",
           "Also pack f16 and bf16 constants">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::memref::MemRefDialect"];
}

def KilnFreeAfterLastUsePass : Pass<"kiln-free-after-last-use", "mlir::ModuleOp"> {
  let summary = "Free the entry's heap buffers right after their last use";
  let description = [{
    Buffer deallocation frees a buffer at the end of the block that owns it:
    for the entry function, at the end of the run. `kiln-plan-arena` gives
    static buffers lifetimes from their uses; the buffers it leaves on the
    heap (dynamic sizes: a symbolic batch or sequence) would all be live at
    once, a footprint several times the arena's (MobileNetV2 at batch 8:
    about 40 MiB against a 6.7 MiB arena), whose cold memory the kernels
    then write. This pass moves each `memref.dealloc` of a `memref.alloc`
    directly in the body of `@kiln_entry` up to right after the buffer's
    last use (the same lifetime rule as `kiln-plan-arena`: uses through
    view-like ops, nested uses at their top-level op, calls of module
    functions that do not capture it), so that the runtime can hand the
    freed block to the next allocation. Buffers that may escape, or whose
    deallocation is not a plain `memref.dealloc` in that body, are left as
    they are.

    Pre-condition: after buffer deallocation and `kiln-plan-arena`, before
    parallel loops are outlined. Post-condition: no `memref.dealloc` of such
    a buffer is later than the op after its last use.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def KilnPlanArenaPass : Pass<"kiln-plan-arena", "mlir::ModuleOp"> {
  let summary = "Place the entry's static intermediate buffers in one arena";
  let description = [{
    Every `memref.alloc` directly in the body of `@kiln_entry` with a static
    shape, identity layout and default memory space, whose uses (through
    view-like ops, and calls of functions defined in the module that return
    no buffer, such as the shared matmul kernels) stay inside the function
    and whose deallocations are plain `memref.dealloc`s in that body, gets
    an offset in one arena. A
    buffer lives from its allocation to its last use (positions of the
    using ops in the entry block, nested uses counting at their top-level
    op); buffers whose lifetimes overlap get disjoint 64-byte aligned
    ranges. Offsets are chosen greedily, largest buffer first, each at the
    best-fitting gap. Each alloc becomes a `memref.view` of a new entry
    argument `memref<Nxi8>` (inserted after the host) and its deallocs are
    erased. The runtime passes a per-run arena of N bytes.

    Left to malloc at run time (counted as heap_allocs): dynamic sizes,
    allocations inside loops or in other functions (per-call scratch such as
    the matmul kernels' packing buffers) and buffers that may escape. The plan summary becomes the
    module attribute `kiln.memory_plan` (`kilnc --report=memory`).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::memref::MemRefDialect"];
}

def KilnExpandShapeToReinterpretCastPass
    : Pass<"kiln-expand-shape-to-reinterpret-cast", "mlir::ModuleOp"> {
  let summary = "Rewrite memref.expand_shape with several dynamic dims in a "
                "group as memref.reinterpret_cast";
  let description = [{
    Upstream `expand-strided-metadata` (MLIR 22) assumes at most one dynamic
    dim per reassociation group of a `memref.expand_shape` and crashes on
    more (`memref<?xf32>` into `memref<?x?xf32>`, which symbolic batch and
    sequence dims produce: a matmul over the rows of `[batch, seq, K]`). This
    pass runs right before it and rewrites such ops with the sizes of their
    `output_shape`: each group's innermost dim keeps the source dim's stride,
    each outer dim's stride is the next one's times its size.

    Post-condition: every `memref.expand_shape` has at most one dynamic
    result dim per group. The op's result type, offset and the static
    strides of its layout are unchanged.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::memref::MemRefDialect"];
}

#endif // KILN_TARGET_HOST_PASSES_TD
