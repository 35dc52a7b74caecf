# Fixtures of the kiln Python package's tests: small ONNX models, compiled once.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import kiln

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def tool(name):
    """A tool of the build this package comes from (KILN_BIN_DIR, set by ctest)."""
    path = os.path.join(os.environ.get("KILN_BIN_DIR", os.path.join(REPO, "build", "bin")), name)
    if not os.path.exists(path):
        pytest.skip(f"{name} not built at {path}")
    return path


def mlp_model(batch="batch"):
    """x [batch, 8] -> Gemm(8->16) + Relu -> Gemm(16->4): y [batch, 4], seeded weights."""
    rng = np.random.default_rng(7)
    w0 = numpy_helper.from_array(rng.standard_normal((8, 16)).astype(np.float32), "w0")
    b0 = numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), "b0")
    w1 = numpy_helper.from_array(rng.standard_normal((16, 4)).astype(np.float32), "w1")
    nodes = [helper.make_node("Gemm", ["x", "w0", "b0"], ["h"], name="fc0"),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("MatMul", ["r", "w1"], ["y"], name="fc1")]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 4])], [w0, b0, w1])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def two_input_model():
    """a [2, 3] f32, b [2, 3] f32 -> sum = a + b, product = a * b."""
    nodes = [helper.make_node("Add", ["a", "b"], ["sum"], name="add"),
             helper.make_node("Mul", ["a", "b"], ["product"], name="mul")]
    info = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [2, 3])  # noqa: E731
    graph = helper.make_graph(nodes, "two", [info("a"), info("b")],
                              [info("sum"), info("product")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def onnxruntime_outputs(model, inputs):
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    return session.run(None, inputs)


@pytest.fixture(scope="session")
def mlp_onnx():
    return mlp_model()


@pytest.fixture(scope="session")
def mlp(mlp_onnx):
    """The MLP compiled for this CPU, symbolic batch, two threads."""
    return kiln.compile(mlp_onnx, threads=2)


@pytest.fixture(scope="session")
def two_input():
    return kiln.compile(two_input_model(), threads=1)
