# Per-dispatch roofline of zoo models: kilnc --report=cost joined with kiln-run --trace.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: build/.venv/bin/python bench/roofline.py [--models resnet50,bert] [--batch 1]
         [--threads N] [--bench R] [--top 10] [--bandwidth GB/s] [--png FILE] [--markdown FILE]

For each model (bench/models zoo, full size): compile with `kilnc --report=cost` (FLOPs and
bytes of compulsory traffic per dispatch, by trace id), run `kiln-run --trace` (time per
dispatch and run, same ids), and join them. Dispatches of one op kind with the same FLOPs
and bytes (the per-tap matmuls of one conv, the same layer in every block) are summed into
one row. Shares use mean times; GFLOP/s and GB/s use each dispatch's minimum over the runs
(the least-disturbed sample on a shared machine). Prints, per model, the top rows by time
with their share, GFLOP/s, FLOP/byte and the limit:
  overhead  mean time per call under OVERHEAD_US (pool launch and call cost dominate);
  memory    intensity below the ridge (peak / bandwidth): the roof is bandwidth x intensity;
  compute   intensity above the ridge: the roof is the FMA peak;
with the share of that roof reached. Draws achieved GFLOP/s vs intensity, one panel per
model, with the ceilings. The peak is report.PEAK_PER_CORE x threads; the bandwidth is
measured (numpy copy, one thread) unless --bandwidth is given.
"""

import argparse
import collections
import hashlib
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "models"))
import report  # noqa: E402
import zoo  # noqa: E402

OVERHEAD_US = 20.0  # a dispatch whose calls average less than this is launch/call-bound


def parse_args():
    build = os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build"))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="resnet50,bert")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--bench", type=int, default=5, help="timed runs for the profile")
    p.add_argument("--top", type=int, default=10)
    p.add_argument("--bandwidth", type=float, help="GB/s ceiling (default: measured copy)")
    p.add_argument("--png", default=os.path.join(ROOT, "docs",
                                                 "benchmarks-roofline-cpu-dispatches.png"))
    p.add_argument("--markdown", help="also write the tables to this file")
    p.add_argument("--work", default=os.path.join(build, "bench"))
    p.add_argument("--kilnc", default=os.path.join(build, "bin", "kilnc"))
    p.add_argument("--kiln-run", default=os.path.join(build, "bin", "kiln-run"))
    return p.parse_args()


def compile_with_costs(args, model_dir, shape_args, name):
    """(artifact, [cost rows]) for the model, cached by model, shapes and kilnc binary."""
    st = os.stat(args.kilnc)
    with open(os.path.join(model_dir, "meta.json")) as f:
        meta_key = json.load(f)["key"]
    key = hashlib.sha256(json.dumps([meta_key, shape_args, st.st_size, st.st_mtime_ns])
                         .encode()).hexdigest()[:16]
    directory = os.path.join(args.work, "roofline")
    os.makedirs(directory, exist_ok=True)
    artifact = os.path.join(directory, f"{name}-{key}.so")
    costs = artifact[:-3] + ".cost.json"
    if not (os.path.exists(artifact) and os.path.exists(costs)):
        proc = subprocess.run([args.kilnc, os.path.join(model_dir, "model.onnx"), "-o", artifact,
                               "--report=cost", "--report-format=json"] + shape_args,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"kilnc failed: {proc.stderr.strip()[-300:]}")
        start = proc.stderr.index("[")
        with open(costs, "w") as f:
            f.write(proc.stderr[start:])
    with open(costs) as f:
        return artifact, json.load(f)


def profile(args, artifact, input_dir, shapes):
    """Per-dispatch times from kiln-run --trace over the timed runs.

    Returns ({id: {"min": ms, "mean": ms, "calls": per run}}, {"min", "mean", "median"}):
    per dispatch and run, the sum of its calls in that run; then the min and the mean
    over runs. On a shared machine the min is the least-disturbed sample."""
    trace = os.path.join(args.work, "roofline", "trace.json")
    cmd = [args.kiln_run, artifact, "--threads", str(args.threads), "--warmup", "1",
           "--bench", str(args.bench), "--trace", trace]
    for name in shapes:
        cmd += ["--input", f"{name}={os.path.join(input_dir, name + '.npy')}"]
    subprocess.run(cmd, capture_output=True, text=True, check=True)
    return parse_trace(trace)


def parse_trace(trace):
    """profile's result from a kiln-run --trace file (CPU or CUDA spans)."""
    with open(trace) as f:
        events = sorted(json.load(f)["traceEvents"], key=lambda e: e["ts"])
    runs = [e for e in events if e["args"]["dispatch"] < 0]
    per_run = collections.defaultdict(lambda: [0.0] * len(runs))
    calls = collections.Counter()
    for e in events:
        d = e["args"]["dispatch"]
        if d < 0:
            continue
        # The run whose [ts, ts + dur] holds this event.
        index = next(i for i, r in enumerate(runs) if r["ts"] <= e["ts"] <= r["ts"] + r["dur"])
        per_run[d][index] += e["dur"] / 1e3
        calls[d] += 1
    times = {d: {"min": min(v), "mean": statistics.mean(v), "calls": calls[d] / len(runs)}
             for d, v in per_run.items()}
    run_ms = [r["dur"] / 1e3 for r in runs]
    return times, {"min": min(run_ms), "mean": statistics.mean(run_ms),
                   "median": statistics.median(run_ms), "runs": run_ms}


