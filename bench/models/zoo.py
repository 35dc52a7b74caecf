# Writes the model zoo: ONNX models with seeded random weights, inputs and onnxruntime references.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: zoo.py --out DIR [--small] [--symbolic-seq] [--batch N]... [MODEL...]

For each model writes DIR/MODEL/model.onnx (batch dim symbolic, named 'batch'; with
--symbolic-seq BERT's and GPT-2's sequence dim too, named 'sequence'),
DIR/MODEL/bN/inputs/NAME.npy and DIR/MODEL/bN/reference/NAME.npy (onnxruntime CPU,
all graph optimizations off), and DIR/MODEL/meta.json (node and parameter counts,
input and output names). Everything is a function of the model, --small and the batch:
weights come from a seed derived from the model name, inputs from (seed, batch).
A model whose meta.json already matches is not written again.
"""

import argparse
import hashlib
import json
import os
import sys
import zlib

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cnn  # noqa: E402
import transformer  # noqa: E402

MODELS = {name: (module.BUILDERS[name], module.CONFIGS[name])
          for module in (cnn, transformer) for name in module.BUILDERS}


def source_hash():
    """Hash of the generator sources: a change to them regenerates every model."""
    digest = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("graph.py", "cnn.py", "transformer.py", "zoo.py"):
        with open(os.path.join(here, name), "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()[:16]


def build(name, small, symbolic_seq=False):
    builder, configs = MODELS[name]
    config = dict(configs[1] if small else configs[0], symbolic_seq=symbolic_seq)
    return builder(config, zlib.crc32(name.encode()))


def reference(model_path, inputs):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, inputs)))


def write_model(name, out_dir, small, batches, symbolic_seq=False):
    model_dir = os.path.join(out_dir, name)
    meta_path = os.path.join(model_dir, "meta.json")
    key = {"source": source_hash(), "small": small, "batches": sorted(batches)}
    if symbolic_seq:
        key["symbolic_seq"] = True
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            if json.load(f).get("key") == key:
                return model_dir
    g = build(name, small, symbolic_seq)
    model = g.model()
    onnx.checker.check_model(model)
    os.makedirs(model_dir, exist_ok=True)
    model_path = os.path.join(model_dir, "model.onnx")
    onnx.save(model, model_path)
    meta = {"name": name, "small": small, "opset": g.opset, "nodes": len(model.graph.node),
            "params": int(sum(np.prod(t.dims) for t in model.graph.initializer)),
            "inputs": [i.name for i in model.graph.input],
            "outputs": [o.name for o in model.graph.output], "batches": {}}
    for batch in batches:
        inputs = g.sample_inputs(batch)
        batch_dir = os.path.join(model_dir, f"b{batch}")
        for sub, values in (("inputs", inputs), ("reference", reference(model_path, inputs))):
            os.makedirs(os.path.join(batch_dir, sub), exist_ok=True)
            for value_name, value in values.items():
                np.save(os.path.join(batch_dir, sub, value_name + ".npy"), value)
        meta["batches"][str(batch)] = {k: list(v.shape) for k, v in inputs.items()}
    meta["key"] = key
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
    return model_dir


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--small", action="store_true", help="the few-layer configurations")
    p.add_argument("--symbolic-seq", action="store_true",
                   help="BERT and GPT-2 with a symbolic sequence dim")
    p.add_argument("--batch", type=int, action="append", help="batch sizes (default 1)")
    p.add_argument("models", nargs="*", help=f"default: all of {', '.join(MODELS)}")
    args = p.parse_args()
    for name in args.models or MODELS:
        if name not in MODELS:
            sys.exit(f"error: unknown model '{name}'; known: {', '.join(MODELS)}")
        path = write_model(name, args.out, args.small, args.batch or [1], args.symbolic_seq)
        with open(os.path.join(path, "meta.json")) as f:
            meta = json.load(f)
        print(f"{name}: {meta['nodes']} nodes, {meta['params'] / 1e6:.2f} M parameters -> {path}")


if __name__ == "__main__":
    main()
