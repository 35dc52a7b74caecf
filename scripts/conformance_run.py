# Compiles and runs one conformance case with kilnc and kiln-run, and classifies the result.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""One case: kilnc model.onnx -o model.so, then kiln-run --compare; one status.

Statuses:
  passed         compiled, ran, every output within its tolerance
  unsupported    kilnc exited 1 with the importer's explicit diagnostic that an op,
                 attribute or type is not supported (`... is not supported`,
                 `unsupported: ...`), or a value kiln-run's .npy files cannot hold
  compile_error  kilnc exited 1 with any other clean `error:`: a verifier or
                 legalization failure of an op Kiln claims to support
  wrong          compiled and ran, but an output differs (or kiln-run reported a clean
                 run-time error such as a shape the descriptor disagrees with)
  crashed        kilnc or kiln-run died of a signal, printed a stack dump, or exited
                 with a code other than 0/1
  timed_out      kilnc or kiln-run ran longer than its timeout
"""

import os
import re
import signal
import subprocess
import time

import conformance_cases

STATUSES = ("passed", "unsupported", "compile_error", "wrong", "crashed", "timed_out")
# The statuses an expected-failure list may gain entries of (with --allow-new-xfail):
# a wrong result or a crash is never expected.
LISTABLE = ("unsupported", "compile_error")
DEFAULT_RTOL, DEFAULT_ATOL = 1e-3, 1e-5
# Low-precision float outputs, each on its own (a case's f32 outputs keep the default):
# fp16: 1e-3 is one fp16 ulp; a chain of fp16 ops (the expanded attention cases)
# legitimately differs by a few ulps from the reference.
# bf16: four bf16 ulps (4 * 2^-7), for the same chains (the bf16 attention cases are
# within about 2 ulps of an exact f64 computation, and so is ONNX's own reference).
LOW_PRECISION_RTOL = {"FLOAT16": 4e-3, "BFLOAT16": 3.2e-2}
# Ops whose every output is an input element or its exact rounding (casts, copies,
# selections): no tolerance for any dtype.
EXACT_OPS = frozenset((
    "Cast", "CastLike", "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose",
    "Concat", "Split", "Slice", "Gather", "GatherElements", "GatherND", "ScatterElements",
    "ScatterND", "Expand", "Tile", "Pad", "DepthToSpace", "SpaceToDepth", "ReverseSequence",
    "Trilu", "Where", "Max", "Min", "Relu", "Neg", "Abs", "MaxPool", "TopK", "ReduceMax",
    "ReduceMin"))
# The importer's explicit "not supported" diagnostics; an MLIR op's own diagnostic
# ('kiln.max_pool' op operand #0 must be ...) or a failed legalization is not one,
# even when its text says "unsupported".
UNSUPPORTED_DIAGNOSTIC = re.compile(r"\b(not supported|unsupported)\b")
OP_DIAGNOSTIC = re.compile(r"'[a-z_]+\.[a-z_.]+' op |failed to legalize")

# Per-op tolerances, (rtol, atol, why), where the default is too strict for a correct
# fp32 implementation; docs/conformance.md lists them.
OP_TOLERANCES = {
}

CRASH_MARKERS = ("Stack dump", "PLEASE submit a bug report", "Assertion", "Segmentation fault",
                 "terminate called", "AddressSanitizer", "UndefinedBehaviorSanitizer")


def run_tool(args, timeout):
    """(returncode or None on timeout, combined output, seconds).

    The tool runs in its own process group, so that on a timeout its children (a
    linker, a shell's sleep) die with it and do not hold the output pipe open.
    """
    start = time.monotonic()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, errors="replace", start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        return proc.returncode, out, time.monotonic() - start
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return None, out, time.monotonic() - start


def classify_failure(tool, rc, output, timeout):
    """Status and reason for a tool that did not exit 0, or None if it is a clean exit 1."""
    if rc is None:
        return "timed_out", f"{tool}: no result after {timeout} s"
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        return "crashed", f"{tool}: killed by {name} in {crash_site(output)}"
    if rc != 1:
        return "crashed", f"{tool}: exit code {rc}: {first_error(output)}"
    if any(marker in output for marker in CRASH_MARKERS):
        error = re.search(r"\berror: (.*)", output)
        return "crashed", (f"{tool}: stack dump in {crash_site(output)}"
                           + (f" after error: {error.group(1).strip()}" if error else ""))
    return None


def crash_site(output):
    """The first stack frame in Kiln's own code, else the first after the signal handlers."""
    frames = [line.strip() for line in output.splitlines() if re.match(r"\s*#\d+ 0x", line)]
    for frame in frames:
        if "kiln::" in frame or "Kiln" in frame:
            return re.sub(r"^#\d+ 0x[0-9a-f]+ ", "", frame)[:200]
    rest = [f for f in frames if "PrintStackTrace" not in f and "SignalHandler" not in f
            and "libc.so" not in f and not re.search(r"0x[0-9a-f]+ \(/", f)]
    return re.sub(r"^#\d+ 0x[0-9a-f]+ ", "", rest[0])[:200] if rest else "(no stack trace)"


def first_error(output):
    """The first `error:` line (without its file:line:col prefix), with its first note."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        match = re.search(r"\berror: (.*)", line)
        if match:
            message = match.group(1).strip()
            notes = [re.sub(r"^.*?\bnote: ", "", n).strip() for n in lines[i + 1:i + 3]
                     if "note:" in n]
            if notes and re.search(r"not supported|unsupported", message):
                message += " | " + notes[0]
            return message
    text = [line for line in lines if line.strip()]
    return text[-1].strip() if text else "(no output)"


def compile_failure_status(message):
    """The status of a clean kilnc exit 1 with this first error."""
    if UNSUPPORTED_DIAGNOSTIC.search(message) and not OP_DIAGNOSTIC.search(message):
        return "unsupported"
    return "compile_error"


def tally_status(result):
    """The status a tally counts. A pass with constant-bound inputs is counted apart, and a
    pass with every input bound is a constant-folding test, not a pass."""
    if result["status"] == "passed" and result.get("constant_inputs"):
        return "constant_folded" if result.get("all_inputs_bound") else "passed_constant_bound"
    return result["status"]


def tolerances(op, elem_type=None):
    """(rtol, atol) for one output of a case of `op` whose ONNX element type is elem_type."""
    if op in EXACT_OPS:
        return 0.0, 0.0
    rtol, atol = OP_TOLERANCES.get(op, (DEFAULT_RTOL, DEFAULT_ATOL, ""))[:2]
    return max(rtol, LOW_PRECISION_RTOL.get(elem_type, 0.0)), atol


def tolerance_args(op, case_dir):
    """kiln-run --tolerance arguments: each output its own tolerance, its op's, loosened
    only for its own low-precision type (a case's f32 outputs keep the default)."""
    args = []
    for output_name, elem_type in conformance_cases.output_types(case_dir).items():
        rtol, atol = tolerances(op, elem_type)
        args += ["--tolerance", f"{output_name}={rtol!r},{atol!r}"]
    return args


def run_case(name, op, case_dir, work_dir, tools, timeout, threads, constant_inputs=()):
    """Returns a dict: name, op, status, reason, seconds. A case with constant_inputs (the
    graph inputs to bind as initializers) runs with run-time inputs first; only if that
    fails does it run bound, and then the dict also holds constant_inputs, unbound (the
    unbound run's status and reason) and all_inputs_bound."""
    result = run_once(name, op, case_dir, work_dir, tools, timeout, threads)
    if not constant_inputs or result["status"] == "passed":
        return result  # a listed case that passes unbound is a plain pass (a stale entry)
    bound = run_once(name, op, case_dir, os.path.join(work_dir, "bound"), tools, timeout,
                     threads, constant_inputs)
    bound["seconds"] = round(bound["seconds"] + result["seconds"], 3)
    bound.update(constant_inputs=list(constant_inputs),
                 unbound={"status": result["status"], "reason": result["reason"]},
                 all_inputs_bound=set(constant_inputs) >= set(
                     conformance_cases.graph_input_names(case_dir)))
    return bound


def run_once(name, op, case_dir, work_dir, tools, timeout, threads, constant_inputs=()):
    """One compile and run, with `constant_inputs` bound; a dict: name, op, status, reason,
    seconds."""
    start = time.monotonic()
    os.makedirs(work_dir, exist_ok=True)
    result = {"name": name, "op": op}

    def done(status, reason=""):
        result.update(status=status, reason=reason,
                      seconds=round(time.monotonic() - start, 3))
        return result

    model = os.path.join(case_dir, "model.onnx")
    if constant_inputs:
        model = conformance_cases.bind_constant_inputs(case_dir, work_dir, constant_inputs)
    artifact = os.path.join(work_dir, "model.so")
    rc, output, _ = run_tool([tools["kilnc"], model, "-o", artifact], timeout)
    if rc != 0:
        failure = classify_failure("kilnc", rc, output, timeout)
        if failure:
            return done(*failure)
        message = first_error(output)
        return done(compile_failure_status(message), message)
    try:
        inputs, expected = conformance_cases.convert_data(case_dir, work_dir, constant_inputs)
    except ValueError as e:
        return done("unsupported", f"harness: {e}")
    args = [tools["kiln_run"], artifact, "--compare", expected, "--threads", str(threads)]
    args += tolerance_args(op, case_dir)
    for input_name, path in inputs:
        args += ["--input", f"{input_name}={path}"]
    rc, output, _ = run_tool(args, timeout)
    if rc == 0:
        return done("passed")
    failure = classify_failure("kiln-run", rc, output, timeout)
    if failure:
        return done(*failure)
    mismatches = [line.strip() for line in output.splitlines()
                  if line.startswith("compare ") and not line.rstrip().endswith(" ok")]
    if mismatches:
        return done("wrong", "; ".join(mismatches[:3]))
    return done("wrong", "kiln-run: " + first_error(output))
