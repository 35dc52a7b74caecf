# The --small model zoo in reduced precision on the GPU, against onnxruntime.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: cuda_zoo_precision.py compile --zoo ZOO --out DIR --kilnc PATH   (here)
       cuda_zoo_precision.py run --out DIR --kiln-run PATH                (GPU machine)

`compile` builds every model of ZOO (bench/models/zoo.py --small, with its
batch-2 inputs and onnxruntime references) with kilnc --target=cuda
--precision=fp16|bf16|tf32, and once more in fp16 with --weights=external
(`fp16-ext`: the f16 weights in the side file, mapped and uploaded by the
runtime). `run` runs each on the GPU and compares every
output with the float32 onnxruntime reference: max|out - ref| / max|ref| at
most 1e-2 (issue 6's bound for reduced precisions; NaN fails).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np

PRECISIONS = ["fp16", "bf16", "tf32", "fp16-ext"]
TOLERANCE = 1e-2


def kilnc_flags(precision):
    if precision == "fp16-ext":
        return ["--precision=fp16", "--weights=external"]
    return [f"--precision={precision}"]


def compile_zoo(args):
    os.makedirs(args.out, exist_ok=True)
    failures = 0
    for model in sorted(os.listdir(args.zoo)):
        src = os.path.join(args.zoo, model)
        if not os.path.exists(os.path.join(src, "model.onnx")):
            continue
        with open(os.path.join(src, "meta.json")) as f:
            meta = json.load(f)
        shapes = [f"--input-shape={name}={'x'.join(map(str, dims))}"
                  for name, dims in meta["batches"]["2"].items()]
        shutil.copytree(os.path.join(src, "b2"), os.path.join(args.out, model),
                        dirs_exist_ok=True)
        for precision in PRECISIONS:
            out = os.path.join(args.out, f"{model}_{precision}.so")
            run = subprocess.run([args.kilnc, os.path.join(src, "model.onnx"), "--target=cuda",
                                  *kilnc_flags(precision), *shapes, "-o", out],
                                 capture_output=True, text=True)
            if run.returncode:
                failures += 1
                print(f"FAIL {model} {precision} (compile): {run.stderr.strip()[-300:]}")
    print(f"zoo precision compile: {failures} failed")
    return 1 if failures else 0


def run_zoo(args):
    failures = 0
    rows = []
    env = dict(os.environ, KILN_CUDA_POISON_OUTPUTS="1")
    for model in sorted(d for d in os.listdir(args.out)
                        if os.path.isdir(os.path.join(args.out, d))):
        case = os.path.join(args.out, model)
        inputs = []
        for name in sorted(os.listdir(os.path.join(case, "inputs"))):
            inputs += ["--input", f"{name[:-4]}={os.path.join(case, 'inputs', name)}"]
        for precision in PRECISIONS:
            artifact = os.path.join(args.out, f"{model}_{precision}.so")
            outdir = os.path.join(case, f"out_{precision}")
            run = subprocess.run([args.kiln_run, artifact, "--device", "cuda", *inputs,
                                  "--output-dir", outdir], capture_output=True, text=True,
                                 env=env)
            if run.returncode:
                failures += 1
                rows.append((model, precision, "run failed", False))
                print(f"FAIL {model} {precision}: {(run.stderr or run.stdout).strip()[-300:]}")
                continue
            worst = 0.0
            for name in sorted(os.listdir(os.path.join(case, "reference"))):
                ref = np.load(os.path.join(case, "reference", name)).astype(np.float64)
                out = np.load(os.path.join(outdir, name)).astype(np.float64)
                err = np.max(np.abs(out - ref)) / max(np.max(np.abs(ref)), 1e-30)
                worst = max(worst, err if np.isfinite(err) else np.inf)
            ok = worst <= TOLERANCE
            failures += not ok
            rows.append((model, precision, f"{worst:.1e}", ok))
            print(f"{'PASS' if ok else 'FAIL'} {model} {precision}: max_err/max|ref| {worst:.2e}")
    print("\n| model | " + " | ".join(PRECISIONS) + " |")
    print("| --- |" + " ---: |" * len(PRECISIONS))
    for model in sorted({r[0] for r in rows}):
        cells = [next((r[2] + ("" if r[3] else " FAIL") for r in rows
                       if r[0] == model and r[1] == p), "-") for p in PRECISIONS]
        print(f"| {model} | " + " | ".join(cells) + " |")
    print(f"zoo precision run: {len(rows) - failures} passed, {failures} failed")
    return 1 if failures else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("phase", choices=["compile", "run"])
    p.add_argument("--zoo")
    p.add_argument("--out", required=True)
    p.add_argument("--kilnc")
    p.add_argument("--kiln-run")
    args = p.parse_args()
    return compile_zoo(args) if args.phase == "compile" else run_zoo(args)


if __name__ == "__main__":
    sys.exit(main())
