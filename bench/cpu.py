# CPU benchmark: Kiln vs onnxruntime on kernels and the model zoo; records runs in docs/benchmarks/.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: bench/run-cpu [--threads N] [--only REGEX] [--batches 1,8] [--quick] [--no-record]

Kernel cases (bench/kernels.py) and zoo models (bench/models, full size, batch 1 and 8)
are compiled with kilnc (static shapes; artifacts cached under build/bench/artifacts by
model hash and kilnc binary) and timed against onnxruntime's CPU provider at the same
thread count with the same inputs, interleaved (bench/timing.py). Prints the ratio
tables; unless --no-record, writes them with the machine, the versions and the dispatch
counts as a new run file docs/benchmarks/<date>-<time>-cpu-<threads>-threads.md,
regenerates the docs/benchmarks.md summary (bench/summarize.py) and redraws
docs/benchmarks-roofline-cpu.png.
A model or case Kiln cannot compile is reported as skipped, with kilnc's error; Kiln's
first run is compared with onnxruntime's outputs (rtol 1e-3, atol 1e-4 x max|output|) and
a mismatch is reported instead of a time.
"""

import argparse
import datetime
import glob
import hashlib
import json
import os
import re
import resource
import subprocess
import sys
import time

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "models"))
import kernels  # noqa: E402
import report  # noqa: E402
import timing  # noqa: E402
import zoo  # noqa: E402

MODELS = ["mlp", "resnet18", "resnet50", "mobilenetv2", "efficientnet", "bert", "gpt2", "vit"]


def parse_args():
    build = os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build"))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--only", help="run only cases/models whose name matches (re.search)")
    p.add_argument("--batches", default="1,8")
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds per case")
    p.add_argument("--round-s", type=float, default=0.5, help="target seconds per round and side")
    p.add_argument("--budget-s", type=float, default=180, help="at most this long per case")
    p.add_argument("--wait-idle", type=float, default=0, metavar="S",
                   help="before each round wait up to S seconds for the other processes to "
                        "leave the CPUs idle (a shared machine); the record counts the rounds "
                        "that ran without an idle moment")
    p.add_argument("--max-run-s", type=float, default=60,
                   help="skip a model's larger batches when Kiln's batch-1 run took longer")
    p.add_argument("--compile-timeout", type=float, default=1800)
    p.add_argument("--compile-mem-gb", type=float, default=12,
                   help="address-space limit of each kilnc (a failed allocation is reported)")
    p.add_argument("--quick", action="store_true", help="tiny kernels, small zoo (harness check)")
    p.add_argument("--no-record", action="store_true", help="do not touch docs/")
    p.add_argument("--dispatches-only", action="store_true",
                   help="only count each model's dispatches (kilnc --report=fusion) at the "
                        "first batch and print the table; no timing, docs/ untouched")
    p.add_argument("--work", default=os.path.join(build, "bench"))
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16"],
                   help="kilnc --precision of the Kiln side (onnxruntime stays fp32); bf16 "
                        "outputs are checked against onnxruntime's within 2e-2 of the "
                        "output's scale instead of 1e-3 / 1e-4")
    p.add_argument("--kilnc", default=os.path.join(build, "bin", "kilnc"))
    p.add_argument("--kiln-run", default=os.path.join(build, "bin", "kiln-run"))
    return p.parse_args()


LOADS = []  # 1-minute load average before each case


def busy():
    """Other compile and test jobs on this machine (they make the numbers noisy)."""
    out = subprocess.run(["pgrep", "-f", "ninja|cc1plus|kilnc|lit "], capture_output=True,
                         text=True).stdout
    return len(out.split())


def file_hash(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 24), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def compile_cached(args, model_path, shape_args, name):
    """The artifact for (model, shapes, kilnc), compiling it if needed; or raises RuntimeError."""
    st = os.stat(args.kilnc)
    if args.precision != "fp32":
        shape_args = shape_args + [f"--precision={args.precision}"]
    # kilnc reads its shipped tuning databases at compile time: they are part of the key.
    tuning = sorted(glob.glob(os.path.join(os.path.dirname(os.path.dirname(args.kilnc)), "share",
                                           "kiln", "tuning", "*.jsonl")))
    key = hashlib.sha256(json.dumps([file_hash(model_path), shape_args, st.st_size,
                                     st.st_mtime_ns, [file_hash(t) for t in tuning]]
                                    ).encode()).hexdigest()[:16]
    directory = os.path.join(args.work, "artifacts")
    os.makedirs(directory, exist_ok=True)
    artifact = os.path.join(directory, f"{re.sub(r'[^A-Za-z0-9]+', '_', name)}-{key}.so")
    if os.path.exists(artifact):
        return artifact, None
    start = time.monotonic()
    limit = int(args.compile_mem_gb * 2 ** 30)
    proc = subprocess.run([args.kilnc, model_path, "-o", artifact + ".tmp"] + shape_args,
                          capture_output=True, text=True, timeout=args.compile_timeout,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
    if proc.returncode < 0:
        raise RuntimeError(f"killed by signal {-proc.returncode} (memory limit "
                           f"{args.compile_mem_gb:g} GB?)")
    if proc.returncode != 0:
        lines = [line for line in proc.stderr.splitlines() if "error:" in line] or \
            proc.stderr.strip().splitlines()[-1:] or [f"exit code {proc.returncode}"]
        raise RuntimeError(re.sub(r"^.*?error: ", "", lines[0]))
    os.replace(artifact + ".tmp", artifact)
    return artifact, time.monotonic() - start


def run_case(args, name, model_path, inputs, input_dir, shape_args):
    """Compile (cached), time both sides; a dict with kiln/ort Stats or an error."""
    LOADS.append(os.getloadavg()[0])
    session = timing.ort_session(model_path, args.threads)
    result = {}
    try:
        artifact, seconds = compile_cached(args, model_path, shape_args, name)
        result["compile_s"] = seconds
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        result["error"] = f"skipped: kilnc: {str(e)[:150]}"
        result["ort"] = timing.measure(None, session, inputs, args.rounds, args.round_s,
                                       args.budget_s, 600)["ort"]
        return result
    files = {}
    for input_name, value in inputs.items():
        files[input_name] = os.path.join(input_dir, input_name + ".npy")
        if not os.path.exists(files[input_name]):
            np.save(files[input_name], value)
    # onnxruntime's outputs are the reference that Kiln's first timed run is checked against.
    reference = os.path.join(input_dir, os.pardir, "ort-reference")
    os.makedirs(reference, exist_ok=True)
    names = [o.name for o in session.get_outputs()]
    scale = float("inf")
    for output_name, value in zip(names, session.run(names, inputs)):
        np.save(os.path.join(reference, re.sub(r"[^A-Za-z0-9._-]", "_", output_name) + ".npy"),
                value)
        scale = min(scale, float(np.abs(value).max()) if value.size else 1.0)
    base = timing.kiln_args(args.kiln_run, artifact, files, args.threads)
    # atol relative to the output's scale, as bench/models/check.py: fp32 sums of thousands
    # of terms differ by more than 1e-5 in absolute terms when summed in another order.
    check = ["--compare", reference, "--rtol", "1e-3", "--atol", f"{max(1e-4 * scale, 1e-7):.3g}"]
    if args.precision == "bf16":
        # bf16 operands: 8 significant bits, errors ~2^-8 relative per layer.
        check = ["--compare", reference, "--rtol", "2e-2", "--atol", f"{max(2e-2 * scale, 1e-7):.3g}"]
    try:
        result.update(timing.measure(base, session, inputs, args.rounds, args.round_s,
                                     args.budget_s, max(600, 20 * args.budget_s), check))
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        result["error"] = f"kiln-run: {str(e)[:200]}"
    return result


def run_kernels(args, selected, peak):
    rows = []
    for case in kernels.cases(args.quick):
        if not selected(case.name):
            continue
        directory = os.path.join(args.work, "kernels", re.sub(r"[^A-Za-z0-9]+", "_", case.name))
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, "model.onnx")
        onnx.save(case.model, path)
        result = run_case(args, case.name, path, case.inputs, directory, [])
        rows.append((case, result))
        print(report.kernel_table([(case, result)], args.threads, peak)[-1], flush=True)
    return rows


def count_dispatches(args, selected, batches):
    zoo_dir = os.path.join(args.work, "zoo-small" if args.quick else "zoo")
    rows = []
    for name in MODELS:
        if not selected(name):
            continue
        model_dir = zoo.write_model(name, zoo_dir, args.quick, batches[:1])
        with open(os.path.join(model_dir, "meta.json")) as f:
            meta = json.load(f)
        shapes = meta["batches"][str(batches[0])]
        shape_args = [f"--input-shape={k}={'x'.join(map(str, v))}" for k, v in shapes.items()]
        counts, error = report.dispatch_count(args.kilnc, os.path.join(model_dir, "model.onnx"),
                                              shape_args, int(args.compile_mem_gb * 2 ** 30))
        rows.append((name, meta["nodes"], counts, error))
        print(report.dispatch_table(rows[-1:])[-1], flush=True)
    return rows


def run_models(args, selected, batches):
    zoo_dir = os.path.join(args.work, "zoo-small" if args.quick else "zoo")
    rows, dispatch = [], []
    for name in MODELS:
        if not selected(name):
            continue
        model_dir = zoo.write_model(name, zoo_dir, args.quick, batches)
        with open(os.path.join(model_dir, "meta.json")) as f:
            meta = json.load(f)
        model_path = os.path.join(model_dir, "model.onnx")
        first = None
        for batch in batches:
            shapes = meta["batches"][str(batch)]
            shape_args = [f"--input-shape={k}={'x'.join(map(str, v))}" for k, v in shapes.items()]
            input_dir = os.path.join(model_dir, f"b{batch}", "inputs")
            inputs = {k: np.load(os.path.join(input_dir, k + ".npy")) for k in shapes}
            slow = first and first.get("kiln") and first["kiln"].median_ms > args.max_run_s * 1e3
            if slow:
                took = first["kiln"].median_ms / 1e3
                session = timing.ort_session(model_path, args.threads)
                result = {"error": f"not run: batch {batches[0]} took {took:.0f} s per run "
                                   f"(linear estimate {took * batch / batches[0]:.0f} s; "
                                   "see --max-run-s)",
                          "ort": timing.measure(None, session, inputs, args.rounds, args.round_s,
                                                args.budget_s, 600)["ort"]}
            else:
                result = run_case(args, f"{name}-b{batch}", model_path, inputs, input_dir,
                                  shape_args)
            rows.append((name, batch, result))
            first = first or result
            print(report.model_table([(name, batch, result)])[-1], flush=True)
            if batch == batches[0]:
                counts, error = report.dispatch_count(args.kilnc, model_path, shape_args,
                                                      int(args.compile_mem_gb * 2 ** 30))
                dispatch.append((name, meta["nodes"], counts, error))
    return rows, dispatch


def main():
    args = parse_args()
    timing.WAIT_IDLE_S = args.wait_idle
    pattern = re.compile(args.only) if args.only else None
    selected = lambda name: not pattern or pattern.search(name)  # noqa: E731
    batches = [int(b) for b in args.batches.split(",")]
    if args.dispatches_only:
        rows = count_dispatches(args, selected, batches)
        print("\n".join([f"### Dispatches (batch {batches[0]})", ""] +
                        report.dispatch_table(rows)))
        return 0
    busy_before = busy()
    load_before = os.getloadavg()[0]
    versions = report.versions(ROOT, args.kilnc)  # at the start: the tree moves during a run
    start = datetime.datetime.now(datetime.timezone.utc)
    print(f"bench cpu: {report.machine()}; {args.threads} threads; "
          f"{busy_before} compile processes running", flush=True)
    # The FMA peak of this many threads, measured before and after the kernel cases: the
    # roof of their GFLOP/s percentages is the larger (the less disturbed) of the two.
    has_kernels = any(selected(case.name) for case in kernels.cases(args.quick))
    peaks = [report.fma_peak_gflops(args.work, args.threads)] if has_kernels else []
    kernel_rows = run_kernels(args, selected, peaks[0] if peaks else None)
    if has_kernels:
        peaks.append(report.fma_peak_gflops(args.work, args.threads))
    peak = max((p for p in peaks if p), default=None)
    model_rows, dispatch_rows = run_models(args, selected, batches)
    busy_after, load_after = busy(), os.getloadavg()[0]
    bandwidth = report.copy_bandwidth_gbs()
    precision = "" if args.precision == "fp32" else f", Kiln --precision={args.precision}"
    lines = [f"## {start:%Y-%m-%d %H:%M} UTC — CPU, {args.threads} threads{precision}", "",
             f"- machine: {report.machine()}",
             f"- versions: kiln `{versions['kiln']}`, onnxruntime {versions['onnxruntime']}, "
             f"LLVM {versions['llvm']}",
             f"- noise: load average {load_before:.2f} at start, {load_after:.2f} at end, "
             f"{max(LOADS, default=0):.2f} at most before a case (2 CPUs: above ~2 means other "
             f"work competed); ninja/cc1plus/kilnc/lit processes: {busy_before} at start, "
             f"{busy_after} at end; single-thread copy bandwidth {bandwidth:.1f} GB/s" +
             (f"; each round waited up to {args.wait_idle:g} s for idle CPUs, "
              f"{timing.IDLE_TIMEOUTS} rounds ran without seeing them" if args.wait_idle else ""),
             "- method: interleaved rounds (`bench/timing.py`); median of round medians, "
             "[min–max] of round medians, ×timed runs in all; ORT timed around "
             "`session.run` from Python (adds ~10-30 µs per run)"]
    if peak:
        lines += [f"- FMA peak (`bench/fma_peak.c`, {args.threads} threads): " +
                  ", ".join(f"{p:.1f}" if p else "—" for p in peaks) +
                  " GFLOP/s before and after the kernel cases; the kernels' percentages are "
                  "of the larger"]
    lines += [""]
    if kernel_rows:
        lines += ["### Kernels", ""] + report.kernel_table(kernel_rows, args.threads, peak) + [""]
    if model_rows:
        lines += ["### Models", ""] + report.model_table(model_rows) + [""]
    if dispatch_rows:
        lines += [f"### Dispatches (batch {batches[0]})", ""] + \
            report.dispatch_table(dispatch_rows) + [""]
    text = "\n".join(lines) + "\n"
    print("\n" + text)
    if not args.no_record:
        record(text, kernel_rows, args.threads, bandwidth, peak)
    return 0


def record(text, kernel_rows, threads, bandwidth, peak):
    """Writes the run as its own file under docs/benchmarks/ (the method is in that
    folder's README.md), then regenerates the docs/benchmarks.md summary."""
    title = text.splitlines()[0].lstrip("# ").strip()
    stamp = re.match(r"(\d{4}-\d{2}-\d{2}) (\d{2}):(\d{2})", title)
    name = f"{stamp.group(1)}-{stamp.group(2)}{stamp.group(3)}-cpu-{threads}-threads.md"
    path = os.path.join(ROOT, "docs", "benchmarks", name)
    with open(path, "w") as f:
        f.write("#" + text.lstrip("#").replace("\n### ", "\n## "))
    print(f"recorded {os.path.relpath(path, ROOT)}")
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "summarize.py"), "--out",
                    os.path.join(ROOT, "docs", "benchmarks.md")], check=True)
    if kernel_rows:
        report.roofline(os.path.join(ROOT, "docs", "benchmarks-roofline-cpu.png"), kernel_rows,
                        threads, bandwidth, peak)


if __name__ == "__main__":
    sys.exit(main())
