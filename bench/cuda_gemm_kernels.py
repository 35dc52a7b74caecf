# Kernel times of Kiln's GEMM template against cuBLAS, by Nsight Compute.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: cuda_gemm_kernels.py BENCH_DIR --kiln-run PATH [--cases gemm_tf32_4096,...]

On the GPU machine, for bench/cuda.py's GEMM cases (BENCH_DIR/gemm_*): runs
each Kiln artifact under `ncu --clock-control none` (kiln-run draws its own
random inputs: never zeros) and `torch.matmul` in the same dtype (TF32 on
for the tf32 cases; off for fp32, i.e. cuBLAS SGEMM) likewise, and prints
the median gpu__time_duration of every kernel: Kiln's GEMM kernel (and, for tf32, the transpose of B; for fp32,
3xTF32's kernels splitting A and B and the transpose) against
cuBLAS's, with TFLOP/s and the ratio of the GEMM kernels alone and of
Kiln's kernels together.
"""

import argparse
import csv
import io
import json
import os
import statistics
import subprocess
import sys

UNITS = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0, "second": 1e3,
         "ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def ncu(command):
    run = subprocess.run(["ncu", "--clock-control", "none", "--csv", "--metrics",
                          "gpu__time_duration.sum", *command], capture_output=True, text=True)
    if run.returncode:
        raise RuntimeError((run.stderr or run.stdout).strip()[-2000:])
    lines = run.stdout[run.stdout.find('"ID"'):]
    kernels = {}
    for row in csv.DictReader(io.StringIO(lines)):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        ms = float(row["Metric Value"].replace(",", "")) * UNITS[row["Metric Unit"]]
        kernels.setdefault(row["Kernel Name"], []).append(ms)
    return {name: statistics.median(times) for name, times in kernels.items()}


TORCH = """
import sys, torch
n, dtype = int(sys.argv[1]), getattr(torch, sys.argv[2])
torch.backends.cuda.matmul.allow_tf32 = sys.argv[3] == "1"
a = torch.randn(n, n, device="cuda").to(dtype)
b = torch.randn(n, n, device="cuda").to(dtype)
for _ in range(7):
    c = a @ b
torch.cuda.synchronize()
"""


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("bench")
    p.add_argument("--kiln-run", required=True)
    p.add_argument("--cases", default="")
    args = p.parse_args()
    wanted = [c for c in args.cases.split(",") if c]
    rows = []
    for case in sorted(os.listdir(args.bench)):
        if not case.startswith("gemm_") or (wanted and case not in wanted):
            continue
        with open(os.path.join(args.bench, case, "meta.json")) as f:
            meta = json.load(f)
        if not meta["compiled"]:
            continue
        n = meta["shapes"]["input_0"][0]
        kiln = ncu([args.kiln_run, os.path.join(args.bench, case, "model.so"), "--device",
                    "cuda", "--warmup", "2", "--bench", "5"])
        dtype = {"f16": "float16", "bf16": "bfloat16", "f32": "float32"}[meta["dtype"]]
        tf32 = meta.get("precision") == "tf32"
        torch = ncu([sys.executable, "-c", TORCH, str(n), dtype, "1" if tf32 else "0"])
        # The GEMM kernel is the longest of each side; randn/casts are not.
        kiln_gemm = max(kiln.values())
        kiln_all = sum(kiln.values())
        cublas_name, cublas = max(torch.items(), key=lambda kv: kv[1])
        tflops = lambda ms: meta["flops"] / ms / 1e9  # noqa: E731
        rows.append((meta["name"], kiln_gemm, kiln_all, cublas, cublas_name))
        print(f"{meta['name']}: kiln kernels {kiln}; cuBLAS {cublas_name} {cublas:.4f} ms",
              flush=True)
    print("\n| case | Kiln GEMM kernel ms | TFLOP/s | Kiln kernels ms (with transpose) "
          "| cuBLAS kernel ms | TFLOP/s | GEMM / cuBLAS | all / cuBLAS |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, gemm, total, cublas, _ in rows:
        flops = 2.0 * int(name.split()[-1].rstrip("^3")) ** 3
        print(f"| {name} | {gemm:.4f} | {flops / gemm / 1e9:.0f} | {total:.4f} | {cublas:.4f} "
              f"| {flops / cublas / 1e9:.0f} | {cublas / gemm:.0%} | {cublas / total:.0%} |")


if __name__ == "__main__":
    main()
