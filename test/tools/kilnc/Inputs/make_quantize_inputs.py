#!/usr/bin/env python3
# Writes the models and calibration samples of quantize.test (deterministic).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: make_quantize_inputs.py OUT

OUT/classifier.onnx: Conv(3->8, 3x3) Relu Conv(8->8, 3x3, stride 2) Relu
GlobalAveragePool Flatten Gemm(8->10, transB) Relu MatMul(10->5) + Add, batch
symbolic, opset 17, seeded weights; OUT/calib/s0..s7/x.npy its calibration
samples (batch 2); OUT/no_weights.onnx a model with nothing to quantize;
OUT/opset11.onnx the classifier at opset 11; OUT/calib_wrong/s0/y.npy a
sample that names no input of the model.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def classifier(opset):
    rng = np.random.default_rng(7)
    w = lambda *shape: (rng.standard_normal(shape) * 0.3).astype(np.float32)  # noqa: E731
    inits = [numpy_helper.from_array(w(8, 3, 3, 3), "w1"), numpy_helper.from_array(w(8), "b1"),
             numpy_helper.from_array(w(8, 8, 3, 3), "w2"), numpy_helper.from_array(w(8), "b2"),
             numpy_helper.from_array(w(10, 8), "w3"), numpy_helper.from_array(w(10), "b3"),
             numpy_helper.from_array(w(10, 5), "w4"), numpy_helper.from_array(w(5), "b4")]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], strides=[2, 2]),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("GlobalAveragePool", ["r2"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "w3", "b3"], ["g"], transB=1),
             helper.make_node("Relu", ["g"], ["r3"]),
             helper.make_node("MatMul", ["r3", "w4"], ["m"]),
             helper.make_node("Add", ["m", "b4"], ["logits"])]
    graph = helper.make_graph(
        nodes, "classifier", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 12, 12])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 5])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    onnx.save(classifier(17), os.path.join(out, "classifier.onnx"))
    onnx.save(classifier(11), os.path.join(out, "opset11.onnx"))
    rng = np.random.default_rng(3)
    for i in range(8):
        os.makedirs(os.path.join(out, "calib", f"s{i}"), exist_ok=True)
        np.save(os.path.join(out, "calib", f"s{i}", "x.npy"),
                rng.standard_normal((2, 3, 12, 12)).astype(np.float32))
    os.makedirs(os.path.join(out, "calib_wrong", "s0"), exist_ok=True)
    np.save(os.path.join(out, "calib_wrong", "s0", "y.npy"), np.zeros((2, 3, 12, 12), np.float32))
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 12, 12])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 12, 12])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, "no_weights.onnx"))


if __name__ == "__main__":
    main()