def classify(row, peak, bandwidth):
    """(limit, roof GFLOP/s or None, share of the roof reached)."""
    if row["us_per_call"] < OVERHEAD_US:
        return "overhead", None, None
    if row["flops"] == 0:  # data movement: judged against the bandwidth
        return "memory (copy)", None, row["gbs"] / bandwidth
    intensity = row["flops"] / row["bytes"]
    if intensity < peak / bandwidth:
        roof = bandwidth * intensity
        return "memory", roof, row["gflops"] / roof
    return "compute", peak, row["gflops"] / peak


def join(costs, times, peak, bandwidth):
    """Dispatches of one op kind and the same FLOPs and bytes (the taps of one conv, the
    same layer in every block) summed into one row; rows sorted by mean time, each with
    rates (from the per-run minimum) and its limit."""
    grouped = collections.OrderedDict()
    for cost in costs:
        t = times.get(cost["id"])
        if t is None:
            continue
        key = (cost["name"].split()[0], cost["flops"], cost["bytes"])
        g = grouped.setdefault(key, {"name": cost["name"], "names": set(), "ids": [], "ms": 0.0,
                                     "min_ms": 0.0, "calls": 0.0, "flops": 0, "bytes": 0})
        g["names"].add(cost["name"])
        g["ids"].append(cost["id"])
        g["ms"] += t["mean"]
        g["min_ms"] += t["min"]
        g["calls"] += t["calls"]
        if cost["flops"] < 0 or g["flops"] < 0:
            g["flops"] = g["bytes"] = -1
        else:
            g["flops"] += cost["flops"] * t["calls"]
            g["bytes"] += cost["bytes"] * t["calls"]
    rows = sorted(grouped.values(), key=lambda r: -r["ms"])
    for r in rows:
        seconds = r["min_ms"] * 1e-3
        r["us_per_call"] = 1e3 * r["min_ms"] / max(r["calls"], 1)
        r["gflops"] = r["flops"] / seconds / 1e9 if seconds and r["flops"] > 0 else 0.0
        r["gbs"] = r["bytes"] / seconds / 1e9 if seconds and r["bytes"] > 0 else 0.0
        r["intensity"] = r["flops"] / r["bytes"] if r["bytes"] > 0 else 0.0
        if r["flops"] < 0:
            r["limit"], r["roof"], r["of_roof"] = "unknown (dynamic size)", None, None
        else:
            r["limit"], r["roof"], r["of_roof"] = classify(r, peak, bandwidth)
    return rows


def table(model, batch, rows, run, top):
    run_ms = run["mean"]
    out = [f"**{model} b{batch}**: {run_ms:.2f} ms per run mean, {run['median']:.2f} median, "
           f"{run['min']:.2f} min (kiln-run --trace); {len(rows)} dispatch groups (same op "
           f"kind and shape); top {top} by mean time:", "",
           "| # | dispatch (ids) | share | ms/run mean | min | GFLOP/s | GB/s | FLOP/B | limit "
           "| of roof |",
           "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |"]
    for rank, r in enumerate(rows[:top], 1):
        ids = ",".join(map(str, r["ids"][:3])) + ("…" if len(r["ids"]) > 3 else "")
        name = r["name"] if len(r["name"]) < 70 else r["name"][:67] + "..."
        of_roof = f"{100 * r['of_roof']:.0f}%" if r["of_roof"] is not None else "—"
        more = f" +{len(r['names']) - 1} same-shape" if len(r["names"]) > 1 else ""
        out.append(f"| {rank} | `{name}`{more} ({ids}; {len(r['ids'])} dispatch"
                   f"{'es' if len(r['ids']) > 1 else ''}) | {100 * r['ms'] / run_ms:.1f}% | "
                   f"{r['ms']:.3f} | {r['min_ms']:.3f} | {r['gflops']:.1f} | {r['gbs']:.1f} | "
                   f"{r['intensity']:.1f} | {r['limit']} | {of_roof} |")
    covered = sum(r["ms"] for r in rows)
    out += ["", f"Dispatches cover {100 * covered / run_ms:.0f}% of the run; the rest is "
            "outside dispatches (pads, slices, output copies, validation)."]
    return out


