# onnxruntime contrib ops through kilnc + kiln-run, against onnxruntime.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: run_contrib_ops.py WORKDIR --kilnc PATH --kiln-run PATH [CASE...]
       run_contrib_ops.py WORKDIR --errors   (writes the error models only)

Each case of contrib_models.py is compiled once with its symbolic dims (CPU
target) and run at its sizes; every output must match onnxruntime's CPU
provider (rtol 1e-3, atol 1e-4). Prints one line per failing run and a
summary; exits 1 on any failure.
"""

import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
from compare_outputs import mismatch  # noqa: E402
import contrib_models  # noqa: E402


def run_case(name, args):
    model, sizes = contrib_models.CASES[name]()
    case = os.path.join(args.work, name)
    os.makedirs(case, exist_ok=True)
    path = os.path.join(case, "model.onnx")
    onnx.save(model, path)
    artifact = os.path.join(case, "model.so")
    built = subprocess.run([args.kilnc, path, "-o", artifact], capture_output=True, text=True)
    if built.returncode:
        return [(i, f"FAIL: {name}: kilnc: {built.stderr.strip()}") for i in range(len(sizes))]
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    outputs = [o.name for o in session.get_outputs()]
    problems = []
    for index, feed in enumerate(sizes):
        want = session.run(outputs, feed)
        cmd = [args.kiln_run, artifact, "--output-dir", os.path.join(case, f"out{index}")]
        for key, array in feed.items():
            file = os.path.join(case, f"{key}{index}.npy")
            np.save(file, array)
            cmd += ["--input", f"{key}={file}"]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode:
            problems.append((index, f"FAIL: {name} size {index}: kiln-run: {run.stderr.strip()}"))
            continue
        for out, expected in zip(outputs, want):
            got = np.load(os.path.join(case, f"out{index}", f"{out}.npy"))
            if (name in contrib_models.LONGER_PRESENTS and out.startswith("present")
                    and got.shape[2] > expected.shape[2]):
                tail = got[:, :, expected.shape[2]:]
                if np.any(tail != 0):
                    problems.append((index, f"FAIL: {name} size {index} output {out}: "
                                            f"positions past onnxruntime's {expected.shape[2]} "
                                            f"are not zero"))
                got = got[:, :, :expected.shape[2]]
            rows = contrib_models.VALID_ROWS.get(name, {}).get(out)
            if rows:  # padding rows are unspecified: compare the valid ones
                keep = np.zeros(expected.shape, bool)
                for entry, count in enumerate(rows[index]):
                    keep[entry, :count] = True
                got, expected = np.where(keep, got, 0), np.where(keep, expected, 0)
            problem = mismatch(got, expected, rtol=1e-3, atol=1e-4)
            if problem:
                problems.append((index, f"FAIL: {name} size {index} output {out}: {problem}"))
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("work")
    parser.add_argument("--kilnc")
    parser.add_argument("--kiln-run")
    parser.add_argument("--errors", action="store_true")
    parser.add_argument("cases", nargs="*")
    args = parser.parse_intermixed_args()
    os.makedirs(args.work, exist_ok=True)
    if args.errors:
        for name, fn in contrib_models.ERRORS.items():
            onnx.save(fn(), os.path.join(args.work, f"{name}.onnx"))
        return 0
    names = args.cases or list(contrib_models.CASES)
    runs = failed = 0
    for name in names:
        _, sizes = contrib_models.CASES[name]()
        problems = run_case(name, args)
        runs += len(sizes)
        failed += len({index for index, _ in problems})
        shown = problems[:1] if problems and ": kilnc:" in problems[0][1] else problems
        for _, text in shown:
            print(text)
    print(f"contrib-ops: {runs - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
