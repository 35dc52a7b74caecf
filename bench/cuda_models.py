# Full-size ResNet-50 and BERT-base at batch 32 on the GPU: Kiln per precision
# against PyTorch eager and torch.compile in the same dtype, in the same run.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: cuda_models.py compile --out DIR --kilnc PATH --zoo ZOO   (here)
       cuda_models.py run --out DIR --kiln-run PATH [--no-compile]   (GPU machine)

`compile` writes DIR/<model>_<precision>.so for ResNet-50 (32x3x224x224) and
BERT-base (32x128) from ZOO (bench/models/zoo.py, full size) with
--target=cuda --weights=none (the runtime generates the weights and uploads
them once) and --precision=fp16|bf16|tf32|fp32. `run` times each with `kiln-run
--device cuda --warmup 3 --bench 10 --profile` (device_ms: inputs on the
device to the last kernel done; the top dispatches) and the torchvision /
transformers model in the same dtype (fp16/bf16: weights and inputs in that
dtype; tf32: f32 with TF32 allowed in cuBLAS and cuDNN; fp32: f32 with TF32
off) with CUDA events,
median of 20 after warm-up, eager and torch.compile.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

CASES = [("resnet50", "fp16"), ("resnet50", "bf16"), ("resnet50", "tf32"), ("bert", "fp16"),
         ("resnet50", "fp32"), ("bert", "fp32")]
SHAPES = {"resnet50": ["--input-shape=input=32x3x224x224"],
          "bert": ["--input-shape=input_ids=32x128", "--input-shape=attention_mask=32x128"]}


def compile_models(args):
    os.makedirs(args.out, exist_ok=True)
    for model, precision in CASES:
        if args.cases and f"{model}:{precision}" not in args.cases.split(","):
            continue
        out = os.path.join(args.out, f"{model}_{precision}.so")
        run = subprocess.run([args.kilnc, os.path.join(args.zoo, model, "model.onnx"),
                              "--target=cuda", "--weights=none", f"--precision={precision}",
                              *SHAPES[model], "-o", out], capture_output=True, text=True)
        print(f"{model} {precision}: " + ("compiled" if run.returncode == 0 else
                                          "FAILED " + run.stderr.strip()[-500:]), flush=True)
    rng = np.random.default_rng(7)
    np.save(os.path.join(args.out, "bert_ids.npy"),
            rng.integers(0, 30522, (32, 128)).astype(np.int64))
    np.save(os.path.join(args.out, "bert_mask.npy"), np.ones((32, 128), np.int64))


def time_torch(fn, inputs, torch, warmup=5, reps=20):
    with torch.no_grad():
        for _ in range(warmup):
            fn(*inputs)
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            fn(*inputs)
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
    return statistics.median(times)


def torch_model(model, precision, torch):
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "tf32": torch.float32,
             "fp32": torch.float32}[precision]
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    if model == "resnet50":
        import torchvision
        net = torchvision.models.resnet50().eval().cuda().to(dtype)
        x = torch.randn(32, 3, 224, 224, device="cuda").to(dtype)
        return net, (x,)
    from transformers import BertConfig, BertModel
    net = BertModel(BertConfig()).eval().cuda().to(dtype)
    ids = torch.randint(0, 30522, (32, 128), device="cuda")
    mask = torch.ones(32, 128, dtype=torch.int64, device="cuda")
    return (lambda i, m: net(input_ids=i, attention_mask=m)), (ids, mask)


def run_models(args):
    import torch
    rows = []
    for model, precision in CASES:
        path = os.path.join(args.out, f"{model}_{precision}.so")
        if not os.path.exists(path):  # not compiled (compile --cases): no rival timings
            continue
        kiln = host = None
        top = ""
        if os.path.exists(path):
            extra = []
            if model == "bert":
                extra = ["--input", f"input_ids={os.path.join(args.out, 'bert_ids.npy')}",
                         "--input", f"attention_mask={os.path.join(args.out, 'bert_mask.npy')}"]
            run = subprocess.run([args.kiln_run, path, "--device", "cuda", *extra, "--warmup", "3",
                                  "--bench", "10", "--profile"], capture_output=True, text=True)
            if run.returncode == 0:
                device = re.search(r"device_ms min=\S+ median=(\S+)", run.stdout)
                latency = re.search(r"latency_ms min=\S+ median=(\S+)", run.stdout)
                kiln = float(device.group(1)) if device else None
                host = float(latency.group(1)) if latency else None
                profile = run.stdout[run.stdout.find("profile"):] if "profile" in run.stdout else ""
                top = "\n".join(profile.splitlines()[:8])
            else:
                top = "kiln-run failed: " + (run.stderr or run.stdout).strip()[-300:]
        fn, inputs = torch_model(model, precision, torch)
        eager = time_torch(fn, inputs, torch)
        compiled = None
        if not args.no_compile:
            try:
                start = time.time()
                compiled = time_torch(torch.compile(fn), inputs, torch)
                print(f"  torch.compile + warm-up {time.time() - start:.0f} s", flush=True)
            except Exception as e:  # noqa: BLE001  (report, keep going)
                print(f"  torch.compile failed: {type(e).__name__}: {e}", flush=True)
        rows.append((model, precision, kiln, host, eager, compiled))
        print(f"{model} {precision}: kiln device {kiln} ms (kiln-run latency {host}), eager "
              f"{eager:.2f}, compile {compiled}\n{top}", flush=True)
        del fn, inputs
        torch.cuda.empty_cache()
    fmt = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
    ratio = lambda a, b: "-" if a is None or b is None else f"{a / b:.2f}x"  # noqa: E731
    print(f"\n{torch.cuda.get_device_name()}, batch 32, torch {torch.__version__}; Kiln "
          "device_ms median of 10, PyTorch CUDA events median of 20\n")
    print("| model | precision | Kiln ms | kiln-run latency ms | eager ms | torch.compile ms "
          "| Kiln / eager | Kiln / compile |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for model, precision, kiln, host, eager, compiled in rows:
        print(f"| {model} | {precision} | {fmt(kiln)} | {fmt(host)} | {fmt(eager)} "
              f"| {fmt(compiled)} | {ratio(kiln, eager)} | {ratio(kiln, compiled)} |")


def phase_parser(doc):
    """The command line the CUDA bench scripts share: a compile phase here (kilnc),
    a run phase on the GPU machine (kiln-run, PyTorch; --no-compile skips
    torch.compile), both in --out."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("phase", choices=["compile", "run"])
    p.add_argument("--out", required=True)
    p.add_argument("--kilnc")
    p.add_argument("--kiln-run")
    p.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    return p


def main():
    p = phase_parser(__doc__)
    p.add_argument("--zoo")
    p.add_argument("--cases", help="compile only these model:precision pairs, e.g. bert:fp16")
    args = p.parse_args()
    if args.phase == "compile":
        compile_models(args)
    else:
        run_models(args)


if __name__ == "__main__":
    sys.exit(main())
