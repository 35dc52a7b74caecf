# Checks real PyTorch exports (from export_torch.py) end to end against
# onnxruntime: import, compile for the CPU, run, compare.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: check_exports.py DIR --kilnc PATH --kiln-run PATH

For every DIR/*.onnx: seeded inputs from the graph's input types (integer
inputs in [0, 1000), masks of ones), onnxruntime's outputs as references,
kilnc with every input shape fixed, kiln-run --compare (rtol 1e-3, atol 1e-4).
Prints one line per model and a tally; exits 1 if any model fails.
"""

import argparse
import glob
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime

DTYPES = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.INT64: np.int64,
          onnx.TensorProto.INT32: np.int32, onnx.TensorProto.BOOL: np.bool_}


def make_inputs(model, rng):
    inputs = {}
    initializers = {i.name for i in model.graph.initializer}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        t = value.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else 1 for d in t.shape.dim]
        dtype = DTYPES[t.elem_type]
        if dtype == np.float32:
            inputs[value.name] = rng.standard_normal(shape).astype(np.float32)
        elif "mask" in value.name:
            inputs[value.name] = np.ones(shape, dtype=dtype)
        else:
            inputs[value.name] = rng.integers(0, 1000, shape).astype(dtype)
    return inputs


def check(path, work, kilnc, kiln_run):
    name = os.path.splitext(os.path.basename(path))[0]
    case = os.path.join(work, name)
    os.makedirs(os.path.join(case, "expected"), exist_ok=True)
    model = onnx.load(path)
    inputs = make_inputs(model, np.random.default_rng(0))
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    outputs = session.run(None, inputs)
    names = [o.name for o in session.get_outputs()]
    args = [kiln_run, os.path.join(case, "model.so"), "--compare", os.path.join(case, "expected"),
            "--atol", "1e-4"]
    shapes = []
    for key, value in inputs.items():
        np.save(os.path.join(case, key + ".npy"), value)
        args += ["--input", f"{key}={os.path.join(case, key + '.npy')}"]
        shapes.append("--input-shape=%s=%s" % (key, "x".join(map(str, value.shape))))
    for out_name, value in zip(names, outputs):
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in out_name)
        np.save(os.path.join(case, "expected", safe + ".npy"), value)
    compiled = subprocess.run([kilnc, path, "-o", os.path.join(case, "model.so")] + shapes,
                              capture_output=True, text=True, timeout=600)
    if compiled.returncode != 0:
        first = (compiled.stderr.strip().splitlines() or ["(no output)"])[0]
        return f"compile failed (exit {compiled.returncode}): {first[:300]}"
    run = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        lines = [l for l in (run.stdout + run.stderr).splitlines() if "compare" in l or "error" in l]
        return "run/compare failed: " + "; ".join(lines)[:400]
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--work", default="/tmp/kiln-exports")
    p.add_argument("--kilnc", required=True)
    p.add_argument("--kiln-run", required=True)
    a = p.parse_args()
    failures = 0
    models = sorted(glob.glob(os.path.join(a.dir, "*.onnx")))
    for path in models:
        error = check(path, a.work, a.kilnc, a.kiln_run)
        failures += error is not None
        print(f"{os.path.basename(path)}: {'passed' if error is None else error}", flush=True)
    print(f"exports: {len(models) - failures} of {len(models)} passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
