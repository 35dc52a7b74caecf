# Writes the models of verify.test: a 100-node graph, models one side cannot run.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: make_verify_models.py DIR

DIR/chain100.onnx: 100 nodes (elementwise ops, matmuls, a final
softmax) whose only Relus are nodes 'relu_a' (#61) and 'relu_b' (#80), so
a kilnc built with --kiln-debug-break-op=relu is first wrong at #61.
DIR/ort_rejects.onnx: a valid Max of int16 tensors, which onnxruntime has
no kernel for (NOT_IMPLEMENTED) and Kiln compiles. DIR/add.onnx: an Add
both sides agree on, and DIR/a.npy an input for it. DIR/ln_conv.onnx: the
2-node core of random graph 101311 (a LayerNormalization feeding a padded
Conv), which Kiln could not compile before the row kernels stepped over
the padding's fill (docs/verify.md). DIR/unsupported.onnx: a Relu then a
Unique, which onnxruntime runs and Kiln does not support.
DIR/two_inputs.onnx: Relu(a) + b, whose prefix of one node reads only a.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(26)


def chain100():
    nodes, inits = [], []
    cycle = ["Add", "Mul", "Tanh", "Sub", "Sin", "MatMul", "Neg", "Abs", "Div", "Cos"]
    current = "x"
    for index in range(100):
        name = f"n{index}"
        out = f"t{index}"
        if index == 61:
            name, op = "relu_a", "Relu"
        elif index == 80:
            name, op = "relu_b", "Relu"
        elif index == 99:
            op = "Softmax"
        else:
            op = cycle[index % len(cycle)]
        if op in ("Add", "Mul", "Sub", "Div"):
            c = f"c{index}"
            inits.append(numpy_helper.from_array(
                RNG.uniform(0.5, 1.0, (8,)).astype(np.float32), c))
            nodes.append(helper.make_node(op, [current, c], [out], name=name))
        elif op == "MatMul":
            w = f"w{index}"
            inits.append(numpy_helper.from_array(
                RNG.uniform(-0.35, 0.35, (8, 8)).astype(np.float32), w))
            nodes.append(helper.make_node(op, [current, w], [out], name=name))
        elif op == "Softmax":
            nodes.append(helper.make_node(op, [current], [out], name=name, axis=-1))
        else:
            nodes.append(helper.make_node(op, [current], [out], name=name))
        current = out
    graph = helper.make_graph(
        nodes, "chain100", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info(current, TensorProto.FLOAT, [4, 8])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 10
    return model


def single(op, dtype):
    graph = helper.make_graph(
        [helper.make_node(op, ["a", "b"], ["y"], name="only")], "single",
        [helper.make_tensor_value_info(n, dtype, [2, 3]) for n in ("a", "b")],
        [helper.make_tensor_value_info("y", dtype, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 10
    return model


def layer_norm_then_padded_conv():
    inits = [numpy_helper.from_array(np.ones(2, np.float32), "s"),
             numpy_helper.from_array(np.zeros(2, np.float32), "b"),
             numpy_helper.from_array(np.ones((1, 1, 1, 1), np.float32), "w")]
    nodes = [helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=-1),
             helper.make_node("Conv", ["y", "w"], ["z"], pads=[1, 1, 1, 1])]
    graph = helper.make_graph(
        nodes, "ln_conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 3, 2])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 1, 5, 4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 10
    return model


def relu_then_unique():
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Unique", ["r"], ["u"], name="unique", sorted=1)]
    graph = helper.make_graph(
        nodes, "unsupported", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])],
        [helper.make_tensor_value_info("u", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 10
    return model


def relu_plus_input():
    nodes = [helper.make_node("Relu", ["a"], ["r"], name="relu"),
             helper.make_node("Add", ["r", "b"], ["y"], name="add")]
    graph = helper.make_graph(
        nodes, "two_inputs",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in ("a", "b")],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 10
    return model


def main(out):
    os.makedirs(out, exist_ok=True)
    onnx.save(chain100(), os.path.join(out, "chain100.onnx"))
    onnx.save(single("Max", TensorProto.INT16), os.path.join(out, "ort_rejects.onnx"))
    onnx.save(single("Add", TensorProto.FLOAT), os.path.join(out, "add.onnx"))
    onnx.save(layer_norm_then_padded_conv(), os.path.join(out, "ln_conv.onnx"))
    onnx.save(relu_then_unique(), os.path.join(out, "unsupported.onnx"))
    onnx.save(relu_plus_input(), os.path.join(out, "two_inputs.onnx"))
    np.save(os.path.join(out, "a.npy"), np.arange(6, dtype=np.float32).reshape(2, 3))


if __name__ == "__main__":
    main(sys.argv[1])
