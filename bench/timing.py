# Times one case with Kiln (kiln-run) and onnxruntime, interleaved, at the same thread count.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""measure(...) -> {"kiln": Stats, "ort": Stats}.

Each round runs kiln-run (a fresh process: load, 1 warm-up, `reps` timed runs, its median)
and then onnxruntime in this process (same inputs, 1 warm-up, `reps` timed runs of
session.run, their median). Rounds alternate so that drift in machine load hits both
sides alike. A side's result is the median of its round medians, with their min and max.
`reps` is chosen from a first timed run so that a round takes about `round_s` seconds;
a case whose single run takes longer than `round_s` gets one run per round, and fewer
rounds if they would not fit in `budget_s` (at least one). kiln-run skips its warm-up
run when one run takes over 2 s (the cold-start share is small then); when one run
takes longer than `budget_s`, that first (cold) run is Kiln's only sample.
"""

import dataclasses
import os
import re
import statistics
import subprocess
import time

import numpy as np


@dataclasses.dataclass
class Stats:
    median_ms: float
    min_ms: float
    max_ms: float
    samples: int  # rounds
    runs: int  # timed runs in all


def kiln_args(kiln_run, artifact, input_files, threads):
    args = [kiln_run, artifact, "--threads", str(threads)]
    for name, path in input_files.items():
        args += ["--input", f"{name}={path}"]
    return args


def kiln_round(base_args, reps, timeout, warmup=1):
    """Median ms of `reps` timed runs after `warmup` runs, from kiln-run's own clock."""
    proc = subprocess.run(base_args + ["--warmup", str(warmup), "--bench", str(reps)],
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        failed = [line for line in proc.stdout.splitlines() if "FAIL" in line]
        raise RuntimeError("; ".join(failed) or proc.stderr.strip() or proc.stdout.strip())
    match = re.search(r"latency_ms min=(\S+) median=(\S+)", proc.stdout)
    if not match:
        raise RuntimeError(f"no latency line in kiln-run's output: {proc.stdout[-300:]}")
    return float(match.group(2))


def ort_session(model_path, threads):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])


def ort_round(session, inputs, reps):
    session.run(None, inputs)  # warm-up
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        session.run(None, inputs)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


# Seconds to wait before each round for the other processes to leave the CPUs idle
# (bench/cpu.py --wait-idle); 0: never wait. IDLE_TIMEOUTS counts the rounds that ran
# after waiting that long without seeing an idle moment.
WAIT_IDLE_S = 0.0
IDLE_TIMEOUTS = 0


def _busy_cpus(interval_s=0.25):
    """CPUs' worth of time the machine spent busy over `interval_s` (/proc/stat), while
    this process sleeps: the other processes' load."""
    def sample():
        with open("/proc/stat") as f:
            fields = [float(x) for x in f.readline().split()[1:]]
        return sum(fields), fields[3] + fields[4]  # total, idle + iowait
    total0, idle0 = sample()
    time.sleep(interval_s)
    total1, idle1 = sample()
    cpus = os.cpu_count() or 1
    return cpus * (1 - (idle1 - idle0) / max(total1 - total0, 1e-9))


def wait_idle():
    """Sleeps until less than a quarter of a CPU is busy, at most WAIT_IDLE_S."""
    global IDLE_TIMEOUTS
    if WAIT_IDLE_S <= 0:
        return
    deadline = time.monotonic() + WAIT_IDLE_S
    while _busy_cpus() > 0.25:
        if time.monotonic() > deadline:
            IDLE_TIMEOUTS += 1
            return


def _stats(samples, reps):
    return Stats(statistics.median(samples), min(samples), max(samples), len(samples),
                 len(samples) * reps)


def measure(kiln_base_args, session, inputs, rounds, round_s, budget_s, timeout,
            check_args=()):
    """Interleaved rounds of both; kiln_base_args None means Kiln is skipped.

    check_args (e.g. --compare DIR) go to Kiln's first run only, which then also checks
    the outputs; a mismatch raises RuntimeError."""
    # A first timed run of each picks the repetitions per round and the rounds.
    probe_ort = ort_round(session, inputs, 1)
    probe_kiln = kiln_round(kiln_base_args + list(check_args), 1, timeout, 0) \
        if kiln_base_args else 0.0
    slowest = max(probe_ort, probe_kiln, 1e-3) / 1e3
    reps = int(np.clip(round_s / slowest, 1, 200))
    warmup = 1 if probe_kiln < 2000 else 0
    if probe_kiln / 1e3 > budget_s:  # one run is all the budget allows: the probe is the sample
        ort = [ort_round(session, inputs, reps) for _ in range(rounds)]
        return {"kiln": _stats([probe_kiln], 1), "ort": _stats(ort, reps)}
    per_round = reps * (probe_ort + probe_kiln) / 1e3 + warmup * probe_kiln / 1e3
    rounds = int(np.clip(budget_s / max(per_round, 1e-6), 1, rounds))
    kiln, ort = [], []
    for _ in range(rounds):
        wait_idle()
        if kiln_base_args:
            kiln.append(kiln_round(kiln_base_args, reps, timeout, warmup))
        ort.append(ort_round(session, inputs, reps))
    return {"kiln": _stats(kiln, reps) if kiln else None, "ort": _stats(ort, reps)}
