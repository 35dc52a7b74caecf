# Zoo models with Kiln --precision=bf16 against Kiln fp32 and onnxruntime fp32, one run.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: bench/bf16_models.py [--models resnet50,bert] [--batch 1] [--rounds 3]

For each zoo model (bench/models/zoo.py, written under --work): compiles it with
kilnc --precision=fp32 and --precision=bf16, then times onnxruntime (fp32, CPU
provider), Kiln fp32 and Kiln bf16 in interleaved rounds (median of the
rounds' medians, bench/timing.py), and compares each Kiln output with the fp32
reference (onnxruntime's, written by zoo.py): the largest error relative to
the output's max |value|. Prints one table; records nothing.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "models"))
import timing  # noqa: E402
import zoo  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    build = os.path.join(ROOT, "build")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="resnet50,bert")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=3, help="timed runs per round and side")
    p.add_argument("--work", default=os.path.join(build, "bench"))
    p.add_argument("--kilnc", default=os.path.join(build, "bin", "kilnc"))
    p.add_argument("--kiln-run", default=os.path.join(build, "bin", "kiln-run"))
    return p.parse_args()


def compile_model(args, model_path, shapes, precision):
    artifact = os.path.join(os.path.dirname(model_path), f"model-b{args.batch}-{precision}.so")
    command = [args.kilnc, model_path, f"--precision={precision}", "-o", artifact]
    command += [f"--input-shape={k}={'x'.join(map(str, v))}" for k, v in shapes.items()]
    subprocess.run(command, check=True)
    return artifact


def errors(args, artifact, files, reference_dir, out_dir):
    """max |kiln - reference| / max |reference| per output."""
    subprocess.run(timing.kiln_args(args.kiln_run, artifact, files, args.threads) +
                   ["--output-dir", out_dir], check=True, capture_output=True)
    result = {}
    for name in sorted(os.listdir(reference_dir)):
        ref = np.load(os.path.join(reference_dir, name)).astype(np.float64)
        got = np.load(os.path.join(out_dir, name)).astype(np.float64)
        result[name[:-4]] = float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30))
    return result


def main():
    args = parse_args()
    zoo_dir = os.path.join(args.work, "zoo")
    print(f"bf16 models: batch {args.batch}, {args.threads} threads, {args.rounds} interleaved "
          f"rounds (load average {os.getloadavg()[0]:.2f} at start)")
    print(f"  {'model':10} {'ORT fp32 ms':>11} {'Kiln fp32 ms':>12} {'Kiln bf16 ms':>12} "
          f"{'bf16/fp32':>9} {'bf16/ORT':>8}  max error / max|ref| (fp32; bf16)")
    for name in args.models.split(","):
        model_dir = zoo.write_model(name, zoo_dir, False, [args.batch])
        with open(os.path.join(model_dir, "meta.json")) as f:
            shapes = json.load(f)["batches"][str(args.batch)]
        model_path = os.path.join(model_dir, "model.onnx")
        batch_dir = os.path.join(model_dir, f"b{args.batch}")
        files = {k: os.path.join(batch_dir, "inputs", k + ".npy") for k in shapes}
        inputs = {k: np.load(path) for k, path in files.items()}
        artifacts = {p: compile_model(args, model_path, shapes, p) for p in ("fp32", "bf16")}
        errs = {p: errors(args, a, files, os.path.join(batch_dir, "reference"),
                          os.path.join(batch_dir, f"out-{p}")) for p, a in artifacts.items()}
        session = timing.ort_session(model_path, args.threads)
        samples = {"ort": [], "fp32": [], "bf16": []}
        for _ in range(args.rounds):
            samples["ort"].append(timing.ort_round(session, inputs, args.reps))
            for p, a in artifacts.items():
                samples[p].append(timing.kiln_round(
                    timing.kiln_args(args.kiln_run, a, files, args.threads), args.reps, 600))
        ms = {k: statistics.median(v) for k, v in samples.items()}
        error_text = "; ".join(
            f"{out} {errs['fp32'][out]:.1e} / {errs['bf16'][out]:.1e}" for out in errs["bf16"])
        print(f"  {name:10} {ms['ort']:11.1f} {ms['fp32']:12.1f} {ms['bf16']:12.1f} "
              f"{ms['bf16'] / ms['fp32']:9.2f} {ms['bf16'] / ms['ort']:8.2f}  {error_text}",
              flush=True)
    print(f"  (load average {os.getloadavg()[0]:.2f} at the end)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
