# Call overhead of the Python package: model(x) against the C API's own run time.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: python_overhead.py [--runs N] [--rounds R] [--out FILE]

(PYTHONPATH=build/python, the test virtualenv's Python.) Compiles tiny models with
kiln.compile (one thread, so no pool wake-ups) and times, interleaved over R rounds of
N runs each:
  C API        kiln_session_run + kiln_tensor_destroy in a C++ loop (model.benchmark)
  model(x)     the public call: argument checks, DLPack view, GIL release, NumPy output
  _impl.run    the extension's run without the Python layer
Each figure is the median over rounds of the round's median per-call time (µs); the
overhead is model(x) minus the C API. --out writes a docs/benchmarks run file.
"""

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np
from onnx import TensorProto, helper

import kiln

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def relu_model(shape):
    node = helper.make_node("Relu", ["x"], ["y"], name="relu")
    info = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)  # noqa
    graph = helper.make_graph([node], "relu", [info("x")], [info("y")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def add_model(shape):
    node = helper.make_node("Add", ["a", "b"], ["y"], name="add")
    info = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)  # noqa
    graph = helper.make_graph([node], "add", [info("a"), info("b")], [info("y")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def per_call_us(call, runs):
    """Median per-call time of `runs` calls, in microseconds."""
    samples = []
    clock = time.perf_counter_ns
    for _ in range(runs):
        start = clock()
        call()
        samples.append(clock() - start)
    return statistics.median(samples) / 1e3


def measure(model, args, runs, rounds):
    for _ in range(1000):  # warm caches, arenas and the allocator
        model(*args)
    c_api, public, raw = [], [], []
    for _ in range(rounds):
        c_api.append(model.benchmark(*args, warmup=10, runs=runs).latency_ms.median * 1e3)
        public.append(per_call_us(lambda: model(*args), runs))
        raw.append(per_call_us(lambda: model._impl.run(list(args), None), runs))
    return statistics.median(c_api), statistics.median(public), statistics.median(raw)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=20000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--out", help="write a docs/benchmarks run file")
    args = p.parse_args()
    rng = np.random.default_rng(0)
    cases = [
        ("Relu [1, 16] f32", relu_model([1, 16]), 1),
        ("Relu [64, 1024] f32 (256 KiB)", relu_model([64, 1024]), 1),
        ("Add [1, 16] f32, 2 inputs", add_model([1, 16]), 2),
    ]
    rows = []
    for name, onnx_model, inputs in cases:
        model = kiln.compile(onnx_model, threads=1)
        shape = [d for d in model.inputs[0].shape]
        values = [rng.standard_normal(shape).astype(np.float32) for _ in range(inputs)]
        c_api, public, raw = measure(model, values, args.runs, args.rounds)
        rows.append((name, c_api, public, raw, public - c_api))
        print(f"{name}: C API {c_api:.2f} us, model(x) {public:.2f} us, _impl.run {raw:.2f} us, "
              f"overhead {public - c_api:.2f} us", flush=True)
    if args.out:
        write_run(args.out, rows, args)


def write_run(path, rows, args):
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    load = os.getloadavg()[0]
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    now = datetime.datetime.now(datetime.timezone.utc)
    lines = [
        f"# {now:%Y-%m-%d %H:%M} UTC — Python call overhead (kiln package)", "",
        f"`bench/python_overhead.py --runs {args.runs} --rounds {args.rounds}` at kiln `{commit}`: "
        "per-call time of `model(x)` from Python against the C API's own run "
        "(`kiln_session_run` + `kiln_tensor_destroy` in a C++ loop, `model.benchmark`), "
        "one-thread sessions, median over rounds of each round's median.", "",
        f"- machine: {cpu}, {os.cpu_count()} cores; Python {platform.python_version()}, "
        f"NumPy {np.__version__}; load average {load:.2f} at start", "",
        "| model | C API µs | model(x) µs | extension run µs | overhead µs |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, c_api, public, raw, overhead in rows:
        lines.append(f"| {name} | {c_api:.2f} | {public:.2f} | {raw:.2f} | {overhead:.2f} |")
    lines += ["", "Target (issue 24): at most 10 µs above the C API. The extension run "
              "(`model._impl.run`) skips the Python layer's argument handling; the rest of the "
              "gap is the DLPack view of each input, the GIL release and the NumPy array that "
              "owns each output (no copies: inputs are read in place, outputs are the "
              "runtime's buffers)."]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    sys.exit(main())
