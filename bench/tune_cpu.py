# CPU matmul autotuner: builds candidate artifacts with kilnc, times them with kiln-run, writes a tuning database.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: bench/tune_cpu.py build MODEL DIR [--candidates K] [--build-budget-s S] [--kilnc-arg=ARG ...]
       bench/tune_cpu.py run DIR -o DB.jsonl [--budget-s S] [--threads N] [--runs N] [--round-s S]
       bench/tune_cpu.py tune MODEL -o DB.jsonl [options of both]

The builder/runner split of docs/tuning.md, for the CPU matmul family (GEMMs and the
convs that reach kiln-cpu-matmul):

build  compiles MODEL once with `kilnc --report=tuning --report-format=json` to learn
       its matmul signatures (keys) and, per key, the space ranked by the cost model;
       then K candidate artifacts DIR/candidate-I.so, candidate I compiled with a
       database that gives every key its I-th ranked configuration (candidate 0 is
       today's default). DIR/manifest.json lists the keys, their trace ids and the
       configuration of each key in each artifact.
run    runs candidate 0 once for reference outputs, then each candidate (until the
       budget is spent) with kiln-run --compare against them and --trace; a
       candidate that crashes, times out or mismatches is recorded invalid for all
       its keys. Each key's time in a candidate is the mean time of its dispatches
       (summed over the dispatches that share the key). Every measurement goes to
       DB.jsonl.log; DB.jsonl is `kiln-tune merge` of it: per key the fastest valid one.
tune   both, on this machine.

Shortcut (named in docs/tuning.md): one artifact per candidate rank, not one artifact
with every variant; a mismatch invalidates the whole candidate artifact.
"""

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tool(args, name):
    """--NAME, else next to --kilnc, else $KILN_BUILD_DIR/bin (default build/bin)."""
    explicit = getattr(args, name.replace("-", "_"), None)
    if explicit:
        return explicit
    if getattr(args, "kilnc", None):
        return os.path.join(os.path.dirname(args.kilnc), name)
    build = os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build"))
    return os.path.join(build, "bin", name)


def record(key, info, features, space, config, time_us, valid, note):
    return {"key": key, "signature": info["signature"], "target": "cpu", "features": features,
            "space": space, "config": config, "time_us": round(time_us, 3), "valid": valid,
            "note": note}


def build(args):
    os.makedirs(args.dir, exist_ok=True)
    kilnc = tool(args, "kilnc")
    base = [kilnc, args.model] + args.kilnc_arg
    report = subprocess.run(base + ["--emit=codegen", "--report=tuning", "--report-format=json",
                                    "-o", os.devnull], capture_output=True, text=True)
    if report.returncode != 0:
        sys.exit(f"tune_cpu.py: error: kilnc failed:\n{report.stderr}")
    tuning = json.loads(report.stderr[report.stderr.index("{"):])
    keys = {}
    for choice in tuning["choices"]:
        info = keys.setdefault(choice["key"], {"signature": choice["signature"], "trace_ids": [],
                                               "nodes": [], "candidates": choice["candidates"],
                                               "shape": [choice["m"], choice["n"], choice["k"]]})
        info["trace_ids"] += [t for t in choice["trace_ids"] if t not in info["trace_ids"]]
        info["nodes"].append(choice["nodes"])
    count = min(args.candidates, max((len(k["candidates"]) for k in keys.values()), default=0))
    artifacts = []
    start = time.monotonic()
    for index in range(count):
        if index > 0 and time.monotonic() - start > args.build_budget_s:
            print(f"build: budget of {args.build_budget_s:g} s spent after {index} candidates",
                  flush=True)
            break
        configs = {key: info["candidates"][min(index, len(info["candidates"]) - 1)]
                   for key, info in keys.items()}
        db = os.path.join(args.dir, f"candidate-{index}.jsonl")
        with open(db, "w") as f:
            for key, config in sorted(configs.items()):
                f.write(json.dumps(record(key, keys[key], tuning["features"], tuning["space"],
                                          config, 0.0, True, "forced"), sort_keys=True) + "\n")
        path = os.path.join(args.dir, f"candidate-{index}.so")
        extra = []
        if args.break_candidate == index:  # test only: a candidate with wrong results
            extra = ["--kiln-debug-break-op=" + args.break_op]
        result = subprocess.run(base + extra + ["--tuning-db=" + db, "-o", path],
                                capture_output=True, text=True)
        artifacts.append({"index": index, "path": path, "configs": configs,
                          "compile_error": result.stderr[-500:] if result.returncode else None})
        print(f"build: candidate {index + 1}/{count}"
              + (" failed to compile" if result.returncode else ""), flush=True)
    manifest = {"model": args.model, "features": tuning["features"], "space": tuning["space"],
                "keys": keys, "artifacts": artifacts}
    with open(os.path.join(args.dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def key_times(trace_path, keys, total_ms):
    """Median microseconds per run of each key's dispatches, from a kiln-run trace."""
    with open(trace_path) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "dispatch"]
    per_id = {}
    for e in events:
        per_id.setdefault(e["args"]["dispatch"], []).append(e["dur"])
    means = {i: median(d) for i, d in per_id.items()}
    times = {}
    for key, info in keys.items():
        if info["trace_ids"]:
            times[key] = sum(means.get(i, 0.0) for i in info["trace_ids"])
        elif len(keys) == 1:  # no model node names to map (an MLIR model): the whole run
            times[key] = total_ms * 1e3
    return times


