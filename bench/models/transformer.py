# Transformer zoo models (BERT encoder, GPT-2 decoder, ViT) in the shape HF/timm exports take.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""build(config, seed) -> Graph.

BERT and GPT-2 follow the Hugging Face TorchScript export at opset 14 (decomposed
LayerNorm, Shape-chain Reshapes, additive (1 - mask) * -10000 attention mask for BERT,
a constant causal mask applied with Where for GPT-2, GPT-2's Conv1D as Reshape/Gemm/Reshape
and its tanh GELU). ViT-B/16 follows timm at opset 17 (LayerNormalization, fused qkv
projection split with Gather, exact GELU).

With config["symbolic_seq"] (zoo.py --symbolic-seq) BERT and GPT-2 take [batch, sequence]
token ids, as exports with dynamic axes do: BERT slices its position and token-type buffers
to the run-time length, GPT-2 builds positions with Range and slices its causal mask buffer
([1, 1, positions, positions]); samplers then take seq=N."""

import math

import numpy as np

from graph import TENSOR_FLOAT, TENSOR_INT64, Graph

CONFIGS = {
    "bert": ({"layers": 12, "hidden": 768, "heads": 12, "ffn": 3072, "vocab": 30522,
              "positions": 512, "seq": 128},
             {"layers": 2, "hidden": 64, "heads": 4, "ffn": 128, "vocab": 100,
              "positions": 32, "seq": 16}),
    "gpt2": ({"layers": 12, "hidden": 768, "heads": 12, "vocab": 50257, "positions": 1024,
              "seq": 128},
             {"layers": 2, "hidden": 64, "heads": 4, "vocab": 100, "positions": 32, "seq": 16}),
    "vit": ({"layers": 12, "hidden": 768, "heads": 12, "ffn": 3072, "image": 224, "patch": 16,
             "classes": 1000},
            {"layers": 2, "hidden": 64, "heads": 4, "ffn": 128, "image": 32, "patch": 8,
             "classes": 10}),
}


def _seq_dim(config):
    """The sequence dim of inputs and outputs: symbolic or the config's length."""
    return "sequence" if config.get("symbolic_seq") else config["seq"]


