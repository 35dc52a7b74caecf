# Quantized (QDQ) convolutions and Gemms as integer kernels on the CPU, against the
# exact integer result and onnxruntime's int8 outputs.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: run_int8_conv.py WORKDIR --kilnc PATH --kiln-run PATH [--cpu NAME --expect INTRINSIC]

Each case is a small ONNX model of QDQ convolutions as onnxruntime's
quantize_static writes them: DequantizeLinear on the activation, on the
constant 8-bit weight (per tensor, or per output channel along axis 0) and
on an optional int32 bias (scale sx * sw, zero point 0), a Conv, an
optional Relu or Clip, a QuantizeLinear; and QDQ Gemms with a transposed
B and an int32 bias (quantize_static's classifier heads). Kilnc must
rewrite each as an i16 kiln.matmul (checked in --emit=graph: no kiln.conv
or kiln.gemm left) and call the kernel's instruction (vpdpbusd with
AVX-512 VNNI, vpmaddwd with AVX2; --cpu and --expect as in run_int8.py).
Kiln's outputs must equal the exact integer
result (onnxruntime's requantization of the i32 sums, computed here in
int64) and onnxruntime's within one unit wherever onnxruntime is itself
exact (its u8 x s8 AVX2 kernels can saturate i16 pair sums; those elements
are counted, as in run_int8.py). Shapes are awkward on purpose: odd
channel counts, stride 2, asymmetric padding, dilation, 1x1 convs with and
without stride, more output channels than pixels, u8 and s8 activations,
zero points that are not 0, and a small CNN quantized by quantize_static
itself (a conv read by a conv: the activation stays 8-bit in between).
Prints one PASS/FAIL line per case and a summary; exits 1 on any failure.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import run_int8
from run_int8 import ONNX_TYPE, const, model_of, quantized, requantized, run_cases

FLOAT = TensorProto.FLOAT