def run(args):
    with open(os.path.join(args.dir, "manifest.json")) as f:
        manifest = json.load(f)
    keys, features, space = manifest["keys"], manifest["features"], manifest["space"]
    kiln_run = tool(args, "kiln-run")
    common = [f"--threads={args.threads}", f"--seed={args.seed}"]
    reference = os.path.join(args.dir, "reference")
    os.makedirs(reference, exist_ok=True)
    first = manifest["artifacts"][0]
    if first["compile_error"]:
        sys.exit("tune_cpu.py: error: the default candidate did not compile:\n"
                 + first["compile_error"])
    probe = time.monotonic()
    subprocess.run([kiln_run, first["path"], "--output-dir", reference] + common, check=True,
                   capture_output=True, timeout=args.timeout_s)
    runs = args.runs
    if args.round_s > 0:  # about round_s seconds per candidate and round, 3 runs at least
        runs = max(3, min(args.runs, int(args.round_s / max(time.monotonic() - probe, 1e-3))))
    start, best = time.monotonic(), {}
    # Per candidate: None while it runs fine, else why it is invalid; and per
    # key the best (lowest) of its per-round medians. Rounds interleave the
    # candidates, so load on a shared machine hits them alike.
    failed = {a["index"]: ("compile error" if a["compile_error"] else None)
              for a in manifest["artifacts"]}
    measured = {a["index"]: {} for a in manifest["artifacts"]}
    ran = set()
    for round_index in range(args.rounds):
        for artifact in manifest["artifacts"]:
            index = artifact["index"]
            if failed[index]:
                continue
            if time.monotonic() - start > args.budget_s:
                break
            ran.add(index)
            trace = os.path.join(args.dir, f"trace-{index}.json")
            command = [kiln_run, artifact["path"], "--compare", reference,
                       f"--rtol={args.rtol}", f"--atol={args.atol}",
                       f"--warmup={args.warmup}", f"--bench={runs}", "--trace", trace]
            try:
                result = subprocess.run(command + common, capture_output=True, text=True,
                                        timeout=args.timeout_s)
                if result.returncode != 0:
                    mismatch = "differ from the references" in result.stderr + result.stdout
                    failed[index] = "mismatch" if mismatch else f"crash (exit {result.returncode})"
                else:
                    mean = [l for l in result.stdout.splitlines() + result.stderr.splitlines()
                            if "mean" in l]
                    total_ms = float(mean[0].split("mean")[1].split()[0]) if mean else 0.0
                    for key, t in key_times(trace, keys, total_ms).items():
                        measured[index][key] = min(t, measured[index].get(key, t))
                        config = artifact["configs"][key]
                        if key not in best or t < best[key][1]:
                            best[key] = (config, t)
            except subprocess.TimeoutExpired:
                failed[index] = "timeout"
            summary = ", ".join(f"{k[:8]} {c} {t:.1f}us" for k, (c, t) in sorted(best.items()))
            print(f"run: round {round_index + 1}/{args.rounds} candidate {index + 1}/"
                  f"{len(manifest['artifacts'])} {failed[index] or 'ok'}; best so far: {summary}",
                  flush=True)
    if time.monotonic() - start > args.budget_s:
        print(f"run: budget of {args.budget_s:g} s spent")
    records = []
    for artifact in manifest["artifacts"]:
        index = artifact["index"]
        if index not in ran and not failed[index]:
            continue  # never measured: no record
        for key, config in sorted(artifact["configs"].items()):
            valid = not failed[index] and key in measured[index]
            records.append(record(key, keys[key], features, space, config,
                                  measured[index].get(key, 0.0), valid,
                                  failed[index] or f"candidate {index}"))
    log = args.output + ".log"
    with open(log, "w") as f:
        for r in records:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    subprocess.run([tool(args, "kiln-tune"), "merge", log, "-o", args.output], check=True)
    print(f"run: {len(records)} measurements in {log}; winners in {args.output}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("build", "run", "tune"):
        s = sub.add_parser(name)
        if name in ("build", "tune"):
            s.add_argument("model")
            s.add_argument("--candidates", type=int, default=8,
                           help="candidate artifacts (ranks of the cost model's order)")
            s.add_argument("--kilnc-arg", action="append", default=[])
            s.add_argument("--break-candidate", type=int, default=-1, help=argparse.SUPPRESS)
            s.add_argument("--break-op", default="relu", help=argparse.SUPPRESS)
            s.add_argument("--kilnc")
            s.add_argument("--build-budget-s", type=float, default=float("inf"),
                           help="compile no further candidate after this many seconds")
        if name in ("build", "run"):
            s.add_argument("dir")
        if name in ("run", "tune"):
            s.add_argument("-o", "--output", required=True)
            s.add_argument("--budget-s", type=float, default=600)
            s.add_argument("--threads", type=int, default=os.cpu_count())
            s.add_argument("--runs", type=int, default=20)
            s.add_argument("--rounds", type=int, default=3,
                           help="interleaved rounds over the candidates (best median kept)")
            s.add_argument("--warmup", type=int, default=3)
            s.add_argument("--round-s", type=float, default=0,
                           help="if > 0: timed runs per candidate and round from the "
                                "reference run's time, to take about this long (3 to --runs)")
            s.add_argument("--seed", type=int, default=1)
            s.add_argument("--rtol", type=float, default=1e-3)
            s.add_argument("--atol", type=float, default=1e-4)
            s.add_argument("--timeout-s", type=float, default=300)
            s.add_argument("--kiln-run")
            s.add_argument("--kiln-tune")
        if name == "tune":
            s.add_argument("--dir", help="where the candidates go (default: OUTPUT.d)")
    args = p.parse_args()
    if args.command == "tune":
        args.dir = args.dir or args.output + ".d"
    if args.command in ("build", "tune"):
        build(args)
    if args.command in ("run", "tune"):
        run(args)


if __name__ == "__main__":
    main()
