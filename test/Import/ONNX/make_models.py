#!/usr/bin/env python3
# Writes the small ONNX models the importer's lit tests read (deterministic).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: make_models.py OUTDIR [NAME...]

Builds each named model (all when none are named) with the `onnx` helper API
and seeded numpy, so that no binary model is committed. Hostile models
(truncated files, cycles) are built here too; the external-data models are in
make_external_models.py.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64
MODELS = {}


def register(fn):
    MODELS[fn.__name__] = fn
    return fn


def T(name, dtype=F, shape=None):
    """A value info; dtype None leaves the type undefined (outputs)."""
    return helper.make_tensor_value_info(name, dtype or TensorProto.UNDEFINED, shape)


def N(op, inputs, outputs, name=None, domain=None, **attrs):
    return helper.make_node(op, inputs, outputs, name=name or outputs[0],
                            domain=domain, **attrs)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def make(nodes, inputs, outputs, inits=(), opset=13, ir=8, extra_opsets=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    opsets = [helper.make_opsetid("", opset)]
    opsets += [helper.make_opsetid(d, v) for d, v in extra_opsets]
    return helper.make_model(graph, opset_imports=opsets, ir_version=ir,
                             producer_name="kiln-test")


def save(out, name, model):
    path = os.path.join(out, name + ".onnx")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path


# --- Handler families --------------------------------------------------------

@register
def elementwise(out):
    x, y = T("x", F, [2, 3]), T("y", F, [3])
    ops = ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"]
    nodes = [N(op, ["x", "y"], [op.lower()]) for op in ops]
    nodes += [N("Max", ["x", "y", "x"], ["max3"]), N("Sum", ["x", "y"], ["sum2"]),
              N("Mean", ["x", "y"], ["mean2"]),
              N("Mod", ["x", "y"], ["fmod"], fmod=1)]
    unary = ["Neg", "Abs", "Exp", "Log", "Sqrt", "Reciprocal", "Tanh", "Sigmoid",
             "Relu", "Erf", "Sin", "Cos", "Floor", "Ceil", "Round", "Sign"]
    nodes += [N(op, ["x"], [op.lower()]) for op in unary]
    outs = [T(n.output[0]) for n in nodes]
    save(out, "elementwise", make(nodes, [x, y], outs))
    # Mod-28 admits floored float remainders (fmod = 0); IR 14 is the newest.
    save(out, "mod28", make([N("Mod", ["x", "y"], ["m"])], [x, y], [T("m")],
                            opset=28, ir=14))


@register
def compare(out):
    x, y = T("x", F, [4]), T("y", F, [4])
    b1, b2 = T("b1", TensorProto.BOOL, [4]), T("b2", TensorProto.BOOL, [4])
    nodes = [N(op, ["x", "y"], [op.lower()]) for op in
             ["Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"]]
    nodes += [N(op, ["b1", "b2"], [op.lower()]) for op in ["And", "Or", "Xor"]]
    nodes += [N("Not", ["b1"], ["not"]), N("Where", ["b1", "x", "y"], ["where"]),
              N("IsNaN", ["x"], ["isnan"]), N("IsInf", ["x"], ["isinf"]),
              N("IsInf", ["x"], ["isposinf"], detect_negative=0)]
    outs = [T(n.output[0], None) for n in nodes]
    save(out, "compare", make(nodes, [x, y, b1, b2], outs))


@register
def bitwise(out):
    u, v = T("u", TensorProto.UINT16, [4]), T("v", TensorProto.UINT16, [4])
    nodes = [N(op, ["u", "v"], [op.lower()]) for op in ["BitwiseAnd", "BitwiseOr", "BitwiseXor"]]
    nodes += [N("BitwiseNot", ["u"], ["bitwisenot"]),
              N("BitShift", ["u", "v"], ["left"], direction="LEFT"),
              N("BitShift", ["u", "v"], ["right"], direction="RIGHT")]
    outs = [T(n.output[0], None) for n in nodes]
    save(out, "bitwise", make(nodes, [u, v], outs, opset=18))
    f, b = T("f", F, [4]), T("b", TensorProto.BOOL, [4])
    casts = [N("BitCast", ["f"], ["f_bits"], to=TensorProto.INT32),
             N("BitCast", ["b"], ["b_byte"], to=TensorProto.UINT8),
             N("CumProd", ["f", "axis"], ["f_prod"], exclusive=1),
             N("Asin", ["f"], ["asin"]), N("Acos", ["f"], ["acos"]), N("Atan", ["f"], ["atan"]),
             N("ReduceLogSum", ["f"], ["logsum"], keepdims=0),
             N("ReduceMax", ["b"], ["any"], keepdims=0)]
    save(out, "bitcast", make(casts, [f, b], [T(n.output[0], None) for n in casts],
                              inits=[init("axis", np.array(0, dtype=np.int64))], opset=26))
    wide = [N("BitCast", ["f"], ["z"], to=TensorProto.INT16)]
    save(out, "bitcast-bad", make(wide, [f], [T("z", None)], opset=26))
    bool_sum = [N("ReduceSum", ["b"], ["z"])]
    save(out, "reduce-bool-bad", make(bool_sum, [b], [T("z", None)], opset=26))
    bad = [N("BitShift", ["u", "v"], ["z"], direction="UP")]
    save(out, "bitshift-bad", make(bad, [u, v], [T("z", None)], opset=18))
    # Import-time folding of small integer constants is bitwise (not logical).
    folded = [N(op, ["c", "m"], [op.lower() + "_c"]) for op in ["BitwiseAnd", "BitwiseOr",
                                                                  "BitwiseXor"]]
    c_init = init("c", np.array([151, 204, 0, 12], dtype=np.int32))
    m_init = init("m", np.array(15, dtype=np.int32))
    save(out, "bitwise-fold", make(folded, [], [T(n.output[0], None) for n in folded],
                                   inits=[c_init, m_init], opset=18))


@register
def activations(out):
    x = T("x", F, [1, 4])
    nodes = [N("LeakyRelu", ["x"], ["leaky"], alpha=0.2),
             N("HardSigmoid", ["x"], ["hsig"]), N("HardSwish", ["x"], ["hswish"]),
             N("Softplus", ["x"], ["softplus"]), N("Softsign", ["x"], ["softsign"]),
             N("Elu", ["x"], ["elu"]), N("Selu", ["x"], ["selu"]),
             N("PRelu", ["x", "slope"], ["prelu"]),
             N("Clip", ["x", "lo", "hi"], ["clip"]),
             N("Clip", ["x", "", "hi"], ["clip_hi"]),
             N("Clip", ["x", "x"], ["clip_computed"])]
    inits = [init("slope", np.full([4], 0.25, np.float32)),
             init("lo", np.float32(0)), init("hi", np.float32(6))]
    outs = [T(n.output[0]) for n in nodes]
    save(out, "activations", make(nodes, [x], outs, inits, opset=14))


@register
def gelu20(out):
    nodes = [N("Gelu", ["x"], ["exact"]),
             N("Gelu", ["x"], ["approx"], approximate="tanh")]
    save(out, "gelu20", make(nodes, [T("x", F, [2, 8])], [T("exact"), T("approx")],
                             opset=20))


@register
def clip7(out):
    nodes = [N("Clip", ["x"], ["y"], min=0.0, max=6.0), N("Clip", ["x"], ["z"])]
    save(out, "clip7", make(nodes, [T("x", F, [3])], [T("y"), T("z")], opset=7))


@register
def cast(out):
    nodes = [N("Cast", ["x"], ["to_i64"], to=I64),
             N("Cast", ["x"], ["to_f16"], to=TensorProto.FLOAT16),
             N("Cast", ["x"], ["to_bool"], to=TensorProto.BOOL),
             N("Cast", ["x"], ["to_u8"], to=TensorProto.UINT8),
             N("Cast", ["x"], ["same"], to=F),
             N("CastLike", ["x", "like"], ["like_out"])]
    inputs = [T("x", F, [2]), T("like", TensorProto.INT32, [1])]
    save(out, "cast", make(nodes, inputs, [T(n.output[0], None) for n in nodes],
                           opset=15))


@register
def cast8(out):
    # The 8-bit floats (ONNX types 17-20): inputs, Cast with saturate, CastLike,
    # an initializer from int32_data (bit patterns).
    nodes = [N("Cast", ["x"], ["e4m3fn"], to=17),
             N("Cast", ["x"], ["e4m3fnuz"], to=18, saturate=0),
             N("Cast", ["x"], ["e5m2"], to=19),
             N("CastLike", ["x", "like"], ["e5m2fnuz"], saturate=0),
             N("Cast", ["f8"], ["back"], to=F),
             N("Cast", ["w"], ["w32"], to=F),
             N("QuantizeLinear", ["x", "s"], ["q"], output_dtype=19, saturate=0),
             N("DequantizeLinear", ["f8", "s"], ["dq"])]
    w = TensorProto(name="w", data_type=17, dims=[2], int32_data=[0x38, 0xC0])  # 1, -2
    s = init("s", np.array([0.5], np.float32))
    inputs = [T("x", F, [2]), T("like", 20, [1]), T("f8", 17, [2])]
    save(out, "cast8", make(nodes, inputs, [T(n.output[0], None) for n in nodes],
                            opset=21, ir=9, inits=[w, s]))


@register
def narrow(out):
    # The sub-byte types and E8M0 (ONNX types 21-26): inputs and outputs, packed
    # initializers (raw_data, int32_data, an odd count, a dense_resource blob),
    # Cast with round_mode, CastLike, Quantize/DequantizeLinear.
    i4, u4, f4, e8, u2, i2 = (TensorProto.INT4, TensorProto.UINT4, TensorProto.FLOAT4E2M1,
                              TensorProto.FLOAT8E8M0, TensorProto.UINT2, TensorProto.INT2)
    nodes = [N("Cast", ["x"], ["to_i4"], to=i4),
             N("Cast", ["x"], ["to_e8"], to=e8, round_mode="up", saturate=0),
             N("CastLike", ["x", "like"], ["to_f4"]),
             N("Cast", ["a"], ["from_i4"], to=F),
             N("Cast", ["w"], ["w32"], to=F),
             N("Cast", ["wi"], ["wi32"], to=F),
             N("Identity", ["big"], ["big_out"]),
             N("QuantizeLinear", ["x", "s", "z"], ["q"]),
             N("DequantizeLinear", ["d", "s"], ["dq"])]
    # -1, 7, -8 as INT4 in raw_data: 0x7F, then 0x08 (the high nibble padding).
    w = TensorProto(name="w", data_type=i4, dims=[3], raw_data=bytes([0x7F, 0x08]))
    # 1, 2, 3, 0, 1 as UINT2 in int32_data: 0b00111001 = 0x39, then 0x01.
    wi = TensorProto(name="wi", data_type=u2, dims=[5], int32_data=[0x39, 0x01])
    big = TensorProto(name="big", data_type=i2, dims=[17], raw_data=bytes([0xE4] * 4 + [0x03]))
    z = TensorProto(name="z", data_type=i4, dims=[], int32_data=[0x0F])
    s = init("s", np.array([0.5], np.float32))
    inputs = [T("x", F, [2]), T("like", f4, [1]), T("a", i4, [2]), T("d", u4, [2])]
    outs = [T(n.output[0], None) for n in nodes]
    save(out, "narrow", make(nodes, inputs, outs, opset=25, ir=13, inits=[w, wi, big, z, s]))
    bad = [N("Cast", ["x"], ["y"], to=e8, round_mode="sideways")]
    save(out, "narrow_bad_round_mode", make(bad, inputs[:1], [T("y", None)], opset=25, ir=13))
    down = [N("Cast", ["x"], ["y"], to=e8, round_mode="down")]
    save(out, "narrow_round_down", make(down, inputs[:1], [T("y", None)], opset=25, ir=13))
    short = TensorProto(name="short", data_type=i4, dims=[5], raw_data=bytes([0x12, 0x34]))
    save(out, "narrow_short", make([N("Identity", ["short"], ["y"])], [], [T("y", None)],
                                   opset=25, ir=13, inits=[short]))


@register
def qmatmul(out):
    u8, i8 = TensorProto.UINT8, TensorProto.INT8
    nodes = [N("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"]),
             N("MatMulInteger", ["a", "b", "za"], ["c"])]
    inputs = [T("a", u8, [2, 3]), T("sa", F, []), T("za", u8, []), T("b", u8, [3, 4]),
              T("sb", F, [1]), T("zb", u8, [1]), T("sy", F, []), T("zy", i8, [])]
    save(out, "qmatmul", make(nodes, inputs, [T("y", None), T("c", None)], opset=21))
    # Blocked quantization: the scale repeated along the axis.
    blocked = [N("QuantizeLinear", ["x", "sb"], ["q"], axis=1, block_size=2, output_dtype=5)]
    save(out, "quant_blocked", make(blocked, [T("x", F, [3, 4]), T("sb", F, [3, 2])],
                                    [T("q", None)], opset=25, ir=11))
    # ConvInteger: f64 conv of the shifted integers.
    ci = [N("ConvInteger", ["cx", "cw", "cz"], ["cy"], pads=[1, 1, 1, 1])]
    save(out, "convinteger", make(ci, [T("cx", u8, [1, 1, 3, 3]), T("cw", u8, [1, 1, 2, 2]),
                                       T("cz", u8, [])], [T("cy", None)], opset=10))
    # Per-row scales are not supported.
    inputs[1] = T("sa", F, [2])
    save(out, "qmatmul_per_row", make(nodes[:1], inputs, [T("y", None)], opset=21))


