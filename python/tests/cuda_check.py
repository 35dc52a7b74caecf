# The kiln package's CUDA path, on a GPU machine, from a scripts/python-cuda-bundle folder.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: python3 cuda_check.py BUNDLE

BUNDLE holds python/kiln (the runtime module built for several Pythons; no compiler,
no LLVM) and models/NAME/{model.so, inputs/*.npy, reference/*.npy} compiled with
kiln.compile(target="cuda"). For each model: kiln.load(device="cuda"), runs on NumPy
inputs against the reference (|kiln - ref| <= 1e-3 |ref| + 1e-4 max|ref|), then on
PyTorch CPU tensors, PyTorch CUDA tensors and CuPy arrays when those are installed,
DLPack of the outputs into torch, concurrent calls from 4 threads, benchmark
(device_ms), trace and profile, and a wrong-shape ValueError. Prints PASS/FAIL per
check and the per-call overhead of model(x) over the C API loop; exits 1 on a FAIL.
"""

import json
import os
import statistics
import sys
import tempfile
import threading
import time

import numpy as np

BUNDLE = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__))
sys.path.insert(0, os.path.join(BUNDLE, "python"))
import kiln  # noqa: E402

failures = 0


def report(name, ok, detail=""):
    global failures
    failures += not ok
    print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)


def close(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return False, f"shape {got.shape} vs {want.shape}"
    scale = max(float(np.abs(want).max()), 1e-30)
    err = np.abs(got - want)
    return bool((err <= 1e-3 * np.abs(want) + 1e-4 * scale).all()), \
        f"max_err/max|ref|={float(err.max()) / scale:.1e}"


def load_case(directory):
    def read(sub):
        folder = os.path.join(directory, sub)
        return {n[:-4]: np.load(os.path.join(folder, n)) for n in sorted(os.listdir(folder))}

    return read("inputs"), read("reference")


def check_outputs(label, model, results, reference):
    results = results if isinstance(results, tuple) else (results,)
    for info, got in zip(model.outputs, results):
        ok, detail = close(got, reference[info.name])
        report(f"{label} {info.name}", ok, detail)


def optional(module):
    try:
        return __import__(module)
    except ImportError:
        return None


def check_model(name, directory, torch, cupy):
    inputs, reference = load_case(directory)
    model = kiln.load(os.path.join(directory, "model.so"), device="cuda")
    report(f"{name} load", model.info["device"] == "cuda", repr(model))
    check_outputs(f"{name} numpy", model, model(**inputs), reference)
    if torch is not None:
        check_outputs(f"{name} torch-cpu", model,
                      model(**{k: torch.from_numpy(v) for k, v in inputs.items()}), reference)
        if torch.cuda.is_available():
            on_device = {k: torch.from_numpy(v).cuda() for k, v in inputs.items()}
            results = model(**on_device)
            check_outputs(f"{name} torch-cuda", model, results, reference)
            first = results[0] if isinstance(results, tuple) else results
            back = torch.from_dlpack(first).cuda()
            report(f"{name} output to torch.cuda", back.is_cuda and tuple(back.shape) == first.shape)
    if cupy is not None:
        check_outputs(f"{name} cupy", model,
                      model(**{k: cupy.asarray(v) for k, v in inputs.items()}), reference)

    errors = []

    def worker():
        try:
            for _ in range(20):
                results = model(**inputs)
                results = results if isinstance(results, tuple) else (results,)
                for info, got in zip(model.outputs, results):
                    ok, detail = close(got, reference[info.name])
                    if not ok:
                        errors.append(f"{info.name} {detail}")
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report(f"{name} 4 threads x 20 runs", not errors, "; ".join(errors[:3]))

    bench = model.benchmark(**inputs, warmup=5, runs=50)
    report(f"{name} benchmark", bench.device_ms is not None and bench.device_ms.median > 0,
           f"latency median {bench.latency_ms.median:.3f} ms, device median "
           f"{bench.device_ms.median if bench.device_ms else float('nan'):.3f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        with model.trace(path):
            model(**inputs)
        with open(path) as f:
            events = json.load(f)
        events = events["traceEvents"] if isinstance(events, dict) else events
        report(f"{name} trace", sum(e.get("name") == "run" for e in events) == 1,
               f"{len(events)} events")
    profile = model.profile(**inputs, runs=5)
    report(f"{name} profile", profile.runs == 5 and len(profile) >= 2,
           str(profile).splitlines()[0])

    first = model.inputs[0]
    bad = {k: v for k, v in inputs.items()}
    bad[first.name] = np.zeros([d + 1 if isinstance(d, int) and d > 1 else 1
                                for d in inputs[first.name].shape], inputs[first.name].dtype)
    try:
        model(**bad)
        report(f"{name} wrong shape", False, "no error")
    except ValueError as e:
        report(f"{name} wrong shape", str(e).startswith(f"input '{first.name}'"), str(e))
    return model, inputs


def overhead(model, inputs, runs=2000):
    for _ in range(100):
        model(**inputs)
    c_api = model.benchmark(**inputs, warmup=10, runs=runs).latency_ms.median * 1e3
    samples = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        model(**inputs)
        samples.append(time.perf_counter_ns() - start)
    public = statistics.median(samples) / 1e3
    print(f"call overhead (CUDA, {model.info['path']}): C API {c_api:.1f} us, "
          f"model(x) {public:.1f} us, overhead {public - c_api:.1f} us", flush=True)


def main():
    torch, cupy = optional("torch"), optional("cupy")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"torch {getattr(torch, '__version__', 'absent')}, "
          f"cupy {getattr(cupy, '__version__', 'absent')}", flush=True)
    report("import kiln loads no compiler", "kiln._compiler" not in sys.modules)
    models_dir = os.path.join(BUNDLE, "models")
    tiny = None
    for name in sorted(os.listdir(models_dir)):
        try:
            model, inputs = check_model(name, os.path.join(models_dir, name), torch, cupy)
            if name == "tiny":
                tiny = (model, inputs)
        except Exception as e:  # noqa: BLE001
            report(f"{name}", False, f"{type(e).__name__}: {e}")
    if tiny:
        overhead(*tiny)
    print(f"cuda_check: {failures} failures", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
