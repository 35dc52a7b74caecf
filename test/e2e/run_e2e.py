# Compiles each case of a family with kilnc, runs it with kiln-run, compares.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: run_e2e.py FAMILY WORKDIR --kilnc PATH --kiln-run PATH
                  [--target cpu|cuda] [--phase all|compile|run]

Prints one PASS/FAIL line per case and a summary; exits 1 if any case fails.
--target cuda compiles with kilnc --target=cuda and runs with kiln-run
--device cuda. --phase compile writes the cases and artifacts only; --phase
run runs what an earlier compile phase wrote (on a GPU machine without kilnc).
Outputs must match the float64 reference within rtol 1e-3, atol 1e-5 (the
kiln-run --compare defaults); integer and bool outputs must match exactly. The
reference is written in the element type main's signature declares, so an
output of another dtype fails kiln-run --compare.
"""

import argparse
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402


# MLIR element types of the cases' results -> NumPy dtypes.
DTYPES = {"f64": np.float64, "f32": np.float32, "f16": np.float16, "i64": np.int64,
          "i32": np.int32, "i16": np.int16, "i8": np.int8, "ui8": np.uint8, "i1": np.bool_}


def result_dtypes(body):
    """The NumPy dtypes of @main's results, from its signature."""
    match = re.search(r"func\.func @main\(.*?\)\s*->\s*(\(.*?\)|tensor<[^>]*>)\s*\{", body, re.S)
    if not match:
        raise ValueError("no `func.func @main(...) -> ...` signature")
    return [DTYPES[t] for t in re.findall(r"tensor<(?:[\d?]+x)*([a-z]+\d+)>", match.group(1))]


def reference_array(value, dtype):
    """The reference in the result's dtype; integers must be representable exactly."""
    value = np.asarray(value)
    out = value.astype(dtype)
    if np.dtype(dtype).kind in "biu" and not np.array_equal(out, value):
        raise ValueError(f"reference values do not fit {np.dtype(dtype)}")
    return out


def run_case(name, body, inputs, reference, work, args):
    case_dir = os.path.join(work, name)
    os.makedirs(os.path.join(case_dir, "expected"), exist_ok=True)
    model = os.path.join(case_dir, "model.mlir")
    run_args = [args.kiln_run, os.path.join(case_dir, "model.so"),
                "--compare", os.path.join(case_dir, "expected"), "--threads", "2",
                "--device", args.target]
    for i in range(len(inputs)):
        run_args += ["--input", f"input_{i}={os.path.join(case_dir, f'input_{i}.npy')}"]
    if args.phase != "run":
        with open(model, "w") as f:
            f.write(body + "\n")
        for i, value in enumerate(inputs):
            np.save(os.path.join(case_dir, f"input_{i}.npy"), value)
        values, dtypes = reference(inputs), result_dtypes(body)
        if len(values) != len(dtypes):
            return f"reference gives {len(values)} outputs, @main {len(dtypes)}"
        for i, (value, dtype) in enumerate(zip(values, dtypes)):
            np.save(os.path.join(case_dir, "expected", f"output_{i}.npy"),
                    reference_array(value, dtype))
        compile_ = subprocess.run([args.kilnc, model, "-o", os.path.join(case_dir, "model.so"),
                                   f"--target={args.target}"],
                                  capture_output=True, text=True)
        if compile_.returncode != 0:
            return "compile failed: " + compile_.stderr.strip()
    if args.phase == "compile":
        return None
    run = subprocess.run(run_args, capture_output=True, text=True)
    if run.returncode != 0:
        return "run failed: " + (run.stderr.strip() or run.stdout.strip())
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("family", choices=sorted(cases.FAMILIES))
    parser.add_argument("work")
    parser.add_argument("--kilnc")
    parser.add_argument("--kiln-run")
    parser.add_argument("--target", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--phase", choices=["all", "compile", "run"], default="all")
    args = parser.parse_args()
    if args.phase != "run" and not args.kilnc:
        parser.error("--kilnc is required unless --phase run")
    if args.phase != "compile" and not args.kiln_run:
        parser.error("--kiln-run is required unless --phase compile")
    failures = 0
    selected = cases.FAMILIES[args.family]()
    for name, body, inputs, reference in selected:
        error = run_case(name, body, inputs, reference, args.work, args)
        print(("PASS: " if error is None else "FAIL: ") + name + ("" if error is None else "\n  " + error))
        failures += error is not None
    print(f"{args.family}: {len(selected) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
