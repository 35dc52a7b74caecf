#!/usr/bin/env python3
# Writes the hostile models of test/hostile that test/Import/ONNX lacks.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: make_hostile.py OUTDIR [NAME...]

The classes the importer's own tests already build (external-data escapes,
garbage, cycles, ...) come from test/Import/ONNX/make_models.py; these are
the rest: negative and overflowing dims, rank bombs, absurd
ConstantOfShape/Expand/Tile sizes, window attributes whose sizes overflow, an opset of an unknown domain, and a deep
but valid chain of 20,000 nodes. Nothing binary is committed.
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Import", "ONNX"))
from make_models import F, N, T, init, make, save  # noqa: E402

MODELS = {}
HUGE = [1_000_000, 1_000_000]  # 10^12 elements, 4 TB of f32


def register(fn):
    MODELS[fn.__name__] = fn
    return fn


def relu_of(x):
    return make([N("Relu", ["x"], ["y"])], [x], [T("y")])


@register
def dims(out):
    save(out, "neg_dim_input", relu_of(T("x", F, [2, -3])))
    w = TensorProto(name="w", data_type=F, dims=[-2])
    save(out, "neg_dim_init",
         make([N("Add", ["x", "w"], ["y"])], [T("x", F, [2])], [T("y")], [w]))
    # 2^62 * 2^62 elements: the count overflows int64.
    save(out, "overflow_input", relu_of(T("x", F, [2**62, 2**62, 4])))


@register
def rank_bombs(out):
    save(out, "rank_input", relu_of(T("x", F, [1] * 100_000)))
    ones = init("s", np.ones(100_000, np.int64))
    save(out, "rank_reshape", make([N("Reshape", ["x", "s"], ["y"], name="rs")],
                                   [T("x", F, [1])], [T("y")], [ones]))


@register
def huge(out):
    shape = init("s", np.array(HUGE, np.int64))
    save(out, "constant_of_shape", make(
        [N("ConstantOfShape", ["s"], ["y"], name="cos",
           value=helper.make_tensor("v", F, [1], [1.0]))], [], [T("y")], [shape]))
    save(out, "expand", make([N("Expand", ["x", "s"], ["y"], name="ex")],
                             [T("x", F, [1])], [T("y")], [shape]))
    save(out, "tile", make([N("Tile", ["x", "s"], ["y"], name="tl")],
                           [T("x", F, [1, 1])], [T("y")], [shape]))
    # A huge constant that only feeds a reduction: nothing big is an output.
    save(out, "reduced", make(
        [N("ConstantOfShape", ["s"], ["c"], name="cos",
           value=helper.make_tensor("v", F, [1], [1.0])),
         N("ReduceSum", ["c"], ["y"], name="sum", keepdims=0)], [], [T("y")], [shape]))


@register
def domains(out):
    save(out, "unknown_domain_opset", make(
        [N("Foo", ["x"], ["y"], name="foo", domain="com.foo")],
        [T("x", F, [2])], [T("y")], extra_opsets=[("com.foo", 7)]))


@register
def windows(out):
    """Window attributes whose size arithmetic overflows int64 or breaks an
    ONNX rule (each was a wrapped size or undefined behaviour before)."""
    big, top = 2**62, 2**63 - 1
    w1 = init("w", np.ones([1, 1, 3], np.float32))
    x1 = T("x", F, [1, 1, 8])

    def node(op, **attrs):
        inputs = ["x"] if op == "MaxPool" else ["x", "w"]
        return make([N(op, inputs, ["y"], name="n", **attrs)], [x1], [T("y")],
                    [] if op == "MaxPool" else [w1])

    save(out, "convt_output_padding", make(
        [N("ConvTranspose", ["x", "w"], ["y"], name="n", strides=[2, 2],
           output_padding=[0, 2])], [T("x", F, [1, 1, 4, 4])], [T("y")],
        [init("w", np.ones([1, 1, 3, 3], np.float32))]))
    save(out, "convt_output_padding_huge", node(
        "ConvTranspose", output_padding=[big], output_shape=[8]))
    save(out, "convt_output_shape_overflow", node(
        "ConvTranspose", strides=[big], output_shape=[8]))
    save(out, "conv_same_overflow", node("Conv", strides=[top], auto_pad="SAME_UPPER"))
    save(out, "conv_dilation_overflow", node("Conv", dilations=[big]))
    save(out, "pool_pads_overflow", node("MaxPool", kernel_shape=[2], pads=[top, 0]))


@register
def deep(out):
    count = 20_000
    nodes, prev = [], "x"
    for i in range(count):
        op = ("Relu", "Neg", "Abs")[i % 3]
        name = "y" if i == count - 1 else f"t{i}"
        nodes.append(N(op, [prev], [name]))
        prev = name
    save(out, "deep", make(nodes, [T("x", F, [4])], [T("y")]))
    # Input and reference: abs(neg(relu(v))) = relu(v), so the chain, which
    # ends on a Neg, computes -relu(x).
    x = np.array([-2.0, -0.5, 0.5, 2.0], np.float32)
    for directory, name, value in [("deep_in", "x", x),
                                   ("deep_ref", "y", -np.maximum(x, 0))]:
        os.makedirs(os.path.join(out, directory), exist_ok=True)
        np.save(os.path.join(out, directory, name + ".npy"), value)


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    for name in argv[2:] or MODELS:
        MODELS[name](out)


if __name__ == "__main__":
    main(sys.argv)
