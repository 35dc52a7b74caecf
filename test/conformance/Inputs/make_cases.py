# Writes tiny ONNX node-test-style cases (Identity models) for the conformance harness self-test.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: make_cases.py DIR NAME...  -> DIR/NAME/model.onnx, DIR/NAME/test_data_set_0/*.pb

y = Identity(x); a case whose name has "bound" in it is y = Reshape(x, shape) instead, with
`shape` a graph input that decides the output shape, to bind, and "bound_all" is
y = ConstantOfShape(shape), whose only input decides its shape."""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out, names = sys.argv[1], sys.argv[2:]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    shape = np.array([2, 3], np.int64)
    for name in names:
        inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])]
        values = [("x", x)]
        if "bound_all" in name:
            inputs, values = [], []
        if "bound" in name:
            inputs.append(helper.make_tensor_value_info("shape", TensorProto.INT64, [2]))
            values.append(("shape", shape))
        if "bound_all" in name:
            node = helper.make_node("ConstantOfShape", ["shape"], ["y"])
        elif "bound" in name:
            node = helper.make_node("Reshape", ["x", "shape"], ["y"])
        else:
            node = helper.make_node("Identity", ["x"], ["y"])
        graph = helper.make_graph(
            [node], name, inputs,
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
        data = os.path.join(out, name, "test_data_set_0")
        os.makedirs(data, exist_ok=True)
        onnx.save(model, os.path.join(out, name, "model.onnx"))
        for file, (tensor, value) in [(f"input_{i}.pb", v) for i, v in enumerate(values)] + \
                [("output_0.pb", ("y", 0 * x if "bound_all" in name else x))]:
            with open(os.path.join(data, file), "wb") as f:
                f.write(numpy_helper.from_array(value, tensor).SerializeToString())


if __name__ == "__main__":
    main()
