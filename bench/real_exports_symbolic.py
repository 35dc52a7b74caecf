# Times real exports compiled with symbolic dims against the same exports compiled at static shapes.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: real_exports_symbolic.py WORK --kilnc PATH --kiln-run PATH [--batch 8] [--seq 32]
                                  [--runs 20] [--rounds 3] [--threads 2] MODEL.onnx...

Issue 27's target: a symbolic-batch artifact within 10% of a static-shape one.
Each model (a test/real-exports/zoo export, its weights restored by weights.py)
is compiled twice: as exported (`kilnc model.onnx`, symbolic dims) and with
every input fixed at --batch (and --seq for a second symbolic dim) by
--input-shape. Both run at that size with `kiln-run --shape ... --warmup 2
--bench RUNS` in alternating rounds (machine drift hits both alike); a side's
time is the smallest of its round medians. Prints one row per model: static
and symbolic milliseconds and symbolic / static.
"""

import argparse
import os
import re
import subprocess
import sys

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "test", "real-exports"))
import weights  # noqa: E402
import zoo_runs  # noqa: E402

MEDIAN = re.compile(r"median=([0-9.]+)")


def compile_both(path, work, args):
    """(shape flags for kiln-run, static artifact, symbolic artifact)."""
    name = os.path.basename(path)[:-len(".onnx")]
    model = onnx.load(path)
    weights.restore(model)
    source = os.path.join(work, name + ".onnx")
    onnx.save(model, source)
    shapes = {v.name: "x".join(map(str, zoo_runs.input_shape(v, args.batch, args.seq)))
              for v in zoo_runs.graph_inputs(model)}
    static, symbolic = (os.path.join(work, f"{name}.{kind}.so") for kind in ("static", "symbolic"))
    subprocess.run([args.kilnc, source, "-o", symbolic], check=True)
    subprocess.run([args.kilnc, source, "-o", static]
                   + [f"--input-shape={n}={s}" for n, s in shapes.items()], check=True)
    os.remove(source)
    return [f"--shape={n}={s}" for n, s in shapes.items()], static, symbolic


def median_ms(artifact, shape_flags, args):
    done = subprocess.run([args.kiln_run, artifact, "--threads", str(args.threads), "--warmup", "2",
                           "--bench", str(args.runs)] + shape_flags,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=True)
    return float(MEDIAN.search(done.stdout).group(1))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("work")
    p.add_argument("--kilnc", required=True)
    p.add_argument("--kiln-run", required=True)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=32)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("models", nargs="+")
    args = p.parse_intermixed_args()
    os.makedirs(args.work, exist_ok=True)
    print(f"batch {args.batch} (seq {args.seq}), {args.threads} threads, "
          f"{args.rounds} rounds of {args.runs} runs; ms = smallest round median")
    print("| model | static ms | symbolic ms | symbolic / static |")
    print("| --- | --- | --- | --- |")
    for path in args.models:
        flags, static, symbolic = compile_both(path, args.work, args)
        times = {static: [], symbolic: []}
        for _ in range(args.rounds):
            for artifact in (static, symbolic):
                times[artifact].append(median_ms(artifact, flags, args))
        s, d = min(times[static]), min(times[symbolic])
        name = os.path.basename(path)[:-len(".onnx")]
        print(f"| {name} | {s:.2f} | {d:.2f} | {d / s:.2f} |", flush=True)


if __name__ == "__main__":
    main()
