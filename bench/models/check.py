# Compiles each zoo model with kilnc, runs it with kiln-run and compares with onnxruntime.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: check.py --zoo DIR --work DIR --batch N [--xfail FILE] [--target cpu|cuda]
                [--phase all|compile|run] [MODEL...]

DIR is what zoo.py wrote. Each model is compiled for the batch with static input
shapes (kilnc --input-shape), run with kiln-run --output-dir, and every output is
compared with onnxruntime's: |kiln - ort| <= RTOL * |ort| + ATOL * max|ort|
(RTOL 1e-3, ATOL 1e-4: an absolute term relative to the output's scale, because
deep random-weight nets give outputs of any magnitude and fp32 sums in another order);
the dtype must be onnxruntime's, and integer and bool outputs must be equal.
Statuses are those of scripts/conformance_run.py. The expected-failure list
(`model status  # reason`) is strict: an unlisted failure, another status, or a
listed model that passes fails the run (exit 1). --target cuda compiles for CUDA
and runs with kiln-run --device cuda; --phase compile only compiles, --phase run
runs the artifacts an earlier compile phase left in --work (on a GPU machine).
"""

import argparse
import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import conformance_run  # noqa: E402
from compare_outputs import mismatch  # noqa: E402

RTOL, ATOL = 1e-3, 1e-4


def compile_model(model_dir, batch, artifact, kilnc, timeout, target="cpu"):
    """kilnc with static shapes for this batch; None on success, else (status, reason)."""
    with open(os.path.join(model_dir, "meta.json")) as f:
        shapes = json.load(f)["batches"][str(batch)]
    args = [kilnc, os.path.join(model_dir, "model.onnx"), "-o", artifact, f"--target={target}"]
    args += [f"--input-shape={name}={'x'.join(map(str, dims))}" for name, dims in shapes.items()]
    rc, output, _ = conformance_run.run_tool(args, timeout)
    if rc == 0:
        return None
    message = conformance_run.first_error(output)
    return conformance_run.classify_failure("kilnc", rc, output, timeout) or \
        (conformance_run.compile_failure_status(message), message)


def input_args(model_dir, batch):
    inputs = os.path.join(model_dir, f"b{batch}", "inputs")
    return [arg for name in sorted(os.listdir(inputs))
            for arg in ("--input", f"{name[:-4]}={os.path.join(inputs, name)}")]


def compare(out_dir, reference_dir):
    """(ok, description) comparing every reference output with kiln-run's."""
    notes, ok = [], True
    for name in sorted(os.listdir(reference_dir)):
        want = np.load(os.path.join(reference_dir, name))
        path = os.path.join(out_dir, name)
        if not os.path.exists(path):
            return False, f"no output {name}"
        got = np.load(path)
        # dtype, shape and integers (exactly) by the common rule; floats below.
        problem = mismatch(got, want, rtol=0, atol=0)
        if problem and (got.dtype != want.dtype or got.shape != want.shape
                        or want.dtype.kind in "biu"):
            return False, f"{name}: {problem}"
        got, want = got.astype(np.float64), want.astype(np.float64)
        scale = max(float(np.abs(want).max()), 1e-30)
        err = np.abs(got - want)
        bad = int((err > RTOL * np.abs(want) + ATOL * scale).sum())
        ok &= bad == 0
        notes.append(f"{name[:-4]} max_err/max|ref|={float(err.max()) / scale:.1e}"
                     + (f" ({bad} of {want.size} outside)" if bad else ""))
    return ok, "; ".join(notes)


def check(model_dir, batch, work, tools, timeout, threads, target="cpu", phase="all"):
    os.makedirs(work, exist_ok=True)
    artifact = os.path.join(work, "model.so")
    failed = os.path.join(work, "compile-failed.json")
    if phase == "run" and os.path.exists(failed):
        with open(failed) as f:
            return tuple(json.load(f))
    if phase != "run":
        failure = compile_model(model_dir, batch, artifact, tools["kilnc"], timeout, target)
        if failure:
            with open(failed, "w") as f:
                json.dump(list(failure), f)
            return failure
        if os.path.exists(failed):
            os.remove(failed)
    if phase == "compile":
        return "compiled", ""
    out_dir = os.path.join(work, "out")
    args = [tools["kiln_run"], artifact, "--output-dir", out_dir, "--threads", str(threads),
            "--device", target]
    rc, output, _ = conformance_run.run_tool(args + input_args(model_dir, batch), timeout)
    if rc != 0:
        return conformance_run.classify_failure("kiln-run", rc, output, timeout) or \
            ("wrong", "kiln-run: " + conformance_run.first_error(output))
    ok, notes = compare(out_dir, os.path.join(model_dir, f"b{batch}", "reference"))
    return ("passed" if ok else "wrong"), notes


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--zoo", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--xfail")
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--kilnc", default=os.path.join(ROOT, "build", "bin", "kilnc"))
    p.add_argument("--kiln-run", default=os.path.join(ROOT, "build", "bin", "kiln-run"))
    p.add_argument("--target", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--phase", choices=["all", "compile", "run"], default="all")
    p.add_argument("models", nargs="*")
    args = p.parse_args()
    expected = {}
    if args.xfail:
        with open(args.xfail) as f:
            for line in f:
                fields = line.split("#", 1)[0].split()
                if fields:
                    expected[fields[0]] = fields[1]
    tools = {"kilnc": args.kilnc, "kiln_run": args.kiln_run}
    models = args.models or sorted(d for d in os.listdir(args.zoo)
                                   if os.path.exists(os.path.join(args.zoo, d, "meta.json")))
    unexpected = 0
    for name in models:
        status, notes = check(os.path.join(args.zoo, name), args.batch,
                              os.path.join(args.work, name), tools, args.timeout, args.threads,
                              args.target, args.phase)
        want = expected.get(name, "passed")
        if args.phase == "compile" and status == "compiled":
            want = status
        verdict = "" if status == want else f"  <-- UNEXPECTED (expected {want})"
        unexpected += status != want
        print(f"{name}: {status}: {notes}{verdict}", flush=True)
    for name in sorted(set(expected) - set(models)):
        if not args.models:
            print(f"{name}: listed in {args.xfail} but not in the zoo  <-- UNEXPECTED")
            unexpected += 1
    print(f"zoo: {len(models)} models, {unexpected} unexpected")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
