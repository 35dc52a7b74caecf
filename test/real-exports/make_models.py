#!/usr/bin/env python3
# Small ONNX models with the shape plumbing of real PyTorch exports (onnx.helper).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: make_models.py OUT_DIR
       make_models.py --exporter-names IN.onnx OUT.onnx

The torchvision exports are 5-10 MiB; these models keep what makes them hard to
compile with a symbolic batch -- the exporters' shape arithmetic -- at a few KiB,
with random weights (fixed seed):

  squeezenet_like  fire modules, GlobalAveragePool, Flatten; the output dim is
                   named 'Flatten117_dim_0' as the TorchScript exporter names it
                   when it cannot relate it to the input (SqueezeNet 1.1)
  shufflenet_like  channel shuffle: Shape -> Gather -> Div -> Cast -> Unsqueeze ->
                   Concat -> Reshape -> Transpose -> Reshape, channel halves by
                   Slice with bounds computed from Shape, then a Conv on the
                   reshaped tensor (ShuffleNetV2)
  split_dynamic    Reshape to a Shape-computed target with -1, then Split with
                   num_outputs (opset 18) on the inferred axis (the dynamo
                   exporter's GPT-2 attention split)
  range_expand     Range over a symbolic length, Expand to a Shape-computed
                   target, ConstantOfShape of a computed shape (position ids and
                   masks of text models)
  value_dependent  an output whose length is a Range up to an input's value:
                   it depends on tensor values, and the error names the node
  doubled_batch    Concat of the input with itself along the batch: the output
                   dim is 2*batch, which an artifact's signature cannot name
  dynamic_spatial  a 3x3 Conv (pad 1) over symbolic height and width: the output
                   dims are proven to be the input's, but the lowering needs
                   static spatial dims (its diagnostic names the node)
  resize_sizes     Resize (bilinear) to sizes = Concat(Shape(x)[0:2], [32, 32]),
                   the segmentation heads' upsampling (LRASPP, DeepLabV3): the
                   batch entry keeps x's symbolic dim
  resize_from_batch  Resize whose height entry is the batch: not a constant nor
                   x's own dim there, an error naming the entry
  window_pads      Swin's window padding: pads (7 - Shape(x)[i] % 7) % 7 through
                   Cast, ConstantOfShape, Reshape to [-1, 2], a step -1 Slice,
                   Transpose and Reshape, a constant once the spatial dims are

--exporter-names copies a model with each output's symbolic dims renamed the
way the TorchScript exporter names dims it cannot relate to the inputs
(`LayerNormalizationonnx::Gather_300_dim_0`, as in the issue's ViT export).
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 18
rng = np.random.default_rng(0)
I64 = TensorProto.INT64


class Graph:
    def __init__(self, name):
        self.name, self.nodes, self.inits, self.count = name, [], [], 0

    def fresh(self, hint):
        self.count += 1
        return f"{hint}_{self.count}"

    def node(self, op, inputs, outputs=1, **attrs):
        names = [self.fresh(op) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, names, name=self.fresh(op + "_node"),
                                           **attrs))
        return names[0] if outputs == 1 else names

    def const(self, value, dtype=np.float32):
        name = self.fresh("c")
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def ints(self, values):
        return self.const(values, np.int64)

    def conv(self, x, cin, cout, k, stride=1, pad=0, group=1, relu=True):
        scale = (2.0 / (cin * k * k)) ** 0.5
        w = self.const(rng.standard_normal((cout, cin // group, k, k)) * scale)
        b = self.const(rng.standard_normal(cout) * 0.1)
        y = self.node("Conv", [x, w, b], kernel_shape=[k, k], strides=[stride, stride],
                      pads=[pad] * 4, group=group)
        return self.node("Relu", [y]) if relu else y

    def dim(self, x, axis):
        """Shape(x)[axis] as a 1-element i64 vector (the exporters' Gather + Unsqueeze)."""
        shape = self.node("Shape", [x])
        scalar = self.node("Gather", [shape, self.ints(axis)], axis=0)
        return self.node("Unsqueeze", [scalar, self.ints([0])])

    def model(self, inputs, outputs):
        graph = helper.make_graph(self.nodes, self.name, inputs, outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        return model


def image(name="input", channels=3, size=32):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", channels, size, size])


def squeezenet_like():
    g = Graph("squeezenet_like")
    x = g.conv("input", 3, 16, 3, stride=2)
    x = g.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    for cin, squeeze, expand in [(16, 8, 16), (32, 8, 16)]:
        s = g.conv(x, cin, squeeze, 1)
        x = g.node("Concat", [g.conv(s, squeeze, expand, 1), g.conv(s, squeeze, expand, 3, pad=1)],
                   axis=1)
    x = g.conv(x, 32, 10, 1)
    x = g.node("GlobalAveragePool", [x])
    out = g.node("Flatten", [x], axis=1)
    g.nodes[-1].output[0] = "117"
    return g.model([image()], [helper.make_tensor_value_info(
        "117", TensorProto.FLOAT, ["Flatten117_dim_0", 10])])


def shuffle(g, x, channels, size):
    """torchvision's channel_shuffle(x, 2), with every size read back from Shape."""
    b, c, h, w = (g.node("Gather", [g.node("Shape", [x]), g.ints(i)], axis=0) for i in range(4))
    per_group = g.node("Cast", [g.node("Div", [c, g.ints(2)])], to=I64)
    unsq = [g.node("Unsqueeze", [v, g.ints([0])]) for v in (b, per_group, h, w)]
    target = g.node("Concat", [unsq[0], g.ints([2]), unsq[1], unsq[2], unsq[3]], axis=0)
    x = g.node("Reshape", [x, target])
    x = g.node("Transpose", [x], perm=[0, 2, 1, 3, 4])
    back = g.node("Concat", [unsq[0], g.ints([-1]), unsq[2], unsq[3]], axis=0)
    return g.node("Reshape", [x, back])


def shufflenet_like():
    g = Graph("shufflenet_like")
    x = g.conv("input", 3, 16, 3, stride=2, pad=1)
    for _ in range(2):
        # x.chunk(2, dim=1): Slice bounds from Shape(x)[1] / 2.
        c = g.node("Gather", [g.node("Shape", [x]), g.ints([1])], axis=0)
        half = g.node("Div", [c, g.ints([2])])
        left = g.node("Slice", [x, g.ints([0]), half, g.ints([1])])
        right = g.node("Slice", [x, half, c, g.ints([1])])
        r = g.conv(right, 8, 8, 1)
        r = g.conv(r, 8, 8, 3, pad=1, group=8, relu=False)
        r = g.conv(r, 8, 8, 1)
        x = shuffle(g, g.node("Concat", [left, r], axis=1), 16, 16)
    x = g.conv(x, 16, 10, 1)
    out = g.node("ReduceMean", [x, g.ints([2, 3])], keepdims=0)
    return g.model([image()], [helper.make_tensor_value_info(out, TensorProto.FLOAT,
                                                             ["batch", 10])])


def split_dynamic():
    g = Graph("split_dynamic")
    x = helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "sequence", 24])
    w = g.const(rng.standard_normal((24, 72)) * 0.2)
    qkv = g.node("MatMul", ["hidden", w])
    # reshape(qkv, [B, S, -1]) with B, S read from the input: the last dim is
    # only known as "the rest", 72.
    target = g.node("Concat", [g.dim("hidden", 0), g.dim("hidden", 1), g.ints([-1])], axis=0)
    qkv = g.node("Reshape", [qkv, target])
    q, k, v = g.node("Split", [qkv], outputs=3, axis=2, num_outputs=3)
    scores = g.node("MatMul", [q, g.node("Transpose", [k], perm=[0, 2, 1])])
    probs = g.node("Softmax", [g.node("Mul", [scores, g.const(0.2)])], axis=-1)
    out = g.node("MatMul", [probs, v])
    return g.model([x], [helper.make_tensor_value_info(
        out, TensorProto.FLOAT, ["batch", "Reshape_dim_1", "Reshape_dim_2"])])


def range_expand():
    g = Graph("range_expand")
    ids = helper.make_tensor_value_info("input_ids", I64, ["batch", "sequence"])
    seq = g.node("Gather", [g.node("Shape", ["input_ids"]), g.ints(1)], axis=0)
    positions = g.node("Range", [g.ints(0), seq, g.ints(1)])
    positions = g.node("Unsqueeze", [positions, g.ints([0])])
    positions = g.node("Expand", [positions, g.node("Shape", ["input_ids"])])
    table = g.const(rng.standard_normal((64, 16)))
    words = g.const(rng.standard_normal((100, 16)))
    x = g.node("Add", [g.node("Gather", [words, "input_ids"], axis=0),
                       g.node("Gather", [table, positions], axis=0)])
    ones = g.node("ConstantOfShape", [g.node("Shape", ["input_ids"])],
                  value=numpy_helper.from_array(np.array([1.0], np.float32)))
    mask = g.node("Unsqueeze", [ones, g.ints([2])])
    out = g.node("Mul", [x, mask])
    return g.model([ids], [helper.make_tensor_value_info(
        out, TensorProto.FLOAT, ["batch", "Mul_dim_1", 16])])


def value_dependent():
    g = Graph("value_dependent")
    x = helper.make_tensor_value_info("count", I64, [])
    out = g.node("Range", [g.ints(0), "count", g.ints(1)])
    g.nodes[-1].name = "positions"
    return g.model([x], [helper.make_tensor_value_info(out, I64, ["n"])])


def doubled_batch():
    g = Graph("doubled_batch")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
    out = g.node("Concat", ["x", "x"], axis=0)
    return g.model([x], [helper.make_tensor_value_info(out, TensorProto.FLOAT, ["rows", 4])])


def dynamic_spatial():
    g = Graph("dynamic_spatial")
    x = helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, "height", "width"])
    out = g.conv("input", 3, 4, 3, pad=1, relu=False)
    g.nodes[-1].name = "stem"
    return g.model([x], [helper.make_tensor_value_info(
        out, TensorProto.FLOAT, ["batch", 4, "h_out", "w_out"])])


def resize_to(g, x, spatial):
    """Resize x (bilinear) to Concat(Shape(x)[0:2], spatial), as torchvision's
    F.interpolate(size=...) exports."""
    head = g.node("Slice", [g.node("Shape", [x]), g.ints([0]), g.ints([2])])
    sizes = g.node("Concat", [head, spatial], axis=0)
    return g.node("Resize", [x, "", "", sizes], mode="linear",
                  coordinate_transformation_mode="half_pixel")


def resize_sizes():
    g = Graph("resize_sizes")
    x = g.conv("input", 3, 8, 3, stride=2, pad=1)
    out = resize_to(g, x, g.ints([32, 32]))
    return g.model([image()], [helper.make_tensor_value_info(
        out, TensorProto.FLOAT, ["batch", 8, 32, 32])])


def resize_from_batch():
    g = Graph("resize_from_batch")
    out = resize_to(g, "input", g.node("Concat", [g.dim("input", 0), g.ints([32])], axis=0))
    g.nodes[-1].name = "upsample"
    return g.model([image()], [helper.make_tensor_value_info(
        out, TensorProto.FLOAT, ["batch", 3, "h", 32])])


def window_pads():
    g = Graph("window_pads")
    x = g.node("Transpose", [g.conv("input", 3, 8, 4, stride=4, relu=False)], perm=[0, 2, 3, 1])
    pad = [g.node("Unsqueeze", [g.node("Mod", [g.node("Sub", [g.ints(7), g.node("Mod", [
        g.node("Gather", [g.node("Shape", [x]), g.ints(axis)], axis=0), g.ints(7)])]),
        g.ints(7)]), g.ints([0])]) for axis in (1, 2)]
    # F.pad(x, (0, 0, 0, pad_w, 0, pad_h)): torch's last-dim-first pairs.
    pairs = g.node("Concat", [g.ints([0]), g.ints([0]), g.ints([0]), pad[1], g.ints([0]), pad[0]],
                   axis=0)
    rest = g.node("ConstantOfShape", [g.ints([2])],
                  value=numpy_helper.from_array(np.array([0], np.int64)))
    pads = g.node("Reshape", [g.node("Concat", [g.node("Cast", [pairs], to=I64), rest], axis=0),
                              g.ints([-1, 2])])
    pads = g.node("Slice", [pads, g.ints([-1]), g.ints([-(2 ** 63) + 1]), g.ints([0]),
                            g.ints([-1])])
    pads = g.node("Reshape", [g.node("Transpose", [pads], perm=[1, 0]), g.ints([-1])])
    out = g.node("Pad", [x, g.node("Cast", [pads], to=I64)], mode="constant")
    return g.model([image()], [helper.make_tensor_value_info(
        out, TensorProto.FLOAT, ["batch", 14, 14, 8])])


MODELS = {f.__name__: f for f in (squeezenet_like, shufflenet_like, split_dynamic,
                                  range_expand, value_dependent, doubled_batch,
                                  dynamic_spatial, resize_sizes, resize_from_batch,
                                  window_pads)}


def exporter_names(source, target):
    model = onnx.load(source)
    for output in model.graph.output:
        for i, dim in enumerate(output.type.tensor_type.shape.dim):
            if dim.HasField("dim_param"):
                dim.dim_param = f"LayerNormalization{output.name}_dim_{i}"
    onnx.save(model, target)


def main():
    if sys.argv[1] == "--exporter-names":
        return exporter_names(sys.argv[2], sys.argv[3])
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, build in MODELS.items():
        onnx.save(build(), os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
