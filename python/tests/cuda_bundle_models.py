# Compiles the models of the Python CUDA check (cuda_check.py) with kiln.compile(target="cuda").
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: cuda_bundle_models.py OUT_DIR [--gpu sm_90a]   (PYTHONPATH=build/python)

Writes OUT_DIR/NAME/{model.so, inputs/*.npy, reference/*.npy} for: tiny (the tests' MLP at
batch 4), two_input (Add and Mul, two outputs), and the --small zoo's mlp and resnet18 at
batch 2 (bench/models/zoo.py; references from onnxruntime on the CPU).
"""

import argparse
import json
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "bench", "models"))
import kiln  # noqa: E402
import zoo  # noqa: E402
from conftest import mlp_model, onnxruntime_outputs, two_input_model  # noqa: E402


def write_case(out, name, onnx_model_or_path, inputs, reference, gpu):
    case = os.path.join(out, name)
    for sub, values in (("inputs", inputs), ("reference", reference)):
        os.makedirs(os.path.join(case, sub), exist_ok=True)
        for value_name, value in values.items():
            np.save(os.path.join(case, sub, value_name + ".npy"), value)
    kiln.compile(onnx_model_or_path, target="cuda", gpu=gpu,
                 input_shapes={k: v.shape for k, v in inputs.items()},
                 output=os.path.join(case, "model.so"), load=False)
    print(f"{name}: compiled for {gpu}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--gpu", default="sm_90a")
    args = p.parse_args()
    rng = np.random.default_rng(0)

    model = mlp_model()
    x = rng.standard_normal((4, 8)).astype(np.float32)
    write_case(args.out, "tiny", model, {"x": x}, {"y": onnxruntime_outputs(model, {"x": x})[0]},
               args.gpu)
    model = two_input_model()
    a, b = (rng.standard_normal((2, 3)).astype(np.float32) for _ in range(2))
    total, product = onnxruntime_outputs(model, {"a": a, "b": b})
    write_case(args.out, "two_input", model, {"a": a, "b": b},
               {"sum": total, "product": product}, args.gpu)

    zoo_dir = os.path.join(args.out, ".zoo")
    for name in ("mlp", "resnet18"):
        model_dir = zoo.write_model(name, zoo_dir, True, [2])
        batch = os.path.join(model_dir, "b2")
        read = lambda sub: {n[:-4]: np.load(os.path.join(batch, sub, n))  # noqa: E731
                            for n in os.listdir(os.path.join(batch, sub))}
        write_case(args.out, f"zoo_{name}", os.path.join(model_dir, "model.onnx"), read("inputs"),
                   read("reference"), args.gpu)
    shutil.rmtree(zoo_dir)


if __name__ == "__main__":
    sys.exit(main())
