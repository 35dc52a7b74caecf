# CPU bf16 GEMM against the CPU's measured dot-product peak and Kiln's fp32 GEMM.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: bench/bf16_gemm.py [--n 2048] [--threads 2] [--rounds 3] [--work DIR]

One run, side by side: the vdpbf16ps and f32 FMA peaks of this CPU
(bench/dot_peak.c: loops of independent zmm instructions, compiled here with
clang), and a MatMul N x N x N compiled by kilnc with --precision=bf16 and
with fp32, B as a constant weight (packed at compile time) and as an input
(packed at run time), timed with kiln-run in interleaved rounds (median of the
rounds' medians). The bf16 outputs are checked against float64: the largest
error relative to sum |a_i b_i| must stay under the bf16 bound (2.01 * 2^-8).
Needs a CPU with avx512_bf16 and clang with -mavx512bf16.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    build = os.path.join(ROOT, "build")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=2048)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=5, help="timed runs per round and side")
    p.add_argument("--work", default=os.path.join(build, "bench", "bf16-gemm"))
    p.add_argument("--kilnc", default=os.path.join(build, "bin", "kilnc"))
    p.add_argument("--kiln-run", default=os.path.join(build, "bin", "kiln-run"))
    p.add_argument("--clang", default="clang-22")
    return p.parse_args()


def gemm_model(n, a, b, weights):
    """C = A @ B, B an initializer (`weights`) or a second input."""
    f32 = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [n, n])
    inputs = [f32("a")] + ([] if weights else [f32("b")])
    inits = [numpy_helper.from_array(b, "b")] if weights else []
    graph = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["c"])], "gemm", inputs,
                              [f32("c")], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def peak(binary, threads):
    out = subprocess.run([binary, str(threads), "1.0"], capture_output=True, text=True,
                         check=True).stdout
    return {k: float(v) for k, v in re.findall(r"(\S+) (\S+)", out)}


def kiln_ms(args, artifact, inputs, reps):
    command = [args.kiln_run, artifact, "--threads", str(args.threads), "--warmup", "1",
               "--bench", str(reps)]
    for name, path in inputs.items():
        command += ["--input", f"{name}={path}"]
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip() or out.stdout.strip())
    return float(re.search(r"latency_ms min=\S+ median=(\S+)", out.stdout).group(1))


def main():
    args = parse_args()
    os.makedirs(args.work, exist_ok=True)
    binary = os.path.join(args.work, "dot_peak")
    subprocess.run([args.clang, "-O2", "-mavx512f", "-mavx512bf16", "-pthread",
                    os.path.join(ROOT, "bench", "dot_peak.c"), "-o", binary], check=True)
    n = args.n
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), np.float32)
    b = rng.standard_normal((n, n), np.float32)
    files = {"a": os.path.join(args.work, "a.npy"), "b": os.path.join(args.work, "b.npy")}
    np.save(files["a"], a)
    np.save(files["b"], b)
    artifacts = {}
    for weights in (True, False):
        model_path = os.path.join(args.work, f"gemm{n}-{'weights' if weights else 'inputs'}.onnx")
        onnx.save(gemm_model(n, a, b, weights), model_path)
        for precision in ("fp32", "bf16"):
            so = model_path[:-5] + f"-{precision}.so"
            subprocess.run([args.kilnc, model_path, f"--precision={precision}", "-o", so],
                           check=True)
            artifacts[(weights, precision)] = (so, {"a": files["a"]} if weights else files)
    # bf16 accuracy: float64 reference, error relative to sum |a_i b_i|.
    ref = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    errors = {}
    for key, (so, inputs) in artifacts.items():
        out_dir = os.path.join(args.work, "out-" + os.path.basename(so)[:-3])
        command = [args.kiln_run, so, "--threads", str(args.threads), "--output-dir", out_dir]
        for name, path in inputs.items():
            command += ["--input", f"{name}={path}"]
        subprocess.run(command, check=True, capture_output=True)
        got = np.load(os.path.join(out_dir, "c.npy")).astype(np.float64)
        errors[key] = float((np.abs(got - ref) / scale).max())
    samples = {"peak": [], **{key: [] for key in artifacts}}
    for _ in range(args.rounds):
        samples["peak"].append(peak(binary, args.threads))
        for key, (so, inputs) in artifacts.items():
            samples[key].append(kiln_ms(args, so, inputs, args.reps))
    bf16_peak = statistics.median(p["bf16-dot"] for p in samples["peak"])
    f32_peak = statistics.median(p["f32-fma"] for p in samples["peak"])
    flops = 2.0 * n ** 3
    print(f"bf16 GEMM {n}^3, {args.threads} threads, {args.rounds} interleaved rounds "
          f"(load average {os.getloadavg()[0]:.2f} at the end)")
    print(f"  peak vdpbf16ps {bf16_peak:7.1f} GFLOP/s   peak f32 FMA {f32_peak:7.1f} GFLOP/s "
          f"(dot_peak.c, 12 independent zmm accumulators per thread)")
    print(f"  {'B':8} {'precision':9} {'ms':>8} {'GFLOP/s':>8} {'of bf16 peak':>12} "
          f"{'of f32 peak':>11} {'max err/sum|ab|':>15}")
    gflops = {}
    for (weights, precision), times in ((k, v) for k, v in samples.items() if k != "peak"):
        ms = statistics.median(times)
        gflops[(weights, precision)] = flops / ms / 1e6
        print(f"  {'weights' if weights else 'input':8} {precision:9} {ms:8.2f} "
              f"{gflops[(weights, precision)]:8.1f} {gflops[(weights, precision)] / bf16_peak:12.1%} "
              f"{gflops[(weights, precision)] / f32_peak:11.1%} "
              f"{errors[(weights, precision)]:15.2e}")
    for weights in (True, False):
        print(f"  bf16 / fp32 ({'weights' if weights else 'input'} B): "
              f"{gflops[(weights, 'bf16')] / gflops[(weights, 'fp32')]:.2f}x")
    bound = 2.01 * 2.0 ** -8
    bad = [k for k, e in errors.items() if k[1] == "bf16" and e > bound]
    if bad:
        print(f"FAIL: bf16 error above the bound {bound:.2e}: {bad}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
