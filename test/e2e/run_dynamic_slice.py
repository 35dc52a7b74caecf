# ONNX Slice with bounds computed from a symbolic dim, through kilnc + kiln-run, against onnxruntime.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: run_dynamic_slice.py WORKDIR --kilnc PATH --kiln-run PATH

y = ReduceSum(x[:, start:len(d) + offset] ** 2, axis 1) for x [n, 9] and d [m]: the end
is computed at run time, and ONNX's clamping (negative bounds count from the end, bounds
beyond the dim clamp, empty when end <= start) must match onnxruntime for every m.
Prints one line per (bounds, m) that fails and a summary; exits 1 on any failure.
"""

import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from compare_outputs import mismatch  # noqa: E402

BOUNDS = [(1, 0), (-3, 0), (0, -2), (-100, 100), (2, -1), (5, -20)]
LENGTHS = (0, 4, 7, 12)


def model(start, offset):
    const = lambda name, v: numpy_helper.from_array(np.array([v], np.int64), name)  # noqa: E731
    nodes = [helper.make_node("Shape", ["d"], ["length"]),
             helper.make_node("Add", ["length", "offset"], ["end"]),
             helper.make_node("Slice", ["x", "start", "end", "axes"], ["z"]),
             helper.make_node("Mul", ["z", "z"], ["z2"]),
             helper.make_node("ReduceSum", ["z2", "axes"], ["y"], keepdims=1)]
    graph = helper.make_graph(
        nodes, "dynamic_slice",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 9]),
         helper.make_tensor_value_info("d", TensorProto.FLOAT, ["m"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 1])],
        [const("start", start), const("offset", offset), const("axes", 1)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("work")
    parser.add_argument("--kilnc", required=True)
    parser.add_argument("--kiln-run", required=True)
    args = parser.parse_args()
    rng = np.random.default_rng(5)
    runs = failed = 0
    for start, offset in BOUNDS:
        case = os.path.join(args.work, f"s{start}_o{offset}")
        os.makedirs(case, exist_ok=True)
        path = os.path.join(case, "model.onnx")
        onnx.save(model(start, offset), path)
        artifact = os.path.join(case, "model.so")
        built = subprocess.run([args.kilnc, path, "-o", artifact], capture_output=True, text=True)
        for length in LENGTHS:
            runs += 1
            if built.returncode:
                print(f"FAIL: start={start} offset={offset}: {built.stderr.strip()}")
                failed += 1
                continue
            x = rng.uniform(-1, 1, (2, 9)).astype(np.float32)
            d = np.zeros(length, np.float32)
            want = ort.InferenceSession(path).run(None, {"x": x, "d": d})[0]
            np.save(os.path.join(case, "x.npy"), x)
            np.save(os.path.join(case, "d.npy"), d)
            out = os.path.join(case, f"out{length}")
            run = subprocess.run([args.kiln_run, artifact, "--output-dir", out,
                                  "--input", f"x={os.path.join(case, 'x.npy')}",
                                  "--input", f"d={os.path.join(case, 'd.npy')}"],
                                 capture_output=True, text=True)
            if run.returncode:
                print(f"FAIL: start={start} offset={offset} m={length}: {run.stderr.strip()}")
                failed += 1
                continue
            got = np.load(os.path.join(out, "y.npy"))
            problem = mismatch(got, want, rtol=1e-5, atol=1e-6)
            if problem:
                print(f"FAIL: start={start} offset={offset} m={length}: {problem}: got "
                      f"{got.ravel()}, expected {want.ravel()}")
                failed += 1
    print(f"dynamic-slice: {runs - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
