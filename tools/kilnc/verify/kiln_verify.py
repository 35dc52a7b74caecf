# kilnc verify: runs a model on Kiln and onnxruntime, bisects a mismatch to its first wrong node.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: kilnc verify MODEL.onnx|DIR [--target cpu|cuda] [--precision P] [--input NAME=FILE.npy]...
                    [--rtol R] [--atol A] [--reproducer DIR] [--force] [--kilnc-arg ARG]...

Started by `kilnc verify` (which adds --kilnc and --kiln-run); docs/verify.md is
the manual. Exit code 0 when every output agrees, 1 otherwise (a mismatch, a
Kiln failure, no reference, a refused reproducer directory, a bad argument).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
# Installed, compare_outputs.py sits beside this file; in the source tree, in scripts/.
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "..", "scripts")]
import graph_edit  # noqa: E402
from compare_outputs import mismatch  # noqa: E402

TOOL_TIMEOUT = 600


class VerifyError(Exception):
    """A problem the report states as `error: ...` (exit 1)."""


class Runner:
    """Runs models on both sides and counts the runs (the bisection's cost)."""

    def __init__(self, args, work):
        self.kilnc, self.kiln_run = args.kilnc, args.kiln_run
        self.kilnc_args = [f"--target={args.target}"] + list(args.kilnc_arg)
        if args.precision:
            self.kilnc_args.append(f"--precision={args.precision}")
        self.device = "cuda" if args.target == "cuda" else "cpu"
        self.threads = args.threads
        self.work = work
        self.ort_runs = 0
        self.kiln_runs = 0
        self.serial = 0

    def scratch(self, tag):
        self.serial += 1
        path = os.path.join(self.work, f"{self.serial:03d}-{tag}")
        os.makedirs(path)
        return path

    def reference(self, model, feeds):
        """onnxruntime's outputs (CPU, graph optimizations off) by output name."""
        import onnxruntime as ort

        self.ort_runs += 1
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        options.log_severity_level = 3
        session = ort.InferenceSession(model.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        return dict(zip(names, session.run(names, feeds)))

    def kiln(self, model, feeds, tag):
        """(outputs by name, None) or (None, Kiln's error text): one compile, one run."""
        self.kiln_runs += 1
        directory = self.scratch(tag)
        model_path = os.path.join(directory, "model.onnx")
        onnx.save(model, model_path)
        artifact = os.path.join(directory, "model.so")
        rc, text = run_tool([self.kilnc, model_path, "-o", artifact] + self.kilnc_args)
        if rc != 0:
            return None, f"kilnc failed (exit {rc}): {last_lines(text)}"
        command = [self.kiln_run, artifact, "--device", self.device,
                   "--output-dir", os.path.join(directory, "out")]
        if self.threads:
            command += ["--threads", str(self.threads)]
        # A prefix drops the inputs only later nodes read; kiln-run refuses extras.
        inputs = set(graph_edit.graph_input_names(model))
        for name, value in ((n, v) for n, v in feeds.items() if n in inputs):
            path = os.path.join(directory, f"input{len(command)}.npy")
            np.save(path, value)
            command += ["--input", f"{name}={path}"]
        rc, text = run_tool(command)
        if rc != 0:
            return None, f"kiln-run failed (exit {rc}): {last_lines(text)}"
        outputs = {}
        for output in model.graph.output:
            path = os.path.join(directory, "out", output_file_name(output.name))
            outputs[output.name] = np.load(path)
        return outputs, None

    def fusion_report(self, model):
        """node name -> the dispatch that computed it (`kilnc --report=fusion`)."""
        directory = self.scratch("fusion")
        path = os.path.join(directory, "model.onnx")
        onnx.save(model, path)
        rc, text = run_tool([self.kilnc, path, "--emit=dispatch", "--report=fusion",
                             "--report-format=json", "-o", os.devnull] + self.kilnc_args,
                            stderr_only=True)
        if rc != 0:
            return {}
        try:
            report = json.loads(text[text.index("{"):])
        except ValueError:
            return {}
        where = {}
        for index, dispatch in enumerate(report.get("dispatches", [])):
            fused = " + ".join(f["op"] for f in dispatch.get("fused", []))
            text = f"#{index} {dispatch['kind']}: {dispatch['op']}" + (
                f" + {fused}" if fused else "")
            for node in dispatch.get("nodes", []):
                where[node] = text
        return where


def run_tool(command, stderr_only=False):
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TOOL_TIMEOUT)
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {TOOL_TIMEOUT} s"
    return done.returncode, done.stderr if stderr_only else done.stdout + done.stderr


