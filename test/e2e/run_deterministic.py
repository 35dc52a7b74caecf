# Runs each compiled model with several thread counts and checks the outputs are bit-identical.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: run_deterministic.py DIR --kiln-run PATH [--threads N]... [--model M] [--rerun-seed S]

For every DIR/MODEL/a/MODEL.so (the CPU artifacts run_reproducible.py
leaves), kiln-run with the same generated inputs (--seed 1) once per
--threads count (default 1, 2, 3) and once more with the first count, each
writing its outputs as .npy files; every run's files must equal the first
run's byte for byte. Prints `MODEL: bit-identical (N outputs, threads ...,
rerun)` or `MODEL: DIFFERENT (output O, threads T)` and a summary; exits 1
if any run differs. --model checks only MODEL M. --rerun-seed gives the rerun other inputs (the
self-test: a real difference must be noticed).
"""

import argparse
import os
import subprocess
import sys


def run(kiln_run, artifact, out_dir, threads, seed):
    """The output files of one run, by name."""
    subprocess.run([kiln_run, artifact, "--threads", str(threads), "--seed", str(seed),
                    "--output-dir", out_dir], check=True, capture_output=True, timeout=600)
    outputs = {}
    for name in sorted(os.listdir(out_dir)):
        with open(os.path.join(out_dir, name), "rb") as file:
            outputs[name] = file.read()
    return outputs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--kiln-run", required=True)
    parser.add_argument("--threads", type=int, action="append")
    parser.add_argument("--model")
    parser.add_argument("--rerun-seed", type=int, default=1)
    args = parser.parse_args()
    counts = args.threads or [1, 2, 3]
    different = 0
    models = sorted(m for m in os.listdir(args.dir)
                    if os.path.exists(os.path.join(args.dir, m, "a", f"{m}.so"))
                    and args.model in (None, m))
    for name in models:
        artifact = os.path.join(args.dir, name, "a", f"{name}.so")
        runs = [(threads, 1) for threads in counts] + [(counts[0], args.rerun_seed)]
        first, verdict = None, None
        for index, (threads, seed) in enumerate(runs):
            out_dir = os.path.join(args.dir, name, f"run-{threads}-{seed}-{index}")
            outputs = run(args.kiln_run, artifact, out_dir, threads, seed)
            if first is None:
                first = outputs
                continue
            changed = [o for o in first if outputs.get(o) != first[o]]
            if changed and verdict is None:
                what = "rerun" if index == len(runs) - 1 else f"threads {threads}"
                verdict = f"DIFFERENT (output {changed[0]}, {what})"
        if verdict:
            different += 1
        else:
            verdict = (f"bit-identical ({len(first)} outputs, threads "
                       f"{', '.join(map(str, counts))}, rerun)")
        print(f"{name}: {verdict}")
    print(f"deterministic cpu: {len(models) - different} of {len(models)} bit-identical")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
