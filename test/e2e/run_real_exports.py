# Compiles real PyTorch exports with symbolic dims and runs them at two sizes against onnxruntime.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: run_real_exports.py WORKDIR --kilnc PATH --kiln-run PATH MODEL.onnx...

Each model (as exported; a zoo export whose weights test/real-exports/weights.py
stripped is restored first: dynamic batch, and sequence for text models) is compiled
ONCE with `kilnc model.onnx -o model.so` and no other flag, then run with kiln-run
at two run-time shapes -- batch 1 and 3, and for an input with a second symbolic
dim (a sequence) lengths 8 and 13 -- and compared with onnxruntime (bench/models/
check.py: |kiln - ort| <= 1e-3 |ort| + 1e-4 max|ort|). Prints one line per run
with the largest error relative to max|ort|, one `time:` line per model (compile
and run seconds), and a summary; exits 1 if any fails.

--xfail FILE is a strict expected-failure list, one `NAME KIND  # reason` a line
(NAME the file name without .onnx; KIND `compile` when kilnc fails, `run` when a
run fails or mismatches): a listed model failing that way is XFAIL, an unlisted
failure, a listed model failing the other way or passing (XPASS) fails the run.
--jobs N checks N models at a time (output stays in the models' order).
"""

import argparse
import concurrent.futures
import os
import sys
import time

import numpy as np
import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "models"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import check  # noqa: E402
import conformance_run  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "test", "real-exports"))
import weights  # noqa: E402
import zoo_runs  # noqa: E402

TIMEOUT = 600
SIZES = zoo_runs.SIZES


def run_size(model_path, model, artifact, work, batch, seq, kiln_run):
    """(ok, notes) for one run-time size."""
    inputs = zoo_runs.sample_inputs(model, batch, seq)
    size_dir = os.path.join(work, f"b{batch}s{seq}")
    reference_dir = os.path.join(size_dir, "reference")
    input_dir = os.path.join(size_dir, "inputs")
    os.makedirs(reference_dir, exist_ok=True)
    os.makedirs(input_dir, exist_ok=True)
    reference = zoo_runs.reference(model_path, inputs)
    for name, value in reference.items():
        np.save(os.path.join(reference_dir, name + ".npy"), value)
    args = [kiln_run, artifact, "--output-dir", os.path.join(size_dir, "out"), "--threads", "2"]
    for name, value in inputs.items():
        path = os.path.join(input_dir, name + ".npy")
        np.save(path, value)
        args += ["--input", f"{name}={path}"]
    rc, output, _ = conformance_run.run_tool(args, TIMEOUT)
    if rc != 0:
        return False, "kiln-run: " + conformance_run.first_error(output)
    ok, notes = check.compare(os.path.join(size_dir, "out"), reference_dir)
    return ok, notes + zoo_runs.weak_reference_note(reference)


def run_model(model_path, work, args):
    """(kind, lines) for one model: kind is None when every size passed, else
    `compile` (kilnc failed; every size counts as failed) or `run`."""
    name = model_name(model_path)
    work = os.path.join(work, name)
    os.makedirs(work, exist_ok=True)
    model = onnx.load(model_path)
    if weights.restore(model):  # a zoo export stored with its weights stripped
        model_path = os.path.join(work, "restored.onnx")
        onnx.save(model, model_path)
    artifact = os.path.join(work, "model.so")
    start = time.monotonic()
    rc, output, _ = conformance_run.run_tool([args.kilnc, model_path, "-o", artifact], TIMEOUT)
    compiled = time.monotonic()
    if rc != 0:
        return "compile", [f"FAIL: {name}: compile: {conformance_run.first_error(output)}"]
    lines, kind = [], None
    for batch, seq in SIZES:
        ok, notes = run_size(model_path, model, artifact, work, batch, seq, args.kiln_run)
        label = f"{name} {zoo_runs.size_label(model, batch, seq)}"
        lines.append(f"{'PASS' if ok else 'FAIL'}: {label}: {notes}")
        kind = kind if ok else "run"
    lines.append(f"time: {name}: compile {compiled - start:.1f} s, "
                 f"runs {time.monotonic() - compiled:.1f} s")
    return kind, lines


def model_name(path):
    return os.path.basename(path)[:-len(".onnx")]


def read_xfail(path):
    """{name: (kind, reason)} from `NAME KIND  # reason` lines."""
    expected = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            entry, _, reason = line.partition("#")
            if not entry.strip():
                continue
            fields = entry.split()
            if len(fields) != 2 or fields[1] not in ("compile", "run"):
                sys.exit(f"error: {path}:{number}: expected `NAME compile|run  # reason`, "
                         f"got '{line.strip()}'")
            expected[fields[0]] = (fields[1], reason.strip())
    return expected


def judge(name, kind, lines, expected):
    """The model's lines with its verdict; True when it counts as a failure."""
    want = expected.get(name)
    if want is None:
        return kind is not None, lines
    if kind == want[0]:
        # Each FAIL of an expected failure is an XFAIL (CHECK-NOT: FAIL stays usable).
        return False, [line.replace("FAIL: ", "XFAIL: ", 1) for line in lines]
    verdict = "passed" if kind is None else f"failed at {kind}"
    return True, lines + [f"FAIL: {name}: listed as a {want[0]} failure ({want[1]}), "
                          f"but it {verdict}" + (" (XPASS)" if kind is None else "")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("work")
    parser.add_argument("--kilnc", required=True)
    parser.add_argument("--kiln-run", required=True)
    parser.add_argument("--xfail", help="strict expected-failure list")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("models", nargs="+")
    args = parser.parse_intermixed_args()
    expected = read_xfail(args.xfail) if args.xfail else {}
    names = {model_name(path) for path in args.models}
    for name in sorted(set(expected) - names):
        print(f"note: {name} is in the expected-failure list but not run")
    passed = failed = xfailed = 0  # runs (sizes); an XPASS counts one failure
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = pool.map(lambda path: run_model(path, args.work, args), args.models)
        for path, (kind, lines) in zip(args.models, results):
            counts_as_failure, lines = judge(model_name(path), kind, lines, expected)
            print("\n".join(lines), flush=True)
            ok = sum(line.startswith("PASS: ") for line in lines)
            passed += ok
            if kind is not None and not counts_as_failure:
                xfailed += len(SIZES) - ok
            else:
                failed += len(SIZES) - ok + (counts_as_failure and kind is None)
    summary = f"real-exports: {passed} passed, {failed} failed"
    if args.xfail:
        summary += f", {xfailed} expected to fail"
    print(summary)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