def last_lines(text, count=3):
    """The `error:` lines of a tool's output (without IR dumps), else its last lines."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    errors = [line for line in lines if "error:" in line]
    return " | ".join(errors[:count] if errors else lines[-count:])


def output_file_name(name):
    """kiln-run's file name for an output (tools/kiln-run/Outputs.cpp)."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name) + ".npy"


# --- Comparison --------------------------------------------------------------


def error_stats(got, want):
    """Max absolute and relative error, and the reference's scale."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype.kind == "V" or want.dtype.kind == "V":
        return {}
    g, w = got.astype(np.float64), want.astype(np.float64)
    diff = np.abs(g - w)
    diff = np.where(np.isnan(g) & np.isnan(w), 0.0, diff)
    scale = float(np.nanmax(np.abs(w))) if w.size else 0.0
    worst = float(np.nanmax(diff)) if diff.size else 0.0
    if diff.size and np.isnan(diff).any():
        worst = float("nan")
    relative = worst / scale if scale else worst
    return {"max_abs_error": worst, "max_rel_error": relative, "max_abs_reference": scale}


def compare(got, want, rtol, atol, intermediate=False):
    """None when they agree, else why not. Intermediate values may be large where
    the model's outputs are not: their atol grows to rtol/100 of their scale."""
    want = np.asarray(want)
    if intermediate and want.dtype.kind == "f" and want.size:
        scale = float(np.nanmax(np.abs(np.where(np.isfinite(want), want, 0))))
        atol = max(atol, rtol * 1e-2 * scale)
    return mismatch(got, want, rtol, atol)


def compare_all(got, want, names, rtol, atol, intermediate=False):
    """{name: reason} for every name whose values differ."""
    bad = {}
    for name in names:
        reason = compare(got[name], want[name], rtol, atol, intermediate)
        if reason:
            bad[name] = reason
    return bad


# --- Inputs ------------------------------------------------------------------

NUMPY_OF = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.DOUBLE: np.float64,
            onnx.TensorProto.FLOAT16: np.float16, onnx.TensorProto.INT64: np.int64,
            onnx.TensorProto.INT32: np.int32, onnx.TensorProto.INT16: np.int16,
            onnx.TensorProto.INT8: np.int8, onnx.TensorProto.UINT16: np.uint16,
            onnx.TensorProto.UINT32: np.uint32, onnx.TensorProto.UINT64: np.uint64,
            onnx.TensorProto.UINT8: np.uint8, onnx.TensorProto.BOOL: np.bool_}


def make_inputs(model, given, seed):
    """Every graph input: the --input file, else seeded values (floats in [-1, 1],
    integers in [0, 3) so that they are valid indices of most axes; symbolic dims 1)."""
    rng = np.random.default_rng(seed)
    feeds = {}
    initializers = {t.name for t in model.graph.initializer}
    for info in model.graph.input:
        if info.name in initializers:
            continue
        if info.name in given:
            feeds[info.name] = np.load(given[info.name])
            continue
        tensor = info.type.tensor_type
        dtype = NUMPY_OF.get(tensor.elem_type)
        if dtype is None:
            raise VerifyError(f"input '{info.name}' has element type "
                              f"{graph_edit.elem_type_name(info.type)}; give it with "
                              f"--input {info.name}=FILE.npy")
        shape = [d.dim_value if d.HasField("dim_value") else 1 for d in tensor.shape.dim]
        if np.dtype(dtype).kind == "f":
            feeds[info.name] = rng.uniform(-1, 1, shape).astype(dtype)
        elif dtype is np.bool_:
            feeds[info.name] = rng.integers(0, 2, shape).astype(np.bool_)
        else:
            feeds[info.name] = rng.integers(0, 3, shape).astype(dtype)
    unknown = set(given) - set(feeds)
    if unknown:
        raise VerifyError(f"--input names '{sorted(unknown)[0]}', which is not a graph input "
                          f"(inputs: {', '.join(graph_edit.graph_input_names(model))})")
    return feeds


