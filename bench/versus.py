# Kiln builds against each other and onnxruntime on zoo models, interleaved, CPU time and min.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: versus.py --zoo DIR --kilnc LABEL=KILNC... [--kilnc-arg LABEL=ARG...]
                  [--models resnet18,resnet50,mobilenetv2] [--batches 1] [--threads 1,2]
                  [--rounds 3] [--bench 8] [--work DIR]

For a shared, noisy machine. Each model (zoo.py's DIR/MODEL, at each of --batches, which
zoo.py must have written) is compiled with every kilnc (static shapes), with the
--kilnc-arg of its label (e.g. `--kilnc-arg untuned=--tuning-db=none`: one kilnc, two
labels). A round runs, per model and thread count, each Kiln artifact
(kiln-run --warmup 1 --bench B, a fresh process) and onnxruntime (in a child process: a
session with that many intra-op threads, spinning off unless --ort-spin, 1 warm-up and B
timed runs), one
after the other. Reported per side: CPU time per run (the child's user+sys time of the
B+1-run process minus that of a 1-run process, over B; the min over rounds), the wall
clock min over all timed runs and the median of the rounds' medians. Ratios are to
onnxruntime. The load average is printed after each round and with the table.
"""

import argparse
import json
import os
import re
import resource
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import timing  # noqa: E402  (same directory: wait_idle)

ORT_CHILD = r"""
import sys, time, numpy as np, onnxruntime as ort
path, threads, reps, inputs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[5:]
o = ort.SessionOptions()
o.intra_op_num_threads = threads
o.inter_op_num_threads = 1
o.add_session_config_entry("session.intra_op.allow_spinning", sys.argv[4])
s = ort.InferenceSession(path, o, providers=["CPUExecutionProvider"])
feed = {i.split("=")[0]: np.load(i.split("=")[1]) for i in inputs}
s.run(None, feed)
times = []
for _ in range(reps):
    t = time.perf_counter(); s.run(None, feed); times.append(time.perf_counter() - t)
