# LLM decode on the GPU: kiln-run --generate against transformers eager and torch.compile.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: llm_cuda.py pack OUT --kilnc PATH --kiln-run PATH [--model gpt2|llama1b]
                          [--precision fp16] [--prompt 128] [--tokens 256] [--batches 1,32]
                          [--kilnc-arg ARG]...
       llm_cuda.py run OUT [--no-compile]          (on the GPU machine)

pack (here, where kilnc runs): builds the model's shapes with a KV cache from
numpy (bench/llm_decode.py: --model gpt2 is GPT-2 small, 12 layers, hidden 768,
12 heads, vocabulary 50257, 1024 positions; --model llama1b is a Llama
architecture with TinyLlama-1.1B's shapes, 22 layers, hidden 2048, 32 query
and 4 key/value heads, MLP 5632, vocabulary 32000), compiles it once with kilnc --target=cuda
--precision=P --weights=none and each --kilnc-arg (e.g. --greedy-ids; the
runtime fills the weights with seeded pseudo-random values, so the artifact
travels without its 650 MB), and writes
seeded random prompts [batch, prompt] for each batch, kiln-run and this file
into OUT.

run (on the GPU machine: torch and transformers, no network): for each batch,
kiln-run --device cuda --generate TOKENS (the runtime's decoder owning the
KV cache), then transformers' GPT2LMHeadModel or LlamaForCausalLM of the same configuration
(random weights, the same dtype) generating greedily the same number of
tokens, eager (its dynamic cache) and with torch.compile (static cache,
default mode), each timed after a warm-up. Prints time to first
token and decode tokens/s (new tokens after the first, summed over the batch,
per second) for each side and the ratios. The weights differ between the
sides (both random): this measures speed, not ids; the ids are checked by
test/llm and scripts/llm-cuda-bundle. It also measures the device's copy
bandwidth (a 1 GiB device-to-device copy) and, at batch 1, prints the
bandwidth roofline (every weight byte read once per token) and Kiln's share.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = {"gpt2": dict(layers=12, hidden=768, heads=12, vocab=50257, positions=1024),
          # TinyLlama-1.1B's shapes (bench/llm_decode.py's LLAMA["1b"])
          "llama1b": dict(layers=22, hidden=2048, heads=32, kv_heads=4, intermediate=5632,
                          vocab=32000, positions=2048)}


def pack(args):
    sys.path.insert(0, HERE)
    import onnx
    from llm_decode import gpt2_kv, llama_kv

    os.makedirs(args.out, exist_ok=True)
    config = MODELS[args.model]
    name = f"{args.model}_kv"
    model = os.path.join(args.out, f"{name}.onnx")
    built = llama_kv(**config) if args.model == "llama1b" else gpt2_kv(**config)
    onnx.save(built, model, save_as_external_data=True, location=f"{name}.onnx.data")
    del built
    artifact = os.path.join(args.out, f"{name}.{args.precision}.so")
    cmd = [args.kilnc, model, "-o", artifact, "--target=cuda", "--gpu=sm_90a",
           f"--precision={args.precision}", "--weights=none", *args.kilnc_arg]
    start = time.time()
    built = subprocess.run(cmd, capture_output=True, text=True)
    if built.returncode:
        raise SystemExit(f"error: kilnc failed: {built.stderr.strip()}")
    print(f"compiled {os.path.basename(artifact)} in {time.time() - start:.0f} s")
    os.remove(model)
    os.remove(model + ".data")
    rng = np.random.default_rng(0)
    batches = [int(b) for b in args.batches.split(",")]
    for batch in batches:
        ids = rng.integers(0, config["vocab"], (batch, args.prompt), dtype=np.int64)
        np.save(os.path.join(args.out, f"prompt.b{batch}.npy"), ids)
    shutil.copy(args.kiln_run, os.path.join(args.out, "kiln-run"))
    shutil.copy(os.path.abspath(__file__), os.path.join(args.out, "llm_cuda.py"))
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(dict(model=args.model, precision=args.precision, prompt=args.prompt,
                       tokens=args.tokens, batches=batches, kilnc_args=args.kilnc_arg,
                       artifact=os.path.basename(artifact)), f)


def kiln_side(out, config, batch):
    cmd = [os.path.join(out, "kiln-run"), os.path.join(out, config["artifact"]),
           "--device", "cuda", "--generate", str(config["tokens"]),
           "--prompt-ids", os.path.join(out, f"prompt.b{batch}.npy")]
    subprocess.run(cmd, capture_output=True, text=True)  # warm-up (module load, first kernels)
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode:
        return None, f"kiln-run failed: {run.stderr.strip()[-300:]}"
    ttft = float(re.search(r"time to first token: ([0-9.]+) ms", run.stdout).group(1))
    steps, ms = re.search(r"decode: (\d+) steps in ([0-9.]+) ms", run.stdout).groups()
    return (ttft, batch * int(steps) / (float(ms) / 1e3)), ""


