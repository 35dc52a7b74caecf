# Quantized matmuls (QDQ, QLinearMatMul, MatMulInteger) as integer kernels on
# the CPU, against onnxruntime's int8 outputs.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: run_int8.py WORKDIR --kilnc PATH --kiln-run PATH [--cpu NAME --expect INTRINSIC [--host-flag FLAG]]

Each case is a small ONNX model with 8-bit operands: a QDQ MatMul
(DequantizeLinear on the activation and the constant weight, QuantizeLinear
after, as onnxruntime's quantize_static writes them), a QLinearMatMul node, a
MatMulInteger node, and a float model quantized by quantize_static itself.
Kilnc must recognize each as an i16 kiln.matmul (checked in --emit=graph)
and call the kernel's instruction in --emit=llvm, and no other: for this
machine's CPU, vpdpbusd (llvm.x86.avx512.vpdpbusd.512) with AVX-512 VNNI,
its ymm form (.256) with AVX-VNNI only, else vpmaddwd
(llvm.x86.avx2.pmadd.wd) with AVX2; with `--cpu NAME` (passed to kilnc)
the intrinsic `--expect` names, or none for `--expect portable`; with
`--host-flag FLAG` (a /proc/cpuinfo flag that code needs) a host without
it compiles and checks each case but does not run it. The outputs are compared with onnxruntime's: int32 outputs
exactly; 8-bit outputs within one unit (onnxruntime requantizes in f32,
Kiln's QDQ path the same way, its QLinearMatMul path in f64 as ONNX's
reference), and the number of elements off by one is printed. Sizes are
awkward on purpose: M = 1, odd K (the last k pair is half zero), K and N
not multiples of the 16-column panel or the 6-row tile, batched
activations, per-column weight scales and zero points, u8 and s8
activations, zero points that are not 0.
Prints one PASS/FAIL line per case and a summary; exits 1 on any failure.
"""

import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from run_float8 import run as run_model

ONNX_TYPE = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}
FLOAT = TensorProto.FLOAT


def const(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def model_of(nodes, inputs, outputs, initializers, opset=21):
    graph = helper.make_graph(nodes, "int8", inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model


def quantized(rng, shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)


def qdq_case(rng, lhs_shape, n, xtype, wtype, per_column):
    """y_q = Q(DQ(x_q) @ DQ(w_q)): the QDQ form of onnxruntime's quantizer."""
    k = lhs_shape[-1]
    x = quantized(rng, lhs_shape, xtype)
    w = quantized(rng, (k, n), wtype)
    sw = (rng.uniform(0.002, 0.02, n) if per_column else np.array(0.01)).astype(np.float32)
    zw = (quantized(rng, (n,), wtype) // 8 if per_column
          else np.array(3 if wtype == np.int8 else 128, wtype)).astype(wtype)
    sx = np.array(0.03, np.float32)
    zx = np.array(100 if xtype == np.uint8 else -5, xtype)
    # y's scale covers about 3 standard deviations of the products.
    sy = np.array(3 * 0.03 * float(np.mean(sw)) * 74 * np.sqrt(k) / 127, np.float32)
    zy = np.array(128 if xtype == np.uint8 else 0, xtype)
    nodes = [
        helper.make_node("DequantizeLinear", ["x", "sx", "zx"], ["xf"]),
        helper.make_node("DequantizeLinear", ["w", "sw", "zw"], ["wf"], axis=1),
        helper.make_node("MatMul", ["xf", "wf"], ["yf"]),
        helper.make_node("QuantizeLinear", ["yf", "sy", "zy"], ["y"]),
    ]
    out_shape = list(lhs_shape[:-1]) + [n]
    model = model_of(
        nodes, [helper.make_tensor_value_info("x", ONNX_TYPE[xtype], list(lhs_shape))],
        [helper.make_tensor_value_info("y", ONNX_TYPE[xtype], out_shape)],
        [const("w", w), const("sw", sw), const("zw", zw), const("sx", sx), const("zx", zx),
         const("sy", sy), const("zy", zy)])
    acc = (x.astype(np.int64) - zx.astype(np.int64)) @ (w.astype(np.int64) - zw.astype(np.int64))
    return model, {"x": x}, requantized(acc, sx * sw / sy, zy)


def requantized(acc, factor, zero):
    """onnxruntime's requantization: f32(acc) * factor (f32), rounded half to
    even, plus the zero point, saturated."""
    info = np.iinfo(zero.dtype)
    y = np.rint(acc.astype(np.float32) * np.float32(factor).astype(np.float32)) + int(zero)
    return np.clip(y, info.min, info.max).astype(zero.dtype)


def qlinear_case(rng, m, k, n, xtype, wtype):
    """QLinearMatMul with a constant b and per-tensor parameters."""
    a = quantized(rng, (m, k), xtype)
    b = quantized(rng, (k, n), wtype)
    sa, sb = np.array(0.05, np.float32), np.array(0.004, np.float32)
    sy = np.array(0.05 * 0.004 * 74 * 3 * np.sqrt(k) / 127, np.float32)
    za = np.array(7 if xtype == np.uint8 else -7, xtype)
    zb = np.array(-2 if wtype == np.int8 else 128, wtype)
    zy = np.array(130 if xtype == np.uint8 else 4, xtype)
    nodes = [helper.make_node("QLinearMatMul",
                              ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])]
    model = model_of(
        nodes, [helper.make_tensor_value_info("a", ONNX_TYPE[xtype], [m, k])],
        [helper.make_tensor_value_info("y", ONNX_TYPE[xtype], [m, n])],
        [const("b", b), const("sa", sa), const("za", za), const("sb", sb), const("zb", zb),
         const("sy", sy), const("zy", zy)])
    acc = (a.astype(np.int64) - int(za)) @ (b.astype(np.int64) - int(zb))
    return model, {"a": a}, requantized(acc, sa * sb / sy, zy)


