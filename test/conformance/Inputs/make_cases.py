# Writes tiny ONNX node-test-style cases (Identity models) for the conformance harness self-test.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: make_cases.py DIR NAME...  -> DIR/NAME/model.onnx, DIR/NAME/test_data_set_0/*.pb"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out, names = sys.argv[1], sys.argv[2:]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for name in names:
        graph = helper.make_graph(
            [helper.make_node("Identity", ["x"], ["y"])], name,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
        data = os.path.join(out, name, "test_data_set_0")
        os.makedirs(data, exist_ok=True)
        onnx.save(model, os.path.join(out, name, "model.onnx"))
        for kind in ("input", "output"):
            with open(os.path.join(data, f"{kind}_0.pb"), "wb") as f:
                f.write(numpy_helper.from_array(x, "x" if kind == "input" else "y").SerializeToString())


if __name__ == "__main__":
    main()
