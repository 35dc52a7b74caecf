# ONNX backend node tests through kilnc + kiln-run, with a tally and a strict expected-failure list.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: conformance.py --target=cpu [--json FILE] [--markdown FILE] [--filter REGEX]
                      [--jobs N] [--timeout S] [--work DIR]
                      [--update-xfail [--allow-new-xfail]]

Runs every ONNX backend node test case (see conformance_cases.py), classifies it
(see conformance_run.py) and prints one line per case that is not as expected and
a final tally. The expected failures of a target are listed in
test/conformance/<target>-xfail.txt as `case category`; the run fails (exit 1) if a
case fails that is not listed, fails in another category, passes although listed,
or if a listed case does not exist. --filter limits both the cases and the list.

--update-xfail only shrinks the list: it drops the entries of cases that pass or do
not exist. --allow-new-xfail also lets it add (or recategorize) entries, printing each,
but only for the categories unsupported and compile_error: a wrong, crashed or timed-out
case is never written into the list.

A case in the constant-inputs list runs with run-time inputs first and is bound only if
that fails; a listed case that passes unbound, or whose listed name is not one of its
graph inputs, is a problem too (shrink the list).
"""

import argparse
import concurrent.futures
import datetime
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conformance_cases  # noqa: E402
import conformance_report  # noqa: E402
import conformance_run  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    build = os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build"))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--target", choices=["cpu"], required=True,
                   help="code generation target (cuda: not yet)")
    p.add_argument("--json", help="write the tally and every case's result here")
    p.add_argument("--markdown", help="write the per-op table (docs/conformance.md) here")
    p.add_argument("--filter", help="run only cases whose name matches this regex (re.search)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--threads", type=int, default=2, help="kiln-run --threads per case")
    p.add_argument("--timeout", type=float, default=60, help="seconds per tool invocation")
    p.add_argument("--work", default=os.path.join(build, "conformance"),
                   help="scratch directory (cases are generated into WORK/node once)")
    p.add_argument("--node-dir", help="cases to run instead of ONNX's (DIR/<case>/model.onnx, "
                   "test_data_set_0/*.pb)")
    p.add_argument("--kilnc", default=os.path.join(build, "bin", "kilnc"))
    p.add_argument("--kiln-run", default=os.path.join(build, "bin", "kiln-run"))
    p.add_argument("--xfail", help="expected failures (default test/conformance/TARGET-xfail.txt)")
    p.add_argument("--constant-inputs",
                   help="cases whose listed graph inputs are bound to the case's values as "
                   "initializers before compiling (default test/conformance/constant-inputs.txt; "
                   "'none' for no binding); their passes are counted apart")
    p.add_argument("--update-xfail", action="store_true",
                   help="drop the expected-failure entries of cases that pass or do not exist")
    p.add_argument("--allow-new-xfail", action="store_true",
                   help="with --update-xfail: also add or recategorize entries (unsupported "
                   "and compile_error only), printing each")
    p.add_argument("-v", "--verbose", action="store_true", help="print every case")
    return p.parse_args()


def read_xfail(path):
    """{case: category} from lines `case category  # reason`."""
    expected = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.split()
            if len(fields) != 2 or fields[1] not in conformance_run.STATUSES[1:]:
                sys.exit(f"error: {path}:{number}: expected `case category` with category one of "
                         f"{', '.join(conformance_run.STATUSES[1:])}, got '{line}'")
            expected[fields[0]] = fields[1]
    return expected


def update_xfail(old, results, stale, allow_new):
    """The new {case: (category, reason or None)} and the lines saying what was added.

    Entries of selected cases that pass, and stale entries, are dropped. Without
    allow_new nothing is added or recategorized; with it, failures in a LISTABLE
    category are, and each is reported. Wrong, crashed and timed-out cases never are.
    """
    new = {name: (cat, None) for name, cat in old.items() if name not in stale}
    added = []
    for r in results:
        listed = old.get(r["name"])
        if r["status"] == "passed":
            new.pop(r["name"], None)
        elif listed != r["status"] and allow_new and r["status"] in conformance_run.LISTABLE:
            reason = re.sub(r"'/[^']*'", "'…'", r["reason"])[:160]
            new[r["name"]] = (r["status"], reason)
            added.append(f"ADDED TO THE LIST: {r['name']} {r['status']}"
                         + (f" (was {listed})" if listed else "") + f"  # {reason}")
    return new, added


def write_xfail(path, target, entries):
    """Writes {case: (category, reason or None)}; an entry without a new reason keeps its
    old line (and its comment) as it was."""
    lines = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                fields = line.split("#", 1)[0].split()
                if len(fields) == 2:
                    lines[fields[0]] = line.rstrip("\n")
    with open(path, "w") as f:
        f.write(f"# Expected failures of scripts/conformance --target={target}: `case category`.\n"
                "# Strict: a listed case that passes, or fails in another category, fails the run;"
                "\n# so does an unlisted failure. --update-xfail only shrinks this list; adding\n"
                "# needs --allow-new-xfail (unsupported and compile_error only, never wrong or\n"
                "# crashed).\n")
        for name, (category, reason) in sorted(entries.items()):
            if reason is None:
                f.write(lines.get(name, f"{name} {category}") + "\n")
            else:
                f.write(f"{name} {category}  # {reason}\n")


def check_expectations(results, expected, stale):
    """Lines describing every result that differs from the expected-failure list."""
    problems = []
    for r in results:
        want = expected.get(r["name"], "passed")
        if r["status"] == want:
            continue
        if want == "passed":
            problems.append(f"NEW FAILURE ({r['status']}): {r['name']} [{r['op']}]: {r['reason']}")
        elif r["status"] == "passed":
            problems.append(f"UNEXPECTED PASS: {r['name']} [{r['op']}] (listed as {want}; "
                            "remove it from the list)")
        else:
            problems.append(f"CHANGED ({want} -> {r['status']}): {r['name']} [{r['op']}]: "
                            f"{r['reason']}")
    for name in sorted(stale):
        problems.append(f"STALE ENTRY: {name} is listed but is not a test case")
    return problems


def check_constant_inputs(results, node_dir, constant_inputs):
    """Lines for each bound case that passes with run-time inputs, and each listed name
    that is not a graph input of its case or does not decide an output shape."""
    problems = []
    for r in results:
        names = constant_inputs.get(r["name"])
        if not names:
            continue
        graph_inputs = conformance_cases.graph_input_names(os.path.join(node_dir, r["name"]))
        for name in names:
            if name not in graph_inputs:
                problems.append(f"BAD CONSTANT INPUT: {r['name']}: '{name}' is not a graph "
                                "input of the case")
                continue
            why = conformance_cases.not_shape_deciding(os.path.join(node_dir, r["name"]), name)
            if why:
                problems.append(f"BAD CONSTANT INPUT: {r['name']}: {why}")
        if r["status"] == "passed" and "unbound" not in r:
            problems.append(f"BOUND BUT PASSES UNBOUND: {r['name']} passes with run-time "
                            "inputs (remove it from the constant-inputs list)")
    return problems


def git_hash():
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def valid_constant_inputs(node_dir, name, constant_inputs):
    """The listed constant inputs of a case that are graph inputs of it (the others are
    reported by check_constant_inputs)."""
    names = constant_inputs.get(name, ())
    if not names:
        return ()
    graph_inputs = conformance_cases.graph_input_names(os.path.join(node_dir, name))
    return tuple(n for n in names if n in graph_inputs)


def main():
    args = parse_args()
    for tool in (args.kilnc, args.kiln_run):
        if not os.access(tool, os.X_OK):
            sys.exit(f"error: '{tool}' is not an executable; build it first (scripts/build)")
    xfail_path = args.xfail or os.path.join(ROOT, "test", "conformance", f"{args.target}-xfail.txt")
    expected = read_xfail(xfail_path) if os.path.exists(xfail_path) else {}

    node_dir, source = args.node_dir, f"from {args.node_dir}"
    if node_dir is None:
        node_dir, source = conformance_cases.shipped_node_dir(), "shipped with onnx"
    if node_dir is None:
        node_dir = conformance_cases.generate_node_cases(os.path.join(args.work, "node"))
        source = "generated from onnx.backend.test.case.node"
    cases = conformance_cases.list_cases(node_dir)
    constant_path = args.constant_inputs or os.path.join(ROOT, "test", "conformance",
                                                         "constant-inputs.txt")
    try:
        constant_inputs = ({} if constant_path == "none"
                           else conformance_cases.read_constant_inputs(constant_path))
    except (OSError, ValueError) as e:
        sys.exit(f"error: {e}")
    pattern = re.compile(args.filter) if args.filter else None
    cases = [(name, op) for name, op in cases if not pattern or pattern.search(name)]
    selected = {name for name, _ in cases}
    # Listed cases that the filter selects but that do not exist.
    stale = {n for n in expected if (not pattern or pattern.search(n)) and n not in selected}
    stale_bound = {n for n in constant_inputs
                   if (not pattern or pattern.search(n)) and n not in selected}
    print(f"conformance {args.target}: {len(cases)} cases ({source}, "
          f"onnx {conformance_cases.onnx.__version__}), {args.jobs} jobs", flush=True)

    tools = {"kilnc": args.kilnc, "kiln_run": args.kiln_run}
    start = time.monotonic()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(conformance_run.run_case, name, op, os.path.join(node_dir, name),
                               os.path.join(args.work, args.target, name), tools,
                               args.timeout, args.threads,
                               valid_constant_inputs(node_dir, name, constant_inputs))
                   for name, op in cases]
        for future in futures:
            r = future.result()
            results.append(r)
            if args.verbose:
                line = f"{r['status']:<13} {r['name']} [{r['op']}] {r['reason']}"
                print(line.rstrip(), flush=True)
    seconds = time.monotonic() - start

    counted = ("passed", "passed_constant_bound", "constant_folded") + conformance_run.STATUSES[1:]
    tally = {s: sum(conformance_run.tally_status(r) == s for r in results) for s in counted}
    summary = {"target": args.target, "date": datetime.date.today().isoformat(),
               "kiln": git_hash(), "onnx": conformance_cases.onnx.__version__,
               "source": source, "filter": args.filter, "total": len(results), **tally,
               "seconds": round(seconds, 1), "cases": results}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(conformance_report.markdown(summary, conformance_run.OP_TOLERANCES,
                                                conformance_run.EXACT_OPS,
                                                conformance_run.LOW_PRECISION_RTOL))
    if args.allow_new_xfail and not args.update_xfail:
        sys.exit("error: --allow-new-xfail goes with --update-xfail")
    if args.update_xfail:
        entries, added = update_xfail(expected, results, stale, args.allow_new_xfail)
        write_xfail(xfail_path, args.target, entries)
        for line in added:
            print(line)
        expected, stale = read_xfail(xfail_path), set()

    problems = check_expectations(results, expected, stale)
    problems += check_constant_inputs(results, node_dir, constant_inputs)
    problems += [f"STALE CONSTANT INPUTS: {name} is listed in {constant_path} but is not a "
                 "test case" for name in sorted(stale_bound)]
    for line in problems:
        print(line)
    rate = 100.0 * tally["passed"] / max(1, len(results))
    print(f"conformance {args.target}: total {len(results)}, passed {tally['passed']} "
          f"({rate:.1f}%); passed only with constant-bound inputs "
          f"{tally['passed_constant_bound']}, constant-folded {tally['constant_folded']}; "
          f"unsupported {tally['unsupported']}, compile_error {tally['compile_error']}, "
          f"wrong {tally['wrong']}, crashed {tally['crashed']}, "
          f"timed_out {tally['timed_out']}; {len(problems)} unexpected; {seconds:.0f} s")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