def integer_case(rng, m, k, n):
    """MatMulInteger, u8 x u8 -> i32, both operands inputs."""
    a = quantized(rng, (m, k), np.uint8)
    b = quantized(rng, (k, n), np.uint8)
    za = np.array(77, np.uint8)
    nodes = [helper.make_node("MatMulInteger", ["a", "b", "za", "zb"], ["y"])]
    model = model_of(
        nodes, [helper.make_tensor_value_info("a", TensorProto.UINT8, [m, k]),
                helper.make_tensor_value_info("b", TensorProto.UINT8, [k, n])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [m, n])],
        [const("za", za), const("zb", np.array(131, np.uint8))])
    acc = (a.astype(np.int64) - 77) @ (b.astype(np.int64) - 131)
    return model, {"a": a, "b": b}, acc.astype(np.int32)


def quantize_static_case(rng, work, m, k, n, per_channel):
    """A float MatMul quantized by onnxruntime's quantize_static (u8
    activations, s8 weights); its float output is DQ(y_q)."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

    w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    model = model_of(nodes, [helper.make_tensor_value_info("x", FLOAT, [m, k])],
                     [helper.make_tensor_value_info("y", FLOAT, [m, n])], [const("w", w)])
    path = os.path.join(work, f"float_{m}x{k}x{n}.onnx")
    onnx.save(model, path)
    samples = [{"x": rng.standard_normal((m, k)).astype(np.float32)} for _ in range(4)]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(samples)

        def get_next(self):
            return next(self.it, None)

    out = path.replace(".onnx", f".qdq{int(per_channel)}.onnx")
    quantize_static(path, out, Reader(), quant_format=QuantFormat.QDQ, per_channel=per_channel)
    qdq = onnx.load(out)
    return qdq, {"x": samples[0]["x"]}, exact_qdq(qdq, samples[0]["x"])


def exact_qdq(model, x):
    """The exact result of a quantize_static MatMul: Q(x) in f32 as ONNX
    specifies, the integer product, onnxruntime's requantization, DQ."""
    values = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    made = {o: node for node in model.graph.node for o in node.output}
    matmul = next(node for node in model.graph.node if node.op_type == "MatMul")
    dx, dw = made[matmul.input[0]], made[matmul.input[1]]
    qx = made[dx.input[0]]
    q_out = next(node for node in model.graph.node
                 if node.op_type == "QuantizeLinear" and node.input[0] == matmul.output[0])
    sx, zx = values[qx.input[1]], values[qx.input[2]]
    info = np.iinfo(zx.dtype)
    xq = np.clip(np.rint(x / sx) + int(zx), info.min, info.max)
    sw, zw = values[dw.input[1]], values[dw.input[2]]
    w = values[dw.input[0]].astype(np.int64) - zw.astype(np.int64)
    sy, zy = values[q_out.input[1]], values[q_out.input[2]]
    yq = requantized((xq.astype(np.int64) - int(zx)) @ w, sx * sw / sy, zy)
    return ((yq.astype(np.float32) - np.float32(zy)) * sy).astype(np.float32)


