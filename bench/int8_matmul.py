# A QDQ MatMul from onnxruntime's quantize_static: Kiln int8 against Kiln fp32 and onnxruntime int8.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: bench/int8_matmul.py [--shapes 128x768x768,128x768x3072] [--rounds 5] [--baseline-kilnc PATH]

For each M x K x N: a float model y = x @ w (w a constant, N(0, 1/K)) and its
QDQ form written by onnxruntime's quantize_static (u8 activations, s8
weights, per-tensor, 4 calibration samples). Compiles the float model (Kiln
fp32) and the QDQ model (Kiln int8: an i16 kiln.matmul, its vpmaddwd
kernel and the requantization epilogue), then times onnxruntime on the QDQ
model (its int8 QLinearMatMul), Kiln int8 and Kiln fp32 in interleaved
rounds (median of the rounds' medians, bench/timing.py). Checks Kiln int8's
output against onnxruntime's: the largest difference in units of the
output's scale (0 or 1 expected). With --baseline-kilnc, the QDQ model
compiled by that kilnc (another commit's: before a kernel change) is
timed in the same rounds too ("base int8"). Prints one table; records
nothing.
"""

import argparse
import os
import statistics
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import timing  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    build = os.path.join(ROOT, "build")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", default="128x768x768,128x768x3072,1x768x768")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reps", type=int, default=20, help="timed runs per round and side")
    p.add_argument("--work", default=os.path.join(build, "bench", "int8"))
    p.add_argument("--kilnc", default=os.path.join(build, "bin", "kilnc"))
    p.add_argument("--kiln-run", default=os.path.join(build, "bin", "kiln-run"))
    p.add_argument("--baseline-kilnc", help="also time the QDQ model compiled by this kilnc")
    return p.parse_args()


def write_models(work, m, k, n, rng):
    """The float model, its QDQ form and one input; returns their paths."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

    os.makedirs(work, exist_ok=True)
    w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    fp32 = os.path.join(work, "fp32.onnx")
    onnx.save(model, fp32)
    samples = [{"x": rng.standard_normal((m, k)).astype(np.float32)} for _ in range(4)]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(samples)

        def get_next(self):
            return next(self.it, None)

    qdq = os.path.join(work, "qdq.onnx")
    quantize_static(fp32, qdq, Reader(), quant_format=QuantFormat.QDQ)
    x = os.path.join(work, "x.npy")
    np.save(x, samples[0]["x"])
    scale = [numpy_helper.to_array(t) for t in onnx.load(qdq).graph.initializer
             if t.name == "y_scale"]
    return fp32, qdq, x, float(scale[0])


def compile_model(args, model, artifact, kilnc=None):
    subprocess.run([kilnc or args.kilnc, model, "-o", artifact], check=True)
    return artifact


def main():
    args = parse_args()
    rng = np.random.default_rng(0)
    print(f"int8 matmul (QDQ from quantize_static): {args.threads} threads, {args.rounds} "
          f"interleaved rounds (load average {os.getloadavg()[0]:.2f} at start)")
    base = " base int8 ms  int8/base" if args.baseline_kilnc else ""
    print(f"  {'M x K x N':16} {'ORT int8 ms':>11} {'Kiln int8 ms':>12} {'Kiln fp32 ms':>12} "
          f"{'int8/ORT':>8} {'int8/fp32':>9} {'int8 GOP/s':>10}{base}  max |Kiln - ORT| (units)")
    for shape in args.shapes.split(","):
        m, k, n = map(int, shape.split("x"))
        work = os.path.join(args.work, shape)
        fp32, qdq, x, unit = write_models(work, m, k, n, rng)
        artifacts = {"int8": compile_model(args, qdq, os.path.join(work, "int8.so")),
                     "fp32": compile_model(args, fp32, os.path.join(work, "fp32.so"))}
        if args.baseline_kilnc:
            artifacts["base"] = compile_model(args, qdq, os.path.join(work, "base.so"),
                                              args.baseline_kilnc)
        files = {"x": x}
        out = os.path.join(work, "out")
        subprocess.run(timing.kiln_args(args.kiln_run, artifacts["int8"], files, args.threads) +
                       ["--output-dir", out], check=True, capture_output=True)
        session = timing.ort_session(qdq, args.threads)
        inputs = {"x": np.load(x)}
        ref = session.run(None, inputs)[0].astype(np.float64)
        got = np.load(os.path.join(out, "y.npy")).astype(np.float64)
        units = float(np.abs(got - ref).max() / unit)
        samples = {"ort": [], **{p: [] for p in artifacts}}
        for _ in range(args.rounds):
            samples["ort"].append(timing.ort_round(session, inputs, args.reps))
            for p, a in artifacts.items():
                samples[p].append(timing.kiln_round(
                    timing.kiln_args(args.kiln_run, a, files, args.threads), args.reps, 600))
        ms = {key: statistics.median(v) for key, v in samples.items()}
        gops = 2 * m * k * n / ms["int8"] / 1e6
        print(f"  {shape:16} {ms['ort']:11.3f} {ms['int8']:12.3f} {ms['fp32']:12.3f} "
              f"{ms['int8'] / ms['ort']:8.2f} {ms['int8'] / ms['fp32']:9.2f} {gops:10.1f}"
              + (f" {ms['base']:12.3f} {ms['int8'] / ms['base']:10.2f}" if "base" in ms else "")
              + f"  {units:.0f}", flush=True)
    print(f"  (load average {os.getloadavg()[0]:.2f} at the end)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
