# From a PyTorch model to a compiled Kiln artifact, checked and timed against onnxruntime.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: compile_and_time.py [--torchvision NAME | --onnx FILE] [--batch N] [--seq N]
                           [--threads N] [--runs N] [--out DIR]

Default: the Hugging Face ViT (tiny config, random weights) that PyTorch's exporter wrote
to test/real-exports/models/vit_tiny.torchscript.onnx. With --torchvision NAME (needs
torch and torchvision) the model is built here, e.g. resnet18, and kiln.compile exports
it with torch.onnx.export. Symbolic dims are fixed: 'batch' to --batch, others to --seq.

Steps: compile (kiln.compile, the driver kilnc runs) to DIR/model.so, run once on seeded
inputs and compare with onnxruntime, then time both at the same thread count:
Kiln's model.benchmark (the C API's loop) and model(x) from Python, against
onnxruntime's InferenceSession.run (all graph optimizations).
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np
import onnxruntime as ort

import kiln

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_ONNX = os.path.join(HERE, "..", "..", "test", "real-exports", "models",
                            "vit_tiny.torchscript.onnx")


def torchvision_onnx(name, batch, path):
    """Exports torchvision's NAME (random weights) at this batch; returns its model."""
    import torch
    import torchvision

    torch.manual_seed(0)
    module = getattr(torchvision.models, name)(weights=None).eval()
    example = torch.randn(batch, 3, 224, 224)
    torch.onnx.export(module, (example,), path, input_names=["image"],
                      output_names=["logits"], dynamo=False)
    return module, example


def static_inputs(session, batch, seq, rng):
    """Seeded inputs for the model's graph inputs, symbolic dims fixed."""
    inputs = {}
    for info in session.get_inputs():
        shape = [d if isinstance(d, int) else (batch if d == "batch" else seq)
                 for d in info.shape]
        if info.type == "tensor(int64)":
            inputs[info.name] = rng.integers(0, 100, shape, dtype=np.int64)
        else:
            inputs[info.name] = rng.standard_normal(shape).astype(np.float32)
    return inputs


def median_ms(call, runs):
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = p.add_mutually_exclusive_group()
    source.add_argument("--torchvision", metavar="NAME", help="e.g. resnet18, mobilenet_v2")
    source.add_argument("--onnx", metavar="FILE", default=DEFAULT_ONNX)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seq", type=int, default=16, help="other symbolic dims (text models)")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--out", default="kiln-example")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)

    if args.torchvision:
        onnx_path = os.path.join(args.out, f"{args.torchvision}.onnx")
        torchvision_onnx(args.torchvision, args.batch, onnx_path)
    else:
        onnx_path = args.onnx
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    session = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
    inputs = static_inputs(session, args.batch, args.seq, np.random.default_rng(0))

    start = time.perf_counter()
    model = kiln.compile(onnx_path, input_shapes={n: v.shape for n, v in inputs.items()},
                         output=os.path.join(args.out, "model.so"), threads=args.threads)
    print(f"compiled {os.path.basename(onnx_path)} in {time.perf_counter() - start:.1f} s "
          f"-> {model.info['path']}")
    print(f"  inputs:  {model.inputs}\n  outputs: {model.outputs}")

    got = model(**inputs)
    got = got if isinstance(got, tuple) else (got,)
    want = session.run(None, inputs)
    for info, g, w in zip(model.outputs, got, want):
        scale = max(float(np.abs(w).max()), 1e-30)
        print(f"  {info.name}: max |kiln - onnxruntime| / max |onnxruntime| = "
              f"{float(np.abs(g - w).max()) / scale:.1e}")

    kiln_c = model.benchmark(**inputs, warmup=5, runs=args.runs).latency_ms.median
    kiln_py = median_ms(lambda: model(**inputs), args.runs)
    session.run(None, inputs)
    ort_ms = median_ms(lambda: session.run(None, inputs), args.runs)
    print(f"median of {args.runs} runs, {args.threads} threads, batch {args.batch}:")
    print(f"  kiln (C API loop)     {kiln_c:8.3f} ms")
    print(f"  kiln model(x)         {kiln_py:8.3f} ms")
    print(f"  onnxruntime .run()    {ort_ms:8.3f} ms   (kiln/ort {kiln_py / ort_ms:.2f})")


if __name__ == "__main__":
    sys.exit(main())
