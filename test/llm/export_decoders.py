#!/usr/bin/env python3
# Exports small decoder-only language models with a KV cache (past_key_values
# in, present out) through PyTorch's TorchScript and dynamo exporters, and
# records transformers' greedy generate() ids for them as references.
# Runs where torch and transformers are installed (the GPU machine).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: export_decoders.py --out DIR [--only NAME,...] [--exporters torchscript,dynamo]

Writes, per model NAME (random weights from a fixed seed, full weights: the
configurations are small):
  DIR/NAME.EXPORTER.onnx   inputs input_ids [batch, sequence], attention_mask
                           [batch, past_sequence + sequence], position_ids
                           [batch, sequence], past_key_values.L.key/value
                           [batch, kv_heads, past_sequence, head_dim];
                           outputs logits [batch, sequence, vocab] and
                           present.L.key/value [batch, kv_heads,
                           past_sequence + sequence, head_dim] (the names
                           Hugging Face Optimum's exports use)
  DIR/NAME.generate.npz    prompt (int64 [2, 8]) and ids (prompt followed by
                           32 greedy tokens from transformers' generate())
  DIR/export.log           one ok/FAIL line per export

test/llm/models holds two runs' exports: the TorchScript ones with
NAME.generate.npz (the first run) and the dynamo ones, exported after the
dynamic-shape fix, with NAME.dynamo.generate.npz; before models were seeded
in configs(), each run drew its own random weights, so each export keeps the
reference ids of its own run.
"""

import argparse
import os
import sys
import time
import traceback

import numpy as np
import torch

NEW_TOKENS = 32


def configs():
    """(name, model): each built right after seeding torch, so that a model's
    random weights are the same in every run of this script."""
    import transformers as tf
    torch.manual_seed(0)
    # initializer_range well above the default 0.02 so that the random
    # models' logits are decisive (greedy ids then do not hinge on the last
    # bits of a near-tie).
    yield "gpt2_tiny_kv", tf.GPT2LMHeadModel(tf.GPT2Config(
        vocab_size=1000, n_embd=64, n_layer=2, n_head=4, n_positions=128,
        initializer_range=0.2))
    torch.manual_seed(0)
    yield "llama_tiny_kv", tf.LlamaForCausalLM(tf.LlamaConfig(
        vocab_size=1000, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
        rms_norm_eps=1e-5, initializer_range=0.2, tie_word_embeddings=False))


def layer_kv(cache, i):
    """Layer i's (key, value) of a transformers cache, across versions."""
    if hasattr(cache, "layers"):
        return cache.layers[i].keys, cache.layers[i].values
    if hasattr(cache, "key_cache"):
        return cache.key_cache[i], cache.value_cache[i]
    return cache[i]


class WithCache(torch.nn.Module):
    """The model with its cache as flat tensors: (ids, mask, positions,
    k0, v0, k1, v1, ...) -> (logits, present k0, v0, ...)."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.layers = model.config.num_hidden_layers

    def forward(self, input_ids, attention_mask, position_ids, *past):
        from transformers.cache_utils import DynamicCache
        cache = DynamicCache()
        for i in range(self.layers):
            cache.update(past[2 * i], past[2 * i + 1], i)
        out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                         position_ids=position_ids, past_key_values=cache, use_cache=True)
        presents = []
        for i in range(self.layers):
            presents.extend(layer_kv(out.past_key_values, i))
        return (out.logits, *presents)


def example(model, batch=2, sequence=4, past=3):
    c = model.config
    heads = getattr(c, "num_key_value_heads", None) or c.num_attention_heads
    head_dim = c.hidden_size // c.num_attention_heads
    ids = torch.randint(0, c.vocab_size, (batch, sequence))
    mask = torch.ones(batch, past + sequence, dtype=torch.int64)
    positions = torch.arange(past, past + sequence).unsqueeze(0).expand(batch, -1).contiguous()
    pasts = []
    for _ in range(c.num_hidden_layers):
        pasts += [torch.randn(batch, heads, past, head_dim), torch.randn(batch, heads, past, head_dim)]
    return (ids, mask, positions, *pasts)


def names(layers):
    inputs = ["input_ids", "attention_mask", "position_ids"]
    outputs = ["logits"]
    for i in range(layers):
        inputs += [f"past_key_values.{i}.key", f"past_key_values.{i}.value"]
        outputs += [f"present.{i}.key", f"present.{i}.value"]
    return inputs, outputs


def export(model, path, exporter):
    wrapped = WithCache(model).eval()
    args = example(model)
    inputs, outputs = names(wrapped.layers)
    if exporter == "torchscript":
        dynamic = {"input_ids": {0: "batch", 1: "sequence"},
                   "attention_mask": {0: "batch", 1: "total_sequence"},
                   "position_ids": {0: "batch", 1: "sequence"},
                   "logits": {0: "batch", 1: "sequence"}}
        for name in inputs[3:]:
            dynamic[name] = {0: "batch", 2: "past_sequence"}
        for name in outputs[1:]:
            dynamic[name] = {0: "batch", 2: "total_sequence"}
        torch.onnx.export(wrapped, args, path, dynamo=False, opset_version=18,
                          input_names=inputs, output_names=outputs, dynamic_axes=dynamic)
    else:
        # Dim.AUTO: torch.export finds the relations itself (the mask's
        # length is past + sequence, which named Dims cannot say).
        auto = torch.export.Dim.AUTO
        # forward(input_ids, attention_mask, position_ids, *past): the
        # varargs are one tuple in torch.export's view of the inputs.
        shapes = [{0: auto, 1: auto}, {0: auto, 1: auto}, {0: auto, 1: auto},
                  tuple({0: auto, 2: auto} for _ in range(2 * wrapped.layers))]
        torch.onnx.export(wrapped, args, path, dynamo=True, external_data=False, opset_version=18,
                          input_names=inputs, output_names=outputs, dynamic_shapes=tuple(shapes))


def reference(model, path):
    prompt = torch.randint(0, model.config.vocab_size, (2, 8))
    with torch.no_grad():
        ids = model.generate(prompt, attention_mask=torch.ones_like(prompt),
                             max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS,
                             do_sample=False, pad_token_id=0)
    np.savez(path, prompt=prompt.numpy(), ids=ids.numpy())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--only", default="")
    p.add_argument("--exporters", default="torchscript,dynamo")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    only = set(filter(None, a.only.split(",")))
    with open(os.path.join(a.out, "export.log"), "a") as log:
        def note(line):
            print(line, flush=True)
            log.write(line + "\n")
            log.flush()
        import transformers
        note(f"torch {torch.__version__}, transformers {transformers.__version__}")
        for name, model in configs():
            if only and name not in only:
                continue
            torch.manual_seed(0)
            model = model.eval()
            try:
                reference(model, os.path.join(a.out, f"{name}.generate.npz"))
                note(f"ok   {name}.generate")
            except Exception as e:
                note(f"FAIL {name}.generate: {type(e).__name__}: {str(e)[:300]}")
            for exporter in a.exporters.split(","):
                path = os.path.join(a.out, f"{name}.{exporter}.onnx")
                start = time.time()
                try:
                    with torch.no_grad():
                        export(model, path, exporter)
                    note(f"ok   {name}.{exporter} {os.path.getsize(path) / 2**10:.0f} KiB, "
                         f"{time.time() - start:.0f} s")
                except Exception as e:
                    note(f"FAIL {name}.{exporter}: {type(e).__name__}: {str(e)[:400]}")
                    traceback.print_exc(limit=4, file=sys.stdout)
                    if os.path.exists(path):
                        os.remove(path)


if __name__ == "__main__":
    main()
