#!/usr/bin/env python3
# Exports the real-exports zoo: torchvision and transformers models through
# PyTorch's own exporters (TorchScript and dynamo), with a dynamic batch axis
# (and a dynamic sequence axis for text), random weights, fixed seed.
# Runs where torch, torchvision and transformers are installed (the GPU machine).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import argparse
import os
import sys
import tarfile
import traceback

import torch

torch.manual_seed(0)


def export(model, args, path, input_names, dynamic, exporter):
    model.eval()
    kwargs = dict(input_names=input_names, output_names=["output"], opset_version=18)
    if exporter == "torchscript":
        kwargs["dynamic_axes"] = {**dynamic, "output": {0: "batch"}}
        torch.onnx.export(model, args, path, dynamo=False, **kwargs)
    else:
        kwargs["dynamic_axes"] = {**dynamic, "output": {0: "batch"}}
        torch.onnx.export(model, args, path, dynamo=True, external_data=False, **kwargs)


def vision(names):
    import torchvision
    for name in names:
        yield name, getattr(torchvision.models, name)(weights=None), (torch.randn(1, 3, 224, 224),), \
            ["input"], {"input": {0: "batch"}}


class FirstOutput(torch.nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        out = self.inner(x)
        return out[0] if isinstance(out, (tuple, list)) else out.last_hidden_state


def text():
    import transformers as tf
    ids = torch.randint(0, 1000, (2, 16))
    dyn = {"input_ids": {0: "batch", 1: "sequence"}}
    yield "bert_tiny", FirstOutput(tf.BertModel(tf.BertConfig(
        vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=128))), (ids,), ["input_ids"], dyn
    yield "distilbert_tiny", FirstOutput(tf.DistilBertModel(tf.DistilBertConfig(
        vocab_size=1000, dim=64, n_layers=2, n_heads=4, hidden_dim=128))), (ids,), ["input_ids"], dyn
    yield "gpt2_tiny", FirstOutput(tf.GPT2Model(tf.GPT2Config(
        vocab_size=1000, n_embd=64, n_layer=2, n_head=4, n_positions=128))), (ids,), ["input_ids"], dyn
    yield "vit_tiny", FirstOutput(tf.ViTModel(tf.ViTConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        image_size=64, patch_size=16))), (torch.randn(1, 3, 64, 64),), ["pixel_values"], \
        {"pixel_values": {0: "batch"}}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--vision", default="mobilenet_v3_small,squeezenet1_1,shufflenet_v2_x0_5,mnasnet0_5")
    p.add_argument("--dynamo-vision", default="mobilenet_v3_small")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    jobs = [(n, m, x, i, d, "torchscript") for n, m, x, i, d in vision(a.vision.split(","))]
    jobs += [(n, m, x, i, d, "dynamo") for n, m, x, i, d in vision(a.dynamo_vision.split(",")) if n]
    for n, m, x, i, d in text():
        jobs += [(n, m, x, i, d, "torchscript"), (n, m, x, i, d, "dynamo")]
    small = []
    for name, model, args, inputs, dyn, exporter in jobs:
        path = os.path.join(a.out, f"{name}.{exporter}.onnx")
        try:
            with torch.no_grad():
                export(model, args, path, inputs, dyn, exporter)
            size = os.path.getsize(path)
            print(f"ok   {path} {size / 2**20:.1f} MiB")
            if size < 4 * 2**20:
                small.append(path)
        except Exception as e:  # one failure must not stop the others
            print(f"FAIL {path}: {type(e).__name__}: {str(e)[:300]}")
            traceback.print_exc(limit=2, file=sys.stdout)
    with tarfile.open(os.path.join(a.out, "small.tar.gz"), "w:gz") as tar:
        for path in small:
            tar.add(path, arcname=os.path.basename(path))
            os.remove(path)


if __name__ == "__main__":
    main()