# --- Checking and bisection ---------------------------------------------------


def check(runner, model, feeds, rtol, atol, tag="model"):
    """{'status': 'agree'|'mismatch'|'kiln-error'|'no-reference', ...} for one model."""
    try:
        want = runner.reference(model, feeds)
        reference_error = None
    except Exception as error:  # onnxruntime raises its own exception types
        want, reference_error = None, str(error).strip().splitlines()[0][:400]
    got, kiln_error = runner.kiln(model, feeds, tag)
    result = {"reference": want, "got": got}
    if kiln_error:
        result.update(status="kiln-error", error=kiln_error, reference_error=reference_error)
        return result
    if reference_error:
        result.update(status="no-reference", reference_error=reference_error)
        return result
    names = [o.name for o in model.graph.output]
    bad = compare_all(got, want, names, rtol, atol)
    result.update(status="mismatch" if bad else "agree", bad=bad)
    return result


def bisect(runner, model, feeds, rtol, atol, log):
    """The first node (topological order) whose value diverges, or the last node of
    the shortest prefix Kiln cannot compile or run: (node index, {value: reason}
    (`(kiln)`: Kiln's error), reference values, Kiln values, types), or None when no
    prefix of the graph shows the problem (it needs the full graph's fusion)."""
    types = graph_edit.inferred_types(model)
    values = graph_edit.node_values(model, types)
    names = [name for _, name in values]
    reference = runner.reference(graph_edit.with_outputs(model, names, types), feeds)
    producer = dict((name, index) for index, name in values)
    low, high = -1, len(model.graph.node) - 1  # prefix `low` agrees; first wrong <= high
    found = None

    def probe(last):
        exposed = [name for index, name in values if index <= last]
        got, error = runner.kiln(graph_edit.prefix(model, last, exposed, types), feeds,
                                 f"prefix-{last}")
        if error:
            # A prefix Kiln cannot compile or run fails too: its last node is suspect.
            log(f"  nodes 0..{last}: Kiln fails: {error[:160]}")
            return last, {"(kiln)": error}, {}
        bad = compare_all(got, reference, exposed, rtol, atol, intermediate=True)
        log(f"  nodes 0..{last}: {len(bad)} of {len(exposed)} values differ")
        if not bad:
            return None
        first = min(producer[name] for name in bad)
        return first, {n: r for n, r in bad.items() if producer[n] == first}, got

    while high - low > 1:
        middle = (low + high + 1) // 2
        result = probe(middle)
        if result:
            found = result
            high = found[0]
            low = min(low, high - 1)
        else:
            low = middle
    if found is None:
        # Every shorter prefix agreed; the whole graph with its values exposed decides.
        found = probe(high)
        if found is None:
            return None
    first, bad, got = found
    # A reproducer's window may read graph inputs as well as node outputs.
    return first, bad, dict(feeds, **reference), got, types


# --- Reproducer ----------------------------------------------------------------


def write_model_dir(directory, model, feeds, reference=None):
    """DIR/model.onnx, DIR/inputs/*.npy (named in DIR/inputs.json), DIR/reference/*.npy;
    an existing DIR is replaced (the caller has checked --force)."""
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(os.path.join(directory, "inputs"), exist_ok=True)
    onnx.save(model, os.path.join(directory, "model.onnx"))
    for name, value in feeds.items():
        np.save(os.path.join(directory, "inputs", output_file_name(name)), value)
    if reference:
        os.makedirs(os.path.join(directory, "reference"), exist_ok=True)
        for name, value in reference.items():
            np.save(os.path.join(directory, "reference", output_file_name(name)), value)
    with open(os.path.join(directory, "inputs.json"), "w") as f:
        json.dump({name: output_file_name(name) for name in feeds}, f, indent=1)


