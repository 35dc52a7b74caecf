# Compiles real PyTorch exports with symbolic dims and runs them at two sizes against onnxruntime.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: run_real_exports.py WORKDIR --kilnc PATH --kiln-run PATH MODEL.onnx...

Each model (as exported; a zoo export whose weights test/real-exports/weights.py
stripped is restored first: dynamic batch, and sequence for text models) is compiled
ONCE with `kilnc model.onnx -o model.so` and no other flag, then run with kiln-run
at two run-time shapes -- batch 1 and 3, and for an input with a second symbolic
dim (a sequence) lengths 8 and 13 -- and compared with onnxruntime (bench/models/
check.py: |kiln - ort| <= 1e-3 |ort| + 1e-4 max|ort|). Prints one line per run
with the largest error relative to max|ort|, and a summary; exits 1 if any fails.
"""

import argparse
import os
import sys

import numpy as np
import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "models"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import check  # noqa: E402
import conformance_run  # noqa: E402
import zoo  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "test", "real-exports"))
import weights  # noqa: E402

SIZES = [(1, 8), (3, 13)]  # (batch, sequence) per run
TIMEOUT = 600
DTYPES = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.INT64: np.int64}


def sample_inputs(model, batch, seq, rng):
    """Inputs at this size: the first symbolic dim is the batch, a second the sequence."""
    initializers = {init.name for init in model.graph.initializer}
    inputs = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        dims, symbolic = [], 0
        for dim in tensor.shape.dim:
            if dim.HasField("dim_value"):
                dims.append(dim.dim_value)
            else:
                dims.append(batch if symbolic == 0 else seq)
                symbolic += 1
        dtype = DTYPES[tensor.elem_type]
        inputs[value.name] = (rng.integers(0, 100, dims) if dtype == np.int64
                              else rng.standard_normal(dims)).astype(dtype)
    return inputs


def run_size(model_path, model, artifact, work, batch, seq, kiln_run):
    """(ok, notes) for one run-time size."""
    inputs = sample_inputs(model, batch, seq, np.random.default_rng(batch * 100 + seq))
    size_dir = os.path.join(work, f"b{batch}s{seq}")
    reference_dir = os.path.join(size_dir, "reference")
    input_dir = os.path.join(size_dir, "inputs")
    os.makedirs(reference_dir, exist_ok=True)
    os.makedirs(input_dir, exist_ok=True)
    for name, value in zoo.reference(model_path, inputs).items():
        np.save(os.path.join(reference_dir, name + ".npy"), value)
    args = [kiln_run, artifact, "--output-dir", os.path.join(size_dir, "out"), "--threads", "2"]
    for name, value in inputs.items():
        path = os.path.join(input_dir, name + ".npy")
        np.save(path, value)
        args += ["--input", f"{name}={path}"]
    rc, output, _ = conformance_run.run_tool(args, TIMEOUT)
    if rc != 0:
        return False, "kiln-run: " + conformance_run.first_error(output)
    return check.compare(os.path.join(size_dir, "out"), reference_dir)


def run_model(model_path, work, args):
    """Number of failed runs of one model (a failed compile fails every size)."""
    name = os.path.basename(model_path)[:-len(".onnx")]
    work = os.path.join(work, name)
    os.makedirs(work, exist_ok=True)
    model = onnx.load(model_path)
    if weights.restore(model):  # a zoo export stored with its weights stripped
        model_path = os.path.join(work, "restored.onnx")
        onnx.save(model, model_path)
    artifact = os.path.join(work, "model.so")
    rc, output, _ = conformance_run.run_tool([args.kilnc, model_path, "-o", artifact], TIMEOUT)
    if rc != 0:
        print(f"FAIL: {name}: compile: {conformance_run.first_error(output)}", flush=True)
        return len(SIZES)
    has_seq = any(sum(not d.HasField("dim_value") for d in v.type.tensor_type.shape.dim) > 1
                  for v in model.graph.input)
    failed = 0
    for batch, seq in SIZES:
        ok, notes = run_size(model_path, model, artifact, work, batch, seq, args.kiln_run)
        label = f"{name} batch={batch}" + (f" seq={seq}" if has_seq else "")
        print(f"{'PASS' if ok else 'FAIL'}: {label}: {notes}", flush=True)
        failed += not ok
    return failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("work")
    parser.add_argument("--kilnc", required=True)
    parser.add_argument("--kiln-run", required=True)
    parser.add_argument("models", nargs="+")
    args = parser.parse_intermixed_args()
    failed = sum(run_model(path, args.work, args) for path in args.models)
    runs = len(SIZES) * len(args.models)
    print(f"real-exports: {runs - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