def draw(path, panels, peak, bandwidth, threads, title=None, roofs=()):
    """roofs: extra (GFLOP/s, label) compute ceilings drawn dashed under the bandwidth slope."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 5.5), dpi=110,
                             squeeze=False)
    for ax, (name, rows, run, top) in zip(axes[0], panels):
        run_ms = run["mean"]
        x = np.logspace(-2, 3, 200)
        ax.plot(x, np.minimum(peak, bandwidth * x), "k-", lw=1.5,
                label=f"roof: {peak:.0f} GFLOP/s, {bandwidth:.0f} GB/s")
        for ceiling, label in roofs:
            ax.plot(x, np.minimum(ceiling, bandwidth * x), "k--", lw=0.8, label=label)
        colors = {"compute": "tab:blue", "memory": "tab:orange", "overhead": "tab:gray"}
        for rank, r in enumerate(rows):
            if r["flops"] <= 0 or r["intensity"] <= 0 or r["gflops"] <= 0:
                continue
            share = r["ms"] / run_ms
            ax.loglog([r["intensity"]], [r["gflops"]], "o", alpha=0.7,
                      color=colors.get(r["limit"], "tab:red"), ms=3 + 40 * share ** 0.5)
            if rank < top:
                ax.annotate(str(rank + 1), (r["intensity"], r["gflops"]), fontsize=7,
                            xytext=(4, 2), textcoords="offset points")
        for limit, color in colors.items():
            ax.plot([], [], "o", color=color, label=f"{limit}-bound")
        ax.set_xlabel("arithmetic intensity (FLOP per byte of compulsory traffic)")
        ax.set_ylabel("achieved GFLOP/s")
        ax.set_title(f"{name}: dispatches (area ~ time share; numbers = rank)", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.suptitle(title or f"Kiln CPU per-dispatch roofline, {threads} threads")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main():
    args = parse_args()
    peak = report.PEAK_PER_CORE * args.threads
    bandwidth = args.bandwidth or report.copy_bandwidth_gbs()
    print(f"roofline: peak {peak:.0f} GFLOP/s ({args.threads} threads), bandwidth "
          f"{bandwidth:.1f} GB/s, ridge {peak / bandwidth:.1f} FLOP/B; load average "
          f"{os.getloadavg()[0]:.2f}", flush=True)
    lines, panels = [], []
    for name in args.models.split(","):
        model_dir = zoo.write_model(name, os.path.join(args.work, "zoo"), False, [1, 8])
        with open(os.path.join(model_dir, "meta.json")) as f:
            shapes = json.load(f)["batches"][str(args.batch)]
        shape_args = [f"--input-shape={k}={'x'.join(map(str, v))}" for k, v in shapes.items()]
        artifact, costs = compile_with_costs(args, model_dir, shape_args,
                                             f"{name}_b{args.batch}")
        times, run = profile(args, artifact, os.path.join(model_dir, f"b{args.batch}", "inputs"),
                             shapes)
        rows = join(costs, times, peak, bandwidth)
        lines += table(name, args.batch, rows, run, args.top) + [""]
        panels.append((f"{name} b{args.batch}", rows, run, args.top))
        print("\n".join(lines[-(args.top + 7):]), flush=True)
    draw(args.png, panels, peak, bandwidth, args.threads)
    print(f"wrote {args.png}")
    if args.markdown:
        with open(args.markdown, "w") as f:
            source = "--bandwidth" if args.bandwidth else "numpy copy, one thread"
            f.write(f"- ceilings: {peak:.0f} GFLOP/s ({report.PEAK_PER_CORE:.0f} per core x "
                    f"{args.threads}), {bandwidth:.1f} GB/s ({source}), ridge "
                    f"{peak / bandwidth:.1f} FLOP/B; load average {os.getloadavg()[0]:.2f} at "
                    "the end\n\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
