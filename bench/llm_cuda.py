# GPT-2 small decode on the GPU: kiln-run --generate against transformers eager and torch.compile.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: llm_cuda.py pack OUT --kilnc PATH --kiln-run PATH [--precision fp16]
                          [--prompt 128] [--tokens 256] [--batches 1,32]
       llm_cuda.py run OUT [--no-compile]          (on the GPU machine)

pack (here, where kilnc runs): builds GPT-2 small's shapes with a KV cache
from numpy (bench/llm_decode.py's gpt2_kv: 12 layers, hidden 768, 12 heads,
vocabulary 50257, 1024 positions), compiles it once with kilnc --target=cuda
--precision=P --weights=none (the runtime fills the weights with seeded
pseudo-random values, so the artifact travels without its 650 MB), and writes
seeded random prompts [batch, prompt] for each batch, kiln-run and this file
into OUT.

run (on the GPU machine: torch and transformers, no network): for each batch,
kiln-run --device cuda --generate TOKENS (the runtime's decoder owning the
KV cache), then transformers' GPT2LMHeadModel of the same configuration
(random weights, the same dtype) generating greedily the same number of
tokens, eager (its dynamic cache) and with torch.compile (static cache,
default mode), each timed after a warm-up. Prints time to first
token and decode tokens/s (new tokens after the first, summed over the batch,
per second) for each side and the ratios. The weights differ between the
sides (both random): this measures speed, not ids; the ids are checked by
test/llm and scripts/llm-cuda-bundle.
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
CONFIG = dict(layers=12, hidden=768, heads=12, vocab=50257, positions=1024)


def pack(args):
    sys.path.insert(0, HERE)
    import onnx
    from llm_decode import gpt2_kv

    os.makedirs(args.out, exist_ok=True)
    model = os.path.join(args.out, "gpt2_small_kv.onnx")
    onnx.save(gpt2_kv(**CONFIG), model, save_as_external_data=True,
              location="gpt2_small_kv.onnx.data")
    artifact = os.path.join(args.out, f"gpt2_small_kv.{args.precision}.so")
    cmd = [args.kilnc, model, "-o", artifact, "--target=cuda", "--gpu=sm_90a",
           f"--precision={args.precision}", "--weights=none"]
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
        ids = rng.integers(0, CONFIG["vocab"], (batch, args.prompt), dtype=np.int64)
        np.save(os.path.join(args.out, f"prompt.b{batch}.npy"), ids)
    shutil.copy(args.kiln_run, os.path.join(args.out, "kiln-run"))
    shutil.copy(os.path.abspath(__file__), os.path.join(args.out, "llm_cuda.py"))
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(dict(precision=args.precision, prompt=args.prompt, tokens=args.tokens,
                       batches=batches, artifact=os.path.basename(artifact)), f)


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


def torch_side(config, batch, compiled):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32,
             "tf32": torch.float32}[config["precision"]]
    torch.backends.cuda.matmul.allow_tf32 = config["precision"] == "tf32"
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=CONFIG["layers"], n_embd=CONFIG["hidden"], n_head=CONFIG["heads"],
                     vocab_size=CONFIG["vocab"], n_positions=CONFIG["positions"])
    model = GPT2LMHeadModel(cfg).to("cuda", dtype).eval()
    tokens = config["tokens"]
    kwargs = dict(do_sample=False, pad_token_id=0)
    if compiled:
        model.generation_config.cache_implementation = "static"
        # mode="reduce-overhead" (CUDA graphs) fails on transformers' static
        # cache, whose update writes into a graph's output.
        model.forward = torch.compile(model.forward, fullgraph=True)
    ids = torch.randint(0, CONFIG["vocab"], (batch, config["prompt"]), device="cuda")
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
    return first * 1e3, batch * (tokens - 1) / (total - first)


def run(args):
    with open(os.path.join(args.out, "config.json")) as f:
        config = json.load(f)
    print(f"GPT-2 small shapes, {config['precision']}, prompt {config['prompt']}, "
          f"{config['tokens']} new tokens; decode tokens/s summed over the batch")
    for batch in config["batches"]:
        kiln, problem = kiln_side(args.out, config, batch)
        if problem:
            print(f"batch {batch}: kiln: {problem}")
        sides = {"kiln": kiln}
        for name, compiled in (("eager", False), ("compile", True)):
            if compiled and args.no_compile:
                continue
            try:
                sides[name] = torch_side(config, batch, compiled)
            except Exception as error:  # report and go on with the other sides
                print(f"batch {batch}: {name}: failed: {str(error)[-300:]}")
                sides[name] = None
        for name, result in sides.items():
            if result:
                print(f"batch {batch}: {name:8s} time to first token {result[0]:8.2f} ms, "
                      f"decode {result[1]:9.1f} tokens/s")
        if kiln:
            for name in ("eager", "compile"):
                if sides.get(name):
                    print(f"batch {batch}: kiln / {name} decode tokens/s: "
                          f"{kiln[1] / sides[name][1]:.2f}")
        sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["pack", "run"])
    parser.add_argument("out")
    parser.add_argument("--kilnc")
    parser.add_argument("--kiln-run")
    parser.add_argument("--precision", default="fp16", choices=["fp16", "bf16", "tf32", "fp32"])
    parser.add_argument("--prompt", type=int, default=128)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--batches", default="1,32")
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