def reference(model, inputs):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return session.run(None, inputs)[0]


VNNI = "llvm.x86.avx512.vpdpbusd.512"
VNNI_YMM = "llvm.x86.avx512.vpdpbusd.256"
PMADDWD = "llvm.x86.avx2.pmadd.wd"


def host_flags():
    """This machine's CPU flags (/proc/cpuinfo's spelling)."""
    try:
        with open("/proc/cpuinfo") as f:
            return next((line.split() for line in f if line.startswith("flags")), [])
    except OSError:
        return []


def host_intrinsic():
    """The integer kernel's intrinsic for this machine's CPU, or None."""
    flags = host_flags()
    if "avx512_vnni" in flags and "avx512bw" in flags:
        return VNNI
    if "avx_vnni" in flags:
        return VNNI_YMM
    return PMADDWD if "avx2" in flags else None


def check_intrinsic(args, path):
    """The kernel's intrinsic (args.expect) is called and the other is not."""
    expect = args.expect
    llvm = subprocess.run([args.kilnc, *cpu_flags(args), path, "--emit=llvm"],
                          capture_output=True, text=True)
    if llvm.returncode != 0:
        raise RuntimeError("--emit=llvm failed " + llvm.stderr.strip())
    for intrinsic in (VNNI, VNNI_YMM, PMADDWD):
        if intrinsic == expect and intrinsic not in llvm.stdout:
            raise RuntimeError(f"no {intrinsic} in --emit=llvm")
        if intrinsic != expect and intrinsic in llvm.stdout:
            raise RuntimeError(f"{intrinsic} in --emit=llvm, expected {expect or 'neither'}")


def cpu_flags(args):
    return [f"--cpu={args.cpu}"] if args.cpu else []


def kiln(args, name, model, inputs, left_out=()):
    """Compiles the model, checks its graph (an i16 matmul, none of the ops
    `left_out`) and LLVM IR, runs it."""
    case = os.path.join(args.work, name)
    os.makedirs(case, exist_ok=True)
    path = os.path.join(case, "model.onnx")
    onnx.save(model, path)
    graph = subprocess.run([args.kilnc, path, "--emit=graph"], capture_output=True, text=True)
    if graph.returncode != 0 or "xi16>) -> tensor<" not in graph.stdout:
        raise RuntimeError("no i16 kiln.matmul in --emit=graph " + graph.stderr.strip())
    for op in left_out:
        if op in graph.stdout:
            raise RuntimeError(f"a {op} is left in --emit=graph")
    check_intrinsic(args, path)
    if args.host_flag and args.host_flag not in host_flags():
        raise NotRun(f"this host lacks {args.host_flag}")
    return run_model(args, args.work, name, model, inputs,
                     cpu_flags(args))(model.graph.output[0].name)


class NotRun(Exception):
    """A case compiled and checked for a --cpu whose code this host cannot run."""


def compare(name, got, exact, ort_out, unit):
    """Kiln within one unit of the exact integer result (`unit`: 1 for 8-bit
    outputs, 0 for int32, the output scale for a DQ'd float output; the
    ONNX reference requantizes QLinearMatMul in f64, onnxruntime in f32),
    and of onnxruntime's wherever onnxruntime is itself exact (its u8 x s8
    AVX2 kernels can saturate i16 pair sums; those elements are counted)."""
    if got.shape != ort_out.shape or got.dtype != ort_out.dtype:
        return (f"FAIL: {name}: {got.dtype}{list(got.shape)} vs "
                f"{ort_out.dtype}{list(ort_out.shape)}")
    limit = unit * 1.0001
    wide = got.astype(np.float64)
    ort_diff = np.abs(wide - ort_out.astype(np.float64))
    ort_wrong = np.zeros(got.shape, bool)
    if exact is not None:
        diff = np.abs(wide - exact.astype(np.float64))
        if diff.max() > limit:
            return f"FAIL: {name}: {diff.max()} from the exact result (unit {unit})"
        ort_wrong = np.abs(ort_out.astype(np.float64) - exact.astype(np.float64)) > limit
    bad = (ort_diff > limit) & ~ort_wrong
    if bad.any():
        return (f"FAIL: {name}: max difference from onnxruntime {ort_diff.max()} (unit {unit}), "
                f"{int(bad.sum())} of {got.size}")
    spread = int(np.count_nonzero(ort_out != ort_out.flat[0]))
    if spread < got.size // 4:
        return f"FAIL: {name}: the reference is nearly constant ({spread} of {got.size} vary)"
    return (f"PASS: {name}: {int(np.count_nonzero(ort_diff))} of {got.size} differ from "
            f"onnxruntime, {int(ort_wrong.sum())} of them where onnxruntime is more than one "
            f"unit off the exact result")


