# Decode tokens/s: kiln-run --generate against onnxruntime's greedy loop with a KV cache.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: llm_decode.py WORK --kilnc PATH --kiln-run PATH
                     [--model MODEL.onnx | --gpt2 small|tiny | --llama tiny|1b]
                     [--prompt 128] [--tokens 64] [--threads 2] [--repeats 3]

Times greedy decoding of one exported decoder with a KV cache (inputs input_ids,
position_ids, attention_mask (optional in --model), past_key_values.L.key|value; outputs
logits, present.L.key|value) two ways, interleaved in one run on the same
threads: `kiln-run --generate` (the runtime's kiln_decoder, compiled once with
kilnc) and onnxruntime's CPU provider driven from Python (each step feeds the
presents back as pasts, as Optimum's ORTModelForCausalLM does). Prints each
side's time to first token and decode tokens/s (median over --repeats) and
their ratio, and checks that both generate the same ids.

Without --model it builds a GPT-2 with a KV cache from numpy (onnx + numpy only,
no torch: seeded random weights, GPT-2 small's shapes with --gpt2 small:
12 layers, hidden 768, 12 heads, vocabulary 50257, 1024 positions), or with
--llama a Llama-architecture one (RMSNorm, rotary positions, grouped-query
attention, SwiGLU; --llama 1b has TinyLlama-1.1B's shapes: 22 layers, hidden
2048, 32 query and 4 key/value heads, MLP 5632, vocabulary 32000).
"""

import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "models"))
from graph import TENSOR_FLOAT, TENSOR_INT64, Graph  # noqa: E402

GPT2 = {"small": dict(layers=12, hidden=768, heads=12, vocab=50257, positions=1024),
        "tiny": dict(layers=2, hidden=64, heads=4, vocab=1000, positions=512)}
# TinyLlama-1.1B's shapes (1.1e9 parameters) and a small one for checks.
LLAMA = {"1b": dict(layers=22, hidden=2048, heads=32, kv_heads=4, intermediate=5632,
                    vocab=32000, positions=2048),
         "tiny": dict(layers=2, hidden=64, heads=4, kv_heads=2, intermediate=176, vocab=1000,
                      positions=512)}


def _conv1d(g, x, din, dout):
    """GPT-2's Conv1D: x.view(-1, din) @ W + b, viewed back to [B, S, dout]."""
    y = g.gemm(g.reshape(x, [-1, din]), din, dout, trans_b=False, std=0.02)
    return g.reshape(y, [("dim", 0), ("dim", 1), dout], like=x)


def _scalar_dim(g, x, axis):
    return g.op("Gather", [g.op("Shape", [x]), g.const(np.int64(axis), "idx")], axis=0)


def _causal_mask(g, ids, mask):
    """Query i (at past + i) sees keys 0 .. past + i that the attention mask
    ([batch, past + sequence], as transformers' exports take it) keeps:
    [batch, 1, sequence, past + sequence] bools; the past's length is the
    mask's minus the tokens'."""
    total, seq_len = _scalar_dim(g, mask, 1), _scalar_dim(g, ids, 1)
    past_len = g.op("Sub", [total, seq_len])
    one = g.const(np.int64(1), "one")
    rows = g.op("Range", [past_len, total, one])
    cols = g.op("Range", [g.const(np.int64(0), "zero"), total, one])
    causal = g.op("LessOrEqual", [
        g.op("Unsqueeze", [cols, g.const(np.array([0], np.int64), "axes")]),
        g.op("Unsqueeze", [rows, g.const(np.array([1], np.int64), "axes")])])
    keep = g.op("Unsqueeze", [g.op("Cast", [mask], to=onnx.TensorProto.BOOL),
                              g.const(np.array([1, 2], np.int64), "axes")])
    return g.op("And", [causal, keep])


