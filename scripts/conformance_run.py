# Compiles and runs one conformance case with kilnc and kiln-run, and classifies the result.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""One case: kilnc model.onnx -o model.so, then kiln-run --compare; one status.

Statuses:
  passed       compiled, ran, every output within tolerance
  unsupported  kilnc exited 1 with a clean `error:` (unsupported op or attribute,
               failed to legalize, ...), or a value kiln-run's .npy files cannot hold
  wrong        compiled and ran, but an output differs (or kiln-run reported a clean
               run-time error such as a shape the descriptor disagrees with)
  crashed      kilnc or kiln-run died of a signal, printed a stack dump, or exited
               with a code other than 0/1
  timed_out    kilnc or kiln-run ran longer than its timeout
"""

import os
import re
import signal
import subprocess
import time

import conformance_cases

STATUSES = ("passed", "unsupported", "wrong", "crashed", "timed_out")
DEFAULT_RTOL, DEFAULT_ATOL = 1e-3, 1e-5
# fp16 outputs: 1e-3 is one fp16 ulp; a chain of fp16 ops (the expanded
# attention cases) legitimately differs by a few ulps from the reference.
FP16_RTOL = 4e-3
# bf16 outputs, the same rule: four bf16 ulps (4 * 2^-7), for the same chains (the
# bf16 attention cases are within about 2 ulps of an exact f64 computation, and so is
# ONNX's own reference).
BF16_RTOL = 3.2e-2

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


def has_fp16_output(expected_dir):
    """Whether any expected output (.npy) holds float16 values."""
    import numpy as np
    for entry in os.listdir(expected_dir):
        if entry.endswith(".npy") and np.load(os.path.join(expected_dir, entry),
                                               mmap_mode="r").dtype == np.float16:
            return True
    return False


def tally_status(result):
    """The status a tally counts: a pass with constant-bound inputs is counted apart."""
    if result["status"] == "passed" and result.get("constant_inputs"):
        return "passed_constant_bound"
    return result["status"]


def tolerances(op):
    return OP_TOLERANCES.get(op, (DEFAULT_RTOL, DEFAULT_ATOL, ""))[:2]


def run_case(name, op, case_dir, work_dir, tools, timeout, threads, constant_inputs=()):
    """Returns a dict: name, op, status, reason, seconds (and constant_inputs, the graph
    inputs bound as initializers before compiling, when there are any)."""
    start = time.monotonic()
    os.makedirs(work_dir, exist_ok=True)
    result = {"name": name, "op": op}
    if constant_inputs:
        result["constant_inputs"] = list(constant_inputs)

    def done(status, reason=""):
        result.update(status=status, reason=reason,
                      seconds=round(time.monotonic() - start, 3))
        return result

    model = os.path.join(case_dir, "model.onnx")
    if constant_inputs:
        try:
            model = conformance_cases.bind_constant_inputs(case_dir, work_dir, constant_inputs)
        except ValueError as e:
            return done("unsupported", f"harness: {e}")
    artifact = os.path.join(work_dir, "model.so")
    rc, output, _ = run_tool([tools["kilnc"], model, "-o", artifact], timeout)
    if rc != 0:
        failure = classify_failure("kilnc", rc, output, timeout)
        return done(*(failure or ("unsupported", first_error(output))))
    try:
        inputs, expected = conformance_cases.convert_data(case_dir, work_dir, constant_inputs)
    except ValueError as e:
        return done("unsupported", f"harness: {e}")
    rtol, atol = tolerances(op)
    if has_fp16_output(expected):
        rtol = max(rtol, FP16_RTOL)
    if conformance_cases.has_output_type(case_dir, "BFLOAT16"):
        rtol = max(rtol, BF16_RTOL)
    args = [tools["kiln_run"], artifact, "--compare", expected, "--threads", str(threads),
            "--rtol", repr(rtol), "--atol", repr(atol)]
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
