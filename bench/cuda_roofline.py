# Per-dispatch roofline of one model on the GPU: kilnc --report=cost joined with a CUDA trace.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: cuda_roofline.py compile --out DIR --kilnc PATH --zoo ZOO   (here)
       cuda_roofline.py run --out DIR --kiln-run PATH [--trace-out FILE]   (GPU machine)
       cuda_roofline.py draw --out DIR --trace FILE [--png FILE] [--markdown FILE]   (here)

`compile` writes DIR/bert_b32_fp16.so (ZOO's BERT-base, batch 32, seq 128,
--target=cuda --precision=fp16 --weights=none) and DIR/cost.json, the FLOPs and
bytes of compulsory traffic of each instrumented dispatch (`kilnc --report=cost`,
the same trace ids). `run` traces it (`kiln-run --device cuda --warmup 2 --bench
5 --trace`: each dispatch's span is timed by CUDA events recorded on the stream
around its kernels). `draw` joins both as bench/roofline.py does for the CPU
(dispatches of one op kind and shape summed into one row; rates from each
group's per-run minimum) and plots achieved GFLOP/s against FLOP/byte under the
H200 ceilings of docs/hardware.md: 4.1 TB/s device copy, 724 TFLOP/s cuBLAS f16
(the tensor cores) and 51 TFLOP/s fp32 without tensor cores (the SIMT kernels).
A dispatch whose kernel the GEMM template absorbed (a fused epilogue) has an
empty span and no point.
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

BANDWIDTH_GBS = 4100.0     # docs/hardware.md: H200 device copy
F16_TC_GFLOPS = 724000.0   # docs/hardware.md: cuBLAS f16 GEMM
F32_SIMT_GFLOPS = 51000.0  # docs/hardware.md: cuBLAS fp32 without tensor cores
OVERHEAD_US = 5.0          # a kernel shorter than this is launch-bound
SHAPES = ["--input-shape=input_ids=32x128", "--input-shape=attention_mask=32x128"]


def compile_model(args):
    import numpy as np
    os.makedirs(args.out, exist_ok=True)
    run = subprocess.run([args.kilnc, os.path.join(args.zoo, "bert", "model.onnx"),
                          "--target=cuda", "--precision=fp16", "--weights=none", *SHAPES,
                          "--report=cost", "--report-format=json",
                          "-o", os.path.join(args.out, "bert_b32_fp16.so")],
                         capture_output=True, text=True)
    if run.returncode:
        sys.exit(f"kilnc failed: {run.stderr[-500:]}")
    with open(os.path.join(args.out, "cost.json"), "w") as f:
        f.write(run.stderr[run.stderr.index("["):])
    rng = np.random.default_rng(7)
    np.save(os.path.join(args.out, "ids.npy"), rng.integers(0, 30522, (32, 128), dtype=np.int64))
    np.save(os.path.join(args.out, "mask.npy"), np.ones((32, 128), dtype=np.int64))
    print("compiled bert_b32_fp16.so and cost.json")


def run_model(args):
    trace = args.trace_out or os.path.join(args.out, "trace.json")
    run = subprocess.run([args.kiln_run, os.path.join(args.out, "bert_b32_fp16.so"), "--device",
                          "cuda", "--input", f"input_ids={os.path.join(args.out, 'ids.npy')}",
                          "--input", f"attention_mask={os.path.join(args.out, 'mask.npy')}",
                          "--warmup", "2", "--bench", "5", "--profile", "--trace", trace],
                         capture_output=True, text=True)
    print(run.stdout[-1500:], run.stderr[-1500:])
    return run.returncode


def merge_fused_epilogues(costs, times):
    """A GEMM whose epilogue the template computes is launched where that epilogue was, so
    its kernel runs inside the next dispatch's span and its own span holds only set-up: a
    product whose FLOPs over its span would beat the tensor-core roof is merged with the
    next dispatch (FLOPs, bytes and times summed, under the product's id and name).
    Returns (costs, number merged)."""
    by_id = {c["id"]: c for c in costs}
    out, skip, merged = [], set(), 0
    for c in costs:
        if c["id"] in skip:
            continue
        nxt = by_id.get(c["id"] + 1)
        t, tn = times.get(c["id"]), times.get(c["id"] + 1)
        if (c["name"].split()[0] in ("matmul", "batch_matmul") and nxt and t and tn
                and c["flops"] > 0 and nxt["flops"] >= 0
                and c["flops"] / (t["min"] * 1e-3) / 1e9 > F16_TC_GFLOPS):
            c = dict(c, flops=c["flops"] + nxt["flops"], bytes=c["bytes"] + nxt["bytes"],
                     name=c["name"] + " + epilogue")
            times[c["id"]] = {k: t[k] + tn[k] for k in ("min", "mean")} | {"calls": t["calls"]}
            skip.add(nxt["id"])
            merged += 1
        out.append(c)
    return out, merged


def draw(args):
    sys.path.insert(0, HERE)
    import roofline  # noqa: E402  (imports the zoo: onnx is needed here)
    roofline.OVERHEAD_US = OVERHEAD_US
    with open(os.path.join(args.out, "cost.json")) as f:
        costs = json.load(f)
    times, run = roofline.parse_trace(args.trace)
    costs, merged = merge_fused_epilogues(costs, times)
    rows = roofline.join(costs, times, F16_TC_GFLOPS, BANDWIDTH_GBS)
    lines = roofline.table("BERT-base fp16", 32, rows, run, args.top)
    lines.append(f"{merged} GEMM dispatches merged with the epilogue dispatch after them "
                 "(their kernel runs in its span).")
    print("\n".join(lines))
    roofline.draw(args.png, [("BERT-base b32 s128 fp16", rows, run, args.top)], F16_TC_GFLOPS,
                  BANDWIDTH_GBS, 0,
                  title="Kiln CUDA per-dispatch roofline, NVIDIA H200 (docs/hardware.md)",
                  roofs=[(F32_SIMT_GFLOPS, f"fp32 SIMT: {F32_SIMT_GFLOPS:.0f} GFLOP/s")])
    print(f"wrote {args.png}")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(f"- ceilings: {F16_TC_GFLOPS:.0f} GFLOP/s (f16 tensor cores), "
                    f"{BANDWIDTH_GBS:.0f} GB/s, ridge {F16_TC_GFLOPS / BANDWIDTH_GBS:.0f} "
                    f"FLOP/B; launch-bound under {OVERHEAD_US:.0f} us a call\n\n"
                    + "\n".join(lines) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("phase", choices=["compile", "run", "draw"])
    p.add_argument("--out", required=True)
    p.add_argument("--kilnc")
    p.add_argument("--kiln-run")
    p.add_argument("--zoo")
    p.add_argument("--trace")
    p.add_argument("--trace-out")
    p.add_argument("--top", type=int, default=12)
    p.add_argument("--png", default=os.path.join(ROOT, "docs", "benchmarks-roofline-cuda.png"))
    p.add_argument("--markdown")
    args = p.parse_args()
    return {"compile": compile_model, "run": run_model, "draw": draw}[args.phase](args)


if __name__ == "__main__":
    sys.exit(main())