def gpt2_kv(layers, hidden, heads, vocab, positions, seed=0):
    """GPT-2 with past_key_values inputs and present outputs ([batch, heads, past, head])."""
    g = Graph("gpt2_kv", seed)
    d = hidden // heads
    ids = g.input("input_ids", TENSOR_INT64, ["batch", "sequence"], None)
    mask = g.input("attention_mask", TENSOR_INT64, ["batch", "total_sequence"], None)
    pos = g.input("position_ids", TENSOR_INT64, ["batch", "sequence"], None)
    pasts = [[g.input(f"past_key_values.{i}.{kind}", TENSOR_FLOAT,
                      ["batch", heads, "past_sequence", d], None) for kind in ("key", "value")]
             for i in range(layers)]
    wte = g.rng.standard_normal((vocab, hidden), dtype=np.float32) * np.float32(0.1)
    x = g.op("Gather", [g.const(wte, "wte"), ids])
    x = g.op("Add", [x, g.op("Gather", [g.weight((positions, hidden), 0.05, "wpe"), pos])])
    causal = _causal_mask(g, ids, mask)
    split = g.const(np.array([hidden] * 3, np.int64), "split")
    present_dims = ["batch", heads, "past_sequence + sequence", d]
    for i in range(layers):
        qkv = _conv1d(g, g.layer_norm(x, hidden), hidden, 3 * hidden)
        q, k, v = g.op("Split", [qkv, split], n_out=3, axis=2)
        q, k, v = (g.split_heads(t, heads, d, [0, 2, 1, 3]) for t in (q, k, v))
        key = g.op("Concat", [pasts[i][0], k], axis=2)
        value = g.op("Concat", [pasts[i][1], v], axis=2)
        g.output(key, f"present.{i}.key", TENSOR_FLOAT, present_dims)
        g.output(value, f"present.{i}.value", TENSOR_FLOAT, present_dims)
        kt = g.op("Transpose", [key], perm=[0, 1, 3, 2])
        attn = g.merge_heads(g.softmax_attention(q, kt, value, 1 / math.sqrt(d),
                                                 where_mask=causal), hidden)
        x = g.op("Add", [x, _conv1d(g, attn, hidden, hidden)])
        mlp = _conv1d(g, g.gelu_tanh(_conv1d(g, g.layer_norm(x, hidden), hidden, 4 * hidden)),
                      4 * hidden, hidden)
        x = g.op("Add", [x, mlp])
    x = g.layer_norm(x, hidden)
    logits = g.op("MatMul", [x, g.const(np.ascontiguousarray(wte.T), "lm_head.weight")])
    g.output(logits, "logits", TENSOR_FLOAT, ["batch", "sequence", vocab])
    g.opset = 14
    return g.model()


def _rms_norm(g, x, dim, eps=1e-5):
    """transformers' LlamaRMSNorm: x * rsqrt(mean(x^2) + eps) * weight."""
    weight = g.const(1.0 + 0.1 * g.rng.standard_normal(dim, dtype=np.float32), "norm.weight")
    power = g.op("ReduceMean", [g.op("Pow", [x, g.const(np.float32(2), "two")])], axes=[-1],
                 keepdims=1)
    root = g.op("Sqrt", [g.op("Add", [power, g.const(np.float32(eps), "eps")])])
    return g.op("Mul", [weight, g.op("Mul", [x, g.op("Reciprocal", [root])])])


def _rotary(g, x, cos, sin, half):
    """x * cos + rotate_half(x) * sin on [B, H, S, D], cos/sin [B, 1, S, D]."""
    x1 = g.op("Slice", [x, g.const(np.array([0], np.int64), "start"),
                        g.const(np.array([half], np.int64), "end"),
                        g.const(np.array([3], np.int64), "axis")])
    x2 = g.op("Slice", [x, g.const(np.array([half], np.int64), "start"),
                        g.const(np.array([2 * half], np.int64), "end"),
                        g.const(np.array([3], np.int64), "axis")])
    rotated = g.op("Concat", [g.op("Neg", [x2]), x1], axis=-1)
    return g.op("Add", [g.op("Mul", [x, cos]), g.op("Mul", [rotated, sin])])


