# Kernel-level benchmark cases: SGEMM, ResNet-50 conv layers, softmax and layernorm rows.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""cases(quick) -> [Case]: one-op ONNX models with seeded inputs, their FLOPs and bytes.

FLOPs count a multiply-add as 2 (GEMM 2·M·N·K; conv 2·N·Cout·Hout·Wout·Cin/groups·Kh·Kw,
plus the bias). Softmax counts 5 FLOPs per element (max, subtract, exp, sum, divide) and
layernorm 8 (mean, subtract, square, sum, scale, shift...); both are memory-bound, so their
useful figure is GB/s. Bytes are the compulsory traffic: inputs, weights and outputs once.
"""

import dataclasses

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


@dataclasses.dataclass
class Case:
    name: str
    model: onnx.ModelProto
    inputs: dict  # name -> np.ndarray
    flops: float
    bytes: float
    kind: str  # "gemm", "conv", "softmax", "layernorm"


def _model(name, nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="kiln-bench")
    model.ir_version = 8
    return model


def _f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def sgemm(n, rng):
    a = rng.standard_normal((n, n), np.float32)
    b = rng.standard_normal((n, n), np.float32)
    model = _model(f"sgemm{n}", [helper.make_node("MatMul", ["a", "b"], ["c"])],
                   [_f32("a", [n, n]), _f32("b", [n, n])], [_f32("c", [n, n])])
    return Case(f"sgemm {n}^3", model, {"a": a, "b": b}, 2.0 * n ** 3, 3 * 4.0 * n * n, "gemm")


def conv(label, cin, cout, size, k, stride, rng, batch=1, group=1):
    pad = k // 2
    out = (size + 2 * pad - k) // stride + 1
    cg = cin // group
    w = rng.standard_normal((cout, cg, k, k), np.float32) * np.float32((2.0 / (cg * k * k)) ** 0.5)
    bias = rng.standard_normal(cout, np.float32) * np.float32(0.01)
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[k, k],
                            strides=[stride, stride], pads=[pad] * 4, group=group)
    model = _model(f"conv_{label}", [node], [_f32("x", [batch, cin, size, size])],
                   [_f32("y", [batch, cout, out, out])],
                   [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "b")])
    x = rng.standard_normal((batch, cin, size, size), np.float32)
    flops = 2.0 * batch * cout * out * out * cg * k * k + batch * cout * out * out
    traffic = 4.0 * (x.size + w.size + bias.size + batch * cout * out * out)
    name = f"conv {label} {cin}->{cout} {k}x{k}/{stride} @{size}" + (f" g{group}" if group > 1 else "")
    return Case(name, model, {"x": x}, flops, traffic, "conv")


def softmax(rows, cols, rng):
    model = _model("softmax", [helper.make_node("Softmax", ["x"], ["y"], axis=-1)],
                   [_f32("x", [rows, cols])], [_f32("y", [rows, cols])])
    x = rng.standard_normal((rows, cols), np.float32)
    return Case(f"softmax {rows}x{cols}", model, {"x": x}, 5.0 * x.size, 8.0 * x.size, "softmax")


def layernorm(rows, cols, rng):
    gamma = numpy_helper.from_array(1 + 0.1 * rng.standard_normal(cols, np.float32), "g")
    beta = numpy_helper.from_array(0.1 * rng.standard_normal(cols, np.float32), "b")
    node = helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1, epsilon=1e-5)
    model = _model("layernorm", [node], [_f32("x", [rows, cols])], [_f32("y", [rows, cols])],
                   [gamma, beta])
    x = rng.standard_normal((rows, cols), np.float32)
    return Case(f"layernorm {rows}x{cols}", model, {"x": x}, 8.0 * x.size, 8.0 * x.size,
                "layernorm")


def cases(quick=False):
    rng = np.random.default_rng(20261129)
    if quick:  # a smoke test of the harness itself
        return [sgemm(64, rng), conv("tiny", 8, 8, 16, 3, 1, rng), softmax(8, 256, rng),
                layernorm(8, 256, rng)]
    result = [sgemm(n, rng) for n in (256, 512, 1024, 2048)]
    # ResNet-50 layers at batch 1: the stem, a 3x3 of each stage, a 1x1 reduce and expand.
    result += [conv("stem", 3, 64, 224, 7, 2, rng),
               conv("layer1.3x3", 64, 64, 56, 3, 1, rng),
               conv("layer2.3x3", 128, 128, 28, 3, 1, rng),
               conv("layer3.1x1", 1024, 256, 14, 1, 1, rng),
               conv("layer3.3x3", 256, 256, 14, 3, 1, rng),
               conv("layer4.1x1", 512, 2048, 7, 1, 1, rng)]
    # MobileNetV2 depthwise layers at batch 1 (stride 1 and 2).
    result += [conv("mbv2.dw", 144, 144, 56, 3, 1, rng, group=144),
               conv("mbv2.dw", 144, 144, 56, 3, 2, rng, group=144)]
    result += [softmax(1024, 4096, rng), layernorm(1024, 4096, rng)]
    # The row shapes of BERT-base at batch 8, seq 128: attention softmax
    # (8 x 12 heads x 128 rows of 128) and the hidden layer norm (1024 x 768).
    result += [softmax(8 * 12 * 128, 128, rng), layernorm(8 * 128, 768, rng)]
    return result
