# Prints the --tolerance arguments the conformance harness gives kiln-run (tolerances.test).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: tolerances.py DIR -> writes DIR/mixed/model.onnx (outputs y: f32, h: f16,
b: bf16) and prints the arguments for it as a case of several ops."""

import os
import sys

import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "scripts"))
import conformance_run  # noqa: E402


def main():
    case = os.path.join(sys.argv[1], "mixed")
    os.makedirs(case, exist_ok=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    outs = [helper.make_tensor_value_info(n, t, [4]) for n, t in
            (("y", TensorProto.FLOAT), ("h", TensorProto.FLOAT16), ("b", TensorProto.BFLOAT16))]
    nodes = [helper.make_node("Identity", ["x"], ["y"]),
             helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16),
             helper.make_node("Cast", ["x"], ["b"], to=TensorProto.BFLOAT16)]
    onnx.save(helper.make_model(helper.make_graph(nodes, "mixed", [x], outs)),
              os.path.join(case, "model.onnx"))
    for op in ("Add", "Cast", "Identity"):
        print(op + ": " + " ".join(conformance_run.tolerance_args(op, case)))


if __name__ == "__main__":
    main()
