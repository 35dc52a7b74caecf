//===- Passes.td - Graph-level (stage 2) passes on kiln ops -*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===-----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_TRANSFORMS_PASSES_TD
#define KILN_DIALECT_KILN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnAppendGreedyIdsPass : Pass<"kiln-append-greedy-ids", "mlir::ModuleOp"> {
  let summary = "Add the output greedy_ids = ArgMax of the output logits";
  let description = [{
    For decoders generating greedily (kilnc --greedy-ids): the model
    function gets one more result, `greedy_ids` ([batch, sequence], i64),
    the `kiln.argmax` of its `logits` result over the last axis (the first
    index of the largest logit), named and with the first two of the
    logits' dim names. The runtime's decoder reads it instead of copying
    the logits back and scanning them on the host. Errors: no output
    `logits`, one that is not a rank-3 float tensor, or an output already
    named `greedy_ids`.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def KilnKVCacheDtypePass : Pass<"kiln-kv-cache-dtype", "mlir::ModuleOp"> {
  let summary = "Keep a decoder's KV cache in f16 or bf16";
  let description = [{
    For decoders compiled to run in f16 or bf16 (kilnc --kv-cache-dtype):
    each rank-4 f32 input named `past_key_values.*` and output named
    `present.*` of the model function becomes f16 (`precision=fp16`) or
    bf16. An input is widened to f32 by a `kiln.cast` where it is read; a
    present computed by `kiln.concat` (past and new keys) is concatenated in
    the narrow type instead (parts that are widened narrow values used as
    they are, others rounded), and the other readers of the f32 concat read
    the narrow one widened, so the attention products see the rounded cache,
    as a model run in that type would; any other present is rounded by a
    cast. Other inputs, outputs and names are untouched. Error:
    `precision=fp32`.
  }];
  let options = [
    Option<"precision", "precision", "::kiln::Precision", "::kiln::Precision::FP16",
           "the cache's element type: fp16 or bf16", [{::llvm::cl::values(
             clEnumValN(::kiln::Precision::FP32, "fp32", "(rejected: the cache is f32 already)"),
             clEnumValN(::kiln::Precision::FP16, "fp16", "f16 cache"),
             clEnumValN(::kiln::Precision::BF16, "bf16", "bf16 cache"))}]>
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def KilnKVCacheInPlacePass : Pass<"kiln-kv-cache-in-place", "mlir::ModuleOp"> {
  let summary = "Update a decoder's KV cache in place in a fixed-length buffer";
  let description = [{
    For decoders compiled with kilnc --kv-cache-length: each output named
    `present.*` that is the `kiln.concat` of a rank-4 input named
    `past_key_values.*` and the step's new rows along axis 2 becomes a
    `kiln.kv_cache_update` of that input, retyped to `cache-length` rows:
    the new rows are written at the offset `dim(attention_mask, 1) -
    dim(input_ids, 1)`, the present output is the updated input (result
    attribute `kiln.aliases_input` = the input's index), readers of the
    concat read the update's valid rows and readers of the past's shape
    read `[b, h, offset, d]`. Run after
    kiln-kv-cache-dtype. Errors: `cache-length` < 1, a present that is not
    such a concat, a past read by anything but its shape and that concat
    (a past shared by two presents too), a model without `attention_mask`
    or `input_ids`.

    With `decode-step` (kilnc --decode-step) the model is one static decode
    step: `input_ids` and `position_ids` `[b, 1]`, `attention_mask` `[b, L]`,
    each past `[b, h, L-1, d]`. The update is a `kiln.kv_cache_write` of
    each sequence's row at its `position_ids`, readers of the concat read
    the whole updated cache (the mask hides unwritten rows) and the past's
    shape reads stay constant, so no shape depends on the cache's fill.
    Errors: no `position_ids`, or inputs not of those static shapes.
  }];
  let options = [
    Option<"cacheLength", "cache-length", "int64_t", "0",
           "rows of the fixed-length cache (the maximum tokens per sequence)">,
    Option<"decodeStep", "decode-step", "bool", "false",
           "the model is one static decode step: write rows at position_ids">
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def KilnFoldConstantsPass : Pass<"kiln-fold-constants"> {
  let summary = "Evaluate kiln ops whose operands are all constants";
  let description = [{
    Replaces every kiln op whose operands are all `kiln.constant` (dense or
    `dense_resource`) by the constant it computes: elementwise arithmetic and
    comparisons with broadcasting, cast, select, the data-movement ops
    (reshape, transpose, concat, slice, gather, squeeze, unsqueeze, flatten,
    expand, tile, split), shape/size, range, constant_of_shape and reductions.
    This removes the Shape/Gather/Concat/Reshape plumbing exporters emit and
    pre-transposes constant weights. `gemm(a, b, trans_b)` with a constant `b`
    becomes `gemm(a, transpose(b))`, which then folds, so codegen sees a plain
    matmul.

    Pre-conditions: none (ops it cannot evaluate are left alone).
    Post-conditions: no foldable op with a result of at most `max-result-bytes`
    remains. Float results above 4096 elements become `dense_resource` blobs,
    never giant `dense` attributes. A result type with dynamic dims is only
    folded when the value's type stays the same, so types never change.
  }];
  let options = [
    Option<"maxResultBytes", "max-result-bytes", "int64_t",
           /*default=*/"64 * 1024 * 1024",
           "Largest result (in bytes) the pass will compute; bigger ones stay ops">
  ];
}

def KilnFoldConvBatchNormPass : Pass<"kiln-fold-conv-batch-norm"> {
  let summary = "Fold inference batch_norm into the preceding conv's weights and bias";
  let description = [{
    `batch_norm(conv(x, W, b), s, beta, mean, var)` with constant `W`, `b`,
    `s`, `beta`, `mean`, `var` and a conv with one use becomes
    `conv(x, W * k[:, None...], (b - mean) * k + beta)` with
    `k = s / sqrt(var + eps)`. The new weight and bias are written as kiln
    ops on the constants; `kiln-fold-constants` evaluates them.

    Pre-conditions: none. Post-conditions: no `batch_norm` whose input is a
    single-use conv with constant parameters is left.
  }];
}

def KilnRecognizeLayerNormPass : Pass<"kiln-recognize-layer-norm"> {
  let summary = "Recognize decomposed layer normalization as kiln.layer_norm";
  let description = [{
    Matches the form exporters write for LayerNorm over the trailing dims:
    `d = x - mean(x)`, `v = mean(d^2)` (`pow(d, 2)` or `d * d`),
    `n = d / sqrt(v + eps)` (or `d * rsqrt(v + eps)`), then an optional
    `n * gamma` and `+ beta` whose operands cover only the normalized dims.
    Pre-conditions: the reductions are `mean` with `keepdims` over the last
    dims. Post-conditions: each match is one `kiln.layer_norm`; anything
    else (other axes, non-constant eps) is left unchanged.
  }];
}

def KilnRecognizeGeluPass : Pass<"kiln-recognize-gelu"> {
  let summary = "Recognize the erf and tanh forms of GELU as kiln.gelu";
  let description = [{
    `x * 0.5 * (1 + erf(x / sqrt(2)))` (any association and order of the
    three factors; `x * (1/sqrt(2))` also) becomes `kiln.gelu none`;
    `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))` becomes
    `kiln.gelu tanh`. Constants must match to 1e-4 relative.
    Pre-conditions: none. Post-conditions: the matched multiplications are
    replaced; their operands die if unused.
  }];
}

def KilnRecognizeAttentionPass : Pass<"kiln-recognize-attention"> {
  let summary = "Recognize scaled dot-product attention as kiln.attention";
  let description = [{
    `matmul(softmax(matmul(Q, Kt) * s [+ mask], -1), V)` with a scalar
    constant scale (`* s` or `/ s`, or none) and an optional additive mask
    becomes `kiln.attention(Q, transpose(Kt), V, mask) {scale = s}`; the
    transpose of `Kt` cancels against the one the exporter wrote.
    Pre-conditions: `Q` and `Kt` have rank >= 2. Post-conditions: each
    match is one `kiln.attention` with an explicit `scale`.
  }];
}

def KilnDecomposeAttentionPass : Pass<"kiln-decompose-attention"> {
  let summary = "Expand kiln.attention into matmul, scale, mask and softmax";
  let description = [{
    The inverse of `kiln-recognize-attention`, for targets without an
    attention kernel: `kiln.attention(Q, K, V, mask) {scale}` becomes
    `matmul(softmax(matmul(Q, transpose(K)) * scale + mask, -1), V)`. A
    boolean mask selects `-inf`; `is_causal` needs static sequence lengths.
    The target's attention kernel, as its policy describes it
    (`kiln::AttentionKernelShapes`, `kiln::hasAttentionKernel`), keeps what
    it computes: static rank-4 operands of one element type, f32
    (`keep-f32`) or f16/bf16 (`keep-half-floats`), a head dim that is a
    multiple of `head-dim-multiple` up to `max-head-dim`, no mask or an
    additive one (f32, or also f16/bf16 with `keep-half-floats`). Kept ops
    are lowered by `convert-kiln-to-linalg` to one `kiln.attention_kernel`
    (CPU: f32, multiples of 16 up to 256; CUDA with `--precision=fp16|bf16`
    on sm_80 or later: all three element types, head dims 64 and 128).
    Pre-conditions: none. Post-conditions: no `kiln.attention` remains,
    except those kept for a kernel and a causal one with dynamic
    sequence lengths (left for the lowering to report).
  }];
  let options = [
    Option<"keepF32", "keep-f32", "bool", /*default=*/"false",
           "Keep attention on f32 operands that the kernel shape admits">,
    Option<"keepHalfFloats", "keep-half-floats", "bool", /*default=*/"false",
           "Keep attention on f16/bf16 operands that the kernel shape admits">,
    Option<"headDimMultiple", "head-dim-multiple", "int64_t", /*default=*/"0",
           "Kept attention has a head dim that is a multiple of this ...">,
    Option<"maxHeadDim", "max-head-dim", "int64_t", /*default=*/"0",
           "... and at most this">,
  ];
}

def KilnSinkTransposesPass : Pass<"kiln-sink-transposes"> {
  let summary = "Move transposes below elementwise ops so that pairs cancel";
  let description = [{
    Elementwise ops commute with permutations:
    `unary(transpose(x, p)) = transpose(unary(x), p)` (casts too), and a
    broadcasting binary op whose operands are both transposed by the same
    `p`, or one transposed and the other a one-element tensor, becomes the
    op on the untransposed operands followed by one transpose. A transpose
    is moved only when the op is its sole user. Moving transposes towards
    the outputs lets `transpose(transpose(x))` folding cancel round trips.
    Pre-conditions: none. Post-conditions: the same values; no elementwise
    kiln op has a single-use transpose operand it could sink.
  }];
}

def KilnFoldMatmulScalesPass : Pass<"kiln-fold-matmul-scales"> {
  let summary = "One scalar factor per product: the rhs's moves onto the lhs";
  let description = [{
    A product is linear in each operand, and a scalar factor commutes with
    ops that only move elements (`kiln.transpose`, `reshape`, `squeeze`,
    `unsqueeze`, `flatten`, `expand`, `slice`): `matmul(move(a * s1),
    move'(b * s2)) = matmul(move(a * (s1 * s2)), move'(b))`. GPT-2 scales
    both Q and the whole KV cache by d^-1/4; afterwards Q is scaled by
    d^-1/2 and the cache is read as it is (no kernel scales it, and it can
    be the product's operand directly). Only where both factors are
    `kiln.mul` by a one-element float splat constant (either operand) of
    the mul's own type, each mul's value reaches the matmul and nothing
    else (shape queries aside), and `s1 * s2` is finite and nonzero in
    that float type. Results can differ by rounding: `(a*s1)*(b*s2)` and
    `(a*(s1*s2))*b` round differently unless the factors are powers of two
    (GPT-2's are: `0.125` for head dim 64, exact).
    Pre-conditions: none. Post-conditions: the same values up to rounding;
    no kiln.matmul has such a factor on both operands.
  }];
}

def KilnMergeSiblingMatmulsPass : Pass<"kiln-merge-sibling-matmuls"> {
  let summary = "One-row products of one lhs by constant weights as one product and slices";
  let description = [{
    `kiln.matmul`s of the same lhs, whose dims before the last are all 1
    (one row: a decode step's q, k and v projections), by constant 2-D
    weights of the lhs's element type become one `kiln.matmul` by the
    weights concatenated along N (a `kiln.concat` of constants, which
    `kiln-fold-constants` must evaluate next) and one `kiln.slice` of its
    columns per former result (contiguous: a view). One weight stream of
    one kernel instead of several short ones. Only siblings in one block
    whose weights are defined before the first of them, and only where the
    concatenated weight is at most `max-weight-bytes`.
    Pre-conditions: none. Post-conditions: the same values; no two such
    siblings within the limit remain.
  }];
  let options = [
    Option<"maxWeightBytes", "max-weight-bytes", "int64_t",
           /*default=*/"64 * 1024 * 1024",
           "Largest concatenated weight (in bytes) the pass will form">
  ];
}

def KilnRecognizeIntegerMatmulPass : Pass<"kiln-recognize-integer-matmul"> {
  let summary = "Quantized matmuls, Gemms and convs as exact integer products (an i16 kiln.matmul, i32 result)";
  let description = [{
    `quantize_linear(matmul(dequantize_linear(x), dequantize_linear(w)))`
    (onnxruntime's QDQ form; f32 scales, 8-bit integers, per-tensor x and
    y parameters, per-tensor or per-column w) becomes
    `kiln.matmul(i16(x) - i16(zx), i16(w) - i16(zw))` requantized
    as onnxruntime's QLinearMatMul does: `f32(acc) * (sx * sw / sy)`,
    rounded half to even, plus `zy`, saturated to the output type; without
    the `quantize_linear` (a float result) it is `f32(acc) * (sx * sw)`. An f64
    matmul whose operands are 8-bit integers cast to f64, minus 8-bit zero
    points (the importer's MatMulInteger and QLinearMatMul) becomes
    `f64(kiln.matmul(i16(lhs), i16(rhs)))`. A QDQ Gemm (alpha = beta = 1,
    A not transposed, an int32 bias dequantized with scale `sx * sw`) is
    the same product plus the bias in i32. A QDQ Conv of one image, 2-D,
    static shapes (optionally with that int32 bias and a Relu or Clip
    before the `quantize_linear`, which clamp the 8-bit result) is
    `(w - zw)[M, KH * KW * C] @ columns(x - zx)[KH * KW * C, OH * OW]`,
    the columns being slices of the padded input joined tap after tap
    (im2col; the input itself for a 1x1 stride-1 conv), requantized per
    output channel; a grouped one (up to 64 groups) is one such product
    per group, the requantized results joined. A QDQ depthwise Conv (group = channels, 2-D, static
    shapes, constant weights per tensor or per channel, the same bias and
    activations) is i32 sums of the 8-bit input's taps: the input padded
    with its zero point, each window (a slice: at stride 1 with OW = W
    of the flattened image, the columns that wrap into a neighbouring row
    set to zx; other stride-1 convs at the padded row pitch; at stride 2
    rows computed at every column and every other one kept) cast to i32
    times its tap's
    `w - zw`, plus the constant `b - zx * sum(w - zw)` per channel,
    requantized per channel as above: one elementwise chain on 8-bit
    inputs. All need `A [..., M,
    K]`, `B [K, N]` and a static `K` of at most 33025 (no i32 sum can wrap).
    Runs first in the graph stage, before constant folding turns the
    weights' dequantization into f32 constants, for targets whose policy
    has integer matmul kernels. Pre-conditions: none. Post-conditions: the
    same values (exact integers where the float form rounded).
  }];
}

def KilnRecognizeNBitsMatmulPass : Pass<"kiln-recognize-nbits-matmul"> {
  let summary = "Matmuls with block-quantized constant weights as one low-bit kernel op";
  let description = [{
    `matmul(a, transpose(slice?(reshape(mul(sub(cast(q), zero), scale)))))`
    with constants `q [N, blocks, block]` (ui8, one quantized value per
    element), `zero` and `scale` `[N, blocks, 1]` (f32) -- the importer's
    `MatMulNBits` with constant weights -- becomes `reshape(
    kiln.matmul_nbits_kernel(reshape(a, [M, K]), q, scale, zero))` with
    `q [N, blocks * block]` and the parameters `[N, blocks]`, `bits` 4 when
    every value of `q` is below 16, else 8. Needs an f32 `a` of static
    shape with at most `max-rows` rows (the product of its leading dims).
    Runs first in the graph stage, before constant folding turns the
    dequantization into an f32 weight, for targets whose policy has low-bit
    matmul kernels. Pre-conditions: none. Post-conditions: the same values
    (the kernel rounds `(q - zero) * scale` as `q * scale - zero * scale`).
  }];
  let options = [
    Option<"maxRows", "max-rows", "int64_t", /*default=*/"16",
           "Largest M (rows of a) given to the low-bit kernel">,
  ];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

def KilnRecognizeGemmPass : Pass<"kiln-recognize-gemm"> {
  let summary = "Recognize matmul followed by a bias add as kiln.gemm";
  let description = [{
    `add(matmul(A, B), c)` with `A` of rank 2 or more, `B` of rank 2 and a
    bias `c` that broadcasts along the rows (`[N]`, `[1, N]`, `[1, 1, N]`
    ...) becomes `kiln.gemm(A', B, c')`, where `A'` folds `A`'s leading dims
    into the rows (`[M, K]`) and the result is reshaped back; `c'` is the
    bias as `[N]`. The matmul must have no other user. Shapes must be static
    when `A` has rank above 2. Pre-conditions: none. Post-conditions: the
    bias add is the gemm's `c` operand, so later stages see a product with
    a bias epilogue.
  }];
}

#endif // KILN_DIALECT_KILN_TRANSFORMS_PASSES_TD