def _token_inputs(g, config, mask):
    vocab, dims = config["vocab"], ["batch", _seq_dim(config)]
    ids = g.input("input_ids", TENSOR_INT64, dims,
                  lambda batch, rng, seq=config["seq"]:
                  rng.integers(0, vocab, (batch, seq), dtype=np.int64))
    if mask:  # right padding, as a tokenizer does: each row keeps at least half its tokens
        g.input("attention_mask", TENSOR_INT64, dims, lambda batch, rng, seq=config["seq"]: (
            np.arange(seq)[None, :] < rng.integers(seq // 2, seq + 1, batch)[:, None]
        ).astype(np.int64))
    return ids


def _first_tokens(g, config, buffer, ids, prefix):
    """buffer[:, :seq] of a [1, positions] buffer for symbolic seq (HF's position_ids and
    token_type_ids buffers), else the first config["seq"] columns as a constant."""
    if not config.get("symbolic_seq"):
        return g.const(buffer[:, :config["seq"]], prefix)
    return g.op("Slice", [g.const(buffer, prefix), g.const(np.array([0], np.int64), "starts"),
                          g.dim(ids, 1), g.const(np.array([1], np.int64), "axes")])


def _ffn(g, x, hidden, ffn, gelu):
    return g.linear(gelu(g.linear(x, hidden, ffn)), ffn, hidden)


def bert(config, seed):
    g = Graph("bert", seed)
    h, heads = config["hidden"], config["heads"]
    d = h // heads
    ids = _token_inputs(g, config, mask=True)
    # extended mask: (1 - mask[:, None, None, :]) * -10000
    mask = g.op("Unsqueeze", ["attention_mask", g.const(np.array([1, 2], np.int64), "axes")])
    mask = g.op("Sub", [g.const(np.float32(1), "one"), g.op("Cast", [mask], to=TENSOR_FLOAT)])
    mask = g.op("Mul", [mask, g.const(np.float32(-10000), "neg")])
    x = g.op("Gather", [g.weight((config["vocab"], h), 0.02, "word_embeddings"), ids])
    table = np.arange(config["positions"], dtype=np.int64)[None, :]
    positions = _first_tokens(g, config, table, ids, "position_ids")
    x = g.op("Add", [x, g.op("Gather", [g.weight((config["positions"], h), 0.02, "pos"),
                                        positions])])
    types = _first_tokens(g, config, np.zeros_like(table), ids, "token_type_ids")
    x = g.op("Add", [x, g.op("Gather", [g.weight((2, h), 0.02, "type"), types])])
    x = g.layer_norm(x, h, eps=1e-12)
    for _ in range(config["layers"]):
        q = g.split_heads(g.linear(x, h, h), heads, d, [0, 2, 1, 3])
        k = g.split_heads(g.linear(x, h, h), heads, d, [0, 2, 3, 1])
        v = g.split_heads(g.linear(x, h, h), heads, d, [0, 2, 1, 3])
        attn = g.merge_heads(g.softmax_attention(q, k, v, 1 / math.sqrt(d), mask=mask), h)
        x = g.layer_norm(g.op("Add", [g.linear(attn, h, h), x]), h, eps=1e-12)
        x = g.layer_norm(g.op("Add", [_ffn(g, x, h, config["ffn"], g.gelu_erf), x]), h, eps=1e-12)
    g.output(x, "last_hidden_state", TENSOR_FLOAT, ["batch", _seq_dim(config), h])
    first = g.op("Gather", [x, g.const(np.int64(0), "idx")], axis=1)
    pooled = g.op("Tanh", [g.gemm(first, h, h, std=0.02)])
    g.output(pooled, "pooler_output", TENSOR_FLOAT, ["batch", h])
    g.opset = 14
    return g


def _conv1d(g, x, din, dout):
    """GPT-2's Conv1D: x.view(-1, din) @ W + b, viewed back to [B, S, dout]."""
    y = g.gemm(g.reshape(x, [-1, din]), din, dout, trans_b=False, std=0.02)
    return g.reshape(y, [("dim", 0), ("dim", 1), dout], like=x)


def gpt2(config, seed):
    g = Graph("gpt2", seed)
    h, heads, seq = config["hidden"], config["heads"], config["seq"]
    d = h // heads
    ids = _token_inputs(g, config, mask=False)
    wte = g.rng.standard_normal((config["vocab"], h), dtype=np.float32) * np.float32(0.02)
    x = g.op("Gather", [g.const(wte, "wte"), ids])
    if config.get("symbolic_seq"):  # arange(seq)[None] and bias[:, :, :seq, :seq]
        length = g.op("Gather", [g.op("Shape", [ids]), g.const(np.int64(1), "idx")], axis=0)
        positions = g.op("Range", [g.const(np.int64(0), "start"), length,
                                   g.const(np.int64(1), "delta")])
        positions = g.op("Unsqueeze", [positions, g.const(np.array([0], np.int64), "axes")])
        bias = np.tril(np.ones((config["positions"],) * 2, bool))[None, None]
        ends = g.op("Concat", [g.dim(ids, 1), g.dim(ids, 1)], axis=0)
        causal = g.op("Slice", [g.const(bias, "bias"), g.const(np.array([0, 0], np.int64), "starts"),
                                ends, g.const(np.array([2, 3], np.int64), "axes")])
    else:
        positions = g.const(np.arange(seq, dtype=np.int64)[None, :], "position_ids")
        causal = g.const(np.tril(np.ones((seq, seq), bool))[None, None], "causal_mask")
    x = g.op("Add", [x, g.op("Gather", [g.weight((config["positions"], h), 0.01, "wpe"),
                                        positions])])
    split = g.const(np.array([h, h, h], np.int64), "split")
    for _ in range(config["layers"]):
        qkv = _conv1d(g, g.layer_norm(x, h), h, 3 * h)
        q, k, v = g.op("Split", [qkv, split], n_out=3, axis=2)
        q = g.split_heads(q, heads, d, [0, 2, 1, 3])
        k = g.split_heads(k, heads, d, [0, 2, 3, 1])
        v = g.split_heads(v, heads, d, [0, 2, 1, 3])
        attn = g.merge_heads(g.softmax_attention(q, k, v, 1 / math.sqrt(d), where_mask=causal), h)
        x = g.op("Add", [x, _conv1d(g, attn, h, h)])
        mlp = _conv1d(g, g.gelu_tanh(_conv1d(g, g.layer_norm(x, h), h, 4 * h)), 4 * h, h)
        x = g.op("Add", [x, mlp])
    x = g.layer_norm(x, h)
    # tied lm_head: the exporter folds wte.T into its own initializer
    logits = g.op("MatMul", [x, g.const(np.ascontiguousarray(wte.T), "lm_head.weight")])
    g.output(logits, "logits", TENSOR_FLOAT, ["batch", _seq_dim(config), config["vocab"]])
    g.opset = 14
    return g


def vit(config, seed):
    g = Graph("vit", seed)
    h, heads, p = config["hidden"], config["heads"], config["patch"]
    d, tokens = h // heads, (config["image"] // p) ** 2 + 1
    size = config["image"]
    x = g.input("pixel_values", TENSOR_FLOAT, ["batch", 3, size, size],
                lambda batch, rng: rng.standard_normal((batch, 3, size, size), np.float32))
    w = g.weight((h, 3, p, p), 1 / math.sqrt(3 * p * p), "patch_embed.weight")
    x = g.op("Conv", [x, w, g.weight((h,), 0.01, "patch_embed.bias")], kernel_shape=[p, p],
             strides=[p, p])
    x = g.op("Transpose", [g.reshape(x, [("dim", 0), h, -1])], perm=[0, 2, 1])
    cls_shape = g.op("Concat", [g.dim(x, 0), g.const(np.array([1, h], np.int64), "shape")],
                     axis=0)
    cls = g.op("Expand", [g.weight((1, 1, h), 0.02, "cls_token"), cls_shape])
    x = g.op("Add", [g.op("Concat", [cls, x], axis=1), g.weight((1, tokens, h), 0.02, "pos")])
    for _ in range(config["layers"]):
        y = g.layer_norm(x, h, eps=1e-6, decomposed=False)
        qkv = g.reshape(g.linear(y, h, 3 * h), [("dim", 0), ("dim", 1), 3, heads, d])
        qkv = g.op("Transpose", [qkv], perm=[2, 0, 3, 1, 4])
        q, k, v = (g.op("Gather", [qkv, g.const(np.int64(i), "idx")], axis=0) for i in range(3))
        k = g.op("Transpose", [k], perm=[0, 1, 3, 2])
        attn = g.merge_heads(g.softmax_attention(q, k, v, 1 / math.sqrt(d)), h)
        x = g.op("Add", [x, g.linear(attn, h, h)])
        y = g.layer_norm(x, h, eps=1e-6, decomposed=False)
        x = g.op("Add", [x, _ffn(g, y, h, config["ffn"], g.gelu_erf)])
    x = g.layer_norm(x, h, eps=1e-6, decomposed=False)
    first = g.op("Gather", [x, g.const(np.int64(0), "idx")], axis=1)
    g.output(g.gemm(first, h, config["classes"]), "logits", TENSOR_FLOAT,
             ["batch", config["classes"]])
    g.opset = 17
    return g


BUILDERS = {"bert": bert, "gpt2": gpt2, "vit": vit}
