//===- Passes.td - Dispatch formation passes (stage 4) -*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===------------------------------------------------------------------===//

#ifndef KILN_DISPATCH_PASSES_TD
#define KILN_DISPATCH_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnFuseElementwisePass : Pass<"kiln-fuse-elementwise", "mlir::func::FuncOp"> {
  let summary = "Fuse elementwise linalg producers and consumers into one kernel";
  let description = [{
    Stage 4 fusion on linalg-on-tensors: an elementwise `linalg.generic` is
    fused into its consumer (bias after a matmul stays separate, but chains
    of activations, scaling, residual adds merge into one generic), using
    upstream's elementwise fusion with Kiln's control:

    - a producer is fused only when it is elementwise and every use of it is
      fused, so no expensive producer is recomputed;
    - `linalg.transpose` and `linalg.broadcast` are first rewritten as
      `linalg.generic`, so their index maps fold into their neighbours (a
      bias add followed by a head-split transpose is one kernel);
    - the elementwise chain after an integer matmul (i32 result: a bias
      add, the requantization, a dequantization) is fused first, before
      reshapes move: a conv's per-row bias `[M, 1]` keeps its NCHW view from
      moving past the bias add, which would leave the chain split and only
      the bias add as the kernel's epilogue;
    - reshapes are *not* propagated through named ops, so `linalg.matmul` and
      `linalg.batch_matmul` stay named for the CPU kernel generator.

    - a fusion whose kernel body would exceed `max-fused-ops` operations is
      skipped: each fusion copies both bodies, so an unbounded chain of N
      elementwise nodes would cost O(N^2) (20,000 chained nodes took minutes).

    Pre-condition: linalg on tensors. Post-condition: the same computation
    with fewer, larger elementwise generics.
  }];
  let options = [
    Option<"maxFusedOps", "max-fused-ops", "int64_t", /*default=*/"256",
           "Largest kernel body (operations) elementwise fusion builds">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def KilnFormDispatchesPass : Pass<"kiln-form-dispatches", "mlir::func::FuncOp"> {
  let summary = "Join each matmul's elementwise epilogue to its dispatch (CPU)";
  let description = [{
    After kiln-fuse-elementwise, the single elementwise `linalg.generic`
    consuming an f32 `linalg.matmul` (bias, activation, residual add, cast)
    becomes the matmul's epilogue: reshapes between them move below the
    generic (its loops collapse to the matmul's two), a whole-tensor
    `tensor.insert_slice` into an empty tensor that only adds unit dims
    becomes an `expand_shape` first (the conv result of a batch of one),
    the matmul and the zero fill of its C move right before the generic,
    and the generic gets `kiln.epilogue = <index of C among its inputs>`.
    The CPU matmul kernel applies a marked epilogue to each output tile in
    registers, so the pair is one kernel (and one dispatch in
    `--report=fusion`). Only epilogues the kernel can apply are marked
    (kiln/Dispatch/Epilogue.h): two parallel loops, identity maps for C and
    the output, other inputs read along the tile's columns or broadcast,
    arith/math bodies without integer division, buffers whose last dim is
    contiguous. Convs become `kiln.conv_taps` contractions, and an
    elementwise producer read only by a 1x1 conv (a stride-1 depthwise
    conv, a squeeze-excite scale) becomes that contraction's B prologue,
    computed while the kernel packs B (ConvPrologue.cpp).

    Last, an epilogue over a conv's product [F, P] whose result is reshaped
    to one image [1, F, H, W] and inserted into another tensor (the next
    conv's zero padding) iterates over [F, H, W] instead, C read through an
    expand_shape, and writes the inserted slice itself, so that empty-tensor
    elimination computes it in place in the padded tensor (no copy into the
    padding; PaddedEpilogue.cpp).

    Where an epilogue splits the matmul's columns (the head split, an image's
    rows), the innermost split dim must be a multiple of
    `epilogue-column-align`, the target kernel's vector width (its policy's
    answer; 16 on the CPU), or rows that a vector spans at most four of
    (wrapPitch, wrapRows in kiln/Dispatch/Epilogue.h; rows narrower than a
    vector only where the output keeps them innermost, an image's rows):
    the kernel stores a wrapping vector with one masked store per row.

    Pre-condition: linalg on tensors after kiln-fuse-elementwise.
    Post-condition: the same computation; marked epilogues follow their
    matmul directly.
  }];
  let options = [
    Option<"epilogueColumnAlign", "epilogue-column-align", "int64_t", /*default=*/"16",
           "Split matmul columns an epilogue reads: the innermost dim a multiple of this">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def KilnFormRowGroupsPass : Pass<"kiln-form-row-groups", "mlir::func::FuncOp"> {
  let summary = "Mark each row reduction with its elementwise neighbours as one row group";
  let description = [{
    For a target whose row kernels run a softmax, a norm or another
    last-axis reduction together with the elementwise ops around it, but
    that takes no matmul epilogues (those come with kiln-form-dispatches,
    which forms row groups itself): marks each maximal run of adjacent f32
    row ops around a row reduction `kiln.row_group = N`, by the rule of
    kiln-form-dispatches (lib/Dispatch/RowGroups.h), so that
    kiln-form-dispatch-regions makes the run one dispatch and the target's
    row kernel generator reads it from there. First, a generic reading a
    reduction's result with unit dims added (a global average pool's
    division) has its loops collapsed to read it directly, so that it can
    join the reduction's group.

    Pre-condition: linalg on tensors after kiln-fuse-elementwise.
    Post-condition: the same computation, row members marked.
  }];
  let options = [
    Option<"halfFloats", "half-floats", "bool", /*default=*/"false",
           "Rows of f16 and bf16 join groups too (the row kernel computes in f32)">,
    Option<"oneRowLength", "one-row-length", "bool", /*default=*/"false",
           "A group's rows have one length (the row kernel's team of threads per row)">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def KilnFormGemmEpiloguesPass : Pass<"kiln-form-gemm-epilogues", "mlir::func::FuncOp"> {
  let summary = "Join each product's elementwise consumer to its dispatch (GEMM tiles)";
  let description = [{
    For a target whose GEMM kernel stores each output tile through the
    elementwise consumer of the product (its policy's
    `GemmEpilogueShapes`): the single elementwise `linalg.generic` reading
    the result C of an f32 `linalg.matmul`, `linalg.batch_matmul` (default
    maps) or `linalg.conv_2d_nchw_fchw` becomes its epilogue, marked
    `kiln.epilogue = <index of C among its inputs>` like the ones
    kiln-form-dispatches marks, so that kiln-form-dispatch-regions makes the
    pair one dispatch and the kernel generator takes the epilogue from it.

    Only what the kernel can apply is marked: the product starts from a
    zero fill, has static shapes whose K and N are multiples of
    `k-multiple` and `n-multiple` (K of a batched product of
    `batched-k-multiple`; with `dense-a` its A must not be a slice of
    another tensor; a conv's K is padded by its lowering, and its batch may
    be symbolic: the kernel runs the images as its grid); the generic is all parallel over C's loops, reads C
    and writes its one output through identity maps, reads its other
    inputs through projected permutations (a bias), and its body is
    arith/math. A conv's epilogue reads C [N, F, OH, OW] as it is (the
    kernel computes it over the conv's [N, F, OH*OW] product). The
    contraction and its fill move right before the generic, whose output
    gets an empty tensor of its own (the kernel writes it while A and B
    are still read), or a `bufferization.alloc_tensor` when the result is
    inserted into a larger tensor (the next conv's padding), so that
    bufferization gives it a dense buffer and keeps the insertion a copy.

    Pre-condition: linalg on tensors after kiln-fuse-elementwise.
    Post-condition: the same computation; marked epilogues follow their
    contraction directly.
  }];
  let options = [
    Option<"kMultiple", "k-multiple", "int64_t", /*default=*/"8",
           "The product's K must be a multiple of this">,
    Option<"nMultiple", "n-multiple", "int64_t", /*default=*/"8",
           "The product's N must be a multiple of this">,
    Option<"batchedKMultiple", "batched-k-multiple", "int64_t", /*default=*/"64",
           "K of a batched product must be a multiple of this">,
    Option<"denseA", "dense-a", "bool", /*default=*/"false",
           "The kernel reads A as a dense buffer: no A that is a slice">
  ];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect",
                           "mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def KilnFormDispatchRegionsPass : Pass<"kiln-form-dispatch-regions", "mlir::func::FuncOp"> {
  let summary = "Wrap each dispatch (future kernel) into a kiln.dispatch region";
  let description = [{
    Runs last in the dispatch stage (after kiln-form-dispatches on the CPU):
    each dispatch, as `kilnc --report=fusion` and the trace hooks count
    them, becomes one `kiln.dispatch` region. A dispatch is a
    `kiln.attention_kernel` or a linalg op other than a fill, together with
    the ops the dispatch stage marked as part of its kernel: a matmul's or
    conv taps' `kiln.epilogue` (with the views between them) and the other
    members of a `kiln.row_group`. The region covers the contiguous ops
    from the first member to the last, plus the zero fills and empty
    tensors right before it that only it uses. Ops in that span that no
    member reads and that read nothing of the dispatch (an empty tensor or
    constant for later ops) move after it. Everything else stays outside:
    constants, empty tensors used elsewhere, reshapes and slices between
    dispatches, pads. The region is isolated from above: what it reads
    from outside becomes its operands, what the rest of the function reads
    of it its results. `kind` is the root's kind; `nodes` the model nodes
    of its ops' fused locations.

    Pre-condition: linalg on tensors after the dispatch stage.
    Post-condition: every attention kernel and non-fill linalg op is in
    exactly one kiln.dispatch; the order of all ops is unchanged apart
    from the moves above.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def KilnInlineDispatchRegionsPass : Pass<"kiln-inline-dispatch-regions", "mlir::func::FuncOp"> {
  let summary = "Dissolve kiln.dispatch regions back into their function";
  let description = [{
    The first pass of each target's codegen: every `kiln.dispatch` is
    replaced by its body (region arguments by the operands, results by
    the yielded values), in place. Each kernel op of a body (an attention
    kernel, a linalg op other than a fill) keeps the region's identity as
    `kiln.dispatch = {id, kind, nodes}` (ids count the regions of the
    function in program order): the trace hooks, `--report=cost` and the
    kernel generators read the grouping from it rather than finding it
    again. Otherwise the function is what the dispatch stage left before
    kiln-form-dispatch-regions, so bufferization sees the same ops.

    Post-condition: no kiln.dispatch; ops with one `kiln.dispatch` id are
    one kernel.
  }];
}

#endif // KILN_DISPATCH_PASSES_TD
