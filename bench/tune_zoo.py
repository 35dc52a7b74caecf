# Tunes the zoo CNNs' matmuls on this machine and merges the winners into the shipped tuning database.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: build/.venv/bin/python bench/tune_zoo.py [--models resnet18,resnet50,mobilenetv2]
           [--batches 1,8] [--threads 2] [--budget-s 2100] [--candidates 8] [--out FILE]
           [--cpu native] [--small]

Regenerates the shipped tuning database of this machine's CPU (docs/tuning.md): for each
zoo model (bench/models, full size, seeded random weights) and batch, `tune_cpu.py build`
compiles candidate artifacts for the compiling machine's CPU (`--cpu=native`, whose LLVM
name, e.g. znver5, the records carry) and `tune_cpu.py run` times them at --threads in
interleaved rounds, checked against the default candidate's outputs. The total wall time
is bounded by --budget-s: each (model, batch) gets an equal share of what is left, 40% of
it for compiling candidates and the rest for timing them. Every measurement is kept in
WORK/MODEL-bBATCH/db.jsonl.log (notes name the model, batch and candidate); the winners of
all of them and the records already in the output file are merged with `kiln-tune merge`
(per key the fastest valid record) into --out, default data/tuning/CPU.jsonl, which the
build copies to share/kiln/tuning beside kilnc.
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "models"))
import zoo  # noqa: E402


def main():
    build = os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build"))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="resnet18,resnet50,mobilenetv2")
    p.add_argument("--batches", default="1,8")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--budget-s", type=float, default=2100, help="wall time of the whole tuning")
    p.add_argument("--candidates", type=int, default=8)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--round-s", type=float, default=2.0,
                   help="seconds per candidate and round (sets the timed runs, 3 to 20)")
    p.add_argument("--out", help="the database to merge into (default data/tuning/CPU.jsonl)")
    p.add_argument("--cpu", default="native",
                   help="kilnc --cpu of the candidates (the records' features; default native)")
    p.add_argument("--small", action="store_true",
                   help="the zoo's few-layer configurations (a check of this script)")
    p.add_argument("--work", default=os.path.join(build, "tune-zoo"))
    p.add_argument("--kilnc", default=os.path.join(build, "bin", "kilnc"))
    args = p.parse_args()
    bin_dir = os.path.dirname(args.kilnc)
    tools = ["--kilnc", args.kilnc, "--kiln-run", os.path.join(bin_dir, "kiln-run"),
             "--kiln-tune", os.path.join(bin_dir, "kiln-tune")]
    models, batches = args.models.split(","), [int(b) for b in args.batches.split(",")]
    cases = [(m, b) for m in models for b in batches]
    start, databases, features = time.monotonic(), [], None
    print(f"tune_zoo: {len(cases)} cases, budget {args.budget_s:g} s, {args.threads} threads, "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    for index, (model, batch) in enumerate(cases):
        share = (args.budget_s - (time.monotonic() - start)) / (len(cases) - index)
        if share < 60:
            print(f"tune_zoo: budget spent; {model} b{batch} and later not tuned", flush=True)
            break
        model_dir = zoo.write_model(model, os.path.join(args.work, "zoo-small" if args.small
                                                         else "zoo"), args.small, batches)
        with open(os.path.join(model_dir, "meta.json")) as f:
            shapes = json.load(f)["batches"][str(batch)]
        shape_args = [f"--kilnc-arg=--input-shape={k}={'x'.join(map(str, v))}"
                      for k, v in shapes.items()]
        case_dir = os.path.join(args.work, f"{model}-b{batch}")
        db = os.path.join(case_dir, "db.jsonl")
        case_start = time.monotonic()
        subprocess.run([sys.executable, os.path.join(HERE, "tune_cpu.py"), "tune",
                        os.path.join(model_dir, "model.onnx"), "-o", db, "--dir", case_dir,
                        "--candidates", str(args.candidates),
                        "--build-budget-s", f"{0.4 * share:.0f}",
                        "--budget-s", f"{0.6 * share:.0f}", "--rounds", str(args.rounds),
                        "--round-s", str(args.round_s), "--threads", str(args.threads),
                        f"--kilnc-arg=--cpu={args.cpu}"] + shape_args + tools, check=True)
        # Say which model and batch each measurement came from.
        log = db + ".log"
        with open(log) as f:
            records = [json.loads(line) for line in f if line.strip()]
        for r in records:
            r["note"] = f"{model} b{batch} {r.get('note', '')}".strip()
            features = r["features"]
        with open(log, "w") as f:
            f.writelines(json.dumps(r, sort_keys=True) + "\n" for r in records)
        databases.append(log)
        print(f"tune_zoo: {model} b{batch} took {time.monotonic() - case_start:.0f} s, "
              f"load average {os.getloadavg()[0]:.2f}", flush=True)
    if not databases:
        sys.exit("tune_zoo: error: nothing was tuned")
    out = args.out or os.path.join(ROOT, "data", "tuning", f"{features}.jsonl")
    previous = [out] if os.path.exists(out) else []
    # The logs, not just each case's winners: a key two cases share gets the
    # faster of both, and invalid candidates stay as evidence.
    subprocess.run([os.path.join(bin_dir, "kiln-tune"), "merge"] + previous + databases
                   + ["-o", out + ".tmp"], check=True)
    with open(out + ".tmp") as f:
        merged = [json.loads(line) for line in f if line.strip()]
    # Only the winners ship: one record per key, the valid one if any.
    os.replace(out + ".tmp", out)
    valid = sum(r["valid"] for r in merged)
    print(f"tune_zoo: {len(merged)} keys ({valid} with a valid winner) in "
          f"{os.path.relpath(out, ROOT)}; {time.monotonic() - start:.0f} s in all", flush=True)


if __name__ == "__main__":
    main()