def conv_acc(x, w, strides, pads, dilations, group=1):
    """The exact i64 sums of a 2-D conv: x [N, C, H, W] and w [M, C / group,
    KH, KW] already minus their zero points; pads as ONNX's (top, left,
    bottom, right)."""
    if x.shape[0] > 1:
        return np.concatenate([conv_acc(x[i:i + 1], w, strides, pads, dilations, group)
                               for i in range(x.shape[0])], axis=0)
    if group > 1:
        xs, ws = np.split(x, group, axis=1), np.split(w, group, axis=0)
        return np.concatenate([conv_acc(a, b, strides, pads, dilations)
                               for a, b in zip(xs, ws)], axis=1)
    x = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    m, _, kh, kw = w.shape
    oh = (x.shape[2] - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (x.shape[3] - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    acc = np.zeros((1, m, oh, ow), np.int64)
    for i in range(kh):
        for j in range(kw):
            window = x[0, :, i * dilations[0]:i * dilations[0] + (oh - 1) * strides[0] + 1:strides[0],
                       j * dilations[1]:j * dilations[1] + (ow - 1) * strides[1] + 1:strides[1]]
            acc[0] += np.einsum("mc,chw->mhw", w[:, :, i, j].astype(np.int64), window)
    return acc


def clamp_activation(yq, act, sy, zy):
    """Q(act(v)) = clamp(Q(v), Q(lo), Q(hi)) for a Relu or Clip(lo, hi)."""
    if act is None:
        return yq
    info = np.iinfo(zy.dtype)
    q = lambda v: np.clip(np.rint(np.float32(v) / sy) + int(zy), info.min, info.max)
    lo, hi = (0.0, None) if act[0] == "Relu" else act[1:]
    out = np.maximum(yq.astype(np.int64), q(lo))
    if hi is not None:
        out = np.minimum(out, q(hi))
    return out.astype(zy.dtype)


def conv_case(rng, shape, m, kernel, xtype, wtype, per_channel, strides=(1, 1),
              pads=(0, 0, 0, 0), dilations=(1, 1), bias=False, act=None, group=1):
    """y_q = Q(act(Conv(DQ(x_q), DQ(w_q)[, DQ(b_i32)])))."""
    c = shape[1]
    x = quantized(rng, shape, xtype)
    w = quantized(rng, (m, c // group, *kernel), wtype)
    sw = (rng.uniform(0.002, 0.02, m) if per_channel else np.array(0.01)).astype(np.float32)
    zw = (quantized(rng, (m,), wtype) // 8 if per_channel
          else np.array(3 if wtype == np.int8 else 128, wtype)).astype(wtype)
    sx = np.array(0.03, np.float32)
    zx = np.array(100 if xtype == np.uint8 else -5, xtype)
    depth = c // group * kernel[0] * kernel[1]
    sy = np.array(3 * 0.03 * float(np.mean(sw)) * 74 * np.sqrt(depth) / 127, np.float32)
    zy = np.array(120 if xtype == np.uint8 else 3, xtype)
    attrs = dict(strides=list(strides), pads=list(pads), dilations=list(dilations), group=group)
    nodes = [helper.make_node("DequantizeLinear", ["x", "sx", "zx"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "sw", "zw"], ["wf"], axis=0)]
    inits = [const("w", w), const("sw", sw), const("zw", zw), const("sx", sx), const("zx", zx),
             const("sy", sy), const("zy", zy)]
    conv_inputs = ["xf", "wf"]
    acc_bias = 0
    if bias:
        b = rng.integers(-3000, 3000, m).astype(np.int32)
        sb = (sx * sw * np.ones(m, np.float32)).astype(np.float32)
        nodes.append(helper.make_node("DequantizeLinear", ["b", "sb", "zb"], ["bf"], axis=0))
        inits += [const("b", b), const("sb", sb), const("zb", np.zeros(m, np.int32))]
        conv_inputs.append("bf")
        acc_bias = b.astype(np.int64).reshape(1, m, 1, 1)
    nodes.append(helper.make_node("Conv", conv_inputs, ["yf"], **attrs))
    last = "yf"
    if act is not None:
        if act[0] == "Relu":
            nodes.append(helper.make_node("Relu", ["yf"], ["af"]))
        else:
            inits += [const("lo", np.array(act[1], np.float32)),
                      const("hi", np.array(act[2], np.float32))]
            nodes.append(helper.make_node("Clip", ["yf", "lo", "hi"], ["af"]))
        last = "af"
    nodes.append(helper.make_node("QuantizeLinear", [last, "sy", "zy"], ["y"]))
    wz = w.astype(np.int64) - zw.astype(np.int64).reshape(-1, 1, 1, 1)
    acc = conv_acc(x.astype(np.int64) - int(zx), wz, strides, pads, dilations, group) + acc_bias
    factor = (sx * sw / sy).astype(np.float32).reshape(-1, 1, 1) if per_channel else sx * sw / sy
    yq = clamp_activation(requantized(acc, factor, zy), act, sy, zy)
    model = model_of(nodes, [helper.make_tensor_value_info("x", ONNX_TYPE[xtype], list(shape))],
                     [helper.make_tensor_value_info("y", ONNX_TYPE[xtype], list(yq.shape))], inits)
    return model, {"x": x}, yq


def gemm_case(rng, m, k, n, xtype, per_channel):
    """y_q = Q(Gemm(DQ(x_q), DQ(w_q), DQ(b_i32), transB=1)): quantize_static's
    classifier head, w [N, K] per row (axis 0) or per tensor."""
    x = quantized(rng, (m, k), xtype)
    w = quantized(rng, (n, k), np.int8)
    sw = (rng.uniform(0.002, 0.02, n) if per_channel else np.array(0.01)).astype(np.float32)
    zw = np.zeros(n if per_channel else (), np.int8)
    sx = np.array(0.03, np.float32)
    zx = np.array(100 if xtype == np.uint8 else -5, xtype)
    sy = np.array(3 * 0.03 * float(np.mean(sw)) * 74 * np.sqrt(k) / 127, np.float32)
    zy = np.array(120 if xtype == np.uint8 else 3, xtype)
    b = rng.integers(-3000, 3000, n).astype(np.int32)
    sb = (sx * sw * np.ones(n, np.float32)).astype(np.float32)
    nodes = [helper.make_node("DequantizeLinear", ["x", "sx", "zx"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "sw", "zw"], ["wf"], axis=0),
             helper.make_node("DequantizeLinear", ["b", "sb", "zb"], ["bf"], axis=0),
             helper.make_node("Gemm", ["xf", "wf", "bf"], ["yf"], transB=1),
             helper.make_node("QuantizeLinear", ["yf", "sy", "zy"], ["y"])]
    inits = [const("w", w), const("sw", sw), const("zw", zw), const("sx", sx), const("zx", zx),
             const("b", b), const("sb", sb), const("zb", np.zeros(n, np.int32)),
             const("sy", sy), const("zy", zy)]
    acc = (x.astype(np.int64) - int(zx)) @ (w.astype(np.int64) - zw.astype(np.int64).reshape(-1, 1)).T
    yq = requantized(acc + b, (sx * sw / sy).astype(np.float32), zy)
    model = model_of(nodes, [helper.make_tensor_value_info("x", ONNX_TYPE[xtype], [m, k])],
                     [helper.make_tensor_value_info("y", ONNX_TYPE[xtype], [m, n])], inits)
    return model, {"x": x}, yq


def exact_qdq_cnn(model, x):
    """The exact result of a QDQ model of Q/DQ pairs, convs and float
    outputs: each conv read through DequantizeLinear and written through
    QuantizeLinear is the integer conv requantized as onnxruntime does."""
    values = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    values[model.graph.input[0].name] = x
    made = {o: node for node in model.graph.node for o in node.output}
    readers = {}
    for node in model.graph.node:
        for i in node.input:
            readers.setdefault(i, []).append(node)
    for node in model.graph.node:
        ins = [values.get(i) for i in node.input]
        if node.op_type == "QuantizeLinear" and node.output[0] not in values:
            s, z = ins[1], ins[2]
            info = np.iinfo(z.dtype)
            values[node.output[0]] = np.clip(np.rint(ins[0] / s) + int(z), info.min,
                                             info.max).astype(z.dtype)
        elif node.op_type == "DequantizeLinear":
            z = ins[2].astype(np.int64)
            s = ins[1]
            if s.ndim == 1:
                shape = [-1] + [1] * (ins[0].ndim - 1)
                s, z = s.reshape(shape), z.reshape(shape)
            values[node.output[0]] = ((ins[0].astype(np.int64) - z) * s).astype(np.float32)
        elif node.op_type == "Conv":
            dx, dw = made[node.input[0]], made[node.input[1]]
            q, act = readers[node.output[0]][0], None
            if q.op_type == "Relu":  # quantize_static usually removes it
                q, act = readers[q.output[0]][0], ("Relu",)
            sx, zx = values[dx.input[1]], values[dx.input[2]]
            sw, zw = values[dw.input[1]], values[dw.input[2]]
            sy, zy = values[q.input[1]], values[q.input[2]]
            wz = values[dw.input[0]].astype(np.int64) - zw.astype(np.int64).reshape(-1, 1, 1, 1)
            attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            acc = conv_acc(values[dx.input[0]].astype(np.int64) - int(zx), wz,
                           attrs.get("strides", [1, 1]), attrs.get("pads", [0, 0, 0, 0]),
                           attrs.get("dilations", [1, 1]), attrs.get("group", 1))
            if len(node.input) > 2:
                acc = acc + values[made[node.input[2]].input[0]].astype(np.int64).reshape(1, -1, 1, 1)
            factor = (sx * sw / sy).astype(np.float32)
            factor = factor.reshape(-1, 1, 1) if factor.ndim == 1 else factor
            values[q.output[0]] = clamp_activation(requantized(acc, factor, zy), act, sy, zy)
    return values[model.graph.output[0].name]


def quantize_static_cnn(rng, work, per_channel):
    """conv 3x3 stride 2 + bias + relu -> conv 1x1 + relu -> conv 3x3 pad 1,
    quantized by onnxruntime's quantize_static (u8 activations, s8 weights)."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

    def weight(*shape):
        return (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["c2"]),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("Conv", ["r2", "w3", "b3"], ["y"], pads=[1, 1, 1, 1])]
    inits = [const("w1", weight(24, 3, 3, 3)), const("b1", rng.standard_normal(24).astype(np.float32)),
             const("w2", weight(17, 24, 1, 1)), const("w3", weight(10, 17, 3, 3)),
             const("b3", rng.standard_normal(10).astype(np.float32))]
    shape = [1, 3, 19, 19]
    model = model_of(nodes, [helper.make_tensor_value_info("x", FLOAT, shape)],
                     [helper.make_tensor_value_info("y", FLOAT, [1, 10, 10, 10])], inits, opset=17)
    path = os.path.join(work, f"cnn_{int(per_channel)}.onnx")
    onnx.save(model, path)
    samples = [{"x": rng.standard_normal(shape).astype(np.float32)} for _ in range(4)]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(samples)

        def get_next(self):
            return next(self.it, None)

    out = path.replace(".onnx", ".qdq.onnx")
    quantize_static(path, out, Reader(), quant_format=QuantFormat.QDQ, per_channel=per_channel)
    qdq = onnx.load(out)
    dq = next(n for n in qdq.graph.node if n.output[0] == qdq.graph.output[0].name)
    sy = next(numpy_helper.to_array(t) for t in qdq.graph.initializer if t.name == dq.input[1])
    return qdq, {"x": samples[0]["x"]}, exact_qdq_cnn(qdq, samples[0]["x"]), float(sy)


def kiln(args, name, model, inputs):
    """Compiles (no kiln.conv or kiln.gemm may be left) and runs the model."""
    return run_int8.kiln(args, name, model, inputs, left_out=("kiln.conv", "kiln.gemm"))


def main():
    args = run_int8.parse_args()
    rng = np.random.default_rng(22)
    u8, s8 = np.uint8, np.int8
    cases = [
        ("conv3x3_u8_odd_channels", *conv_case(rng, (1, 5, 9, 11), 7, (3, 3), u8, s8, False,
                                               pads=(1, 1, 1, 1)), 1),
        ("conv3x3_stride2_bias_per_channel", *conv_case(
            rng, (1, 3, 15, 15), 16, (3, 3), u8, s8, True, strides=(2, 2), pads=(1, 1, 1, 1),
            bias=True), 1),
        ("conv1x1_s8_per_channel", *conv_case(rng, (1, 33, 7, 6), 19, (1, 1), s8, s8, True), 1),
        ("conv1x1_stride2_relu", *conv_case(rng, (1, 20, 9, 9), 24, (1, 1), u8, s8, False,
                                            strides=(2, 2), act=("Relu",)), 1),
        ("conv5x5_dilated_asymmetric_pads", *conv_case(
            rng, (1, 4, 12, 10), 9, (5, 3), u8, s8, True, pads=(1, 2, 2, 0), dilations=(2, 1),
            bias=True), 1),
        ("conv3x3_clip_u8_weights", *conv_case(rng, (1, 6, 8, 8), 13, (3, 3), u8, u8, False,
                                               pads=(1, 1, 1, 1), act=("Clip", -0.5, 1.5)), 1),
        # More output channels than pixels (a late ResNet layer's shape).
        ("conv3x3_wide_few_pixels", *conv_case(rng, (1, 12, 4, 5), 43, (3, 3), u8, s8, True,
                                               pads=(1, 1, 1, 1), bias=True), 1),
        # 18 x 17 = 306 output pixels: 5 VNNI panels, each packed by its own task.
        ("conv3x3_many_panels_per_channel", *conv_case(rng, (1, 3, 18, 17), 8, (3, 3), u8, s8,
                                                       True, pads=(1, 1, 1, 1)), 1),
        # Grouped convs: one integer product per group.
        ("conv3x3_group2", *conv_case(rng, (1, 6, 9, 10), 8, (3, 3), u8, s8, False,
                                      pads=(1, 1, 1, 1), group=2), 1),
        ("conv3x3_group3_stride2_bias_relu_per_channel", *conv_case(
            rng, (1, 9, 11, 11), 12, (3, 3), s8, s8, True, strides=(2, 2), pads=(1, 1, 1, 1),
            bias=True, act=("Relu",), group=3), 1),
        ("gemm_trans_b_bias_per_row", *gemm_case(rng, 3, 203, 37, u8, True), 1),
        ("gemm_trans_b_bias_s8", *gemm_case(rng, 1, 64, 20, s8, False), 1),
    ]
    for per_channel in (False, True):
        model, inputs, exact, unit = quantize_static_cnn(rng, args.work, per_channel)
        cases.append((f"quantize_static_cnn_per_channel{int(per_channel)}", model, inputs,
                      exact, unit))
    return run_cases(args, cases, kiln, "int8 conv and gemm")


if __name__ == "__main__":
    sys.exit(main())
