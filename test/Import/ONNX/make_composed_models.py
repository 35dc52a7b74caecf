#!/usr/bin/env python3
# Writes the models of composed.test and error-composed.test (deterministic).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: make_composed_models.py OUTDIR

Models for the ops lib/Import/ONNX/ComposedHandlers.cpp and SignalHandlers.cpp
build from other kiln ops: one valid model per op (or attribute variant) and
one model per diagnostic of those handlers.
"""

import os
import sys

import numpy as np
from onnx import TensorProto

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_models import F, I64, T, N, init, make, save  # noqa: E402

F16 = TensorProto.FLOAT16


def one(out, name, node, inputs, inits=(), opset=23):
    outs = [T(o, None) for o in node.output if o]
    save(out, name, make([node], inputs, outs, list(inits), opset=opset, ir=10))


def valid(out):
    x4, x3 = T("x", F, [1, 2, 3, 8]), T("x", F, [1, 3, 16])
    caches = [T("cos", F, [10, 4]), T("sin", F, [10, 4])]
    pos = T("pos", I64, [1, 3])
    one(out, "rotary", N("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"]),
        [x4] + caches + [pos])
    one(out, "rotary_interleaved_3d",
        N("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"], interleaved=1, num_heads=2,
          rotary_embedding_dim=4), [x3] + caches + [pos])
    one(out, "rotary_no_positions", N("RotaryEmbedding", ["x", "cos", "sin"], ["y"]),
        [x4, T("cos", F, [1, 3, 4]), T("sin", F, [1, 3, 4])])
    conv_in = [T("x", F, [2, 3, 5]), T("w", F, [3, 1, 4])]
    one(out, "causal_conv",
        N("CausalConvWithState", ["x", "w"], ["y", "state"]), conv_in, opset=27)
    one(out, "causal_conv_past",
        N("CausalConvWithState", ["x", "w", "b", "past"], ["y", "state"], activation="silu"),
        [T("x", F16, [2, 3, 5]), T("w", F16, [3, 1, 4]), T("b", F16, [3]),
         T("past", F16, [2, 3, 3])], opset=27)
    one(out, "group_norm",
        N("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2, epsilon=1e-3),
        [T("x", F, [2, 4, 3]), T("s", F, [4]), T("b", F, [4])], opset=21)
    one(out, "center_crop_pad", N("CenterCropPad", ["x", "shape"], ["y"], axes=[1, -1]),
        [T("x", F, [2, 7, 4])], [init("shape", np.array([4, 7], np.int64))], opset=18)
    one(out, "lrn", N("LRN", ["x"], ["y"], size=3, alpha=2e-4, beta=0.5, bias=2.0),
        [T("x", F, [1, 4, 2, 2])], opset=13)
    one(out, "scatternd",
        N("ScatterND", ["x", "i", "u"], ["y"], reduction="add"),
        [T("x", F, [4, 3, 2]), T("i", I64, [2, 1]), T("u", F, [2, 3, 2])], opset=18)


def errors(out):
    caches = [T("cos", F, [10, 4]), T("sin", F, [10, 4])]
    one(out, "rotary_rank", N("RotaryEmbedding", ["x", "cos", "sin"], ["y"]),
        [T("x", F, [2, 8])] + caches)
    one(out, "rotary_heads", N("RotaryEmbedding", ["x", "cos", "sin"], ["y"], num_heads=3),
        [T("x", F, [1, 3, 16])] + caches)
    one(out, "rotary_dim", N("RotaryEmbedding", ["x", "cos", "sin"], ["y"],
                             rotary_embedding_dim=3), [T("x", F, [1, 2, 3, 8])] + caches)
    one(out, "rotary_cache", N("RotaryEmbedding", ["x", "cos", "sin"], ["y"]),
        [T("x", F, [1, 2, 3, 8])] + caches)
    one(out, "rotary_dynamic", N("RotaryEmbedding", ["x", "cos", "sin"], ["y"]),
        [T("x", F, ["b", 2, 3, 8]), T("cos", F, [1, 3, 4]), T("sin", F, [1, 3, 4])])
    one(out, "rotary_interleaved", N("RotaryEmbedding", ["x", "cos", "sin"], ["y"],
                                     interleaved=2),
        [T("x", F, [1, 2, 3, 8]), T("cos", F, [1, 3, 4]), T("sin", F, [1, 3, 4])])
    conv = [T("x", F, [2, 3, 5]), T("w", F, [3, 1, 4])]
    one(out, "causal_activation",
        N("CausalConvWithState", ["x", "w"], ["y"], activation="relu"), conv, opset=27)
    one(out, "causal_rank", N("CausalConvWithState", ["x", "w"], ["y"]),
        [T("x", F, [2, 3]), T("w", F, [3, 1, 4])], opset=27)
    one(out, "causal_weight", N("CausalConvWithState", ["x", "w"], ["y"]),
        [T("x", F, [2, 3, 5]), T("w", F, [2, 1, 4])], opset=27)
    gn = [T("x", F, [2, 4, 3]), T("s", F, [4]), T("b", F, [4])]
    one(out, "group_norm_groups",
        N("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=3), gn, opset=21)
    one(out, "group_norm_stash",
        N("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2, stash_type=10), gn,
        opset=21)
    one(out, "group_norm_rank",
        N("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=1),
        [T("x", F, [4]), T("s", F, [4]), T("b", F, [4])], opset=21)
    one(out, "group_norm_scale",
        N("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2),
        [T("x", F, [2, 4, 3]), T("s", F, [2]), T("b", F, [4])], opset=21)
    one(out, "center_crop_axes", N("CenterCropPad", ["x", "shape"], ["y"], axes=[1]),
        [T("x", F, [2, 7, 4])], [init("shape", np.array([4, 7], np.int64))], opset=18)
    one(out, "center_crop_negative", N("CenterCropPad", ["x", "shape"], ["y"]),
        [T("x", F, [2, 7])], [init("shape", np.array([4, -1], np.int64))], opset=18)
    one(out, "center_crop_shape", N("CenterCropPad", ["x", "shape"], ["y"]),
        [T("x", F, [2, 7]), T("shape", I64, [2])], opset=18)
    one(out, "lrn_size", N("LRN", ["x"], ["y"], size=0), [T("x", F, [1, 4, 2, 2])], opset=13)
    one(out, "lrn_rank", N("LRN", ["x"], ["y"], size=3), [T("x", F, [1, 4])], opset=13)
    sc = [T("x", F, [4, 3]), T("i", I64, [2, 1]), T("u", F, [2, 3])]
    one(out, "scatternd_reduction", N("ScatterND", ["x", "i", "u"], ["y"], reduction="avg"),
        sc, opset=18)
    one(out, "scatternd_float_indices", N("ScatterND", ["x", "i", "u"], ["y"]),
        [T("x", F, [4, 3]), T("i", F, [2, 1]), T("u", F, [2, 3])], opset=18)
    one(out, "scatternd_depth", N("ScatterND", ["x", "i", "u"], ["y"]),
        [T("x", F, [4, 3]), T("i", I64, [2, 3]), T("u", F, [2])], opset=18)
    one(out, "scatternd_updates", N("ScatterND", ["x", "i", "u"], ["y"]),
        [T("x", F, [4, 3]), T("i", I64, [2, 1]), T("u", F, [2, 4])], opset=18)


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    os.makedirs(argv[1], exist_ok=True)
    valid(argv[1])
    errors(argv[1])


if __name__ == "__main__":
    main(sys.argv)