def _torch_model(name, dtype):
    """transformers' model of the same configuration (random weights)."""
    shape = MODELS[name]
    if name == "llama1b":
        from transformers import LlamaConfig, LlamaForCausalLM
        cfg = LlamaConfig(num_hidden_layers=shape["layers"], hidden_size=shape["hidden"],
                          num_attention_heads=shape["heads"],
                          num_key_value_heads=shape["kv_heads"],
                          intermediate_size=shape["intermediate"], vocab_size=shape["vocab"],
                          max_position_embeddings=shape["positions"], tie_word_embeddings=False)
        return LlamaForCausalLM(cfg).to("cuda", dtype).eval()
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config(n_layer=shape["layers"], n_embd=shape["hidden"], n_head=shape["heads"],
                     vocab_size=shape["vocab"], n_positions=shape["positions"])
    return GPT2LMHeadModel(cfg).to("cuda", dtype).eval()


def torch_side(config, batch, compiled):
    import torch

    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32,
             "tf32": torch.float32}[config["precision"]]
    torch.backends.cuda.matmul.allow_tf32 = config["precision"] == "tf32"
    torch.manual_seed(0)
    model = _torch_model(config.get("model", "gpt2"), dtype)
    tokens = config["tokens"]
    kwargs = dict(do_sample=False, pad_token_id=0)
    if compiled:
        model.generation_config.cache_implementation = "static"
        # mode="reduce-overhead" (CUDA graphs) fails on transformers' static
        # cache, whose update writes into a graph's output.
        model.forward = torch.compile(model.forward, fullgraph=True)
    ids = torch.randint(0, MODELS[config.get("model", "gpt2")]["vocab"], (batch, config["prompt"]),
                        device="cuda")
    attention = torch.ones_like(ids)

    def timed(n):
        torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.no_grad():
            model.generate(ids, attention_mask=attention, max_new_tokens=n, min_new_tokens=n,
                           **kwargs)
        torch.cuda.synchronize()
        return time.perf_counter() - start

    timed(tokens)  # warm-up (and compilation)
    timed(1)
    first = min(timed(1) for _ in range(2))
    total = timed(tokens)
    weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    del model
    torch.cuda.empty_cache()
    return first * 1e3, batch * (tokens - 1) / (total - first), weight_bytes


def copy_bandwidth():
    """Device-to-device copy bandwidth in bytes/s (read + write of 1 GiB, best of 10)."""
    import torch
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = float("inf")
    for _ in range(10):
        start.record()
        dst.copy_(src)
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) / 1e3)
    del src, dst
    torch.cuda.empty_cache()
    return 2 * (1 << 30) / best


def run(args):
    with open(os.path.join(args.out, "config.json")) as f:
        config = json.load(f)
    name = config.get("model", "gpt2")
    print(f"{name} shapes, {config['precision']}, prompt {config['prompt']}, "
          f"{config['tokens']} new tokens; decode tokens/s summed over the batch; kilnc "
          f"{' '.join(config.get('kilnc_args', [])) or '(no extra flags)'}")
    bandwidth = copy_bandwidth()
    print(f"device copy bandwidth (1 GiB read + write): {bandwidth / 1e12:.2f} TB/s")
    weight_bytes = None
    for batch in config["batches"]:
        kiln, problem = kiln_side(args.out, config, batch)
        if problem:
            print(f"batch {batch}: kiln: {problem}")
        sides = {"kiln": kiln}
        for side, compiled in (("eager", False), ("compile", True)):
            if compiled and args.no_compile:
                continue
            try:
                sides[side] = torch_side(config, batch, compiled)
            except Exception as error:  # report and go on with the other sides
                print(f"batch {batch}: {side}: failed: {str(error)[-300:]}")
                sides[side] = None
        for side, result in sides.items():
            if result:
                print(f"batch {batch}: {side:8s} time to first token {result[0]:8.2f} ms, "
                      f"decode {result[1]:9.1f} tokens/s")
                weight_bytes = weight_bytes or (result[2] if len(result) > 2 else None)
        if kiln and weight_bytes and batch == 1:
            # a decode step reads every weight once: the bandwidth roofline in tokens/s
            roof = bandwidth / weight_bytes
            print(f"batch 1: roofline {roof:.1f} tokens/s ({weight_bytes / 1e9:.3f} GB of "
                  f"weights per token at {bandwidth / 1e12:.2f} TB/s); kiln at "
                  f"{100 * kiln[1] / roof:.1f}% of it")
        if kiln:
            for side in ("eager", "compile"):
                if sides.get(side):
                    print(f"batch {batch}: kiln / {side} decode tokens/s: "
                          f"{kiln[1] / sides[side][1]:.2f}")
        sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["pack", "run"])
    parser.add_argument("out")
    parser.add_argument("--kilnc")
    parser.add_argument("--kiln-run")
    parser.add_argument("--model", default="gpt2", choices=sorted(MODELS))
    parser.add_argument("--precision", default="fp16", choices=["fp16", "bf16", "tf32", "fp32"])
    parser.add_argument("--prompt", type=int, default=128)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--batches", default="1,32")
    parser.add_argument("--kilnc-arg", action="append", default=[],
                        help="one more kilnc flag for the artifact (repeatable)")
    parser.add_argument("--no-compile", action="store_true")
    args = parser.parse_args()
    if args.mode == "pack":
        if not args.kilnc or not args.kiln_run:
            parser.error("pack needs --kilnc and --kiln-run")
        pack(args)
    else:
        run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
