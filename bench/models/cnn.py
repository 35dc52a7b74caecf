# Convolutional zoo models (torchvision layouts, BatchNorm folded) and an MLP, as ONNX graphs.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""build(config, seed) -> Graph for MLP, ResNet-18/50,
MobileNetV2 and an EfficientNet-B0-style MBConv stack with squeeze-excite."""

import numpy as np

from graph import TENSOR_FLOAT, Graph

# name -> full-size config, small config (a few layers, small widths; runs on every commit)
CONFIGS = {
    "mlp": ({"sizes": [784, 1024, 1024, 10]}, {"sizes": [32, 64, 64, 10]}),
    "resnet18": ({"stem": 64, "block": "basic", "depths": [2, 2, 2, 2], "widths": [64, 128, 256, 512],
                  "image": 224, "classes": 1000},
                 {"stem": 8, "block": "basic", "depths": [1, 1, 1, 1], "widths": [8, 16, 32, 64],
                  "image": 32, "classes": 10}),
    "resnet50": ({"stem": 64, "block": "bottleneck", "depths": [3, 4, 6, 3], "widths": [64, 128, 256, 512],
                  "image": 224, "classes": 1000},
                 {"stem": 8, "block": "bottleneck", "depths": [1, 1, 1, 1], "widths": [8, 16, 32, 64],
                  "image": 32, "classes": 10}),
    # (expansion t, channels c, repeats n, stride s) as in the MobileNetV2 paper
    "mobilenetv2": ({"stem": 32, "blocks": [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2),
                                            (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                                            (6, 320, 1, 1)], "head": 1280, "image": 224,
                     "classes": 1000},
                    {"stem": 8, "blocks": [(1, 8, 1, 1), (6, 8, 2, 2), (6, 16, 2, 2)],
                     "head": 64, "image": 32, "classes": 10}),
    # (expansion, kernel, stride, channels, repeats) of EfficientNet-B0
    "efficientnet": ({"stem": 32, "blocks": [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2),
                                             (6, 3, 2, 80, 3), (6, 5, 1, 112, 3),
                                             (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)],
                      "head": 1280, "image": 224, "classes": 1000},
                     {"stem": 8, "blocks": [(1, 3, 1, 8, 1), (6, 3, 2, 16, 2), (6, 5, 2, 24, 1)],
                      "head": 64, "image": 32, "classes": 10}),
}


def _image_input(g, config):
    size = config["image"]
    return g.input("input", TENSOR_FLOAT, ["batch", 3, size, size],
                   lambda batch, rng: rng.standard_normal((batch, 3, size, size), np.float32))


def _classifier(g, x, channels, classes):
    x = g.op("Flatten", [g.op("GlobalAveragePool", [x])], axis=1)
    g.output(g.gemm(x, channels, classes), "logits", TENSOR_FLOAT, ["batch", classes])


def mlp(config, seed):
    g = Graph("mlp", seed)
    sizes = config["sizes"]
    x = g.input("input", TENSOR_FLOAT, ["batch", sizes[0]],
                lambda batch, rng: rng.standard_normal((batch, sizes[0]), np.float32))
    for i, (din, dout) in enumerate(zip(sizes, sizes[1:])):
        x = g.gemm(x, din, dout)
        if i + 2 < len(sizes):
            x = g.op("Relu", [x])
    g.output(x, "logits", TENSOR_FLOAT, ["batch", sizes[-1]])
    g.opset = 13
    return g


def resnet(config, seed):
    """torchvision ResNet v1.5 (stride on the 3x3 conv of a bottleneck)."""
    g = Graph("resnet", seed)
    x = _image_input(g, config)
    cin = config["stem"]
    x = g.op("Relu", [g.conv(x, 3, cin, 7, 2)])
    x = g.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    expansion = 4 if config["block"] == "bottleneck" else 1
    for stage, (depth, width) in enumerate(zip(config["depths"], config["widths"])):
        for block in range(depth):
            stride = 2 if stage > 0 and block == 0 else 1
            cout = width * expansion
            if config["block"] == "bottleneck":
                y = g.op("Relu", [g.conv(x, cin, width, 1)])
                y = g.op("Relu", [g.conv(y, width, width, 3, stride)])
                y = g.conv(y, width, cout, 1, gain=0.2)
            else:
                y = g.op("Relu", [g.conv(x, cin, width, 3, stride)])
                y = g.conv(y, width, cout, 3, gain=0.2)
            shortcut = g.conv(x, cin, cout, 1, stride) if stride != 1 or cin != cout else x
            x = g.op("Relu", [g.op("Add", [y, shortcut])])
            cin = cout
    _classifier(g, x, cin, config["classes"])
    g.opset = 13
    return g


def mobilenetv2(config, seed):
    g = Graph("mobilenetv2", seed)
    x = _image_input(g, config)
    x = g.relu6(g.conv(x, 3, config["stem"], 3, 2))
    cin = config["stem"]
    for t, c, n, s in config["blocks"]:
        for i in range(n):
            hidden = cin * t
            y = g.relu6(g.conv(x, cin, hidden, 1)) if t != 1 else x
            y = g.relu6(g.conv(y, hidden, hidden, 3, s if i == 0 else 1, group=hidden))
            y = g.conv(y, hidden, c, 1, gain=0.5)
            x = g.op("Add", [x, y]) if (s == 1 or i > 0) and cin == c else y
            cin = c
    x = g.relu6(g.conv(x, cin, config["head"], 1))
    _classifier(g, x, config["head"], config["classes"])
    g.opset = 13
    return g


def efficientnet(config, seed):
    """EfficientNet-B0-style MBConv blocks: expand, depthwise, squeeze-excite, project."""
    g = Graph("efficientnet", seed)
    x = _image_input(g, config)
    x = g.silu(g.conv(x, 3, config["stem"], 3, 2))
    cin = config["stem"]
    for expand, k, s, c, n in config["blocks"]:
        for i in range(n):
            hidden = cin * expand
            y = g.silu(g.conv(x, cin, hidden, 1)) if expand != 1 else x
            y = g.silu(g.conv(y, hidden, hidden, k, s if i == 0 else 1, group=hidden))
            squeezed = max(1, cin // 4)
            se = g.op("GlobalAveragePool", [y])
            se = g.silu(g.conv(se, hidden, squeezed, 1))
            se = g.op("Sigmoid", [g.conv(se, squeezed, hidden, 1)])
            y = g.conv(g.op("Mul", [y, se]), hidden, c, 1)
            x = g.op("Add", [x, y]) if (s == 1 or i > 0) and cin == c else y
            cin = c
    x = g.silu(g.conv(x, cin, config["head"], 1))
    _classifier(g, x, config["head"], config["classes"])
    g.opset = 13
    return g


BUILDERS = {"mlp": mlp, "resnet18": resnet, "resnet50": resnet, "mobilenetv2": mobilenetv2,
            "efficientnet": efficientnet}
