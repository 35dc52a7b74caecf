# Quantized (QDQ) depthwise convolutions as integer kernels on the CPU, against the
# exact integer result and onnxruntime's int8 outputs.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: run_int8_depthwise.py WORKDIR --kilnc PATH --kiln-run PATH [--cpu NAME] [--expect-asm REGEX]

Each case is a small ONNX model of a QDQ depthwise conv (group = channels)
as onnxruntime's quantize_static writes it (DequantizeLinear on the
activation, the constant 8-bit weight per tensor or per channel, an
optional int32 bias; a Conv; an optional Relu or Clip; a QuantizeLinear),
or an inverted-residual block quantized by quantize_static itself (1x1
expand + Relu6, 3x3 depthwise + Relu6, 1x1 project). Kilnc must leave no
kiln.conv in --emit=graph (the depthwise conv became i32 sums of the 8-bit
input's taps, requantized; the 1x1 convs integer matmuls), and the object
code must match --expect-asm (the vectorized i32 products: vpmulld on zmm
with AVX-512, on ymm with AVX2). Kiln's outputs must equal the exact
integer result (onnxruntime's requantization of the i32 sums, in int64
here) and onnxruntime's. Shapes are awkward on purpose: channels not a
multiple of 16, odd spatial sizes, stride 2 with symmetric and asymmetric
padding, no padding, 5x5 and dilated windows, strides 3 and (1, 2), rows
narrower than a vector, batches of 2 and 3 images.
Prints one PASS/FAIL line per case and a summary; exits 1 on any failure.
"""

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

import run_int8
from run_int8 import NotRun, const, model_of, run_cases
from run_int8_conv import conv_case, exact_qdq_cnn

FLOAT = TensorProto.FLOAT


def parse_args():
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("work")
    parser.add_argument("--kilnc", required=True)
    parser.add_argument("--kiln-run", required=True)
    parser.add_argument("--cpu", help="kilnc's --cpu (default: this machine's)")
    parser.add_argument("--expect-asm", help="a regex the object code must match")
    parser.add_argument("--host-flag", help="a /proc/cpuinfo flag the --cpu code needs")
    args = parser.parse_args()
    if not args.expect_asm and not args.cpu:
        flags = run_int8.host_flags()
        args.expect_asm = (r"vpmulld\s.*%[yz]mm(1[6-9]|2[0-9]|3[01])" if "avx512f" in flags else
                           r"vpmulld\s.*ymm" if "avx2" in flags else None)
    return args


def objdump():
    for name in ("llvm-objdump", "/usr/lib/llvm-22/bin/llvm-objdump", "objdump"):
        path = shutil.which(name)
        if path:
            return path
    return None


# Strides other than 1 and 2 read strided windows: correct but scalar, so
# the object code is not checked for the vector multiply.
SCALAR_CASES = {"dw3x3_stride3"}


def kiln(args, name, model, inputs):
    """Compiles (no kiln.conv may be left), checks the object code, runs."""
    case = os.path.join(args.work, name)
    os.makedirs(case, exist_ok=True)
    path = os.path.join(case, "model.onnx")
    onnx.save(model, path)
    cpu = run_int8.cpu_flags(args)
    graph = subprocess.run([args.kilnc, *cpu, path, "--emit=graph"], capture_output=True,
                           text=True)
    if graph.returncode != 0:
        raise RuntimeError("--emit=graph failed " + graph.stderr.strip())
    if "kiln.conv" in graph.stdout:
        raise RuntimeError("a kiln.conv is left in --emit=graph")
    if args.expect_asm and objdump() and name not in SCALAR_CASES:
        obj = os.path.join(case, "model.o")
        subprocess.run([args.kilnc, *cpu, path, "--emit=obj", "-o", obj], check=True)
        asm = subprocess.run([objdump(), "-d", "--no-show-raw-insn", obj], capture_output=True,
                             text=True, check=True).stdout
        if not re.search(args.expect_asm, asm):
            raise RuntimeError(f"no match for {args.expect_asm!r} in the object code")
    if args.host_flag and args.host_flag not in run_int8.host_flags():
        raise NotRun(f"this host lacks {args.host_flag}")
    return run_int8.run_model(args, args.work, name, model, inputs,
                              cpu)(model.graph.output[0].name)


def inverted_residual(rng, work, per_channel, stride):
    """1x1 expand (8 -> 36) + Relu6, 3x3 depthwise + Relu6, 1x1 project
    (36 -> 12), quantized by quantize_static (its default 8-bit types)."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

    def weight(*shape):
        return (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)
    six = [const("lo", np.array(0, np.float32)), const("hi", np.array(6, np.float32))]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"]),
             helper.make_node("Clip", ["c1", "lo", "hi"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], group=36, pads=[1, 1, 1, 1],
                              strides=[stride, stride]),
             helper.make_node("Clip", ["c2", "lo", "hi"], ["r2"]),
             helper.make_node("Conv", ["r2", "w3", "b3"], ["y"])]
    inits = [const("w1", weight(36, 8, 1, 1)), const("b1", rng.standard_normal(36).astype(np.float32)),
             const("w2", 3 * weight(36, 1, 3, 3)),
             const("b2", rng.standard_normal(36).astype(np.float32)),
             const("w3", weight(12, 36, 1, 1)), const("b3", rng.standard_normal(12).astype(np.float32)),
             *six]
    shape = [1, 8, 15, 13]
    out = [1, 12, (15 - 1) // stride + 1, (13 - 1) // stride + 1]
    model = model_of(nodes, [helper.make_tensor_value_info("x", FLOAT, shape)],
                     [helper.make_tensor_value_info("y", FLOAT, out)], inits, opset=17)
    path = os.path.join(work, f"block_{int(per_channel)}_{stride}.onnx")
    onnx.save(model, path)
    samples = [{"x": rng.standard_normal(shape).astype(np.float32)} for _ in range(4)]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(samples)

        def get_next(self):
            return next(self.it, None)

    qdq_path = path.replace(".onnx", ".qdq.onnx")
    quantize_static(path, qdq_path, Reader(), quant_format=QuantFormat.QDQ,
                    per_channel=per_channel)
    qdq = onnx.load(qdq_path)
    dq = next(n for n in qdq.graph.node if n.output[0] == qdq.graph.output[0].name)
    sy = next(onnx.numpy_helper.to_array(t) for t in qdq.graph.initializer
              if t.name == dq.input[1])
    return qdq, {"x": samples[0]["x"]}, exact_qdq_cnn(qdq, samples[0]["x"]), float(sy)


def main():
    args = parse_args()
    rng = np.random.default_rng(23)
    u8, s8 = np.uint8, np.int8
    relu6 = ("Clip", 0.0, 6.0)

    def depthwise(shape, kernel, xtype, wtype, per_channel, **kw):
        return conv_case(rng, shape, shape[1], kernel, xtype, wtype, per_channel,
                         group=shape[1], **kw)
    cases = [
        ("dw3x3_u8_19_channels_odd_rows_bias_relu6", *depthwise(
            (1, 19, 9, 11), (3, 3), u8, s8, True, pads=(1, 1, 1, 1), bias=True, act=relu6), 1),
        ("dw3x3_stride2_u8_21_channels", *depthwise(
            (1, 21, 15, 13), (3, 3), u8, s8, False, strides=(2, 2), pads=(1, 1, 1, 1)), 1),
        ("dw3x3_stride2_s8_asymmetric_pads_clip", *depthwise(
            (1, 35, 8, 10), (3, 3), s8, s8, True, strides=(2, 2), pads=(0, 0, 1, 1),
            bias=True, act=("Clip", -0.5, 1.5)), 1),
        ("dw3x3_stride2_odd_7x7_bias", *depthwise(
            (1, 33, 7, 7), (3, 3), u8, s8, True, strides=(2, 2), pads=(1, 1, 1, 1), bias=True), 1),
        ("dw3x3_no_padding_u8_weights", *depthwise((1, 16, 6, 9), (3, 3), u8, u8, False), 1),
        ("dw3x3_narrow_rows_relu_s8", *depthwise(
            (1, 40, 7, 7), (3, 3), s8, s8, False, pads=(1, 1, 1, 1), act=("Relu",)), 1),
        ("dw5x5_per_channel_pad2", *depthwise(
            (1, 24, 11, 10), (5, 5), u8, s8, True, pads=(2, 2, 2, 2), bias=True), 1),
        ("dw3x3_dilated_pad2", *depthwise(
            (1, 17, 10, 12), (3, 3), u8, s8, True, pads=(2, 2, 2, 2), dilations=(2, 2)), 1),
        ("dw3x3_stride2_dilated", *depthwise(
            (1, 18, 17, 15), (3, 3), u8, s8, True, strides=(2, 2), pads=(2, 2, 2, 2),
            dilations=(2, 2), bias=True, act=("Relu",)), 1),
        ("dw3x3_stride3", *depthwise((1, 20, 16, 19), (3, 3), u8, s8, False, strides=(3, 3),
                                     pads=(1, 1, 1, 1)), 1),
        ("dw5x3_strides_1x2", *depthwise((1, 12, 11, 13), (5, 3), s8, s8, True, strides=(1, 2),
                                         pads=(2, 1, 2, 1), bias=True), 1),
        ("dw3x3_batch2_relu6", *depthwise(
            (2, 19, 9, 11), (3, 3), u8, s8, True, pads=(1, 1, 1, 1), bias=True, act=relu6), 1),
        ("dw3x3_stride2_batch3", *depthwise(
            (3, 21, 15, 13), (3, 3), s8, s8, False, strides=(2, 2), pads=(1, 1, 1, 1)), 1),
        ("dw3x3_wide_rows_200_channels_relu6", *depthwise(
            (1, 200, 20, 37), (3, 3), u8, s8, True, pads=(1, 1, 1, 1), bias=True, act=relu6), 1),
    ]
    for per_channel in (False, True):
        for stride in (1, 2):
            model, inputs, exact, unit = inverted_residual(rng, args.work, per_channel, stride)
            cases.append((f"quantize_static_block_per_channel{int(per_channel)}_stride{stride}",
                          model, inputs, exact, unit))
    return run_cases(args, cases, kiln, "int8 depthwise conv")


if __name__ == "__main__":
    sys.exit(main())