@register
def nn(out):
    x = T("x", F, [1, 3, 8, 8])
    inits = [init("w", rand(4, 3, 3, 3)), init("b", rand(4, seed=1)),
             init("wt", rand(4, 2, 3, 3, seed=2)),
             init("fc", rand(10, 4, seed=3)), init("fcb", rand(10, seed=4)),
             init("s", np.ones(4, np.float32)), init("z", np.zeros(4, np.float32))]
    nodes = [N("Conv", ["x", "w", "b"], ["same"], auto_pad="SAME_UPPER",
               strides=[2, 2]),
             N("Conv", ["x", "w"], ["valid"], pads=[1, 0, 1, 0], dilations=[2, 1]),
             N("ConvTranspose", ["same", "wt"], ["up"], strides=[2, 2],
               output_shape=[8, 8]),
             N("MaxPool", ["same"], ["maxp"], kernel_shape=[2, 2], strides=[2, 2]),
             N("AveragePool", ["same"], ["avgp"], kernel_shape=[3, 3],
               pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1),
             N("GlobalAveragePool", ["same"], ["gap"]),
             N("GlobalMaxPool", ["same"], ["gmp"]),
             N("BatchNormalization", ["same", "s", "z", "z", "s"], ["bn"]),
             N("InstanceNormalization", ["same", "s", "z"], ["inorm"]),
             N("Flatten", ["gap"], ["flat"]),
             N("Gemm", ["flat", "fc", "fcb"], ["gemm"], transB=1, alpha=0.5),
             N("MatMul", ["flat", "fcT"], ["mm"]),
             N("Transpose", ["fc"], ["fcT"])]
    nodes = nodes[:-2] + [nodes[-1], nodes[-2]]
    outs = [T(n) for n in ["up", "maxp", "avgp", "gmp", "bn", "inorm", "gemm",
                           "mm", "valid"]]
    save(out, "nn", make(nodes, [x], outs, inits))


