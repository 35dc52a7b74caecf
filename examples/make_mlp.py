# Writes the bundled example model (an MLP classifier), an input and the
# onnxruntime reference output.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: make_mlp.py OUTDIR

OUTDIR/mlp.onnx      Gemm(784->256)+Relu, Gemm(256->128)+Relu, Gemm(128->10), Softmax;
                     input 'image' [batch, 784], output 'probabilities' [batch, 10]
OUTDIR/inputs/image.npy                 a batch of 4 seeded random images
OUTDIR/expected/probabilities.npy       onnxruntime's output for them
"""

import os
import sys

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper, numpy_helper


def build_model(rng):
    sizes = [784, 256, 128, 10]
    nodes, weights = [], []
    x = "image"
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:])):
        w = (rng.standard_normal((n_out, n_in)) / np.sqrt(n_in)).astype(np.float32)
        b = (0.01 * rng.standard_normal(n_out)).astype(np.float32)
        weights += [numpy_helper.from_array(w, f"fc{i}.weight"),
                    numpy_helper.from_array(b, f"fc{i}.bias")]
        y = f"fc{i}"
        nodes.append(helper.make_node("Gemm", [x, f"fc{i}.weight", f"fc{i}.bias"], [y],
                                      transB=1, name=f"Gemm_{i}"))
        if i < len(sizes) - 2:
            nodes.append(helper.make_node("Relu", [y], [y + ".relu"], name=f"Relu_{i}"))
            y += ".relu"
        x = y
    nodes.append(helper.make_node("Softmax", [x], ["probabilities"], axis=-1, name="Softmax"))
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 784])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", 10])],
        weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="kiln-example")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(2026)
    model = build_model(rng)
    os.makedirs(os.path.join(out, "inputs"), exist_ok=True)
    os.makedirs(os.path.join(out, "expected"), exist_ok=True)
    path = os.path.join(out, "mlp.onnx")
    onnx.save(model, path)
    image = rng.random((4, 784), dtype=np.float32)
    np.save(os.path.join(out, "inputs", "image.npy"), image)
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    (probabilities,) = session.run(None, {"image": image})
    np.save(os.path.join(out, "expected", "probabilities.npy"), probabilities)


if __name__ == "__main__":
    main()
