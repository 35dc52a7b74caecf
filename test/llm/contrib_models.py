# onnxruntime contrib-op test models (com.microsoft), with symbolic dims.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Small models for onnxruntime's LLM contrib ops, one op variant each.

CASES maps a name to (model, sizes): the model has symbolic batch ('b'),
sequence ('s') and past ('p') dims, and each size is a dict of input arrays
(seeded random data) at which run_contrib_ops.py compares Kiln with
onnxruntime. ERRORS maps a name to a model Kiln must reject with an error.
"""

import zlib

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64
MS = "com.microsoft"


def info(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def make(node, inputs, outputs, inits=()):
    graph = helper.make_graph([node], node.op_type, inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(MS, 1)])
    model.ir_version = 8
    return model


def const(name, array):
    return numpy_helper.from_array(array, name)


def rng_for(name, index):
    return np.random.default_rng(zlib.crc32(repr((name, index)).encode()))


def uniform(rng, shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


def rope_cache(rng, positions, half):
    angles = rng.uniform(0, 6.3, (positions, half))
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


CASES = {}
ERRORS = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def error(fn):
    ERRORS[fn.__name__] = fn
    return fn


# --- Normalizations ---------------------------------------------------------

@case
def simplified_ln():
    node = helper.make_node("SimplifiedLayerNormalization", ["x", "g"], ["y", "inv"],
                            name="n", epsilon=1e-4)
    g = np.linspace(0.5, 1.5, 24, dtype=np.float32)
    model = make(node, [info("x", F, ["b", "s", 24])],
                 [info("y", F, ["b", "s", 24]), info("inv", F, None)], [const("g", g)])
    return model, [dict(x=uniform(rng_for("sln", i), (b, s, 24))) for i, (b, s) in
                   enumerate([(1, 5), (3, 2)])]


@case
def simplified_ln_axis1():
    node = helper.make_node("SimplifiedLayerNormalization", ["x", "g"], ["y"], name="n", axis=1)
    g = np.linspace(-1, 1, 30, dtype=np.float32).reshape(5, 6)
    model = make(node, [info("x", F, ["b", 5, 6])], [info("y", F, ["b", 5, 6])], [const("g", g)])
    return model, [dict(x=uniform(rng_for("sln1", b), (b, 5, 6))) for b in (1, 4)]


def skip_model(simplified, with_beta, with_bias, skip_2d=False, hidden=20, outputs=4):
    op = "SkipSimplifiedLayerNormalization" if simplified else "SkipLayerNormalization"
    names = ["x", "skip", "gamma"]
    inits = [const("gamma", np.linspace(0.5, 2, hidden, dtype=np.float32))]
    if not simplified:
        names.append("beta" if with_beta else "")
        if with_beta:
            inits.append(const("beta", np.linspace(-1, 1, hidden, dtype=np.float32)))
    if with_bias:
        names.append("bias")
        inits.append(const("bias", np.linspace(-0.3, 0.3, hidden, dtype=np.float32)))
    outs = ["y", "mean", "inv", "sum"][:outputs]
    if simplified and outputs > 1:
        outs[1] = ""
    node = helper.make_node(op, names, outs, name="n", domain=MS, epsilon=1e-5)
    skip_shape = ["s", hidden] if skip_2d else ["b", "s", hidden]
    model = make(node, [info("x", F, ["b", "s", hidden]), info("skip", F, skip_shape)],
                 [info(o, F, None) for o in outs if o], inits)
    sizes = []
    for i, (b, s) in enumerate([(1, 7), (2, 3)]):
        rng = rng_for(op, i)
        sizes.append(dict(x=uniform(rng, (b, s, hidden)),
                          skip=uniform(rng, (s, hidden) if skip_2d else (b, s, hidden))))
    return model, sizes


@case
def skip_ln():
    return skip_model(False, True, True)


@case
def skip_ln_plain():
    return skip_model(False, False, False, skip_2d=True, outputs=1)


@case
def skip_simplified_ln():
    return skip_model(True, False, True)


@case
def skip_simplified_ln_plain():
    return skip_model(True, False, False, outputs=1)


# --- RotaryEmbedding ---------------------------------------------------------

def rotary_model(rank, interleaved, rotary_dim=0, offset=False, heads=3, head=10):
    attrs = dict(interleaved=interleaved)
    if rotary_dim:
        attrs.update(rotary_embedding_dim=rotary_dim, num_heads=heads)
    half = (rotary_dim or head) // 2
    node = helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], name="r",
                            domain=MS, **attrs)
    xshape = ["b", "s", heads * head] if rank == 3 else ["b", heads, "s", head]
    pos = info("pos", I64, [1] if offset else ["b", "s"])
    cos, sin = rope_cache(np.random.default_rng(3), 32, half)
    model = make(node, [info("x", F, xshape), pos], [info("y", F, xshape)],
                 [const("cos", cos), const("sin", sin)])
    sizes = []
    for i, (b, s) in enumerate([(1, 6), (2, 3)]):
        rng = rng_for(("rot", rank, interleaved, rotary_dim, offset), i)
        shape = (b, s, heads * head) if rank == 3 else (b, heads, s, head)
        p = (np.array([4 + 7 * i], np.int64) if offset
             else rng.integers(0, 32, (b, s)).astype(np.int64))
        sizes.append(dict(x=uniform(rng, shape), pos=p))
    return model, sizes


@case
def rotary_3d():
    return rotary_model(3, 0)


@case
def rotary_3d_interleaved():
    return rotary_model(3, 1)


@case
def rotary_3d_partial():
    return rotary_model(3, 0, rotary_dim=6)


@case
def rotary_4d_interleaved_partial():
    return rotary_model(4, 1, rotary_dim=4)


@case
def rotary_4d_offset():
    return rotary_model(4, 0, offset=True)


# --- GroupQueryAttention -----------------------------------------------------

def gqa_model(heads=6, kv=2, head=16, past=True, packed=False, rotary=False,
              interleaved=0, sizes=((1, 5, 0), (3, 1, 4)), **attrs):
    """sizes: (batch, sequence, past) triples; past 0 is a first prompt. A
    fourth entry gives seqlens_k per batch entry (total length - 1; by
    default past + sequence - 1 for all), a fifth total_sequence_length (by
    default past + sequence)."""
    names = ["q", "" if packed else "k", "" if packed else "v",
             "pk" if past else "", "pv" if past else "", "seqlens_k", "total"]
    if rotary:
        names += ["cos", "sin"]
        attrs.update(do_rotary=1, rotary_interleaved=interleaved)
    node = helper.make_node("GroupQueryAttention", names, ["y", "present_k", "present_v"],
                            name="gqa", domain=MS, num_heads=heads, kv_num_heads=kv, **attrs)
    width = (heads + 2 * kv) * head if packed else heads * head
    inputs = [info("q", F, ["b", "s", width])]
    if not packed:
        inputs += [info("k", F, ["b", "s", kv * head]), info("v", F, ["b", "s", kv * head])]
    if past:
        inputs += [info("pk", F, ["b", kv, "p", head]), info("pv", F, ["b", kv, "p", head])]
    inputs += [info("seqlens_k", I32, ["b"]), info("total", I32, [])]
    inits = []
    if rotary:
        cos, sin = rope_cache(np.random.default_rng(4), 64, head // 2)
        inits = [const("cos", cos), const("sin", sin)]
    model = make(node, inputs, [info("y", F, ["b", "s", heads * head]),
                                info("present_k", F, None), info("present_v", F, None)], inits)
    runs = []
    for i, (b, s, p, *lengths) in enumerate(sizes):
        rng = rng_for(("gqa", heads, kv, packed, rotary, str(attrs)), i)
        feed = dict(q=uniform(rng, (b, s, width)))
        if not packed:
            feed.update(k=uniform(rng, (b, s, kv * head)), v=uniform(rng, (b, s, kv * head)))
        if past:
            feed.update(pk=uniform(rng, (b, kv, p, head)), pv=uniform(rng, (b, kv, p, head)))
        seqlens = lengths[0] if lengths else [p + s - 1] * b
        total = lengths[1] if len(lengths) > 1 else p + s
        feed.update(seqlens_k=np.array(seqlens, np.int32), total=np.array(total, np.int32))
        runs.append(feed)
    return model, runs


@case
def gqa_prefill():
    return gqa_model(past=False, sizes=((1, 5, 0), (2, 9, 0)))


@case
def gqa_decode():
    return gqa_model(sizes=((1, 1, 6), (3, 1, 11)))


@case
def gqa_prefill_with_past():
    return gqa_model(sizes=((1, 4, 3), (1, 1, 9)))


@case
def gqa_first_prompt_empty_past():
    return gqa_model(sizes=((2, 6, 0), (1, 3, 0)))


@case
def gqa_packed():
    return gqa_model(heads=4, kv=1, packed=True, sizes=((1, 5, 2), (2, 1, 5)))


@case
def gqa_rotary():
    return gqa_model(rotary=True, sizes=((1, 5, 3), (2, 1, 7)))


@case
def gqa_rotary_interleaved_prefill():
    return gqa_model(heads=4, kv=4, rotary=True, interleaved=1, past=False,
                     sizes=((1, 7, 0), (2, 4, 0)))


@case
def gqa_window_softcap_scale():
    return gqa_model(local_window_size=3, softcap=2.0, scale=0.3, sizes=((1, 6, 4), (2, 1, 8)))


# Batch entries of different lengths (seqlens_k below past + sequence - 1):
# onnxruntime writes entry b's new keys at its own past length seqlens_k + 1 - S
# (zeros after them in the present) and lets its queries see only those keys.
@case
def gqa_ragged_decode():
    return gqa_model(sizes=((3, 1, 6, [3, 6, 0]), (2, 1, 9, [9, 4])))


@case
def gqa_ragged_decode_rotary_window():
    return gqa_model(rotary=True, local_window_size=3,
                     sizes=((3, 1, 7, [7, 2, 5]), (1, 1, 5, [3], 6)))


@case
def gqa_ragged_packed_decode():
    return gqa_model(heads=4, kv=1, packed=True, sizes=((2, 1, 5, [1, 5]),))


@case
def gqa_noncausal_ragged():
    return gqa_model(causal=0, sizes=((2, 1, 4, [2, 4], 5), (1, 3, 2)))


# A right-padded first prompt: entry b's rows past seqlens_k[b] are padding,
# which onnxruntime leaves unspecified (VALID_ROWS: only the valid rows of y
# are compared); the present holds all S new keys, as for an unpadded prompt.
@case
def gqa_first_prompt_right_padded():
    return gqa_model(past=False, rotary=True, sizes=((2, 5, 0, [4, 2]), (3, 4, 0, [0, 3, 1])))


# A past buffer of the maximum length (total_sequence_length below past +
# S): onnxruntime's present keeps max(total, past) positions, Kiln's past + S,
# the extra ones zero (LONGER_PRESENTS: compared on onnxruntime's positions,
# the rest must be zero); the attention output is the same.
@case
def gqa_max_length_past():
    return gqa_model(rotary=True, sizes=((2, 1, 8, [3, 5], 6), (3, 1, 7, [0, 6, 2], 7)))


LONGER_PRESENTS = {"gqa_max_length_past"}


# case name -> {output: per run, per batch entry the number of leading rows
# along dim 1 to compare}
VALID_ROWS = {"gqa_first_prompt_right_padded": {"y": [[5, 3], [1, 4, 2]]}}


# --- MultiHeadAttention ------------------------------------------------------

def mha_model(heads=3, head=8, past=False, bias=False, padding=False, attn_bias=False,
              sizes=((1, 5, 0), (2, 3, 0)), **attrs):
    names = ["q", "k", "v", "bias" if bias else "", "mask" if padding else "",
             "ab" if attn_bias else "", "pk" if past else "", "pv" if past else ""]
    outs = ["y", "present_k", "present_v"] if past else ["y"]
    node = helper.make_node("MultiHeadAttention", names, outs, name="mha", domain=MS,
                            num_heads=heads, **attrs)
    hidden = heads * head
    inputs = [info("q", F, ["b", "s", hidden]), info("k", F, ["b", "s", hidden]),
              info("v", F, ["b", "s", hidden])]
    if padding:
        inputs.append(info("mask", I32, ["b", "t"]))
    if attn_bias:
        inputs.append(info("ab", F, [1, heads, "s", "t"]))
    if past:
        inputs += [info("pk", F, ["b", heads, "p", head]), info("pv", F, ["b", heads, "p", head])]
    inits = [const("bias", np.linspace(-0.5, 0.5, 3 * hidden, dtype=np.float32))] if bias else []
    model = make(node, inputs, [info(o, F, None) for o in outs], inits)
    runs = []
    for i, (b, s, p, *lengths) in enumerate(sizes):
        rng = rng_for(("mha", past, bias, padding, attn_bias, str(attrs)), i)
        feed = {n: uniform(rng, (b, s, hidden)) for n in "qkv"}
        t = p + s
        if padding:
            mask = np.ones((b, t), np.int32)
            mask[:, rng.integers(0, t, 2)] = 0
            mask[:, -1] = 1
            feed["mask"] = mask
        if attn_bias:
            feed["ab"] = uniform(rng, (1, heads, s, t))
        if past:
            feed.update(pk=uniform(rng, (b, heads, p, head)), pv=uniform(rng, (b, heads, p, head)))
        runs.append(feed)
    return model, runs


@case
def mha_plain():
    return mha_model()


@case
def mha_bias_padding_scale():
    return mha_model(bias=True, padding=True, scale=0.2)


@case
def mha_causal_past():
    return mha_model(past=True, unidirectional=1, sizes=((1, 4, 3), (2, 1, 6)))


@case
def mha_attention_bias_past():
    return mha_model(past=True, attn_bias=True, sizes=((2, 3, 2), (1, 1, 5)))


# --- Models Kiln rejects -----------------------------------------------------

def gqa_error(**kw):
    model, _ = gqa_model(**kw)
    return model


@error
def gqa_smooth_softmax():
    return gqa_error(smooth_softmax=1)


@error
def gqa_quantized_cache():
    return gqa_error(k_quant_type="PER_TENSOR")


@error
def gqa_heads():
    return gqa_error(heads=5, kv=2)


@error
def gqa_rotary_no_cache():
    return gqa_error(do_rotary=1)


@error
def gqa_attention_bias():
    model = gqa_error()
    node = model.graph.node[0]
    node.input.extend(["", "", "", "q"])
    return model


def with_input_shape(model, name, dims):
    """`model` with graph input `name` redeclared as int32 of `dims`."""
    for i, value in enumerate(model.graph.input):
        if value.name == name:
            model.graph.input[i].CopyFrom(info(name, I32, dims))
    return model


@error
def gqa_seqlens_rank():
    return with_input_shape(gqa_error(), "seqlens_k", ["b", 1])


@error
def gqa_total_two_elements():
    return with_input_shape(gqa_error(), "total", [2])


@error
def rotary_packed_batching():
    model, _ = rotary_model(3, 0)
    model.graph.node[0].attribute.append(helper.make_attribute("is_packed_batching", 1))
    return model


@error
def rotary_dim_without_heads():
    model, _ = rotary_model(3, 0)
    model.graph.node[0].attribute.append(helper.make_attribute("rotary_embedding_dim", 4))
    return model


@error
def mha_packed_qkv():
    node = helper.make_node("MultiHeadAttention", ["q"], ["y"], name="mha", domain=MS,
                            num_heads=2)
    return make(node, [info("q", F, ["b", "s", 2, 3, 8])], [info("y", F, None)])


@error
def mha_cache_indirection():
    model, _ = mha_model(past=True)
    model.graph.node[0].input.extend(["", "q"])
    return model


@error
def skip_ln_gamma():
    model, _ = skip_model(False, True, True)
    model.graph.initializer[0].CopyFrom(const("gamma", np.ones(7, np.float32)))
    return model


@error
def skip_simplified_mean():
    model, _ = skip_model(True, False, True)
    node = model.graph.node[0]
    node.output[1] = "mean"
    model.graph.output.append(info("mean", F, None))
    return model


@case
def gqa_window():
    return gqa_model(local_window_size=3, sizes=((1, 6, 4), (2, 1, 8)))


@case
def gqa_softcap():
    return gqa_model(softcap=2.0, sizes=((1, 6, 4), (2, 1, 8)))


@case
def gqa_scale():
    return gqa_model(scale=0.3, sizes=((1, 6, 4), (2, 1, 8)))


# --- MatMulNBits -------------------------------------------------------------

def nbits_model(bits, block, k, n, zero="none", bias=False, rank=3):
    rng = np.random.default_rng(bits * 1000 + block + k)
    blocks = (k + block - 1) // block
    packed = rng.integers(0, 256, (n, blocks, block * bits // 8)).astype(np.uint8)
    scales = rng.uniform(0.01, 0.1, (n, blocks)).astype(np.float32)
    names = ["a", "B", "scales"]
    inits = [const("B", packed), const("scales", scales)]
    if zero == "packed":
        zp = rng.integers(0, 256, (n, (blocks * bits + 7) // 8)).astype(np.uint8)
        names.append("zp")
        inits.append(const("zp", zp))
    elif zero == "float":
        names.append("zp")
        inits.append(const("zp", rng.uniform(0, 2**bits - 1, (n, blocks)).astype(np.float32)))
    if bias:
        names = names[:3] + [names[3] if zero != "none" else "", "", "bias"]
        inits.append(const("bias", rng.uniform(-1, 1, n).astype(np.float32)))
    node = helper.make_node("MatMulNBits", names, ["y"], name="mm", domain=MS, K=k, N=n,
                            bits=bits, block_size=block)
    shape = ["b", "s", k] if rank == 3 else ["t", k]
    model = make(node, [info("a", F, shape)], [info("y", F, None)], inits)
    sizes = [(1, 3), (2, 5)] if rank == 3 else [(4,), (1,)]
    runs = [dict(a=uniform(rng_for(("mnb", bits, block, k, zero), i), (*dims, k)))
            for i, dims in enumerate(sizes)]
    return model, runs


@case
def matmul_nbits4():
    return nbits_model(4, 16, 40, 12, bias=True)


@case
def matmul_nbits4_packed_zero():
    return nbits_model(4, 32, 64, 10, zero="packed")


@case
def matmul_nbits8_packed_zero_2d():
    return nbits_model(8, 16, 48, 7, zero="packed", bias=True, rank=2)


@case
def matmul_nbits2_packed_zero():
    return nbits_model(2, 16, 37, 9, zero="packed")


@case
def matmul_nbits4_float_zero():
    return nbits_model(4, 16, 32, 6, zero="float")


@error
def matmul_nbits_bits():
    model, _ = nbits_model(4, 16, 32, 6)
    for a in model.graph.node[0].attribute:
        if a.name == "bits":
            a.i = 3
    return model


@error
def matmul_nbits_prepacked():
    model, _ = nbits_model(4, 16, 32, 6)
    model.graph.node[0].attribute.append(helper.make_attribute("weight_prepacked", 1))
    return model


@error
def matmul_nbits_shape():
    model, _ = nbits_model(4, 16, 32, 6)
    for a in model.graph.node[0].attribute:
        if a.name == "K":
            a.i = 64
    return model


# --- Fused ops of onnxruntime's graph optimizer ------------------------------

@case
def fused_matmul_trans_alpha():
    node = helper.make_node("FusedMatMul", ["a", "w"], ["y"], name="fm", domain=MS,
                            alpha=0.25, transA=1, transB=1)
    w = np.linspace(-1, 1, 7 * 5, dtype=np.float32).reshape(7, 5)
    model = make(node, [info("a", F, ["b", 5, "s"])], [info("y", F, None)], [const("w", w)])
    return model, [dict(a=uniform(rng_for("fm", i), (b, 5, s))) for i, (b, s) in
                   enumerate([(1, 3), (2, 6)])]


def activation_model(op, bias=False, **attrs):
    names = ["x", "bias"] if bias else ["x"]
    node = helper.make_node(op, names, ["y"], name="act", domain=MS, **attrs)
    inits = [const("bias", np.linspace(-1, 1, 9, dtype=np.float32))] if bias else []
    model = make(node, [info("x", F, ["b", "s", 9])], [info("y", F, None)], inits)
    return model, [dict(x=3 * uniform(rng_for(op, i), (b, s, 9))) for i, (b, s) in
                   enumerate([(1, 4), (3, 2)])]


@case
def fast_gelu_bias():
    return activation_model("FastGelu", bias=True)


@case
def bias_gelu():
    return activation_model("BiasGelu", bias=True)


@case
def gelu_ms():
    return activation_model("Gelu")


@case
def quick_gelu():
    return activation_model("QuickGelu", alpha=1.5)


@error
def fused_matmul_batch_transpose():
    model, _ = fused_matmul_trans_alpha()
    model.graph.node[0].attribute.append(helper.make_attribute("transBatchA", 1))
    return model