@register
def lppool(out):
    # LpPool as |x|^p, a padded average pool times the window size, ^(1/p);
    # Scatter-9 as ScatterElements without reduction.
    x = T("x", F, [1, 2, 4, 4])
    inits = [init("i", np.zeros((1, 2, 1, 4), np.int64)), init("u", rand(1, 2, 1, 4))]
    nodes = [N("LpPool", ["x"], ["p3"], kernel_shape=[2, 2], p=3, pads=[1, 1, 1, 1]),
             N("LpPool", ["x"], ["p2"], kernel_shape=[3, 1]),
             N("Scatter", ["x", "i", "u"], ["sc"], axis=2)]
    save(out, "lppool", make(nodes, [x], [T("p3"), T("p2"), T("sc")], inits, opset=10))


@register
def resize_policy(out):
    # keep_aspect_ratio_policy: one scale for the given axes, sizes rounded from it.
    x = T("x", F, [1, 1, 4, 6])
    inits = [init("sz", np.array([6, 6], np.int64))]
    nodes = [N("Resize", ["x", "", "", "sz"], ["a"], axes=[2, 3],
               keep_aspect_ratio_policy="not_larger"),
             N("Resize", ["x", "", "", "sz"], ["b"], axes=[2, 3],
               keep_aspect_ratio_policy="not_smaller")]
    save(out, "resize_policy", make(nodes, [x], [T("a"), T("b")], inits, opset=18))


