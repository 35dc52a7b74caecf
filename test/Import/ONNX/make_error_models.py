#!/usr/bin/env python3
# Writes the ONNX models the importer's error tests read: one defect each.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: make_error_models.py OUTDIR [GROUP...]

Each group writes several tiny models (all groups when none are named), each
with exactly one defect, named as the error-*.test files refer to them. The
helpers come from make_models.py; where onnx.helper cannot express a defect
(a model without a graph, a nameless initializer, a NUL byte in a path), the
protobuf messages are edited directly.

Diagnostics in lib/Import/ONNX that no model reaches, so have no test:
- ONNXImporter "unsupported: <why>" for a node without a handler: the op
  survey reports every such node before any is imported.
- ONNXImporter "graph output '...' was not produced", NodeBinder "input i
  '...' has no imported value": the reader checks that every value is
  defined, and a node that leaves a used output unset is reported first.
- NodeBinder "output i '...' is not produced by this importer": handlers
  only pass values that were built.
- NodeBinder "attribute '...' is required" from stringAttr, floatAttr and
  tensorAttr: every caller gives a default or checks hasAttr first.
- ONNXImporter "input shape for '...' dim i is -N": kilnc rejects a
  negative --input-shape dim itself (the check guards the library API).
- ShapeHandlers "internal: bad shape type": the shape is i64 by construction.
- ShapeHandlers "input element count overflows int64" (Reshape): every graph
  input, initializer and node output whose static byte size overflows int64
  is refused first (ONNXImporter's tensor limits).
- TensorLoader "cannot be resolved" (the model directory was just read) and
  the second "cannot be opened" (a regular file inside the directory that
  cannot be read: needs a permission denial, which root does not get).
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_external_models import external_model  # noqa: E402
from make_models import F, I64, T, N, init, make, rand, save  # noqa: E402

MODELS = {}


def register(fn):
    MODELS[fn.__name__] = fn
    return fn


def one(out, name, node, inputs, inits=(), opset=13):
    """A one-node model whose graph outputs are the node's named outputs."""
    outs = [T(o, None) for o in node.output if o]
    save(out, name, make([node], inputs, outs, list(inits), opset=opset))


def unnamed(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, **attrs)


def tiny(opset=13):
    return make([N("Relu", ["x"], ["y"])], [T("x", F, [2])], [T("y")], opset=opset)


# --- Reader: the model's structure -------------------------------------------

@register
def reader(out):
    m = onnx.ModelProto(ir_version=8, producer_name="kiln-test")
    m.opset_import.add(domain="", version=13)
    save(out, "no_graph", m)
    m = tiny()
    del m.opset_import[:]
    m.opset_import.add(domain="com.foo", version=1)
    save(out, "no_ai_onnx", m)
    m = tiny()
    m.opset_import.add(domain="ai.onnx", version=13)
    save(out, "opset_twice", m)
    x = T("x", F, [2])
    save(out, "no_outputs", make([N("Relu", ["x"], ["y"])], [x], []))
    save(out, "undefined_output", make([N("Relu", ["x"], ["y"])], [x], [T("z")]))
    # Ten nodes on one cycle: the message lists eight; node 3 is unnamed.
    nodes = [N("Neg", ["c9" if i == 0 else "c%d" % (i - 1)], ["c%d" % i])
             for i in range(10)]
    nodes[3] = unnamed("Neg", ["c2"], ["c3"])
    save(out, "long_cycle", make(nodes, [x], [T("c9")]))


@register
def huge(out):
    # A sparse file one byte past INT_MAX: no disk space, never read.
    with open(os.path.join(out, "huge.onnx"), "wb") as f:
        f.truncate(2**31)


# --- Names and definitions ---------------------------------------------------

@register
def names(out):
    x, w = T("x", F, [2]), init("w", np.ones(2, np.float32))
    add = [N("Add", ["x", "w"], ["y"])]
    save(out, "init_no_name", make(add, [x], [T("y")], [w, init("", np.ones(2))]))
    save(out, "input_no_name", make(add, [x, T("", F, [2])], [T("y")], [w]))
    save(out, "init_twice", make(add, [x], [T("y")], [w, init("w", np.zeros(2))]))
    save(out, "input_twice", make(add, [x, x], [T("y")], [w]))
    save(out, "init_and_node", make([N("Relu", ["x"], ["w"], name="r")], [x],
                                    [T("w")], [w]))
    save(out, "input_and_node", make([N("Relu", ["x"], ["z"], name="r")],
                                     [x, T("z", F, [2])], [T("z")]))
    save(out, "unnamed_twice", make([unnamed("Relu", ["x"], ["y"]),
                                     unnamed("Neg", ["x"], ["y"])], [x], [T("y")]))


# --- Signature and op support ------------------------------------------------

@register
def signature(out):
    identity = N("Identity", ["s"], ["y"])
    seq = helper.make_tensor_sequence_value_info("s", F, [2])
    save(out, "sequence_input", make([identity], [seq], [T("y")]))
    save(out, "string_input", make([identity], [T("s", TensorProto.STRING, [2])],
                                   [T("y")]))
    save(out, "input_too_large", make([identity], [T("s", F, [2**32, 2**32, 4])],
                                      [T("y")]))
    save(out, "negative_dim_input", make([identity], [T("s", F, [2, -3])], [T("y")]))
    save(out, "unproduced_output", make([N("Relu", ["x"], ["y", "z"], name="r")],
                                        [T("x", F, [2])], [T("z")]))
    save(out, "too_old", make([N("Gelu", ["x"], ["y"], name="g")],
                              [T("x", F, [2])], [T("y")]))
    # An op ai.onnx does not have, on eight unnamed nodes: six are listed.
    nodes = [unnamed("Frobnicate", ["x" if i == 0 else "f%d" % (i - 1)],
                     ["f%d" % i]) for i in range(8)]
    save(out, "eight_unknown", make(nodes, [T("x", F, [2])], [T("f7")]))


# --- Tensors: initializers, tensor attributes, external data ------------------

def add_model(w, dims=(4,)):
    return make([N("Add", ["x", "w"], ["y"])], [T("x", F, list(dims))], [T("y")], [w])


@register
def tensors(out):
    save(out, "init_string", add_model(
        helper.make_tensor("w", TensorProto.STRING, [4], [b"a", b"b", b"c", b"d"])))
    save(out, "init_negative_dim", add_model(TensorProto(name="w", data_type=F,
                                                         dims=[-1])))
    save(out, "init_byte_overflow", add_model(TensorProto(name="w", data_type=I64,
                                                          dims=[2**60])))
    w = helper.make_tensor("w", F, [4], [1, 2, 3, 4])
    del w.float_data[-1]
    save(out, "init_typed_count", add_model(w))
    v = init("v", np.ones(2, np.float32))
    v.raw_data = v.raw_data[:4]
    save(out, "attr_raw_size", make([N("Constant", [], ["c"], value=v)], [], [T("c")]))

    root = os.path.join(out, "ext_err")
    cases = {
        "empty_location": ("", None, None),
        "nul_location": ("weights.bin\0.txt", None, None),
        "dir_location": ("sub", None, None),
        "backslash_absolute": ("\\secret.bin", None, None),
        "backslash_dotdot": ("sub\\..\\..\\secret.bin", None, None),
        "no_location": (None, 0, 16),
        "bad_offset": ("weights.bin", "-4", None),
        "bad_length": ("weights.bin", None, str(2**64)),
    }
    for case, (location, offset, length) in cases.items():
        directory = os.path.join(root, case)
        os.makedirs(os.path.join(directory, "sub"), exist_ok=True)
        with open(os.path.join(directory, "weights.bin"), "wb") as f:
            f.write(np.arange(4, dtype=np.float32).tobytes())
        save(directory, "model", external_model(location, offset, length))


# --- Attributes read by the binder (every handler) ---------------------------

@register
def binder(out):
    x = T("x", F, [1, 2, 4, 4])
    one(out, "required_int", N("Cast", ["x"], ["y"], name="c"), [x])
    one(out, "required_ints", N("MaxPool", ["x"], ["y"], name="mp"), [x])
    one(out, "required_floats", N("Upsample", ["x"], ["y"], name="up"), [x], opset=7)
    one(out, "wrong_float", N("LeakyRelu", ["x"], ["y"], name="lr", alpha=1), [x])
    one(out, "wrong_string", N("Gelu", ["x"], ["y"], name="g", approximate=1), [x],
        opset=20)
    one(out, "wrong_ints", N("Transpose", ["x"], ["y"], name="t", perm=1), [x])
    one(out, "wrong_floats", N("Upsample", ["x"], ["y"], name="up", scales=[1, 2]),
        [x], opset=7)
    # value_float renamed to value: a FLOAT attribute where a TENSOR belongs.
    constant = N("Constant", [], ["y"], name="c", value_float=1.0)
    constant.attribute[0].name = "value"
    one(out, "wrong_tensor", constant, [])
    one(out, "input_required", N("Add", ["x"], ["y"], name="a"), [x])
    one(out, "computed_floats", N("Resize", ["x", "", "s"], ["y"], name="rs"),
        [x, T("s", F, [4])])


# --- Per-op attributes -------------------------------------------------------

@register
def attributes(out):
    x, v = T("x", F, [1, 2, 4, 4]), T("v", F, [4])
    w = init("w", rand(2, 2, 3, 3))
    i32 = T("i", TensorProto.INT32, [4])
    # Elementwise
    one(out, "mod_fmod_range", N("Mod", ["v", "v"], ["y"], name="m", fmod=2), [v])
    one(out, "mod_fmod_float", N("Mod", ["v", "v"], ["y"], name="m"), [v])
    one(out, "gelu_approximate", N("Gelu", ["v"], ["y"], name="g", approximate="fast"),
        [v], opset=20)
    one(out, "clip_min_max", N("Clip", ["v"], ["y"], name="cl", min=6.0, max=0.0), [v],
        opset=7)
    one(out, "cast_string", N("Cast", ["v"], ["y"], name="c", to=TensorProto.STRING),
        [v])
    one(out, "isinf_int", N("IsInf", ["i"], ["y"], name="inf"), [i32])
    one(out, "cast_saturate", N("Cast", ["v"], ["y"], name="c", to=17, saturate=2), [v],
        opset=21)
    one(out, "cast_e8m0", N("Cast", ["v"], ["y"], name="c", to=24, round_mode="nearest"), [v],
        opset=24)
    one(out, "quantize_saturate",
        N("QuantizeLinear", ["v", "s"], ["y"], name="q", saturate=-1, output_dtype=17),
        [v], [init("s", np.ones(1, np.float32))], opset=21)
    # Contractions, windows, normalizations
    one(out, "gemm_trans_a", N("Gemm", ["a", "a"], ["y"], name="gm", transA=2),
        [T("a", F, [2, 2])])
    one(out, "gemm_trans_b", N("Gemm", ["a", "a"], ["y"], name="gm", transB=-1),
        [T("a", F, [2, 2])])
    conv = lambda name, **a: N("Conv", ["x", "w"], ["y"], name=name, **a)  # noqa: E731
    one(out, "conv_rank", N("Conv", ["a", "w"], ["y"], name="cv"),
        [T("a", F, [2, 2])], [w])
    one(out, "conv_kernel_length", conv("cv", kernel_shape=[3]), [x], [w])
    one(out, "conv_strides_length", conv("cv", strides=[1, 1, 1]), [x], [w])
    one(out, "conv_dilations_length", conv("cv", dilations=[1]), [x], [w])
    one(out, "conv_pads_length", conv("cv", pads=[1, 1]), [x], [w])
    one(out, "conv_kernel_zero", conv("cv", kernel_shape=[0, 3]), [x], [w])
    one(out, "conv_stride_zero", conv("cv", strides=[1, 0]), [x], [w])
    one(out, "conv_dilation_zero", conv("cv", dilations=[0, 1]), [x], [w])
    one(out, "conv_pad_negative", conv("cv", pads=[0, -1, 0, 0]), [x], [w])
    one(out, "conv_kernel_weight", conv("cv", kernel_shape=[2, 2]), [x], [w])
    one(out, "conv_same_dynamic", conv("cv", auto_pad="SAME_UPPER"),
        [T("x", F, [1, 2, "h", 4])], [w])
    convt = lambda name, **a: N("ConvTranspose", ["x", "w"], ["y"], name=name, **a)  # noqa: E731
    one(out, "convt_group", convt("ct", group=0), [x], [w])
    one(out, "convt_kernel_weight", convt("ct", kernel_shape=[1, 1]), [x], [w])
    one(out, "convt_output_padding", convt("ct", output_padding=[1]), [x], [w])
    one(out, "convt_output_shape", convt("ct", output_shape=[8]), [x], [w])
    one(out, "convt_dynamic", convt("ct", output_shape=[8, 8]),
        [T("x", F, [1, 2, "h", 4])], [w])
    one(out, "convt_negative_pad", convt("ct", output_shape=[100, 6]), [x], [w])
    one(out, "maxpool_indices", N("MaxPool", ["x"], ["y", "idx"], name="mp",
                                  kernel_shape=[2, 2], ceil_mode=1), [x])
    pool = lambda name, **a: N("AveragePool", ["x"], ["y"], name=name,  # noqa: E731
                               kernel_shape=[2, 2], **a)
    one(out, "pool_ceil_mode", pool("ap", ceil_mode=2), [x])
    one(out, "pool_count_include_pad", pool("ap", count_include_pad=-1), [x])
    one(out, "lppool_ceil_mode", N("LpPool", ["x"], ["y"], name="lp", kernel_shape=[2, 2],
                                   ceil_mode=1), [x], opset=18)
    one(out, "lppool_p", N("LpPool", ["x"], ["y"], name="lp", kernel_shape=[2, 2], p=0), [x])
    s = [init("s", np.ones(2, np.float32)), init("z", np.zeros(2, np.float32))]
    bn = ["x", "s", "z", "z", "s"]
    one(out, "bn_statistics", N("BatchNormalization", bn, ["y", "mean"], name="bn"),
        [x], s, opset=9)
    # training_mode is an attribute from opset 14 on, where it is supported.
    one(out, "bn_training", N("BatchNormalization", bn, ["y"], name="bn",
                              training_mode=1), [x], s, opset=9)
    one(out, "bn_spatial", N("BatchNormalization", bn, ["y"], name="bn", spatial=0),
        [x], s, opset=7)
    # Reductions
    one(out, "reduce_keepdims", N("ReduceSum", ["x"], ["y"], name="r", keepdims=2), [x])
    one(out, "reduce_noop", N("ReduceSum", ["x"], ["y"], name="r",
                              noop_with_empty_axes=2), [x])
    one(out, "argmax_keepdims", N("ArgMax", ["x"], ["y"], name="am", keepdims=-1), [x])
    one(out, "argmax_last", N("ArgMax", ["x"], ["y"], name="am", select_last_index=2),
        [x])
    axis = [init("axis", np.array(1, np.int64))]
    one(out, "cumsum_exclusive", N("CumSum", ["x", "axis"], ["y"], name="cs",
                                   exclusive=2), [x], axis)
    one(out, "cumsum_reverse", N("CumSum", ["x", "axis"], ["y"], name="cs",
                                 reverse=2), [x], axis)
    k = [init("k", np.array([2], np.int64))]
    one(out, "topk_largest", N("TopK", ["x", "k"], ["y", "i"], name="tk", largest=2),
        [x], k)
    one(out, "topk_sorted", N("TopK", ["x", "k"], ["y", "i"], name="tk", sorted=2),
        [x], k)


@register
def shape_attributes(out):
    x = T("x", F, [2, 3, 4])
    shape = lambda *v: [init("shape", np.array(v, np.int64))]  # noqa: E731
    reshape = N("Reshape", ["x", "shape"], ["y"], name="rs")
    one(out, "reshape_copy_rank", reshape, [x], shape(0, 0, 0, 0))
    one(out, "reshape_negative", reshape, [x], shape(-2, 12))
    one(out, "reshape_indivisible", reshape, [x], shape(5, -1))
    one(out, "tile_too_large", N("Tile", ["x", "shape"], ["y"], name="tl"), [x],
        shape(2**40, 2**40, 2**40))
    one(out, "reshape_zero_and_infer", N("Reshape", ["x", "shape"], ["y"], name="rs",
                                         allowzero=1), [x], shape(0, -1), opset=14)
    one(out, "reshape_allowzero", N("Reshape", ["x", "shape"], ["y"], name="rs",
                                    allowzero=2), [x], shape(24), opset=14)
    one(out, "split_num_outputs", N("Split", ["x"], ["a"], name="sp", axis=1,
                                    num_outputs=0), [x], opset=18)
    one(out, "split_num_outputs_huge", N("Split", ["x"], ["a", "b"], name="sp",
                                         axis=1, num_outputs=10**12), [x], opset=18)
    one(out, "split_uneven", N("Split", ["x"], ["a", "b"], name="sp", axis=1), [x])
    one(out, "split_dynamic", N("Split", ["x"], ["a", "b"], name="sp"),
        [T("x", F, ["n", 4])])
    one(out, "split_count", N("Split", ["x", "sizes"], ["a", "b", "c"], name="sp",
                              axis=2), [x], [init("sizes", np.array([1, 3], np.int64))])
    one(out, "slice_missing", N("Slice", ["x"], ["y"], name="sl"), [x], opset=9)
    one(out, "slice_lengths", N("Slice", ["x", "st", "en"], ["y"], name="sl"), [x],
        [init("st", np.array([0, 0], np.int64)), init("en", np.array([1], np.int64))])
    one(out, "scatter_reduction", N("ScatterElements", ["x", "i", "x"], ["y"],
                                    name="sc", reduction="sum"),
        [x], [init("i", np.zeros([2, 3, 4], np.int64))], opset=16)
    one(out, "unsqueeze_axes", N("Unsqueeze", ["x"], ["y"], name="us"), [x])
    one(out, "flatten_axis", N("Flatten", ["x"], ["y"], name="fl", axis=5), [x])
    pads = lambda *v: init("pads", np.array(v, np.int64))  # noqa: E731
    one(out, "pad_length", N("Pad", ["x", "pads"], ["y"], name="pd"), [x], [pads(1, 1)])
    one(out, "pad_axes_length", N("Pad", ["x", "pads", "", "axes"], ["y"], name="pd"),
        [x], [pads(1, 1, 1, 1), init("axes", np.array([1], np.int64))], opset=18)
    one(out, "pad_mode", N("Pad", ["x", "pads"], ["y"], name="pd", mode="wrap"), [x],
        [pads(0, 0, 1, 0, 0, 1)])
    one(out, "pad_mode19", N("Pad", ["x", "pads"], ["y"], name="pd", mode="mirror"),
        [x], [pads(0, 0, 1, 0, 0, 1)], opset=19)
    one(out, "pad_value_length", N("Pad", ["x", "pads", "cv"], ["y"], name="pd"), [x],
        [pads(0, 0, 1, 0, 0, 1), init("cv", np.array([1, 2], np.float32))])
    one(out, "pad_required", N("Pad", ["x"], ["y"], name="pd"), [x], opset=7)


@register
def tensor_attributes(out):
    x = T("x", F, [1, 1, 2, 2])
    one(out, "constant_two", N("Constant", [], ["y"], name="c", value_float=1.0,
                               value_int=2), [])
    one(out, "constant_none", N("Constant", [], ["y"], name="c"), [])
    sparse = helper.make_sparse_tensor(init("vals", np.ones(1, np.float32)),
                                       init("idx", np.array([0], np.int64)), [2])
    one(out, "constant_sparse", N("Constant", [], ["y"], name="c", sparse_value=sparse),
        [])
    cshape = [init("cs", np.array([2, 3], np.int64))]
    one(out, "cos_value", N("ConstantOfShape", ["cs"], ["y"], name="cos",
                            value=init("v", np.ones(2, np.float32))), [], cshape)
    one(out, "cos_rank", N("ConstantOfShape", ["s"], ["y"], name="cos"),
        [T("s", I64, [2, 2])])
    one(out, "cos_too_large", N("ConstantOfShape", ["cs"], ["y"], name="cos"), [],
        [init("cs", np.array([2**40, 2**40], np.int64))])
    one(out, "cos_negative", N("ConstantOfShape", ["cs"], ["y"], name="cos"), [],
        [init("cs", np.array([2, -1], np.int64))])
    r = lambda s, l, d: [init("r0", np.float32(s)), init("r1", np.float32(l)),  # noqa: E731
                         init("r2", np.float32(d))]
    one(out, "range_delta", N("Range", ["r0", "r1", "r2"], ["y"], name="rg"), [],
        r(0, 4, 0))
    one(out, "range_length", N("Range", ["r0", "r1", "r2"], ["y"], name="rg"), [],
        r(0, 1e10, 1))
    one(out, "range_nan", N("Range", ["r0", "r1", "r2"], ["y"], name="rg"), [],
        r(0, np.nan, 1))
    resize = lambda name, inputs, **a: N("Resize", inputs, ["y"], name=name, **a)  # noqa: E731
    sc = lambda *v: init("sc", np.array(v, np.float32))  # noqa: E731
    sz = lambda *v: init("sz", np.array(v, np.int64))  # noqa: E731
    one(out, "resize_mode", resize("rs", ["x", "", "sc"], mode="area"), [x],
        [sc(1, 1, 2, 2)])
    one(out, "upsample_mode", N("Upsample", ["x", "sc"], ["y"], name="up",
                                mode="cubic"), [x], [sc(1, 1, 2, 2)], opset=9)
    one(out, "resize_transform", resize("rs", ["x", "", "sc"],
                                        coordinate_transformation_mode="sideways"),
        [x], [sc(1, 1, 2, 2)])
    one(out, "resize_nearest_mode", resize("rs", ["x", "", "sc"], nearest_mode="up"),
        [x], [sc(1, 1, 2, 2)])
    one(out, "resize_antialias", resize("rs", ["x", "", "sc"], antialias=1), [x],
        [sc(1, 1, 2, 2)], opset=18)
    one(out, "resize_policy", resize("rs", ["x", "", "", "sz"],
                                     keep_aspect_ratio_policy="fit"),
        [x], [sz(1, 1, 4, 4)], opset=18)
    one(out, "resize_neither", resize("rs", ["x"]), [x])
    one(out, "resize_both", resize("rs", ["x", "", "sc", "sz"]), [x],
        [sc(1, 1, 2, 2), sz(1, 1, 4, 4)])
    one(out, "resize_rank", resize("rs", ["x", "", "sc"]), [x], [sc(2, 2)])
    one(out, "resize_size", resize("rs", ["x", "", "", "sz"]), [x], [sz(1, 1, -1, 4)])
    one(out, "resize_scale", resize("rs", ["x", "", "sc"]), [x], [sc(1, 1, 0, 2)])
    one(out, "resize_scale_huge", resize("rs", ["x", "", "sc"]), [x],
        [sc(1, 1, 1e30, 2)])
    qs = [init("qs", np.float32(0.5))]
    one(out, "quant_block", N("QuantizeLinear", ["x", "qs"], ["y"], name="q",
                              block_size=2), [x], qs, opset=21)
    one(out, "quant_dtype", N("QuantizeLinear", ["x", "qs"], ["y"], name="q",
                              output_dtype=TensorProto.INT32), [x], qs, opset=21)
    one(out, "quant_dynamic_scale", N("QuantizeLinear", ["x", "s"], ["y"], name="q"),
        [x, T("s", F, ["n"])])
    one(out, "dynamic_quant_type", N("DynamicQuantizeLinear", ["h"], ["y", "s", "z"],
                                     name="dq"), [T("h", TensorProto.FLOAT16, [2])], opset=11)
    one(out, "einsum_terms", N("Einsum", ["h"], ["y"], name="es", equation="ij,jk->ik"),
        [T("h", F, [2, 3])], opset=12)
    img, grid = T("img", F, [1, 2, 4, 4]), T("grid", F, [1, 3, 3, 2])
    gs = lambda **a: N("GridSample", ["img", "grid"], ["y"], name="gs", **a)  # noqa: E731
    one(out, "gridsample_mode", gs(mode="linear"), [img, grid], opset=16)
    one(out, "gridsample_padding", gs(padding_mode="wrap"), [img, grid], opset=20)
    one(out, "gridsample_rank", gs(), [T("img", F, [1, 2, 4, 4, 4]), T("grid", F, [1, 3, 3, 3, 3])],
        opset=16)
    one(out, "gridsample_grid_rank", gs(), [img, T("grid", F, [1, 9, 2])], opset=20)


# --- Per-op inputs -----------------------------------------------------------

@register
def inputs(out):
    v = T("v", F, [4])
    one(out, "types_differ", N("Add", ["v", "k"], ["y"], name="a"), [v, T("k", I64, [4])])
    one(out, "max_no_inputs", N("Max", [], ["y"], name="mx"), [])
    one(out, "concat_no_inputs", N("Concat", [], ["y"], name="cc", axis=0), [])
    one(out, "gather_float_indices", N("Gather", ["v", "i"], ["y"], name="ga"), [v],
        [init("i", np.array([0.0], np.float32))])
    one(out, "reshape_computed_i32", N("Reshape", ["v", "s"], ["y"], name="rs"),
        [v, T("s", TensorProto.INT32, [2])])
    one(out, "expand_rank", N("Expand", ["v", "s"], ["y"], name="ex"),
        [v, T("s", I64, [2, 2])])
    one(out, "expand_negative", N("Expand", ["v", "s"], ["y"], name="ex"), [v],
        [init("s", np.array([-2, 4], np.int64))])
    one(out, "cumsum_axis", N("CumSum", ["v", "axis"], ["y"], name="cs"), [v],
        [init("axis", np.array([0, 0], np.int64))])
    one(out, "topk_k", N("TopK", ["v", "k"], ["y", "i"], name="tk"), [v],
        [init("k", np.array([1, 2], np.int64))])
    onehot = lambda *depth: [init("i", np.array([1], np.int64)),  # noqa: E731
                             init("d", np.array(depth, np.int64)),
                             init("ov", np.array([0, 1], np.float32))]
    one(out, "onehot_depth", N("OneHot", ["i", "d", "ov"], ["y"], name="oh"), [],
        onehot(3, 4))
    one(out, "onehot_negative_depth", N("OneHot", ["i", "d", "ov"], ["y"], name="oh"),
        [], onehot(-3))
    # Shapes as tensors: the declared length is the result rank; a huge splat
    # (ConstantOfShape of [10^12]) is one value in memory but not read as one.
    one(out, "reshape_long_shape", N("Reshape", ["v", "s"], ["y"], name="rs"),
        [v, T("s", I64, [10**12])])
    one(out, "cos_long_shape", N("ConstantOfShape", ["s"], ["y"], name="cos"),
        [T("s", I64, [33])])
    splat = lambda op, name: make(  # noqa: E731
        [N("ConstantOfShape", ["n"], ["s"], value=init("one", np.ones(1, np.int64))),
         N(op, ["v", "s"], ["y"], name=name)], [v], [T("y")],
        [init("n", np.array([10**12], np.int64))])
    save(out, "expand_splat_shape", splat("Expand", "ex"))
    save(out, "tile_splat_repeats", splat("Tile", "tl"))
    one(out, "dropout_training", N("Dropout", ["v", "", "t"], ["y"], name="dr"),
        [v, T("t", TensorProto.BOOL, [])])


# --- Handlers without another import test ------------------------------------

@register
def gather_nd(out):
    x = T("x", F, [2, 3, 4])
    nodes = [N("GatherND", ["x", "i64"], ["pairs"]),
             N("GatherND", ["x", "i32"], ["rows"], batch_dims=1),
             N("GatherND", ["x", "u8"], ["widened"])]
    inits = [init("i64", np.array([[0, 1], [1, 2]], np.int64)),
             init("i32", np.array([[2], [0]], np.int32))]
    save(out, "gather_nd", make(nodes, [x, T("u8", TensorProto.UINT8, [1, 1])],
                                [T(n.output[0]) for n in nodes], inits))
    i = [init("i", np.array([[0], [1]], np.int64))]
    one(out, "gather_nd_batch_dims", N("GatherND", ["x", "i"], ["y"], name="gn",
                                       batch_dims=2), [x], i)
    one(out, "gather_nd_float", N("GatherND", ["x", "f"], ["y"], name="gn"), [x],
        [init("f", np.zeros([1, 1], np.float32))])


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    for name in argv[2:] or MODELS:
        MODELS[name](out)


if __name__ == "__main__":
    main(sys.argv)