def llama_kv(layers, hidden, heads, kv_heads, intermediate, vocab, positions, seed=0):
    """A Llama-architecture decoder (RMSNorm, rotary positions, grouped-query attention,
    SwiGLU, untied LM head) with past_key_values inputs and present outputs
    ([batch, kv_heads, past, head]), written the way transformers' export spells it
    (repeat_kv as Unsqueeze + Expand + Reshape)."""
    g = Graph("llama_kv", seed)
    d, group = hidden // heads, heads // kv_heads
    ids = g.input("input_ids", TENSOR_INT64, ["batch", "sequence"], None)
    mask = g.input("attention_mask", TENSOR_INT64, ["batch", "total_sequence"], None)
    pos = g.input("position_ids", TENSOR_INT64, ["batch", "sequence"], None)
    pasts = [[g.input(f"past_key_values.{i}.{kind}", TENSOR_FLOAT,
                      ["batch", kv_heads, "past_sequence", d], None) for kind in ("key", "value")]
             for i in range(layers)]
    x = g.op("Gather", [g.weight((vocab, hidden), 0.1, "embed_tokens"), ids])
    inv_freq = 1.0 / (10000.0 ** (np.arange(0, d, 2, dtype=np.float64) / d))
    angles = np.outer(np.arange(positions, dtype=np.float64), inv_freq)
    angles = np.concatenate([angles, angles], axis=1)
    axis1 = g.const(np.array([1], np.int64), "axes")
    cos = g.op("Unsqueeze", [g.op("Gather", [g.const(np.cos(angles), "cos"), pos]), axis1])
    sin = g.op("Unsqueeze", [g.op("Gather", [g.const(np.sin(angles), "sin"), pos]), axis1])
    causal = _causal_mask(g, ids, mask)
    present_dims = ["batch", kv_heads, "past_sequence + sequence", d]
    std = 0.02

    def repeat_kv(t):  # [B, kv, T, d] -> [B, heads, T, d]
        t = g.op("Unsqueeze", [t, g.const(np.array([2], np.int64), "axes")])
        shape = g.op("Concat", [g.dim(t, 0), g.const(np.array([kv_heads, group], np.int64),
                                                      "shape"), g.dim(t, 3),
                                g.const(np.array([d], np.int64), "shape")], axis=0)
        t = g.op("Expand", [t, shape])
        return g.reshape(t, [("dim", 0), heads, ("dim", 3), d])

    for i in range(layers):
        h = _rms_norm(g, x, hidden)
        q = g.split_heads(g.linear(h, hidden, heads * d, std, bias=False), heads, d, [0, 2, 1, 3])
        k = g.split_heads(g.linear(h, hidden, kv_heads * d, std, bias=False), kv_heads, d,
                          [0, 2, 1, 3])
        v = g.split_heads(g.linear(h, hidden, kv_heads * d, std, bias=False), kv_heads, d,
                          [0, 2, 1, 3])
        q, k = _rotary(g, q, cos, sin, d // 2), _rotary(g, k, cos, sin, d // 2)
        key = g.op("Concat", [pasts[i][0], k], axis=2)
        value = g.op("Concat", [pasts[i][1], v], axis=2)
        g.output(key, f"present.{i}.key", TENSOR_FLOAT, present_dims)
        g.output(value, f"present.{i}.value", TENSOR_FLOAT, present_dims)
        kt = g.op("Transpose", [repeat_kv(key)], perm=[0, 1, 3, 2])
        attn = g.merge_heads(g.softmax_attention(q, kt, repeat_kv(value), 1 / math.sqrt(d),
                                                 where_mask=causal), hidden)
        x = g.op("Add", [x, g.linear(attn, hidden, hidden, std, bias=False)])
        h = _rms_norm(g, x, hidden)
        gate = g.silu(g.linear(h, hidden, intermediate, std, bias=False))
        up = g.linear(h, hidden, intermediate, std, bias=False)
        x = g.op("Add", [x, g.linear(g.op("Mul", [gate, up]), intermediate, hidden, std,
                                     bias=False)])
    x = _rms_norm(g, x, hidden)
    logits = g.op("MatMul", [x, g.weight((hidden, vocab), std, "lm_head.weight")])
    g.output(logits, "logits", TENSOR_FLOAT, ["batch", "sequence", vocab])
    g.opset = 14
    return g.model()


def ort_generate(session, prompt, tokens):
    """Greedy ids, time to first token and decode seconds with onnxruntime."""
    inputs = {i.name: i for i in session.get_inputs()}
    pasts = [n for n in inputs if n.startswith("past_key_values.")]
    presents = [o.name for o in session.get_outputs() if o.name.startswith("present")]
    outputs = ["logits"] + presents
    batch, length = prompt.shape
    feed = {"input_ids": prompt,
            "position_ids": np.tile(np.arange(length, dtype=np.int64), (batch, 1))}
    for name in pasts:
        shape = inputs[name].shape
        feed[name] = np.zeros((batch, shape[1], 0, shape[3]), np.float32)
    if "attention_mask" in inputs:
        feed["attention_mask"] = np.ones((batch, length), np.int64)
    generated = []
    start = time.perf_counter()
    first = None
    for t in range(tokens):
        result = session.run(outputs, feed)
        token = result[0][:, -1].argmax(-1).astype(np.int64)[:, None]
        generated.append(token)
        if first is None:
            first = time.perf_counter()
        if t + 1 == tokens:
            break
        total = length + t + 1
        feed = {"input_ids": token, "position_ids": np.full((batch, 1), total - 1, np.int64)}
        feed.update(zip(pasts, result[1:]))
        if "attention_mask" in inputs:
            feed["attention_mask"] = np.ones((batch, total), np.int64)
    end = time.perf_counter()
    return np.concatenate([prompt] + generated, 1), first - start, end - first


def kiln_generate(args, artifact, prompt_path, tokens, compare):
    cmd = [args.kiln_run, artifact, "--threads", str(args.threads), "--generate", str(tokens),
           "--prompt-ids", prompt_path, "--compare", compare]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode:
        raise SystemExit(f"kiln-run failed: {run.stderr.strip()}")
    ttft = float(re.search(r"time to first token: ([0-9.]+) ms", run.stdout).group(1))
    decode = float(re.search(r"decode: \d+ steps in ([0-9.]+) ms", run.stdout).group(1))
    return ttft / 1e3, decode / 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("work")
    p.add_argument("--kilnc", required=True)
    p.add_argument("--kiln-run", required=True)
    p.add_argument("--model")
    p.add_argument("--gpt2", choices=sorted(GPT2), default="small")
    p.add_argument("--llama", choices=sorted(LLAMA),
                   help="a Llama-architecture model from numpy instead of GPT-2")
    p.add_argument("--prompt", type=int, default=128)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--kilnc-arg", action="append", default=[])
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    model = a.model
    if not model:
        name = f"llama_{a.llama}" if a.llama else f"gpt2_{a.gpt2}"
        model = os.path.join(a.work, f"{name}_kv.onnx")
        if not os.path.exists(model):
            built = llama_kv(**LLAMA[a.llama]) if a.llama else gpt2_kv(**GPT2[a.gpt2])
            onnx.save(built, model)
    artifact = os.path.join(a.work, os.path.basename(model)[:-5] + ".so")
    if not os.path.exists(artifact):
        start = time.time()
        subprocess.run([a.kilnc, model, "-o", artifact, *a.kilnc_arg], check=True)
        print(f"kilnc: {time.time() - start:.0f} s")
    options = ort.SessionOptions()
    options.intra_op_num_threads = a.threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    vocab = next(o.shape[2] for o in session.get_outputs() if o.name == "logits")
    prompt = np.random.default_rng(0).integers(0, vocab, (1, a.prompt), dtype=np.int64)
    prompt_path = os.path.join(a.work, "prompt.npy")
    np.save(prompt_path, prompt)
    ids, _, _ = ort_generate(session, prompt, 2)  # warm-up
    ort_times, kiln_times = [], []
    for r in range(a.repeats):
        ids, ttft, decode = ort_generate(session, prompt, a.tokens)
        ort_times.append((ttft, decode))
        ids_path = os.path.join(a.work, "ort_ids.npy")
        np.save(ids_path, ids)
        kiln_times.append(kiln_generate(a, artifact, prompt_path, a.tokens, ids_path))
    steps = a.tokens - 1
    for name, times in (("onnxruntime", ort_times), ("kiln", kiln_times)):
        ttft = statistics.median(t for t, _ in times)
        decode = statistics.median(d for _, d in times)
        print(f"{name:12s} time to first token {ttft * 1e3:8.2f} ms, decode {steps / decode:8.1f} "
              f"tokens/s ({decode / steps * 1e3:.2f} ms per token)")
    ratio = statistics.median(o[1] for o in ort_times) / statistics.median(k[1] for k in kiln_times)
    print(f"decode tokens/s kiln / onnxruntime: {ratio:.2f}x ({os.path.basename(model)}, batch 1, "
          f"prompt {a.prompt}, {a.tokens} tokens, {a.threads} threads, ids equal)")


if __name__ == "__main__":
    main()