@register
def dynamic_quantize(out):
    x = T("x", F, [2, 3])
    nodes = [N("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])]
    save(out, "dynamic_quantize", make(nodes, [x], [T("y"), T("s"), T("z")], opset=11))


@register
def einsum(out):
    # Ellipses become unused letters; an implicit output is the ellipsis
    # letters then the letters used once, sorted.
    a, m = T("a", F, [2, 3, 4, 4]), T("m", F, [4, 5])
    nodes = [N("Einsum", ["a"], ["d"], equation="... ii -> ...i"),
             N("Einsum", ["a", "m"], ["p"], equation="...ij,jk")]
    save(out, "einsum", make(nodes, [a, m], [T("d"), T("p")], opset=12))


@register
def mvn(out):
    x = T("x", F, [2, 3, 4])
    nodes = [N("MeanVarianceNormalization", ["x"], ["y"], axes=[1, -1])]
    save(out, "mvn", make(nodes, [x], [T("y")]))


@register
def grid_sample(out):
    img, grid = T("img", F, [1, 2, 4, 4]), T("grid", F, [1, 3, 5, 2])
    nodes = [N("GridSample", ["img", "grid"], ["a"]),
             N("GridSample", ["img", "grid"], ["b"], mode="cubic", padding_mode="reflection",
               align_corners=1)]
    save(out, "grid_sample", make(nodes, [img, grid], [T("a"), T("b")], opset=20))


@register
def norms(out):
    x = T("x", F, [2, 4, 6])
    inits = [init("g", np.ones(6, np.float32)), init("beta", np.zeros(6, np.float32))]
    nodes = [N("LayerNormalization", ["x", "g", "beta"], ["ln"], epsilon=1e-6),
             N("LayerNormalization", ["x", "g"], ["ln_nobias"]),
             N("Softmax", ["x"], ["sm"]), N("LogSoftmax", ["x"], ["lsm"], axis=1)]
    save(out, "norms", make(nodes, [x], [T(n.output[0]) for n in nodes], inits,
                            opset=17))
    # The Mean and InvStdDev outputs are computed beside kiln.layer_norm.
    stats = [N("LayerNormalization", ["x", "g"], ["y", "mean", "inv"], axis=1)]
    save(out, "norm_stats", make(stats, [x], [T("y"), T("mean"), T("inv")], inits,
                                 opset=17))
    stats[0].attribute.append(helper.make_attribute("stash_type", 10))
    save(out, "norm_stats_f16", make(stats, [x], [T("y"), T("mean"), T("inv")], inits,
                                     opset=17))
    rms = [N("RMSNormalization", ["x", "gr"], ["y"], axis=-2, epsilon=1e-3)]
    scale = [init("gr", np.linspace(0.5, 1.5, 6).astype(np.float32))]
    save(out, "rms_norm", make(rms, [x], [T("y")], scale, opset=23, ir=10))


@register
def softmax11(out):
    # Before opset 13 softmax works on the input flattened at `axis`.
    nodes = [N("Softmax", ["x"], ["flat"], axis=1), N("Softmax", ["x"], ["last"], axis=2),
             N("LogSoftmax", ["d"], ["dyn"])]
    inputs = [T("x", F, [2, 3, 4]), T("d", F, ["n", 3, 4])]
    save(out, "softmax11", make(nodes, inputs, [T("flat"), T("last"), T("dyn")],
                                opset=11))


@register
def reductions(out):
    x = T("x", F, [2, 3, 4])
    axes = init("axes", np.array([1], np.int64))
    nodes = [N("ReduceSum", ["x", "axes"], ["sum"], keepdims=0),
             N("ReduceSum", ["x"], ["sum_all"]),
             N("ReduceSum", ["x"], ["sum_noop"], noop_with_empty_axes=1),
             N("ReduceMean", ["x"], ["mean"], axes=[-1]),
             N("ReduceMax", ["x"], ["max"], axes=[0, 2], keepdims=0),
             N("ReduceMin", ["x"], ["min"], axes=[1]),
             N("ReduceProd", ["x"], ["prod"], axes=[1]),
             N("ReduceL1", ["x"], ["l1"], axes=[1]),
             N("ReduceL2", ["x"], ["l2"], axes=[1]),
             N("ReduceLogSumExp", ["x"], ["lse"], axes=[1]),
             N("ReduceSumSquare", ["x"], ["ss"], axes=[1]),
             N("ArgMax", ["x"], ["argmax"], axis=-1, keepdims=0),
             N("ArgMin", ["x"], ["argmin"], axis=1, select_last_index=1),
             N("CumSum", ["x", "one"], ["cumsum"], reverse=1),
             N("TopK", ["x", "k"], ["topv", "topi"], axis=1)]
    inits = [axes, init("one", np.array(1, np.int64)), init("k", np.array([2], np.int64))]
    outs = [T(o, None) for n in nodes for o in n.output]
    save(out, "reductions", make(nodes, [x], outs, inits, opset=13))


@register
def reductions18(out):
    x = T("x", F, [2, 3, 4])
    nodes = [N("ReduceMean", ["x", "axes"], ["mean"]),
             N("ReduceMax", ["x"], ["max_all"], keepdims=0),
             N("ReduceL2", ["x", "axes"], ["l2"], keepdims=0)]
    inits = [init("axes", np.array([-1, 0], np.int64))]
    save(out, "reductions18", make(nodes, [x], [T(n.output[0]) for n in nodes],
                                   inits, opset=18))


@register
def shapes(out):
    x = T("x", F, [2, 3, 4])
    inits = [init("shape", np.array([0, -1], np.int64)),
             init("starts", np.array([1], np.int64)), init("ends", np.array([100], np.int64)),
             init("sl_axes", np.array([-1], np.int64)), init("steps", np.array([2], np.int64)),
             init("idx", np.array([[0, 2]], np.int64)),
             init("ex", np.array([4, 1, 1, 1], np.int64)),
             init("ax0", np.array([0], np.int64)),
             init("split", np.array([1, 2], np.int64)),
             init("pads", np.array([0, 1, 0, 0, 1, 0], np.int64)),
             init("reps", np.array([1, 2, 1], np.int64)),
             init("gidx", np.zeros([2, 3, 1], np.int64)),
             init("upd", np.ones([2, 3, 1], np.float32))]
    nodes = [N("Reshape", ["x", "shape"], ["reshape"]),
             N("Transpose", ["x"], ["transpose"]),
             N("Transpose", ["x"], ["perm"], perm=[0, 2, 1]),
             N("Concat", ["x", "x"], ["concat"], axis=-2),
             N("Split", ["x", "split"], ["s0", "s1"], axis=1),
             N("Split", ["x"], ["h0", "h1"], axis=0),
             N("Slice", ["x", "starts", "ends", "sl_axes", "steps"], ["slice"]),
             N("Gather", ["x", "idx"], ["gather"], axis=1),
             N("GatherElements", ["x", "gidx"], ["gel"], axis=2),
             N("ScatterElements", ["x", "gidx", "upd"], ["sel"], axis=2,
               reduction="add"),
             N("Expand", ["x", "ex"], ["expand"]),
             N("Unsqueeze", ["x", "ax0"], ["unsq"]),
             N("Squeeze", ["unsq", "ax0"], ["sq"]),
             N("Flatten", ["x"], ["flatten"], axis=-1),
             N("Pad", ["x", "pads", "pv"], ["pad"], mode="constant"),
             N("Pad", ["x", "pads"], ["reflect"], mode="reflect"),
             N("Tile", ["x", "reps"], ["tile"]),
             N("Shape", ["x"], ["shape_all"]), N("Size", ["x"], ["size"])]
    inits.append(init("pv", np.float32(1.5)))
    outs = [T(o, None) for n in nodes for o in n.output]
    save(out, "shapes", make(nodes, [x], outs, inits, opset=13))


@register
def shapes_old(out):
    # Attribute forms: Split/Squeeze/Unsqueeze before 13, Slice before 10, Pad before 11.
    x = T("x", F, [2, 1, 6])
    nodes = [N("Split", ["x"], ["a", "b"], axis=2, split=[2, 4]),
             N("Squeeze", ["x"], ["sq"], axes=[1]),
             N("Unsqueeze", ["x"], ["unsq"], axes=[0, -1]),
             N("Slice", ["x"], ["slice"], starts=[0, 1], ends=[1, 5], axes=[0, 2]),
             N("Pad", ["x"], ["pad"], pads=[0, 0, 1, 0, 0, 1], value=2.0)]
    outs = [T(o, None) for n in nodes for o in n.output]
    save(out, "shapes_old", make(nodes, [x], outs, opset=9))


@register
def shapes18(out):
    x = T("x", F, [2, 7])
    inits = [init("pads", np.array([1, 2], np.int64)), init("pax", np.array([1], np.int64))]
    nodes = [N("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3),
             N("Pad", ["x", "pads", "", "pax"], ["pad"], mode="edge"),
             N("Shape", ["x"], ["tail"], start=-1)]
    outs = [T(o, None) for n in nodes for o in n.output]
    save(out, "shapes18", make(nodes, [x], outs, inits, opset=18))


@register
def tensors(out):
    x = T("x", F, [1, 2, 4, 4])
    inits = [init("scales", np.array([1, 1, 2, 2], np.float32)),
             init("sizes", np.array([1, 2, 3, 5], np.int64)),
             init("cshape", np.array([2, 3], np.int64)),
             init("r0", np.array(0, np.int64)), init("r1", np.array(10, np.int64)),
             init("r2", np.array(3, np.int64)),
             init("ids", np.array([1, 3], np.int64)), init("depth", np.array(5, np.int64)),
             init("onoff", np.array([0, 1], np.float32)),
             init("qs", np.float32(0.5)), init("qz", np.int8(3))]
    nodes = [N("Constant", [], ["c_tensor"], value=init("v", rand(2, 2))),
             N("Constant", [], ["c_float"], value_float=2.5),
             N("Constant", [], ["c_ints"], value_ints=[1, 2, 3]),
             N("ConstantOfShape", ["cshape"], ["cos"],
               value=init("fill", np.array([7], np.int32))),
             N("Range", ["r0", "r1", "r2"], ["range"]),
             N("Identity", ["x"], ["ident"]),
             N("Dropout", ["x"], ["drop", "mask"]),
             N("Resize", ["x", "", "scales"], ["nearest"], mode="nearest"),
             N("Resize", ["x", "", "", "sizes"], ["linear"], mode="linear",
               coordinate_transformation_mode="align_corners"),
             N("OneHot", ["ids", "depth", "onoff"], ["onehot"]),
             N("QuantizeLinear", ["x", "qs", "qz"], ["q"]),
             N("DequantizeLinear", ["q", "qs", "qz"], ["dq"]),
             N("QuantizeLinear", ["x", "qs"], ["qu8"])]
    outs = [T(o, None) for n in nodes for o in n.output]
    save(out, "tensors", make(nodes, [x], outs, inits, opset=13))


@register
def upsample9(out):
    inits = [init("scales", np.array([1, 1, 2, 2], np.float32))]
    nodes = [N("Upsample", ["x", "scales"], ["y"], mode="linear")]
    save(out, "upsample9", make(nodes, [T("x", F, [1, 1, 2, 2])], [T("y")], inits,
                                opset=9))


@register
def dtypes(out):
    # Every dtype, as raw_data (from_array) and as typed fields, small and large.
    arrays = {"f32": rand(20), "f16": rand(20).astype(np.float16),
              "f64": rand(3).astype(np.float64), "i8": np.arange(-8, 12, dtype=np.int8),
              "u8": np.arange(20, dtype=np.uint8), "i16": np.arange(3, dtype=np.int16),
              "i32": np.arange(3, dtype=np.int32), "i64": np.arange(3, dtype=np.int64),
              "bool": np.array([True, False, True])}
    inits = [init(k, v) for k, v in arrays.items()]
    inits.append(helper.make_tensor("bf16", TensorProto.BFLOAT16, [2], [1.0, -2.0]))
    inits.append(helper.make_tensor("typed_f32", F, [2], [0.5, 1.5]))
    inits.append(helper.make_tensor("typed_i64", I64, [2], [7, -7]))
    inits.append(helper.make_tensor("typed_u8", TensorProto.UINT8, [3], [1, 2, 255]))
    inits.append(helper.make_tensor("typed_bool", TensorProto.BOOL, [2], [1, 0]))
    inits.append(helper.make_tensor("typed_big", F, [17], list(range(17))))
    inits.append(helper.make_tensor("typed_f16", TensorProto.FLOAT16, [2], [1.0, 2.0]))
    names = [t.name for t in inits]
    nodes = [N("Identity", [n], ["out_" + n]) for n in names]
    save(out, "dtypes", make(nodes, [], [T("out_" + n, None) for n in names], inits))


@register
def symbolic(out):
    x = helper.make_tensor_value_info("x", F, ["batch", 3, None])
    y = helper.make_tensor_value_info("y", F, ["batch", 1, 1])
    nodes = [N("Add", ["x", "y"], ["z"])]
    save(out, "symbolic", make(nodes, [x, y], [T("z", F, ["batch", 3, "len"])]))


@register
def exporter_chain(out):
    # The TorchScript exporter's shape plumbing: Shape -> Gather -> Unsqueeze
    # -> Concat -> Reshape, with a symbolic batch.
    x = helper.make_tensor_value_info("x", F, ["batch", 4, 6])
    inits = [init("i0", np.array(0, np.int64)), init("ax", np.array([0], np.int64)),
             init("rest", np.array([-1], np.int64))]
    nodes = [N("Shape", ["x"], ["s"]), N("Gather", ["s", "i0"], ["b"], axis=0),
             N("Unsqueeze", ["b", "ax"], ["bu"]),
             N("Concat", ["bu", "rest"], ["target"], axis=0),
             N("Reshape", ["x", "target"], ["y"]),
             N("ConstantOfShape", ["s"], ["zeros"]),
             N("Expand", ["x", "s"], ["ex"])]
    save(out, "exporter_chain",
         make(nodes, [x], [T("y", F, ["batch", 24]), T("zeros"), T("ex")], inits))


@register
def static_chain(out):
    # The same plumbing on static shapes folds to constants at import.
    x = T("x", F, [2, 4, 6])
    inits = [init("i0", np.array(0, np.int64)), init("ax", np.array([0], np.int64)),
             init("rest", np.array([-1], np.int64))]
    nodes = [N("Shape", ["x"], ["s"]), N("Reshape", ["x", "rest"], ["y"])]
    save(out, "static_chain", make(nodes, [x], [T("y"), T("s")], inits))


@register
def range_axes(out):
    # Reduction axes from Range(1, Size(Shape(x)), 1), as the RMSNormalization
    # function body computes them: the integer Range folds at import.
    x = T("x", F, [2, 4, 6])
    inits = [init("one", np.array(1, np.int64))]
    nodes = [N("Shape", ["x"], ["s"]), N("Size", ["s"], ["rank"]),
             N("Range", ["one", "rank", "one"], ["axes"]),
             N("ReduceMean", ["x", "axes"], ["y"])]
    save(out, "range_axes", make(nodes, [x], [T("y")], inits, opset=18))


@register
def pad_runtime_value(out):
    # Pad's constant_value from a graph input: a mask padded with false
    # selects between the zero-padded input and the value.
    x, v = T("x", F, [2, 3]), T("v", F, [])
    inits = [init("pads", np.array([0, 1, 1, -1], np.int64))]
    nodes = [N("Pad", ["x", "pads", "v"], ["y"])]
    save(out, "pad_runtime_value", make(nodes, [x, v], [T("y")], inits, opset=18))


@register
def unsorted(out):
    # Nodes out of topological order are sorted by the reader.
    nodes = [N("Relu", ["a"], ["b"]), N("Neg", ["x"], ["a"])]
    save(out, "unsorted", make(nodes, [T("x", F, [2])], [T("b")]))


# --- Structural and reader errors --------------------------------------------

def tiny():
    return make([N("Relu", ["x"], ["y"])], [T("x", F, [2])], [T("y")])


@register
def errors(out):
    data = tiny().SerializeToString()
    for name, payload in [("empty", b""), ("truncated", data[: len(data) // 2]),
                          ("garbage", bytes(np.random.default_rng(1)
                                            .integers(0, 256, 64, dtype=np.uint8)))]:
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(payload)
    bad = tiny(); bad.ir_version = 99
    save(out, "bad_ir", bad)
    save(out, "new_opset", make([N("Relu", ["x"], ["y"])], [T("x", F, [2])], [T("y")],
                                opset=99))
    save(out, "old_opset", make([N("Relu", ["x"], ["y"])], [T("x", F, [2])], [T("y")],
                                opset=5))
    save(out, "zero_opset", make([N("Relu", ["x"], ["y"])], [T("x", F, [2])], [T("y")],
                                 opset=0))
    save(out, "not_opset1", make([N("Not", ["b"], ["y"]), N("Identity", ["y"], ["z"])],
                                 [T("b", TensorProto.BOOL, [2])], [T("z")], opset=1))
    save(out, "unknown_domain", make([N("Foo", ["x"], ["y"], domain="com.foo")],
                                     [T("x", F, [2])], [T("y")]))
    save(out, "cycle", make([N("Add", ["x", "c"], ["a"]), N("Relu", ["a"], ["b"]),
                             N("Neg", ["b"], ["c"])], [T("x", F, [2])], [T("b")]))
    save(out, "undefined", make([N("Add", ["x", "nowhere"], ["y"])],
                                [T("x", F, [2])], [T("y")]))
    save(out, "duplicate", make([N("Relu", ["x"], ["y"], name="first"),
                                 N("Neg", ["x"], ["y"], name="second")],
                                [T("x", F, [2])], [T("y")]))
    save(out, "no_shape", make([N("Relu", ["x"], ["y"])], [T("x", F, None)], [T("y")]))


@register
def bad_attrs(out):
    x = T("x", F, [1, 4, 8, 8])
    w = init("w", rand(4, 1, 3, 3))
    save(out, "bad_group", make([N("Conv", ["x", "w"], ["y"], name="Conv_3", group=0)],
                                [x], [T("y")], [w]))
    save(out, "bad_axis", make([N("Concat", ["x", "x"], ["y"], name="cat", axis=4)],
                               [x], [T("y")]))
    save(out, "bad_perm", make([N("Transpose", ["x"], ["y"], name="tr", perm=[0, 1, 1, 2])],
                               [x], [T("y")]))
    save(out, "bad_attr_type", make([N("Softmax", ["x"], ["y"], name="sm", axis=1.5)],
                                    [x], [T("y")]))
    save(out, "bad_autopad", make([N("MaxPool", ["x"], ["y"], name="mp", kernel_shape=[2, 2],
                                     auto_pad="SOMETIMES")], [x], [T("y")]))
    save(out, "bad_reshape", make([N("Reshape", ["x", "s"], ["y"], name="rs")], [x],
                                  [T("y")], [init("s", np.array([-1, -1], np.int64))]))
    save(out, "bad_mod", make([N("Mod", ["x", "x"], ["y"], name="md")], [x], [T("y")]))
    d = T("d", F, ["n", 4])
    save(out, "computed_slice", make([N("Shape", ["d"], ["s"]),
                                      N("Slice", ["d", "s", "s", "", "st"], ["y"], name="sl")],
                                     [d], [T("y")], [init("st", np.array([1, -1], np.int64))]))


@register
def trilu(out):
    x, k = T("x", F, [2, 3, 4]), T("k", I64, [])
    nodes = [N("Trilu", ["x", "k"], ["up"]), N("Trilu", ["x"], ["low"], upper=0)]
    save(out, "trilu", make(nodes, [x, k], [T("up"), T("low")], opset=14))


@register
def attention(out):
    # 3-D GQA: 4 query heads over 2 KV heads of size 2, a KV cache of 1 step.
    q, k, v = T("q", F, [1, 3, 8]), T("k", F, [1, 3, 4]), T("v", F, [1, 3, 4])
    pk, pv = T("pk", F, [1, 2, 1, 2]), T("pv", F, [1, 2, 1, 2])
    node = N("Attention", ["q", "k", "v", "", "pk", "pv"], ["y", "present_k", "", "qk"],
             q_num_heads=4, kv_num_heads=2, is_causal=1, softcap=2.0,
             qk_matmul_output_mode=3)
    save(out, "attention", make([node], [q, k, v, pk, pv],
                                [T("y"), T("present_k"), T("qk")], opset=23, ir=10))
    bad = N("Attention", ["q", "k", "v"], ["y"], name="at", q_num_heads=3, kv_num_heads=2)
    save(out, "bad_heads", make([bad], [q, k, v], [T("y")], opset=23, ir=10))


@register
def math_ops(out):
    x = T("x", F, [4])
    nodes = [N(op, ["x"], [op.lower()]) for op in
             ["Sinh", "Cosh", "Tan", "Asinh", "Acosh", "Atanh", "Mish"]]
    nodes += [N("Celu", ["x"], ["celu"], alpha=2.0),
              N("ThresholdedRelu", ["x"], ["trelu"], alpha=0.5),
              N("Shrink", ["x"], ["shrink"], lambd=1.0, bias=0.25),
              N("Swish", ["x"], ["swish"], alpha=2.0),
              N("LpNormalization", ["x"], ["lp1"], axis=0, p=1)]
    outs = [T(n.output[0]) for n in nodes]
    save(out, "math_ops", make(nodes, [x], outs, opset=24, ir=10))
    bad = [N("LpNormalization", ["x"], ["y"], name="lp", p=3)]
    save(out, "bad_lp", make(bad, [x], [T("y")]))


@register
def more_ops(out):
    x, g = T("x", F, [1, 8, 2, 2]), T("g", F, [1, 8, 2, 2])
    m = T("m", F, [2, 3])
    nodes = [N("DepthToSpace", ["x"], ["d2s"], blocksize=2, mode="CRD"),
             N("SpaceToDepth", ["x"], ["s2d"], blocksize=2),
             N("EyeLike", ["m"], ["eye"], k=1, dtype=TensorProto.INT64),
             N("Hardmax", ["m"], ["hmax"], axis=0),
             N("SwiGLU", ["x", "g"], ["glu"], alpha=1.5)]
    save(out, "more_ops", make(nodes, [x, g, m], [T(n.output[0], None) for n in nodes],
                               opset=28, ir=10))
    bad = [N("DepthToSpace", ["x"], ["y"], name="d2s", blocksize=3)]
    save(out, "bad_d2s", make(bad, [x], [T("y")]))


@register
def cumsum_axis(out):
    x, a = T("x", F, [2, 3]), T("a", TensorProto.INT32, [])
    nodes = [N("CumSum", ["x", "a"], ["y"], reverse=1)]
    save(out, "cumsum_axis", make(nodes, [x, a], [T("y")], opset=14))


@register
def losses(out):
    x, t = T("x", F, [3, 5, 2]), T("t", I64, [3, 2])
    inits = [init("w", np.linspace(0.5, 1.5, 5).astype(np.float32))]
    nodes = [N("NegativeLogLikelihoodLoss", ["x", "t", "w"], ["mean"], ignore_index=1),
             N("NegativeLogLikelihoodLoss", ["x", "t"], ["none"], reduction="none")]
    save(out, "nll", make(nodes, [x, t], [T("mean"), T("none")], inits))
    s, l = T("s", F, [3, 5]), T("l", I64, [3])
    sce = [N("SoftmaxCrossEntropyLoss", ["s", "l"], ["loss", "logp"], reduction="sum")]
    save(out, "sce", make(sce, [s, l], [T("loss"), T("logp")]))
    bad = [N("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], name="nl", reduction="avg")]
    save(out, "bad_reduction", make(bad, [x, t], [T("y")]))


@register
def unsupported(out):
    x = T("x", F, [2, 2])
    nodes = [N("ImageDecoder", ["x", "x"], ["a"], name="e1"),
             N("ImageDecoder", ["a", "x"], ["b"], name="e2"),
             N("Relu", ["b"], ["c"]),
             N("FusedGemm", ["c", "c"], ["d"], name="fg", domain="com.microsoft"),
             N("NonZero", ["d"], ["e"], name="nz")]
    save(out, "unsupported", make(nodes, [x], [T("e")],
                                  extra_opsets=[("com.microsoft", 1)]))


@register
def input_shape(out):
    x = helper.make_tensor_value_info("x", F, ["batch", 3, 4])
    save(out, "input_shape", make([N("Relu", ["x"], ["y"])], [x], [T("y")]))


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    for name in argv[2:] or MODELS:
        MODELS[name](out)


if __name__ == "__main__":
    main(sys.argv)
