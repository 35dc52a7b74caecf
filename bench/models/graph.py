# A small ONNX graph builder with seeded weights and the layer patterns PyTorch exporters emit.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Graph: nodes, initializers and inputs, named like an exporter would (onnx + numpy only).

Layer helpers reproduce what `torch.onnx.export` (TorchScript exporter, eval mode, constant
folding on) writes for common modules: BatchNorm folded into Conv, Linear as Gemm (2-D) or
MatMul + Add (3-D), LayerNorm decomposed into ReduceMean/Sub/Pow/Sqrt/Div (opset < 17),
GELU through Erf, SiLU as Sigmoid + Mul, ReLU6 as Clip, and Reshape targets computed by
Shape -> Gather -> Unsqueeze -> Concat chains from the runtime shape.
"""

import collections
import math

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Graph:
    def __init__(self, name, seed):
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.seed = seed
        self.nodes, self.initializers, self.inputs, self.outputs = [], [], [], []
        self.samplers = {}  # input name -> f(batch, rng) -> array
        self.opset = 13
        self.renames = {}  # value -> graph output name
        self._counts = collections.Counter()

    def fresh(self, prefix):
        self._counts[prefix] += 1
        return f"{prefix}_{self._counts[prefix]}"

    # -- values ---------------------------------------------------------------------------
    def const(self, value, prefix="const", dtype=None):
        array = np.asarray(value, dtype=dtype if dtype is not None else None)
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        name = self.fresh(prefix)
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def weight(self, shape, std, prefix="weight"):
        return self.const(self.rng.standard_normal(shape, dtype=np.float32) * np.float32(std),
                          prefix)

    def input(self, name, elem_type, shape, sampler):
        """A graph input whose first dim is the symbolic batch; sampler(batch, rng) makes data
        (sampler(batch, rng, **sizes) when the model has other symbolic dims, e.g. seq=)."""
        self.inputs.append(helper.make_tensor_value_info(name, elem_type, shape))
        self.samplers[name] = sampler
        return name

    def sample_inputs(self, batch, **sizes):
        """Inputs for one batch size (and sizes of the other symbolic dims, e.g. seq=8), from
        their own seeded stream (weights do not move)."""
        rng = np.random.default_rng([self.seed, batch, *sizes.values()])
        return {name: sampler(batch, rng, **sizes) for name, sampler in self.samplers.items()}

    def output(self, value, name, elem_type, shape):
        """Names the value `name` (renaming its producer's output, as exporters do)."""
        self.renames[value] = name
        self.outputs.append(helper.make_tensor_value_info(name, elem_type, shape))

    def op(self, op_type, inputs, n_out=1, outputs=None, **attrs):
        outputs = outputs or [self.fresh(op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outputs,
                                           name=self.fresh("/" + op_type), **attrs))
        return outputs[0] if len(outputs) == 1 else outputs

    def model(self):
        opset = self.opset
        for node in self.nodes:
            node.input[:] = [self.renames.get(i, i) for i in node.input]
            node.output[:] = [self.renames.get(o, o) for o in node.output]
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs,
                                  self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                                  producer_name="kiln-bench-zoo")
        model.ir_version = 8  # what torch.onnx.export writes for opsets 13-17
        return model

    # -- shapes (exporter style) ----------------------------------------------------------
    def dim(self, x, axis):
        """Shape(x)[axis] as a 1-element int64 tensor (Shape -> Gather -> Unsqueeze)."""
        shape = self.op("Shape", [x])
        scalar = self.op("Gather", [shape, self.const(np.int64(axis), "idx")], axis=0)
        return self.op("Unsqueeze", [scalar, self.const(np.array([0], np.int64), "axes")])

    def reshape(self, x, dims, like=None):
        """Reshape to dims: ints are constants, ('dim', axis) reads that axis of `like`
        (default x) at run time."""
        like = like or x
        parts = [self.dim(like, d[1]) if isinstance(d, tuple) else
                 self.const(np.array([d], np.int64), "shape") for d in dims]
        return self.op("Reshape", [x, self.op("Concat", parts, axis=0)])

    # -- layers ---------------------------------------------------------------------------
    def conv(self, x, cin, cout, k, stride=1, group=1, gain=1.0):
        """Conv with bias: a Conv2d followed by a BatchNorm that the exporter folded in."""
        fan_in = cin // group * k * k
        w = self.weight((cout, cin // group, k, k), gain * math.sqrt(2.0 / fan_in), "conv.weight")
        b = self.weight((cout,), 0.01, "conv.bias")
        pad = k // 2
        return self.op("Conv", [x, w, b], kernel_shape=[k, k], strides=[stride, stride],
                       pads=[pad] * 4, group=group, dilations=[1, 1])

    def relu6(self, x):
        return self.op("Clip", [x, self.const(np.float32(0), "min"), self.const(np.float32(6), "max")])

    def silu(self, x):
        return self.op("Mul", [x, self.op("Sigmoid", [x])])

    def gemm(self, x, din, dout, trans_b=True, std=None):
        """nn.Linear on a 2-D input (or GPT-2's Conv1D addmm with trans_b=False)."""
        std = std if std is not None else 1.0 / math.sqrt(din)
        w = self.weight((dout, din) if trans_b else (din, dout), std, "linear.weight")
        b = self.weight((dout,), 0.01, "linear.bias")
        return self.op("Gemm", [x, w, b], alpha=1.0, beta=1.0, transB=int(trans_b))

    def linear(self, x, din, dout, std=0.02, bias=True):
        """nn.Linear on a 3-D input: MatMul with the pre-transposed weight, then Add."""
        y = self.op("MatMul", [x, self.weight((din, dout), std, "linear.weight")])
        return self.op("Add", [y, self.weight((dout,), 0.01, "linear.bias")]) if bias else y

    def layer_norm(self, x, dim, eps=1e-5, decomposed=True):
        gamma = self.const(1.0 + 0.1 * self.rng.standard_normal(dim, dtype=np.float32), "ln.weight")
        beta = self.weight((dim,), 0.1, "ln.bias")
        if not decomposed:  # opset >= 17
            return self.op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=eps)
        mean = self.op("ReduceMean", [x], axes=[-1], keepdims=1)
        centered = self.op("Sub", [x, mean])
        var = self.op("ReduceMean", [self.op("Pow", [centered, self.const(np.float32(2), "two")])],
                      axes=[-1], keepdims=1)
        std = self.op("Sqrt", [self.op("Add", [var, self.const(np.float32(eps), "eps")])])
        normed = self.op("Div", [centered, std])
        return self.op("Add", [self.op("Mul", [normed, gamma]), beta])

    def gelu_erf(self, x):
        """0.5 * x * (1 + erf(x / sqrt(2))), as exported for nn.GELU()."""
        erf = self.op("Erf", [self.op("Div", [x, self.const(np.float32(math.sqrt(2)), "sqrt2")])])
        y = self.op("Mul", [x, self.op("Add", [erf, self.const(np.float32(1), "one")])])
        return self.op("Mul", [y, self.const(np.float32(0.5), "half")])

    def gelu_tanh(self, x):
        """GPT-2's NewGELU: 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715 x^3)))."""
        cube = self.op("Pow", [x, self.const(np.float32(3), "three")])
        inner = self.op("Add", [x, self.op("Mul", [cube, self.const(np.float32(0.044715), "c")])])
        inner = self.op("Mul", [inner, self.const(np.float32(math.sqrt(2 / math.pi)), "c")])
        one_plus = self.op("Add", [self.op("Tanh", [inner]), self.const(np.float32(1), "one")])
        return self.op("Mul", [self.op("Mul", [x, self.const(np.float32(0.5), "half")]), one_plus])

    def softmax_attention(self, q, k, v, scale, mask=None, where_mask=None):
        """softmax(q @ k^T * scale + mask) @ v on [B, H, S, D] q/v and [B, H, D, S] k."""
        scores = self.op("MatMul", [q, k])
        scores = self.op("Div", [scores, self.const(np.float32(1 / scale), "sqrt_d")])
        if mask is not None:
            scores = self.op("Add", [scores, mask])
        if where_mask is not None:
            fill = self.const(np.float32(np.finfo(np.float32).min), "mask_value")
            scores = self.op("Where", [where_mask, scores, fill])
        return self.op("MatMul", [self.op("Softmax", [scores], axis=-1), v])

    def split_heads(self, x, heads, head_dim, perm):
        """[B, S, H*D] -> Reshape [B, S, H, D] -> Transpose(perm)."""
        x = self.reshape(x, [("dim", 0), ("dim", 1), heads, head_dim])
        return self.op("Transpose", [x], perm=perm)

    def merge_heads(self, x, hidden):
        """[B, H, S, D] -> Transpose [B, S, H, D] -> Reshape [B, S, H*D]."""
        x = self.op("Transpose", [x], perm=[0, 2, 1, 3])
        return self.reshape(x, [("dim", 0), ("dim", 1), hidden])


TENSOR_FLOAT, TENSOR_INT64 = TensorProto.FLOAT, TensorProto.INT64
