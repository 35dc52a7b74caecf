#!/usr/bin/env python3
# Writes the models of error-quant-scales.test (deterministic).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: make_quant_error_models.py OUTDIR

One model per bad quantization parameter that the importer must refuse with
an error naming the node, the input and the value: scales of zero, NaN or
infinity (QuantizeLinear, DequantizeLinear, QLinearMatMul, QLinearConv) and
a per-axis scale whose length is not the quantized tensor's dim along the
axis; and one valid per-axis model, which must import.
"""

import os
import sys

import numpy as np
from onnx import TensorProto

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_models import F, T, N, init, make, save  # noqa: E402

U8, I8 = TensorProto.UINT8, TensorProto.INT8


def f32(values):
    return np.asarray(values, dtype=np.float32)


def quantize(out, name, scale, zero=None, axis=1, op="QuantizeLinear", shape=(2, 3)):
    x = T("x", U8 if op == "DequantizeLinear" else F, list(shape))
    inputs = ["x", "s"] + (["z"] if zero is not None else [])
    inits = [init("s", f32(scale))] + ([init("z", np.asarray(zero, np.uint8))]
                                         if zero is not None else [])
    node = N(op, inputs, ["y"], axis=axis)
    save(out, name, make([node], [x], [T("y", F if op == "DequantizeLinear" else U8)],
                         inits, opset=21, ir=10))


def qlinear_matmul(out, name, b_scale):
    inits = [init("sa", f32(0.1)), init("za", np.uint8(0)), init("sb", f32(b_scale)),
             init("zb", np.uint8(0)), init("sy", f32(0.2)), init("zy", np.uint8(0)),
             init("b", np.ones((3, 4), np.uint8))]
    node = N("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])
    save(out, name, make([node], [T("a", U8, [2, 3])], [T("y", U8)], inits, opset=21, ir=10))


def qlinear_conv(out, name, w_scale):
    inits = [init("sx", f32(0.1)), init("zx", np.uint8(0)), init("sw", f32(w_scale)),
             init("zw", np.zeros(2, np.uint8)), init("sy", f32(0.2)), init("zy", np.uint8(0)),
             init("w", np.ones((2, 3, 1, 1), np.uint8))]
    node = N("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy"], ["y"])
    save(out, name, make([node], [T("x", U8, [1, 3, 4, 4])], [T("y", U8)], inits,
                         opset=21, ir=10))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    quantize(out, "quant_scale_zero", 0.0)
    quantize(out, "dequant_scale_nan", float("nan"), zero=3, op="DequantizeLinear")
    quantize(out, "quant_scale_inf_per_axis", [0.5, float("inf"), 0.25])
    quantize(out, "quant_axis_length", [0.5, 0.5, 0.5, 0.5])
    quantize(out, "quant_axis_length_negative", [0.5, 0.5, 0.5], axis=-2)
    quantize(out, "quant_per_axis_valid", [0.5, 0.125, 0.25], zero=[1, 2, 3])
    qlinear_matmul(out, "qlinear_matmul_scale_zero", 0.0)
    qlinear_conv(out, "qlinear_conv_scale_nan", [0.5, float("nan")])


if __name__ == "__main__":
    main()
