#!/usr/bin/env python3
# Compiles ONNX models with kilnc, runs them with kiln-run and compares every
# output with ONNX's reference implementation (onnx.reference).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: run_reference_models.py WORKDIR MODEL.onnx... --kilnc PATH --kiln-run PATH

The expected values come from onnx.reference, or from onnxruntime where the
reference cannot run the model (it mishandles some optional/sequence graphs).
Inputs are drawn from a fixed seed: floats in [-3, 3] in steps of 0.5 (so
that they hit split values and ties), int64 in [0, 3) (indices and counts),
bools at random; the first row of a 2-D float input of a model whose name
starts with "tree" is NaN (missing values). Outputs must have the reference's
dtype; floats are compared like numpy.allclose(rtol=1e-5, atol=1e-6), NaN
equal to NaN, integers and bools exactly (scripts/compare_outputs.py). Prints one line per
model and a summary "reference: P passed, F failed".
"""

import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper
from onnx.reference import ReferenceEvaluator

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from compare_outputs import mismatch  # noqa: E402


def make_inputs(model, name, rng):
    inputs = {}
    initializers = {t.name for t in model.graph.initializer}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        shape = [d.dim_value for d in tensor.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        if dtype == np.bool_:
            x = rng.integers(0, 2, shape).astype(np.bool_)
        elif np.issubdtype(dtype, np.integer):
            x = rng.integers(0, 3, shape).astype(dtype)
        else:
            x = (rng.integers(-6, 7, shape) / 2).astype(dtype)
            if name.startswith("tree") and x.ndim == 2:
                x[0] = np.nan
        inputs[value.name] = x
    return inputs


def run(args, model_path, work):
    name = os.path.splitext(os.path.basename(model_path))[0]
    model = onnx.load(model_path)
    rng = np.random.default_rng(7)
    inputs = make_inputs(model, name, rng)
    try:
        expected = ReferenceEvaluator(model).run(None, inputs)
    except Exception:  # noqa: BLE001 (its sequence/optional support has gaps)
        import onnxruntime
        session = onnxruntime.InferenceSession(model_path, providers=["CPUExecutionProvider"])
        expected = session.run(None, inputs)
    case = os.path.join(work, name)
    os.makedirs(os.path.join(case, "expected"), exist_ok=True)
    so = os.path.join(case, "model.so")
    compiled = subprocess.run([args.kilnc, model_path, "-o", so], capture_output=True, text=True)
    if compiled.returncode != 0:
        return f"compile failed: {compiled.stderr.strip()}"
    command = [args.kiln_run, so, "--output-dir", os.path.join(case, "out"), "--threads", "2"]
    for input_name, value in inputs.items():
        path = os.path.join(case, input_name + ".npy")
        np.save(path, value)
        command += ["--input", f"{input_name}={path}"]
    ran = subprocess.run(command, capture_output=True, text=True)
    if ran.returncode != 0:
        return f"run failed: {(ran.stderr.strip() or ran.stdout.strip())}"
    problems = []
    for output, want in zip(model.graph.output, expected):
        got = np.load(os.path.join(case, "out", output.name + ".npy"))
        problem = mismatch(got, np.asarray(want), rtol=1e-5, atol=1e-6)
        if problem:
            problems.append(f"{output.name}: {problem}: {got.ravel()[:8]} != "
                            f"{np.asarray(want).ravel()[:8]}")
    return "; ".join(problems)


def main():
    parser = argparse.ArgumentParser(usage=__doc__)
    parser.add_argument("work")
    parser.add_argument("models", nargs="+")
    parser.add_argument("--kilnc", required=True)
    parser.add_argument("--kiln-run", required=True)
    args = parser.parse_args()
    passed = failed = 0
    for model_path in args.models:
        try:
            problem = run(args, model_path, args.work)
        except Exception as e:  # the reference rejecting a model is a failure too
            problem = f"{type(e).__name__}: {e}"
        name = os.path.basename(model_path)
        if problem:
            print(f"FAIL: {name}: {problem}")
            failed += 1
        else:
            print(f"ok: {name}")
            passed += 1
    print(f"reference: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