print("min_ms", 1e3 * min(times) if times else 0.0)
print("median_ms", 1e3 * sorted(times)[len(times) // 2] if times else 0.0)
"""


def child_cpu(cmd):
    """(user+sys seconds of the child, its stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc.stdout


def kiln_cmd(kiln_run, artifact, inputs, threads, reps):
    cmd = [kiln_run, artifact, "--threads", str(threads), "--warmup", "1", "--bench", str(reps)]
    return cmd + [f"--input={i}" for i in inputs]


def ort_cmd(model, inputs, threads, reps, spin):
    return [sys.executable, "-c", ORT_CHILD, model, str(threads), str(reps),
            "1" if spin else "0"] + inputs


def measure(make_cmd, reps, parse):
    """(CPU ms per run, wall min ms, wall median ms) of one round."""
    base, _ = child_cpu(make_cmd(0))
    total, out = child_cpu(make_cmd(reps))
    return (1e3 * (total - base) / reps,) + parse(out)


def kiln_times(out):
    match = re.search(r"latency_ms min=(\S+) median=(\S+)", out)
    return float(match.group(1)), float(match.group(2))


def ort_times(out):
    return (float(re.search(r"min_ms (\S+)", out).group(1)),
            float(re.search(r"median_ms (\S+)", out).group(1)))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--zoo", required=True)
    p.add_argument("--kilnc", action="append", required=True, help="LABEL=PATH")
    p.add_argument("--kilnc-arg", action="append", default=[],
                   help="LABEL=ARG: an extra kilnc argument for that label (repeatable)")
    p.add_argument("--batches", default="1")
    p.add_argument("--kiln-run", default=os.path.join(ROOT, "build", "bin", "kiln-run"))
    p.add_argument("--models", default="resnet18,resnet50,mobilenetv2")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--bench", type=int, default=8)
    p.add_argument("--work", default="/tmp/versus")
    p.add_argument("--ort-spin", action="store_true",
                   help="leave onnxruntime's intra-op threads spinning (its default; Kiln's "
                        "pool polls too, KILN_SPIN_US) instead of turning spinning off")
    p.add_argument("--wait-idle", type=float, default=0, metavar="S",
                   help="before each side's run wait up to S seconds for the other processes "
                        "to leave the CPUs idle (bench/timing.py)")
    args = p.parse_args()
    timing.WAIT_IDLE_S = args.wait_idle
    os.makedirs(args.work, exist_ok=True)
    models, threads = args.models.split(","), [int(t) for t in args.threads.split(",")]
    batches = [int(b) for b in args.batches.split(",")]
    kilncs = [spec.split("=", 1) for spec in args.kilnc]
    extra = {}
    for spec in args.kilnc_arg:
        label, arg = spec.split("=", 1)
        extra.setdefault(label, []).append(arg)
    cases = [(m, b) for m in models for b in batches]
    inputs, artifacts = {}, {}
    for model, batch in cases:
        directory = os.path.join(args.zoo, model)
        with open(os.path.join(directory, "meta.json")) as f:
            meta = json.load(f)
        shapes = meta["batches"][str(batch)]
        inputs[model, batch] = [
            f"{n}={os.path.join(directory, f'b{batch}', 'inputs', n + '.npy')}"
            for n in meta["inputs"]]
        for label, kilnc in kilncs:
            artifact = os.path.join(args.work, f"{model}-b{batch}-{label}.so")
            shape_args = [f"--input-shape={n}={'x'.join(map(str, shapes[n]))}"
                          for n in meta["inputs"]]
            subprocess.run([kilnc, os.path.join(directory, "model.onnx"), "-o", artifact]
                           + shape_args + extra.get(label, []), check=True, capture_output=True)
            artifacts[model, batch, label] = artifact
    best, medians, loads = {}, {}, [os.getloadavg()[0]]
    for _ in range(args.rounds):
        for case in cases:
            for t in threads:
                sides = [(label, lambda r, a=artifacts[case + (label,)], t=t, c=case:
                          kiln_cmd(args.kiln_run, a, inputs[c], t, r), kiln_times)
                         for label, _ in kilncs]
                sides.append(("ort", lambda r, t=t, c=case: ort_cmd(
                    os.path.join(args.zoo, c[0], "model.onnx"), inputs[c], t, r,
                    args.ort_spin), ort_times))
                for label, make, parse in sides:
                    timing.wait_idle()
                    cpu, wall, median = measure(make, args.bench, parse)
                    old = best.get(case + (t, label), (float("inf"), float("inf")))
                    best[case + (t, label)] = (min(old[0], cpu), min(old[1], wall))
                    medians.setdefault(case + (t, label), []).append(median)
        loads.append(os.getloadavg()[0])
        print(f"round done, load {loads[-1]:.1f}", file=sys.stderr, flush=True)
    labels = [label for label, _ in kilncs]
    print(f"load average (1 min) at start and after each round: "
          + ", ".join(f"{x:.2f}" for x in loads)
          + (f"; {timing.IDLE_TIMEOUTS} runs started without idle CPUs after waiting "
             f"{args.wait_idle:g} s" if args.wait_idle else "")
          + f"; onnxruntime spinning {'on' if args.ort_spin else 'off'}")
    print("| model | batch | threads |"
          + "".join(f" {lb} CPU ms | {lb} min ms | {lb} median ms |" for lb in labels)
          + " ORT CPU ms | ORT min ms | ORT median ms |"
          + "".join(f" {lb}/ORT CPU | {lb}/ORT min | {lb}/ORT median |" for lb in labels))
    print("| --- | ---: | ---: |" + " ---: | ---: | ---: |" * (2 * len(labels) + 1))
    for case in cases:
        for t in threads:
            key = case + (t,)
            med = {lb: sorted(medians[key + (lb,)])[len(medians[key + (lb,)]) // 2]
                   for lb in labels + ["ort"]}
            ort = best[key + ("ort",)]
            cells = "".join(f" {best[key + (lb,)][0]:.1f} | {best[key + (lb,)][1]:.2f} |"
                            f" {med[lb]:.2f} |" for lb in labels)
            ratios = "".join(f" {best[key + (lb,)][0] / ort[0]:.2f} | "
                             f"{best[key + (lb,)][1] / ort[1]:.2f} | {med[lb] / med['ort']:.2f} |"
                             for lb in labels)
            print(f"| {case[0]} | {case[1]} | {t} |{cells} {ort[0]:.1f} | {ort[1]:.2f} |"
                  f" {med['ort']:.2f} |{ratios}")


if __name__ == "__main__":
    main()
