# Compiles each case of a family with kilnc, runs it with kiln-run, compares.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: run_e2e.py FAMILY WORKDIR --kilnc PATH --kiln-run PATH

Prints one PASS/FAIL line per case and a summary; exits 1 if any case fails.
Outputs must match the float64 reference within rtol 1e-3, atol 1e-5 (the
kiln-run --compare defaults); integer outputs must match exactly.
"""

import argparse
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402


def run_case(name, body, inputs, reference, work, kilnc, kiln_run):
    case_dir = os.path.join(work, name)
    os.makedirs(os.path.join(case_dir, "expected"), exist_ok=True)
    model = os.path.join(case_dir, "model.mlir")
    with open(model, "w") as f:
        f.write(body + "\n")
    args = [kiln_run, os.path.join(case_dir, "model.so"),
            "--compare", os.path.join(case_dir, "expected"), "--threads", "2"]
    for i, value in enumerate(inputs):
        path = os.path.join(case_dir, f"input_{i}.npy")
        np.save(path, value)
        args += ["--input", f"input_{i}={path}"]
    for i, value in enumerate(reference(inputs)):
        value = np.asarray(value)
        value = value.astype(np.int64) if value.dtype.kind in "iu" else value.astype(np.float32)
        np.save(os.path.join(case_dir, "expected", f"output_{i}.npy"), value)
    compile_ = subprocess.run([kilnc, model, "-o", os.path.join(case_dir, "model.so")],
                              capture_output=True, text=True)
    if compile_.returncode != 0:
        return "compile failed: " + compile_.stderr.strip()
    run = subprocess.run(args, capture_output=True, text=True)
    if run.returncode != 0:
        return "run failed: " + (run.stderr.strip() or run.stdout.strip())
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("family", choices=sorted(cases.FAMILIES))
    parser.add_argument("work")
    parser.add_argument("--kilnc", required=True)
    parser.add_argument("--kiln-run", required=True)
    args = parser.parse_args()
    failures = 0
    selected = cases.FAMILIES[args.family]()
    for name, body, inputs, reference in selected:
        error = run_case(name, body, inputs, reference, args.work, args.kilnc, args.kiln_run)
        print(("PASS: " if error is None else "FAIL: ") + name + ("" if error is None else "\n  " + error))
        failures += error is not None
    print(f"{args.family}: {len(selected) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
