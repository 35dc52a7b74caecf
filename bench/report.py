# Benchmark reporting: machine and versions, dispatch counts, tables, docs/benchmarks.md, roofline.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Helpers of bench/cpu.py that turn measurements into text and a PNG."""

import json
import os
import re
import subprocess

import numpy as np

PEAK_PER_CORE = 220.0  # GFLOP/s, FP32 FMA per core (docs/hardware.md), when none was measured


def machine():
    with open("/proc/cpuinfo") as f:
        info = f.read()
    model = re.search(r"model name\s*:\s*(.*)", info).group(1).strip()
    flags = re.search(r"flags\s*:\s*(.*)", info).group(1).split()
    avx = [f for f in ("avx2", "avx512f", "avx512_bf16", "amx_tile") if f in flags]
    return f"{model}, {os.cpu_count()} logical CPUs, {' '.join(avx)}"


def versions(root, kilnc):
    def run(args):
        try:
            return subprocess.run(args, capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return "unknown"

    import onnxruntime

    import datetime

    kiln = run(["git", "-C", root, "rev-parse", "--short", "HEAD"])
    dirty = run(["git", "-C", root, "status", "--porcelain", "--", "lib", "include", "tools",
                 "runtime"])
    if dirty:
        kiln += " + uncommitted compiler changes"
    built = datetime.datetime.fromtimestamp(os.stat(kilnc).st_mtime, datetime.timezone.utc)
    kiln += f" (kilnc binary of {built:%Y-%m-%d %H:%M} UTC)"
    llvm = run(["/usr/lib/llvm-22/bin/llvm-config", "--version"])
    return {"kiln": kiln, "onnxruntime": onnxruntime.__version__, "llvm": llvm,
            "kilnc": os.path.realpath(kilnc)}


def dispatch_count(kilnc, model, shape_args, mem_bytes, timeout=1800):
    """Kernels of `kilnc --report=fusion` (JSON), by root op.

    A dispatch is a kiln.dispatch region of the dispatch stage: a linalg op other than
    linalg.fill (or an attention kernel) with what was fused into it; a matmul's epilogue
    generic that the CPU matmul kernel applies to its output tiles is part of the matmul's
    dispatch (kiln-cpu-matmul fails the compile if it cannot do so). Returns
    ({"ops": {op: count}, "epilogues": n, "rows": n, "total": n}, None) or (None, error):
    ops by the root op of each dispatch ("conv taps" for a stride-1 conv's taps generic),
    matmuls and conv taps with a fused epilogue, row groups."""
    import resource

    proc = subprocess.run([kilnc, model, "--emit=dispatch", "-o", os.devnull,
                           "--report=fusion", "--report-format=json"] + shape_args,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          errors="replace", timeout=timeout, preexec_fn=lambda: resource.setrlimit(
                              resource.RLIMIT_AS, (mem_bytes, mem_bytes)))
    if proc.returncode != 0:
        return None, (proc.stderr.strip().splitlines() or ["kilnc failed"])[0]
    fusion = json.loads(proc.stderr[proc.stderr.index("{"):])
    ops = {}
    for d in fusion["dispatches"]:
        op = d["op"].split(".", 1)[1]
        if op == "generic" and d["kind"] == "convolution":
            op = "conv taps"  # a stride-1 conv's taps as one kernel (kiln.conv_taps)
        ops[op] = ops.get(op, 0) + 1
    epilogues = sum(1 for d in fusion["dispatches"]
                    if d["kind"] in ("contraction", "convolution") and d["fused"])
    rows = sum(1 for d in fusion["dispatches"] if d["kind"] == "row kernel")
    return {"ops": ops, "epilogues": epilogues, "rows": rows, "total": fusion["count"]}, None


def gflops(case_flops, ms):
    return case_flops / (ms * 1e-3) / 1e9 if ms else float("nan")


def fmt_stats(stats):
    if stats is None:
        return "—"
    return f"{stats.median_ms:.3f} [{stats.min_ms:.3f}–{stats.max_ms:.3f}] ×{stats.runs}"


def ratio(result):
    kiln, ort = result.get("kiln"), result.get("ort")
    return kiln.median_ms / ort.median_ms if kiln and ort else float("nan")


def fma_peak_gflops(work, threads):
    """The FP32 FMA peak of `threads` threads measured now by bench/fma_peak.c (compiled
    with cc -march=native), in GFLOP/s; None when it cannot be built or run."""
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fma_peak.c")
    os.makedirs(work, exist_ok=True)
    binary = os.path.join(work, "fma_peak")
    try:
        if not os.path.exists(binary) or os.path.getmtime(binary) < os.path.getmtime(source):
            subprocess.run(["cc", "-O2", "-march=native", "-pthread", source, "-o", binary],
                           check=True, capture_output=True)
        out = subprocess.run([binary, str(threads)], check=True, capture_output=True,
                             text=True, timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"([0-9.]+) GFLOP/s", out)
    return float(match.group(1)) if match else None


def kernel_table(rows, threads, peak=None):
    """The kernel cases' table; percentages are of `peak` GFLOP/s (the FMA peak measured in
    the run), or of the nominal PEAK_PER_CORE per thread."""
    peak = peak or PEAK_PER_CORE * threads
    out = ["| case | Kiln ms (median [min–max] ×runs) | ORT ms | Kiln/ORT time | "
           f"Kiln GFLOP/s (% of {peak:.0f}) | ORT GFLOP/s (% of {peak:.0f}) | Kiln GB/s | ORT GB/s |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for case, result in rows:
        if "error" in result:
            out.append(f"| {case.name} | {result['error']} | {fmt_stats(result.get('ort'))} "
                       "| | | | | |")
            continue
        k, o = result["kiln"].median_ms, result["ort"].median_ms
        gk, go = gflops(case.flops, k), gflops(case.flops, o)
        out.append(f"| {case.name} | {fmt_stats(result['kiln'])} | {fmt_stats(result['ort'])} | "
                   f"{ratio(result):.2f} | {gk:.1f} ({100 * gk / peak:.0f}%) | "
                   f"{go:.1f} ({100 * go / peak:.0f}%) | {case.bytes / k / 1e6:.1f} | "
                   f"{case.bytes / o / 1e6:.1f} |")
    return out


def model_table(rows):
    out = ["| model | batch | Kiln ms (median [min–max] ×runs) | ORT ms | Kiln/ORT time |",
           "| --- | ---: | ---: | ---: | ---: |"]
    for name, batch, result in rows:
        if "error" in result:
            out.append(f"| {name} | {batch} | {result['error']} | "
                       f"{fmt_stats(result.get('ort'))} | |")
        else:
            out.append(f"| {name} | {batch} | {fmt_stats(result['kiln'])} | "
                       f"{fmt_stats(result['ort'])} | {ratio(result):.2f} |")
    return out


def dispatch_table(rows):
    out = ["| model | ONNX nodes | Kiln dispatches | dispatches/nodes | matmul/conv + epilogue "
           "| row groups | other linalg.generic | named ops |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for name, nodes, counts, error in rows:
        if counts is None:
            out.append(f"| {name} | {nodes} | — ({error}) | | | | | |")
            continue
        ops = counts["ops"]
        named = ", ".join(f"{op} {n}" for op, n in sorted(ops.items()) if op != "generic")
        out.append(f"| {name} | {nodes} | {counts['total']} | {counts['total'] / nodes:.2f} "
                   f"| {counts['epilogues']} | {counts['rows']} "
                   f"| {ops.get('generic', 0) - counts['rows']} | {named} |")
    return out


def roofline(path, rows, threads, bandwidth_gbs, peak=None):
    """Achieved GFLOP/s vs arithmetic intensity of each kernel case, Kiln and ORT."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    peak = peak or PEAK_PER_CORE * threads
    fig, ax = plt.subplots(figsize=(8, 5.5), dpi=110)
    x = np.logspace(-1.5, 3, 200)
    ax.plot(x, np.minimum(peak, bandwidth_gbs * x), "k-", lw=1.5,
            label=f"roof: {peak:.0f} GFLOP/s, {bandwidth_gbs:.0f} GB/s (measured copy)")
    colors = {"gemm": "tab:blue", "conv": "tab:orange", "softmax": "tab:green",
              "layernorm": "tab:red"}
    for case, result in rows:
        if "error" in result:
            continue
        ai = case.flops / case.bytes
        color = colors[case.kind]
        for side, marker in (("kiln", "o"), ("ort", "s")):
            achieved = gflops(case.flops, result[side].median_ms)
            ax.loglog([ai], [achieved], marker, color=color,
                      mfc=color if side == "kiln" else "none", ms=8)
        ax.annotate(case.name, (ai, gflops(case.flops, result["kiln"].median_ms)), fontsize=6,
                    xytext=(4, -8), textcoords="offset points")
    ax.plot([], [], "o", color="gray", label="Kiln (filled)")
    ax.plot([], [], "s", color="gray", mfc="none", label="onnxruntime (hollow)")
    ax.set_xlabel("arithmetic intensity (FLOP per byte of compulsory traffic)")
    ax.set_ylabel("achieved GFLOP/s")
    ax.set_title(f"Kiln vs onnxruntime, CPU kernels, {threads} threads")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def copy_bandwidth_gbs():
    """Memory bandwidth estimate: numpy copy of 256 MiB (read + write), best of 5, one thread."""
    import time

    src = np.ones(64 * 1024 * 1024, np.float32)
    dst = np.empty_like(src)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - start)
    return 2 * src.nbytes / best / 1e9