def smallest_failing_window(runner, model, first, reference, types, rtol, atol, log):
    """The smallest window of nodes ending at `first` that fails on its own:
    the node alone, then 2, 4, ... nodes, then the whole prefix."""
    outputs = [n for n in model.graph.node[first].output if n and n in types]
    size = 1
    while True:
        start = max(0, first - size + 1)
        window, feeds = graph_edit.window(model, start, first, reference, outputs, types)
        result = check(runner, window, feeds, rtol, atol, tag=f"window-{start}-{first}")
        log(f"  reproducer candidate nodes {start}..{first}: {result['status']}")
        if result["status"] in ("mismatch", "kiln-error"):
            return window, feeds, result
        if start == 0:
            return None
        size *= 2


# --- Command line ------------------------------------------------------------------


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="kilnc verify", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="model.onnx, or a reproducer directory (model.onnx, "
                        "inputs/*.npy, inputs.json)")
    parser.add_argument("--kilnc", required=True, help=argparse.SUPPRESS)
    parser.add_argument("--kiln-run", required=True, help=argparse.SUPPRESS)
    parser.add_argument("--target", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--precision", help="kilnc --precision (cuda)")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    parser.add_argument("--seed", type=int, default=1, help="seed of generated inputs")
    parser.add_argument("--rtol", type=float, default=1e-3)
    parser.add_argument("--atol", type=float, default=1e-5)
    parser.add_argument("--threads", type=int, default=0, help="kiln-run --threads")
    parser.add_argument("--kilnc-arg", action="append", default=[], metavar="ARG",
                        help="extra kilnc argument (repeatable)")
    parser.add_argument("--reproducer", help="where to write the reproducer "
                        "(default: MODEL-reproducer beside the model)")
    parser.add_argument("--force", action="store_true",
                        help="overwrite an existing reproducer directory")
    parser.add_argument("--no-bisect", action="store_true",
                        help="compare the model's outputs only")
    parser.add_argument("--json", help="also write the report as JSON to this file")
    parser.add_argument("--work", help="keep the intermediate models here (default: a "
                        "temporary directory, removed)")
    return parser.parse_args(argv)


def load_model_and_inputs(args):
    given = {}
    path = args.model
    if os.path.isdir(path):
        directory = path
        path = os.path.join(directory, "model.onnx")
        listing = os.path.join(directory, "inputs.json")
        if os.path.exists(listing):
            with open(listing) as f:
                for name, file in json.load(f).items():
                    given[name] = os.path.join(directory, "inputs", file)
    for spec in args.input:
        name, equals, file = spec.partition("=")
        if not equals:
            raise VerifyError(f"--input '{spec}': expected NAME=FILE.npy")
        given[name] = file
    try:
        model = onnx.load(path)
    except Exception as error:
        raise VerifyError(f"cannot read '{path}': {error}")
    return path, graph_edit.name_nodes(model), given


def main(argv):
    args = parse_args(argv)
    started = time.monotonic()
    report = {}
    work = args.work or tempfile.mkdtemp(prefix="kiln-verify-")
    os.makedirs(work, exist_ok=True)
    try:
        code = verify(args, work, report, started)
    except VerifyError as error:
        print(f"error: {error}", flush=True)
        report.setdefault("status", "error")
        report["error"] = str(error)
        code = 1
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1, default=str)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return code


def reproducer_dir(args, path):
    directory = args.reproducer or os.path.splitext(path)[0] + "-reproducer"
    if os.path.isdir(args.model) and not args.reproducer:
        directory = os.path.normpath(args.model) + "-reproducer"
    if os.path.exists(directory) and not args.force:
        raise VerifyError(f"reproducer directory '{directory}' exists; pass --force to "
                          "overwrite it or --reproducer DIR for another")
    return directory


