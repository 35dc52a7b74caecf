# MatMulNBits (int4 weights, onnxruntime's own quantizer) on GPT-2 linear shapes: Kiln vs onnxruntime.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: bench/nbits_matmul.py [--shapes 768x2304,...] [--rows 1,8] [--rounds 5] [--record FILE]

For each K x N (GPT-2 small's linear layers: attention qkv 768x2304, attention
projection 768x768, MLP up 768x3072, MLP down 3072x768) and each M: a float
model y = x @ w + b (w constant, N(0, 1/K)) and its MatMulNBits form written
by onnxruntime's `MatMulNBitsQuantizer` (4 bits, blocks of 32, symmetric and
asymmetric, accuracy level unset: f32 compute). Times, in interleaved rounds
(median of the rounds' medians, bench/timing.py), Kiln on the MatMulNBits
model (the low-bit kernel), onnxruntime on the same model (its MLAS
MatMulNBits kernel) and onnxruntime and Kiln on the float model. Checks Kiln's
output against onnxruntime's on the MatMulNBits model (largest difference
relative to the largest |y|). Prints one table; with --record, writes it as a
run file for docs/benchmarks/ (bench/summarize.py reads its `Kiln ms` and `ORT
ms` columns: ORT is onnxruntime's MatMulNBits).

Needs onnx-ir (which onnxruntime's quantizer imports) beside onnxruntime.
"""

import argparse
import datetime
import os
import statistics
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402
import timing  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    build = os.path.join(ROOT, "build")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", default="768x2304,768x768,768x3072,3072x768", help="K x N")
    p.add_argument("--rows", default="1,8", help="values of M")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reps", type=int, default=50, help="timed runs per round and side")
    p.add_argument("--work", default=os.path.join(build, "bench", "nbits"))
    p.add_argument("--kilnc", default=os.path.join(build, "bin", "kilnc"))
    p.add_argument("--kiln-run", default=os.path.join(build, "bin", "kiln-run"))
    p.add_argument("--record", help="write the run file (markdown) here")
    return p.parse_args()


def write_models(work, m, k, n, symmetric, rng):
    """The float model, its MatMulNBits form and one input; returns their paths."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    os.makedirs(work, exist_ok=True)
    w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
    b = (0.1 * rng.standard_normal(n)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["xw"]), helper.make_node("Add", ["xw", "b"], ["y"])],
        "linear", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    fp32 = os.path.join(work, "fp32.onnx")
    onnx.save(model, fp32)
    quantizer = MatMulNBitsQuantizer(model, bits=4, block_size=32, is_symmetric=symmetric)
    quantizer.process()
    quantized = quantizer.model.model
    if not any(node.op_type == "MatMulNBits" for node in quantized.graph.node):
        raise RuntimeError("the quantizer wrote no MatMulNBits node")
    nbits = os.path.join(work, "nbits.onnx")
    onnx.save(quantized, nbits)
    x = os.path.join(work, "x.npy")
    np.save(x, rng.standard_normal((m, k)).astype(np.float32))
    return fp32, nbits, x


def main():
    args = parse_args()
    rng = np.random.default_rng(0)
    load_before = os.getloadavg()[0]
    versions = report.versions(ROOT, args.kilnc)
    start = datetime.datetime.now(datetime.timezone.utc)
    print(f"MatMulNBits int4 (block 32): {args.threads} threads, {args.rounds} interleaved "
          f"rounds x {args.reps} runs (load average {load_before:.2f} at start)", flush=True)
    header = ["case", "batch", "Kiln ms", "ORT ms", "Kiln/ORT time", "ORT fp32 ms",
              "Kiln/ORT fp32", "Kiln fp32 ms", "max diff Kiln vs ORT (of max y)"]
    rows = []
    for shape in args.shapes.split(","):
        k, n = map(int, shape.split("x"))
        for symmetric in (True, False):
            for m in map(int, args.rows.split(",")):
                case = f"MatMulNBits {k}x{n} {'sym' if symmetric else 'asym'}"
                work = os.path.join(args.work, f"{k}x{n}-{'sym' if symmetric else 'asym'}-m{m}")
                fp32, nbits, x = write_models(work, m, k, n, symmetric, rng)
                artifacts = {}
                for name, model in (("nbits", nbits), ("fp32", fp32)):
                    artifacts[name] = os.path.join(work, name + ".so")
                    subprocess.run([args.kilnc, model, "-o", artifacts[name]], check=True)
                files = {"x": x}
                out = os.path.join(work, "out")
                subprocess.run(timing.kiln_args(args.kiln_run, artifacts["nbits"], files,
                                                args.threads) + ["--output-dir", out],
                               check=True, capture_output=True)
                sessions = {"ort": timing.ort_session(nbits, args.threads),
                            "ort_fp32": timing.ort_session(fp32, args.threads)}
                inputs = {"x": np.load(x)}
                ref = sessions["ort"].run(None, inputs)[0].astype(np.float64)
                got = np.load(os.path.join(out, "y.npy")).astype(np.float64)
                diff = float(np.abs(got - ref).max() / np.abs(ref).max())
                samples = {"kiln": [], "ort": [], "ort_fp32": [], "kiln_fp32": []}
                for _ in range(args.rounds):
                    for key, session in sessions.items():
                        samples[key].append(timing.ort_round(session, inputs, args.reps))
                    for key, artifact in (("kiln", "nbits"), ("kiln_fp32", "fp32")):
                        samples[key].append(timing.kiln_round(
                            timing.kiln_args(args.kiln_run, artifacts[artifact], files,
                                             args.threads), args.reps, 600))
                ms = {key: statistics.median(v) for key, v in samples.items()}
                row = [case, str(m), f"{ms['kiln']:.4f}", f"{ms['ort']:.4f}",
                       f"{ms['kiln'] / ms['ort']:.2f}", f"{ms['ort_fp32']:.4f}",
                       f"{ms['kiln'] / ms['ort_fp32']:.2f}", f"{ms['kiln_fp32']:.4f}",
                       f"{diff:.1e}"]
                rows.append(row)
                print("  " + " | ".join(row), flush=True)
    load_after = os.getloadavg()[0]
    lines = [f"# {start:%Y-%m-%d %H:%M} UTC — CPU, {args.threads} threads — MatMulNBits int4 "
             "linear layers (GPT-2 small shapes)", "",
             f"- machine: {report.machine()}",
             f"- versions: kiln `{versions['kiln']}`, onnxruntime {versions['onnxruntime']}, "
             f"LLVM {versions['llvm']}",
             f"- noise: load average {load_before:.2f} at start, {load_after:.2f} at end "
             "(2 CPUs: above ~2 means other work competed)",
             f"- method: `bench/nbits_matmul.py --rounds {args.rounds} --reps {args.reps}`: "
             "y = x @ w + b quantized by onnxruntime's `MatMulNBitsQuantizer` (4 bits, block "
             "32, accuracy level unset); interleaved rounds (`bench/timing.py`), median of "
             "round medians; `ORT ms` is onnxruntime on the MatMulNBits model, `ORT fp32 ms` "
             "on the float model, `Kiln fp32 ms` Kiln on the float model; ORT timed around "
             "`session.run` from Python (adds ~10-30 µs per run)", "",
             "## MatMulNBits", "",
             "| " + " | ".join(header) + " |",
             "| " + " | ".join("---" if i == 0 else "---:" for i in range(len(header))) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    text = "\n".join(lines) + "\n"
    print("\n" + text)
    if args.record:
        with open(args.record, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
