# Compiles each small zoo model once with symbolic dims and runs it at several run-time shapes.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: run_zoo_dynamic.py WORKDIR --kilnc PATH --kiln-run PATH [MODEL...]

Each model of the --small zoo (bench/models) is built with a symbolic batch dim and,
for BERT and GPT-2, a symbolic sequence dim (zoo.py --symbolic-seq), compiled ONCE with
kilnc without --input-shape, then run with kiln-run at every shape of SHAPES and compared
with onnxruntime (bench/models/check.py's tolerance). Prints one line per (model, shape)
and a summary; exits 1 if any run fails. Also writes WORKDIR/bert/mismatch/*.npy: BERT
inputs whose 'sequence' dims disagree (8 and 9), for the test of the runtime's check.
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

# (batch, seq) per run; seq None for models without a sequence input. Sizes include 1 and
# odd lengths (remainder tiles), and BERT/GPT-2 go up to their 32 positions.
CNN_SHAPES = [(1, None), (3, None)]
SEQ_SHAPES = [(1, 8), (3, 17), (2, 32)]
SHAPES = {"bert": SEQ_SHAPES, "gpt2": SEQ_SHAPES}
TIMEOUT = 600


def save_inputs(directory, inputs):
    os.makedirs(directory, exist_ok=True)
    args = []
    for name, value in inputs.items():
        path = os.path.join(directory, name + ".npy")
        np.save(path, value)
        args += ["--input", f"{name}={path}"]
    return args


def run_shape(name, graph, model_path, artifact, work, batch, seq, kiln_run):
    """(ok, notes) for one run-time shape."""
    sizes = {"seq": seq} if seq is not None else {}
    inputs = graph.sample_inputs(batch, **sizes)
    shape_dir = os.path.join(work, f"b{batch}" + (f"s{seq}" if seq is not None else ""))
    reference_dir = os.path.join(shape_dir, "reference")
    os.makedirs(reference_dir, exist_ok=True)
    for output, value in zoo.reference(model_path, inputs).items():
        np.save(os.path.join(reference_dir, output + ".npy"), value)
    out_dir = os.path.join(shape_dir, "out")
    args = [kiln_run, artifact, "--output-dir", out_dir, "--threads", "2"]
    rc, output, _ = conformance_run.run_tool(
        args + save_inputs(os.path.join(shape_dir, "inputs"), inputs), TIMEOUT)
    if rc != 0:
        failure = conformance_run.classify_failure("kiln-run", rc, output, TIMEOUT)
        return False, " ".join(failure) if failure else \
            "kiln-run: " + conformance_run.first_error(output)
    return check.compare(out_dir, reference_dir)


def run_model(name, work, args):
    """Number of failed runs of one model (a failed compile fails every shape)."""
    graph = zoo.build(name, small=True, symbolic_seq=True)
    os.makedirs(work, exist_ok=True)
    model_path = os.path.join(work, "model.onnx")
    onnx.save(graph.model(), model_path)
    artifact = os.path.join(work, "model.so")
    shapes = SHAPES.get(name, CNN_SHAPES)
    rc, output, _ = conformance_run.run_tool([args.kilnc, model_path, "-o", artifact], TIMEOUT)
    if rc != 0:
        failure = conformance_run.classify_failure("kilnc", rc, output, TIMEOUT)
        reason = " ".join(failure) if failure else conformance_run.first_error(output)
        print(f"FAIL: {name}: compile: {reason}", flush=True)
        return len(shapes)
    failed = 0
    for batch, seq in shapes:
        ok, notes = run_shape(name, graph, model_path, artifact, work, batch, seq, args.kiln_run)
        label = f"{name} batch={batch}" + (f" seq={seq}" if seq is not None else "")
        print(f"{'PASS' if ok else 'FAIL'}: {label}: {notes}", flush=True)
        failed += not ok
    if name == "bert":
        ids = graph.sample_inputs(2, seq=8)["input_ids"]
        mask = graph.sample_inputs(2, seq=9)["attention_mask"]
        save_inputs(os.path.join(work, "mismatch"), {"input_ids": ids, "attention_mask": mask})
    return failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("work")
    parser.add_argument("--kilnc", required=True)
    parser.add_argument("--kiln-run", required=True)
    parser.add_argument("models", nargs="*")
    args = parser.parse_intermixed_args()
    models = args.models or list(zoo.MODELS)
    runs = sum(len(SHAPES.get(name, CNN_SHAPES)) for name in models)
    failed = sum(run_model(name, os.path.join(args.work, name), args) for name in models)
    print(f"zoo-dynamic: {runs - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