def parse_args():
    """WORKDIR, --kilnc, --kiln-run, and --cpu/--expect (run_int8_conv.py
    uses it too)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("work")
    parser.add_argument("--kilnc", required=True)
    parser.add_argument("--kiln-run", required=True)
    parser.add_argument("--cpu", help="kilnc's --cpu (default: this machine's)")
    parser.add_argument("--expect", help="the intrinsic the kernels call with --cpu, or portable")
    parser.add_argument("--host-flag", help="a /proc/cpuinfo flag the --cpu code needs: without "
                        "it, cases are compiled and checked but not run")
    args = parser.parse_args()
    if args.cpu and not args.expect:
        parser.error("--cpu needs --expect")
    if not args.cpu:
        args.expect = host_intrinsic()
    elif args.expect == "portable":
        args.expect = None
    return args


def main():
    args = parse_args()
    rng = np.random.default_rng(22)
    u8, s8 = np.uint8, np.int8
    cases = [
        ("qdq_u8_m1", *qdq_case(rng, (1, 64), 48, u8, s8, False), 1),
        ("qdq_u8_odd_k", *qdq_case(rng, (13, 77), 19, u8, s8, False), 1),
        ("qdq_s8_per_column", *qdq_case(rng, (7, 300), 40, s8, s8, True), 1),
        ("qdq_u8_batched_per_column", *qdq_case(rng, (2, 9, 129), 33, u8, s8, True), 1),
        ("qdq_u8_u8_weights", *qdq_case(rng, (6, 32), 16, u8, u8, False), 1),
        ("qlinear_u8", *qlinear_case(rng, 5, 31, 23, u8, s8), 1),
        ("qlinear_s8_m1", *qlinear_case(rng, 1, 256, 70, s8, s8), 1),
        ("qlinear_u8_u8", *qlinear_case(rng, 20, 18, 17, u8, u8), 1),
        ("integer_u8", *integer_case(rng, 11, 45, 29), 0),
        # Past one 64-column VNNI panel, K not a multiple of 4 or of 32.
        ("integer_u8_wide", *integer_case(rng, 14, 71, 130), 0),
        ("qdq_s8_u8_weights_wide", *qdq_case(rng, (8, 203), 150, s8, u8, False), 1),
    ]
    for per_channel in (False, True):
        model, inputs, exact = quantize_static_case(rng, args.work, 24, 96, 50, per_channel)
        scale = [numpy_helper.to_array(t) for t in model.graph.initializer
                 if t.name.startswith("y_scale")]
        unit = float(scale[0]) if scale else 1.0
        cases.append((f"quantize_static_per_channel{int(per_channel)}", model, inputs, exact, unit))
    return run_cases(args, cases, kiln, "int8")


def run_cases(args, cases, compile_and_run, label):
    """Runs each (name, model, inputs, exact, unit) case through
    `compile_and_run` and compare(); prints a line per case and a summary
    (run_int8_conv.py uses it too); returns the exit status."""
    failures = 0
    for name, model, inputs, exact, unit in cases:
        try:
            line = compare(name, compile_and_run(args, name, model, inputs), exact,
                           reference(model, inputs), unit)
        except NotRun as e:
            line = f"PASS: {name}: compiled and checked, not run ({e})"
        except RuntimeError as e:
            line = f"FAIL: {name}: {e}"
        failures += line.startswith("FAIL")
        print(line)
    print(f"{label}: {len(cases) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
