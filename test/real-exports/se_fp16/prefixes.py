# Finds where a real export first goes wrong on CUDA by running prefixes of it.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: prefixes.py pack OUT --kilnc PATH [--cuts 14] [--precision fp16] MODEL.onnx...
       prefixes.py run OUT --kiln-run PATH            (on the GPU machine)

pack (here): each stripped real export (test/real-exports/zoo) gets its
weights as graph inputs (as real-exports-cuda-bundle's `inputs` mode does) and
is cut after --cuts nodes spread over the graph: prefix k keeps the nodes up to
the cut and outputs that node's result. Each prefix is compiled with kilnc
--target=cuda --precision=P (and the first, middle and last also in fp32).
OUT gets the prefixes, the artifacts, weights.py and this file.

run (GPU machine, numpy + onnx + onnxruntime): restores each export's weights
(seeded, as the real-exports bundle does), runs every prefix artifact with
kiln-run --device cuda on a seeded input and onnxruntime (CPU) on the same
prefix, and prints per prefix the node, max|ref|, max error / max|ref| and
whether Kiln's output holds NaN or inf. The first prefix over 1e-2 names the
node where the export first goes wrong.
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))


def weights_module(out=None):
    sys.path.insert(0, out or os.path.join(HERE, ".."))
    import weights
    return weights


def prefix(model, cut):
    """The model's nodes up to `cut` (inclusive), outputting its first result."""
    from onnx import helper
    graph = model.graph
    nodes = list(graph.node[:cut + 1])
    result = nodes[-1].output[0]
    used = {name for node in nodes for name in node.input}
    inputs = [i for i in graph.input if i.name in used]
    inits = [i for i in graph.initializer if i.name in used]
    out = helper.make_tensor_value_info(result, onnx.TensorProto.FLOAT, None)
    g = helper.make_graph(nodes, f"{graph.name}_upto_{cut}", inputs, [out], inits)
    m = helper.make_model(g, opset_imports=model.opset_import, ir_version=model.ir_version)
    return m


def pack(args):
    weights = weights_module()
    sys.path.insert(0, os.path.join(HERE, ".."))
    from cuda_bundle import weights_as_inputs
    os.makedirs(args.out, exist_ok=True)
    plan = []
    for path in args.models:
        name = os.path.basename(path)[:-len(".onnx")]
        model = onnx.load(path)
        shutil.copy(path, os.path.join(args.out, name + ".onnx"))
        weight_names = weights_as_inputs(model)
        candidates = [i for i, n in enumerate(model.graph.node)
                      if n.op_type in ("Conv", "Mul", "Add", "HardSwish", "Relu", "Gemm")]
        step = max(1, len(candidates) // args.cuts)
        cuts = sorted(set(candidates[step - 1::step] + [candidates[-1]]))
        for rank, cut in enumerate(cuts):
            node = model.graph.node[cut]
            m = prefix(model, cut)
            stem = f"{name}.{cut:03d}"
            onnx.save(m, os.path.join(args.out, stem + ".onnx"))
            precisions = [args.precision]
            if rank in (0, len(cuts) // 2, len(cuts) - 1) and args.precision != "fp32":
                precisions.append("fp32")
            for precision in precisions:
                artifact = os.path.join(args.out, f"{stem}.{precision}.so")
                cmd = [args.kilnc, os.path.join(args.out, stem + ".onnx"), "-o", artifact,
                       "--target=cuda", "--gpu=sm_90a", f"--precision={precision}"]
                built = subprocess.run(cmd, capture_output=True, text=True)
                status = "ok" if built.returncode == 0 else built.stderr.strip()[-200:]
                print(f"{stem} {node.op_type} {precision}: {status}", flush=True)
                if built.returncode == 0:
                    plan.append(dict(model=name, stem=stem, cut=cut, op=node.op_type,
                                     node=node.name, precision=precision,
                                     weights=[w for w in weight_names
                                              if w in {i.name for i in m.graph.input}]))
    with open(os.path.join(args.out, "plan.json"), "w") as f:
        json.dump(plan, f, indent=1)
    shutil.copy(os.path.join(HERE, "..", "weights.py"), args.out)
    shutil.copy(os.path.abspath(__file__), args.out)


def run(args):
    import onnxruntime as ort
    from onnx import numpy_helper
    weights = weights_module(args.out)
    with open(os.path.join(args.out, "plan.json")) as f:
        plan = json.load(f)
    restored = {}
    for entry in plan:
        if entry["model"] not in restored:
            full = onnx.load(os.path.join(args.out, entry["model"] + ".onnx"))
            weights.restore(full)
            restored[entry["model"]] = {i.name: numpy_helper.to_array(i)
                                        for i in full.graph.initializer}
        values = restored[entry["model"]]
        model = onnx.load(os.path.join(args.out, entry["stem"] + ".onnx"))
        feeds = {}
        for i in model.graph.input:
            if i.name in values:
                feeds[i.name] = values[i.name]
            else:
                dims = [d.dim_value or 1 for d in i.type.tensor_type.shape.dim]
                feeds[i.name] = np.random.default_rng(0).standard_normal(dims).astype(np.float32)
        for i in model.graph.initializer:
            feeds.pop(i.name, None)
        session = ort.InferenceSession(model.SerializeToString(),
                                       providers=["CPUExecutionProvider"])
        ref = session.run(None, feeds)[0].astype(np.float64)
        with tempfile.TemporaryDirectory() as d:
            out_dir = os.path.join(d, "out")
            cmd = [args.kiln_run, os.path.join(args.out, f"{entry['stem']}.{entry['precision']}.so"),
                   "--device", "cuda", "--output-dir", out_dir]
            for k, (name, value) in enumerate(feeds.items()):
                p = os.path.join(d, f"in{k}.npy")
                np.save(p, value)
                cmd += ["--input", f"{name}={p}"]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode:
                print(f"{entry['stem']} {entry['precision']} {entry['op']}: RUNFAIL "
                      f"{r.stderr.strip()[-160:]}")
                continue
            got = np.load(glob.glob(os.path.join(out_dir, "*.npy"))[0]).astype(np.float64)
        scale = max(np.max(np.abs(ref)), 1e-30)
        err = float(np.max(np.abs(got - ref)) / scale) if got.shape == ref.shape else float("nan")
        bad = "nan/inf" if not np.all(np.isfinite(got)) else ""
        flag = "FAIL" if not err <= 1e-2 else "ok"
        print(f"{entry['stem']} {entry['precision']:4s} {entry['op']:10s} {entry['node'][:40]:40s} "
              f"max|ref| {scale:9.3g} err {err:8.2e} {bad} {flag}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["pack", "run"])
    parser.add_argument("out")
    parser.add_argument("models", nargs="*")
    parser.add_argument("--kilnc")
    parser.add_argument("--kiln-run")
    parser.add_argument("--cuts", type=int, default=14)
    parser.add_argument("--precision", default="fp16")
    args = parser.parse_intermixed_args()
    pack(args) if args.mode == "pack" else run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
