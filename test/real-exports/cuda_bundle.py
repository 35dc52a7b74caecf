# Compiles the real-exports zoo here for a GPU machine, and runs it there against onnxruntime.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: cuda_bundle.py compile OUT --kilnc PATH [--target cuda|cpu] [--gpu sm_90a]
                         [--precision fp32] [--embed-max-mib 6] MODEL.onnx...
       cuda_bundle.py run OUT --kiln-run PATH [--device cuda|cpu] [--work DIR]

The zoo's weights (1 GiB restored) do not travel to the GPU machine; its
stripped exports (10 MiB) do, and weights.py restores them there, seeded, to
the same values as here. So each model is compiled in one of two modes:

  embedded  the restored export as it is (weights are constants in the
            artifact): models whose restored weights are at most
            --embed-max-mib (the transformers models, SqueezeNet,
            ShuffleNetV2, ConvNeXt: the issue's four among them)
  inputs    the export with each stripped weight turned into a graph input
            of the same name, dtype and shape (every node, attribute and
            shape chain as exported); on the GPU machine the restored
            values are passed to kiln-run as inputs

and first with its symbolic dims as exported (one artifact for every size);
when kilnc refuses that, once per run size with --input-shape (static).

With --precision fp16, bf16 or tf32 (CUDA's matmul operand precisions) a
run passes when max_err/max|ref| of every output is at most 1e-2, as the
zoo's precision check (bench/cuda_zoo_precision.py) has it; fp32 runs keep
bench/models/check.py's rule.

`compile` writes OUT/models/NAME/{model.onnx (the stripped export), meta.json}
and the artifacts (OUT/artifacts/NAME/*.so); `run` restores each export,
runs onnxruntime (CPU) and kiln-run at the sizes of zoo_runs.py, compares
with bench/models/check.py's rule, prints one PASS/FAIL line per run and a
table, and exits 1 if any run fails or any model did not compile.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
# scripts/ is ../../scripts in the repository, ../scripts in the bundle.
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "scripts"), os.path.join(HERE, "..", "scripts")]
import conformance_run  # noqa: E402
import weights  # noqa: E402
import zoo_runs  # noqa: E402

TIMEOUT = 1200
# max_err/max|ref| a run at a reduced matmul precision may reach.
REDUCED_PRECISION_BOUND = 1e-2
# fp16's smallest normal number. The restored random weights keep each
# tensor's statistics but not the trained network's balance, so in deep
# exports (EfficientNet-B0, MobileNetV3) the activations shrink layer by
# layer: onnxruntime's fp32 logits are 1e-14..1e-10. Such a reference has no
# fp16 counterpart (PyTorch's fp16 flushes it the same way), so that size is
# skipped, saying why, instead of failing: found on the H100 by
# test/real-exports/se_fp16/prefixes.py, where every prefix whose fp32
# reference stayed above ~1e-5 matched in fp16 and fp32 matched everywhere.
FP16_NORMAL_MIN = 6.103515625e-05


def run_tool(args, timeout=TIMEOUT):
    """(returncode, output): scripts/conformance_run.py's, None (a timeout) read as 124."""
    rc, output, _ = conformance_run.run_tool(args, timeout)
    return (124 if rc is None else rc), output


def first_error(output):
    return conformance_run.first_error(output) or output.strip()[-300:]


def stripped_bytes(model):
    """Bytes of the weights weights.py stripped (what restoring adds)."""
    total = 0
    for init in weights.initializers(model):
        if init.doc_string.startswith(weights.MARK):
            total += int(np.prod(init.dims)) * np.dtype(
                onnx.helper.tensor_dtype_to_np_dtype(init.data_type)).itemsize
    return total


def weights_as_inputs(model):
    """The stripped export with each stripped top-level initializer a graph
    input instead (names, dtypes and shapes kept); returns their names."""
    names = []
    kept = []
    for init in model.graph.initializer:
        if not init.doc_string.startswith(weights.MARK):
            kept.append(init)
            continue
        names.append(init.name)
        model.graph.input.append(
            onnx.helper.make_tensor_value_info(init.name, init.data_type, list(init.dims)))
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
    return names


#===----------------------------------------------------------------------===#
# compile (here)
#===----------------------------------------------------------------------===#

def compile_model(path, out, args, scratch):
    name = os.path.basename(path)[:-len(".onnx")]
    model_dir = os.path.join(out, "models", name)
    artifact_dir = os.path.join(out, "artifacts", name)
    os.makedirs(model_dir, exist_ok=True)
    os.makedirs(artifact_dir, exist_ok=True)
    shutil.copy(path, os.path.join(model_dir, "model.onnx"))
    model = onnx.load(path)
    weight_bytes = stripped_bytes(model)
    meta = {"name": name, "weight_bytes": weight_bytes, "target": args.target,
            "precision": args.precision,
            "sizes": zoo_runs.SIZES, "weight_inputs": [], "artifacts": {}}
    source = os.path.join(scratch, name + ".onnx")
    if weight_bytes <= args.embed_max_mib * 2**20:
        meta["mode"] = "embedded"
        weights.restore(model)
    else:
        meta["mode"] = "inputs"
        meta["weight_inputs"] = weights_as_inputs(model)
    onnx.save(model, source)
    base = ["--target=" + args.target] + (["--gpu=" + args.gpu] if args.target == "cuda" else [])
    if args.precision != "fp32":
        base.append("--precision=" + args.precision)
    start = time.monotonic()
    rc, output = run_tool([args.kilnc, source, "-o", os.path.join(artifact_dir, "model.so")] + base)
    if rc == 0:
        meta["shapes"] = "symbolic"
        meta["artifacts"] = {f"{b}x{s}": "model.so" for b, s in zoo_runs.SIZES}
    else:
        meta["shapes"] = "static"
        meta["symbolic_error"] = first_error(output)
        for batch, seq in zoo_runs.SIZES:
            fixed = [f"--input-shape={v.name}={'x'.join(map(str, zoo_runs.input_shape(v, batch, seq)))}"
                     for v in zoo_runs.graph_inputs(model)]
            artifact = f"model.b{batch}s{seq}.so"
            rc, output = run_tool([args.kilnc, source, "-o", os.path.join(artifact_dir, artifact)]
                                  + base + fixed)
            if rc != 0:
                meta["compile_error"] = first_error(output)
                break
            meta["artifacts"][f"{batch}x{seq}"] = artifact
    meta["compile_seconds"] = round(time.monotonic() - start, 1)
    os.remove(source)
    with open(os.path.join(model_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    status = ("FAILED: " + meta["compile_error"]) if "compile_error" in meta else "ok"
    print(f"compile: {name}: {meta['mode']}, {meta['shapes']} shapes, "
          f"{meta['compile_seconds']} s: {status}", flush=True)


def compile_all(args):
    with tempfile.TemporaryDirectory() as scratch:
        for path in args.models:
            compile_model(path, args.out, args, scratch)


#===----------------------------------------------------------------------===#
# run (on the GPU machine)
#===----------------------------------------------------------------------===#

def run_size(meta, model, restored_path, restored, work, batch, seq, args):
    """(ok, notes) of one size."""
    import check  # bench/models/check.py, copied next to this file

    inputs = zoo_runs.sample_inputs(model, batch, seq)
    size_dir = os.path.join(work, f"b{batch}s{seq}")
    reference_dir, input_dir = os.path.join(size_dir, "reference"), os.path.join(size_dir, "inputs")
    os.makedirs(reference_dir, exist_ok=True)
    os.makedirs(input_dir, exist_ok=True)
    reference = zoo_runs.reference(restored_path, inputs)
    if meta.get("precision") == "fp16":
        floats = [np.abs(v).max() for v in reference.values()
                  if np.issubdtype(v.dtype, np.floating) and v.size]
        if floats and max(floats) < FP16_NORMAL_MIN:
            return None, (f"skipped: the restored weights' fp32 reference peaks at "
                          f"{max(floats):.1e}, below fp16's normal range ({FP16_NORMAL_MIN:.1e})")
    for name, value in reference.items():
        np.save(os.path.join(reference_dir, name + ".npy"), value)
    for name in meta["weight_inputs"]:
        inputs[name] = restored[name]
    artifact = os.path.join(args.out, "artifacts", meta["name"], meta["artifacts"][f"{batch}x{seq}"])
    command = [args.kiln_run, artifact, "--output-dir", os.path.join(size_dir, "out"),
               "--device", args.device]
    for i, (name, value) in enumerate(inputs.items()):
        path = os.path.join(input_dir, f"{i}.npy")
        np.save(path, value)
        command += ["--input", f"{name}={path}"]
    rc, output = run_tool(command)
    if rc != 0:
        return False, "kiln-run: " + first_error(output)
    ok, notes = check.compare(os.path.join(size_dir, "out"), reference_dir)
    if meta.get("precision", "fp32") != "fp32":
        ok = within_relative_bound(os.path.join(size_dir, "out"), reference_dir)
        notes += f" (bound {REDUCED_PRECISION_BOUND:.0e} at {meta['precision']})"
    return ok, notes + zoo_runs.weak_reference_note(reference)


def within_relative_bound(out_dir, reference_dir):
    """Whether every output's max_err/max|ref| is at most the reduced-precision bound."""
    for name in sorted(os.listdir(reference_dir)):
        path = os.path.join(out_dir, name)
        if not os.path.exists(path):
            return False
        want = np.load(os.path.join(reference_dir, name)).astype(np.float64)
        got = np.load(path).astype(np.float64)
        if got.shape != want.shape:
            return False
        scale = max(float(np.abs(want).max()), 1e-30)
        if float(np.abs(got - want).max()) / scale > REDUCED_PRECISION_BOUND:
            return False
    return True


def run_model(meta, args):
    """Table row cells after the name, and the numbers of failed and skipped runs."""
    name = meta["name"]
    head = [meta["mode"], meta["shapes"]]
    if "compile_error" in meta:
        print(f"FAIL: {name}: compile: {meta['compile_error']}", flush=True)
        return head + ["compile failed"] * len(meta["sizes"]), len(meta["sizes"]), 0
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    model = onnx.load(os.path.join(args.out, "models", name, "model.onnx"))
    restored_model = onnx.load(os.path.join(args.out, "models", name, "model.onnx"))
    weights.restore(restored_model)
    restored_path = os.path.join(work, "restored.onnx")
    onnx.save(restored_model, restored_path)
    restored = {init.name: numpy_helper.to_array(init) for init in restored_model.graph.initializer
                if init.name in set(meta["weight_inputs"])}
    cells, failed, skipped = [], 0, 0
    for batch, seq in meta["sizes"]:
        ok, notes = run_size(meta, model, restored_path, restored, work, batch, seq, args)
        verdict = "SKIP" if ok is None else "PASS" if ok else "FAIL"
        print(f"{verdict}: {name} {zoo_runs.size_label(model, batch, seq)}: {notes}", flush=True)
        worst = notes.split("max_err/max|ref|=")[-1].split()[0] if "max_err" in notes else "-"
        cells.append(f"{verdict} {worst}")
        failed += ok is False
        skipped += ok is None
    shutil.rmtree(work, ignore_errors=True)  # restored weights and inputs: up to 100s of MiB
    return head + cells, failed, skipped


def run_all(args):
    args.work = args.work or os.path.join(args.out, "work")
    metas = []
    for name in sorted(os.listdir(os.path.join(args.out, "models"))):
        with open(os.path.join(args.out, "models", name, "meta.json")) as f:
            metas.append(json.load(f))
    rows, failed, skipped, runs = [], 0, 0, 0
    for meta in metas:
        cells, bad, skips = run_model(meta, args)
        rows.append([meta["name"]] + cells)
        failed += bad
        skipped += skips
        runs += len(meta["sizes"])
    sizes = [f"b{b} s{s}" for b, s in zoo_runs.SIZES]
    header = ["model", "weights", "shapes"] + sizes
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    print()
    for row in [header] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))
    print(f"real-exports {args.device}: {runs - failed - skipped} passed, {failed} failed, "
          f"{skipped} skipped ({len(metas)} models)")
    return 1 if failed else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("phase", choices=["compile", "run"])
    p.add_argument("out")
    p.add_argument("--kilnc")
    p.add_argument("--kiln-run")
    p.add_argument("--target", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--gpu", default="sm_90a")
    p.add_argument("--precision", choices=["fp32", "tf32", "fp16", "bf16"], default="fp32")
    p.add_argument("--embed-max-mib", type=float, default=6)
    p.add_argument("--work")
    p.add_argument("models", nargs="*")
    args = p.parse_intermixed_args()
    if args.phase == "compile":
        if not args.kilnc or not args.models:
            p.error("compile needs --kilnc and models")
        compile_all(args)
        return 0
    if not args.kiln_run:
        p.error("run needs --kiln-run")
    return run_all(args)


if __name__ == "__main__":
    sys.exit(main())