def verify(args, work, report, started):
    path, model, given = load_model_and_inputs(args)
    directory = reproducer_dir(args, path)
    feeds = make_inputs(model, given, args.seed)
    runner = Runner(args, work)

    def log(line):
        print(line, flush=True)

    def finish(status):
        report.update(status=status, onnxruntime_runs=runner.ort_runs,
                      kiln_runs=runner.kiln_runs,
                      seconds=round(time.monotonic() - started, 2))
        log(f"runs: onnxruntime {runner.ort_runs}, kiln {runner.kiln_runs} "
            f"({report['seconds']:.1f} s)")

    log(f"verify: {path} ({len(model.graph.node)} nodes, target {args.target})")
    result = check(runner, model, feeds, args.rtol, args.atol)
    report.update(model=path, nodes=len(model.graph.node), target=args.target)
    if result.get("reference_error"):
        log(f"onnxruntime cannot run the model: {result['reference_error']}")
        report["reference_error"] = result["reference_error"]
    if result["status"] == "kiln-error":
        log(f"FAIL: Kiln: {result['error']}")
        report["kiln_error"] = result["error"]
        if args.no_bisect or result.get("reference_error"):
            finish("kiln-error")
            return 1
        log("bisecting over the topological order for the shortest prefix Kiln fails on:")
        return localize(args, runner, model, feeds, result, directory, report, log, finish,
                        "kiln-error")
    if result["status"] == "no-reference":
        names = ", ".join(result["got"])
        log(f"Kiln ran the model (outputs {names}); nothing to compare them with")
        finish("no-reference")
        return 1
    for output in model.graph.output:
        stats = error_stats(result["got"][output.name], result["reference"][output.name])
        bad = result["bad"].get(output.name)
        log(f"  output '{output.name}': {'MISMATCH: ' + bad if bad else 'ok'}"
            + (f" (max abs error {stats['max_abs_error']:.3g})" if stats else ""))
    if result["status"] == "agree":
        log(f"PASS: {len(model.graph.output)} outputs agree with onnxruntime "
            f"(rtol {args.rtol:g}, atol {args.atol:g})")
        finish("agree")
        return 0
    report["mismatched_outputs"] = result["bad"]
    if args.no_bisect:
        finish("mismatch")
        return 1
    log("bisecting over the topological order:")
    return localize(args, runner, model, feeds, result, directory, report, log, finish,
                    "mismatch")


def localize(args, runner, model, feeds, result, directory, report, log, finish, status):
    """Bisection, the report of the first wrong node, the reproducer; exit code 1."""
    found = bisect(runner, model, feeds, args.rtol, args.atol, log)
    if found is None:
        what = "outputs differ" if status == "mismatch" else "Kiln fails on the model"
        log(f"FAIL: {what}, but no prefix of the graph shows it when its values are "
            "outputs (the failure needs the full graph's fusion); reproducer: the model")
        write_model_dir(directory, model, feeds, result["reference"])
        report["reproducer"] = directory
        finish(status)
        return 1
    first, bad, reference, got, types = found
    node = model.graph.node[first]
    dispatch = runner.fusion_report(model).get(node.name, "(no dispatch: folded or a view)")
    what = "first diverging node" if status == "mismatch" else "first failing node"
    log(f"FAIL: {what} #{first} '{node.name}' ({node.op_type}); "
        f"dispatch {dispatch}")
    details = {}
    for name, reason in bad.items():
        if name == "(kiln)":
            log(f"  Kiln cannot compile or run nodes 0..{first}: {reason}")
            details[name] = {"reason": reason}
            continue
        stats = error_stats(got[name], reference[name])
        details[name] = dict(reason=reason, **stats)
        log(f"  value '{name}': {reason}")
        if stats:
            log(f"    max abs error {stats['max_abs_error']:.4g}, max rel error "
                f"{stats['max_rel_error']:.4g}, max |reference| {stats['max_abs_reference']:.4g}")
    report.update(first_node={"index": first, "name": node.name, "op": node.op_type,
                              "dispatch": dispatch, "values": details})
    smallest = smallest_failing_window(runner, model, first, reference, types,
                                       args.rtol, args.atol, log)
    if smallest is not None and len(smallest[0].graph.node) == len(model.graph.node):
        log("the model is its own smallest reproducer; nothing written")
        finish(status)
        return 1
    if smallest is None:
        log("no window ending at that node fails alone; reproducer: the model")
        write_model_dir(directory, model, feeds, result["reference"])
    else:
        window, window_feeds, window_result = smallest
        write_model_dir(directory, window, window_feeds, window_result["reference"])
        report["reproducer_nodes"] = len(window.graph.node)
    report["reproducer"] = directory
    command = f"kilnc verify {directory}" + "".join(
        f" --kilnc-arg={a}" for a in args.kilnc_arg) + (
        f" --target={args.target}" if args.target != "cpu" else "")
    log(f"reproducer: {directory} ({report.get('reproducer_nodes', len(model.graph.node))} "
        f"nodes); rerun: {command}")
    finish(status)
    return 1




if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
