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


def signal(out):
    size = [init("n", np.array(5, np.int64))]
    one(out, "hann", N("HannWindow", ["n"], ["y"]), [], size, opset=17)
    one(out, "blackman_symmetric_f64",
        N("BlackmanWindow", ["n"], ["y"], periodic=0, output_datatype=TensorProto.DOUBLE), [],
        size, opset=17)
    one(out, "hamming_f16", N("HammingWindow", ["n"], ["y"], output_datatype=F16), [], size,
        opset=17)
    # An integer size cast to float folds, so the Range after it has a static length.
    nodes = [N("Cast", ["n"], ["nf"], to=F),
             N("Range", ["zero", "nf", "one"], ["y"])]
    save(out, "range_of_cast",
         make(nodes, [], [T("y")], size + [init("zero", np.array(0, np.float32)),
                                           init("one", np.array(1, np.float32))], opset=17))
    one(out, "dft_real", N("DFT", ["x"], ["y"], axis=1), [T("x", F, [2, 3, 1])], opset=19)
    one(out, "dft_inverse_axis", N("DFT", ["x", "", "axis"], ["y"], inverse=1),
        [T("x", F, [2, 3, 2])], [init("axis", np.array(0, np.int64))], opset=20)
    one(out, "dft_rfft_length", N("DFT", ["x", "len"], ["y"], axis=1, onesided=1),
        [T("x", F, [1, 3, 1])], [init("len", np.array(4, np.int64))], opset=19)
    one(out, "dft_irfft", N("DFT", ["x"], ["y"], axis=1, inverse=1, onesided=1),
        [T("x", F, [1, 3, 2])], opset=19)
    one(out, "stft", N("STFT", ["x", "step", "w"], ["y"]),
        [T("x", F, [1, 10, 1]), T("w", F, [4])], [init("step", np.array(3, np.int64))],
        opset=17)


def grids(out):
    ints = lambda name, v: init(name, np.array(v, np.int64))  # noqa: E731
    one(out, "col2im", N("Col2Im", ["x", "img", "blk"], ["y"], strides=[2, 1], pads=[0, 1, 0, 1]),
        [T("x", F, [1, 8, 10])], [ints("img", [5, 4]), ints("blk", [2, 2])], opset=18)
    one(out, "affine_grid", N("AffineGrid", ["theta", "size"], ["y"], align_corners=1),
        [T("theta", F, [2, 2, 3])], [ints("size", [2, 1, 2, 3])], opset=20)
    one(out, "max_unpool", N("MaxUnpool", ["x", "i", "shape"], ["y"], kernel_shape=[2, 2],
                             strides=[2, 2]),
        [T("x", F, [1, 1, 2, 2]), T("i", I64, [1, 1, 2, 2])], [ints("shape", [1, 1, 5, 5])],
        opset=22)
    one(out, "reverse_sequence", N("ReverseSequence", ["x", "lens"], ["y"], batch_axis=0,
                                   time_axis=1),
        [T("x", F, [2, 4, 3]), T("lens", I64, [2])], opset=10)
    one(out, "bn_training", N("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"],
                              training_mode=1, momentum=0.8),
        [T("x", F, [2, 3, 4]), T("s", F, [3]), T("b", F, [3]), T("m", F, [3]), T("v", F, [3])],
        opset=15)
    one(out, "maxpool_indices", N("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2],
                                  strides=[2, 2], pads=[0, 0, 1, 1], storage_order=1),
        [T("x", F, [1, 2, 3, 3])], opset=12)

    # Integer matmuls and the KV-cache scatter.
    U8, I8 = TensorProto.UINT8, TensorProto.INT8
    one(out, "matmul_integer", N("MatMulInteger", ["a", "b", "az", "bz"], ["y"]),
        [T("a", U8, [2, 3]), T("b", U8, [3, 4]), T("az", U8, [2]), T("bz", U8, [1])], opset=10)
    one(out, "qlinear_matmul",
        N("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"]),
        [T("a", I8, [2, 3]), T("as", F16, [1]), T("az", I8, [1]), T("b", I8, [3, 4]),
         T("bs", F16, [1]), T("bz", I8, [1]), T("ys", F16, [1]), T("yz", I8, [1])], opset=21)
    one(out, "tensor_scatter_circular",
        N("TensorScatter", ["cache", "upd", "idx"], ["y"], mode="circular"),
        [T("cache", F, [2, 4, 3]), T("upd", F, [2, 2, 3]), T("idx", I64, [2])], opset=24)

    one(out, "conv_integer", N("ConvInteger", ["x", "w", "xz", "wz"], ["y"], pads=[1, 1, 1, 1]),
        [T("x", U8, [1, 1, 3, 3]), T("w", U8, [2, 1, 2, 2]), T("xz", U8, []),
         T("wz", U8, [2])], opset=10)
    one(out, "qlinear_conv",
        N("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "bias"], ["y"]),
        [T("x", U8, [1, 1, 3, 3]), T("xs", F, []), T("xz", U8, []), T("w", U8, [2, 1, 1, 1]),
         T("ws", F, [2]), T("wz", U8, [2]), T("ys", F, []), T("yz", U8, []),
         T("bias", TensorProto.INT32, [2])], opset=10)
    one(out, "det", N("Det", ["x"], ["y"]), [T("x", F, [2, 3, 3])], opset=22)


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

    size = [init("n", np.array(5, np.int64))]
    one(out, "window_size", N("HannWindow", ["n"], ["y"]), [T("n", I64, [])], opset=17)
    one(out, "window_negative", N("HannWindow", ["n"], ["y"]), [],
        [init("n", np.array(-1, np.int64))], opset=17)
    one(out, "window_dtype", N("HannWindow", ["n"], ["y"], output_datatype=TensorProto.STRING),
        [], size, opset=17)
    one(out, "window_periodic", N("HannWindow", ["n"], ["y"], periodic=2), [], size, opset=17)
    one(out, "dft_rank", N("DFT", ["x"], ["y"]), [T("x", F, [4])], opset=19)
    one(out, "dft_parts", N("DFT", ["x"], ["y"]), [T("x", F, [2, 4, 3])], opset=19)
    one(out, "dft_last_axis", N("DFT", ["x"], ["y"], axis=2), [T("x", F, [2, 4, 1])],
        opset=19)
    one(out, "dft_length", N("DFT", ["x", "len"], ["y"]), [T("x", F, [2, 4, 1])],
        [init("len", np.array(0, np.int64))], opset=19)
    one(out, "dft_length_values", N("DFT", ["x", "len"], ["y"]), [T("x", F, [2, 4, 1])],
        [init("len", np.array([2, 3], np.int64))], opset=19)
    one(out, "dft_axis_values", N("DFT", ["x", "", "axis"], ["y"]), [T("x", F, [2, 4, 1])],
        [init("axis", np.array([0, 1], np.int64))], opset=20)
    one(out, "dft_axis_input", N("DFT", ["x", "", "axis"], ["y"]),
        [T("x", F, [2, 4, 1]), T("axis", I64, [])], opset=20)
    one(out, "dft_dynamic", N("DFT", ["x"], ["y"]), [T("x", F, ["b", 4, 1])], opset=19)
    one(out, "dft_inverse", N("DFT", ["x"], ["y"], inverse=2), [T("x", F, [2, 4, 1])],
        opset=19)
    one(out, "dft_huge", N("DFT", ["x"], ["y"]), [T("x", F, [1, 5000, 1])], opset=19)
    step = [init("step", np.array(3, np.int64))]
    one(out, "stft_rank", N("STFT", ["x", "step"], ["y"]), [T("x", F, [10, 1])], step, opset=17)
    one(out, "stft_step", N("STFT", ["x", "step"], ["y"]), [T("x", F, [1, 10, 1])],
        [init("step", np.array(0, np.int64))], opset=17)
    one(out, "stft_frame_length", N("STFT", ["x", "step", "w", "len"], ["y"]),
        [T("x", F, [1, 10, 1]), T("w", F, [4])], step + [init("len", np.array(5, np.int64))],
        opset=17)
    one(out, "stft_long_frame", N("STFT", ["x", "step", "", "len"], ["y"]),
        [T("x", F, [1, 10, 1])], step + [init("len", np.array(11, np.int64))], opset=17)
    one(out, "stft_window_rank", N("STFT", ["x", "step", "w"], ["y"]),
        [T("x", F, [1, 10, 1]), T("w", F, [2, 2])], step, opset=17)
    one(out, "stft_dynamic", N("STFT", ["x", "step"], ["y"]), [T("x", F, [1, "t", 1])], step,
        opset=17)
    one(out, "stft_onesided", N("STFT", ["x", "step"], ["y"], onesided=3),
        [T("x", F, [1, 10, 1])], step, opset=17)

    ints = lambda name, v: init(name, np.array(v, np.int64))  # noqa: E731
    c2i = [T("x", F, [1, 4, 9])]
    one(out, "col2im_rank", N("Col2Im", ["x", "img", "blk"], ["y"]), [T("x", F, [4, 9])],
        [ints("img", [4, 4]), ints("blk", [2, 2])], opset=18)
    one(out, "col2im_dims", N("Col2Im", ["x", "img", "blk"], ["y"]), c2i,
        [ints("img", [4, 4]), ints("blk", [2])], opset=18)
    one(out, "col2im_block", N("Col2Im", ["x", "img", "blk"], ["y"]), c2i,
        [ints("img", [4, 4]), ints("blk", [2, 0])], opset=18)
    one(out, "col2im_channels", N("Col2Im", ["x", "img", "blk"], ["y"]), c2i,
        [ints("img", [4, 4]), ints("blk", [3, 1])], opset=18)
    one(out, "col2im_fit", N("Col2Im", ["x", "img", "blk"], ["y"]), c2i,
        [ints("img", [1, 4]), ints("blk", [2, 2])], opset=18)
    one(out, "col2im_blocks", N("Col2Im", ["x", "img", "blk"], ["y"]), c2i,
        [ints("img", [5, 5]), ints("blk", [2, 2])], opset=18)
    one(out, "col2im_strides", N("Col2Im", ["x", "img", "blk"], ["y"], strides=[1]), c2i,
        [ints("img", [4, 4]), ints("blk", [2, 2])], opset=18)
    one(out, "col2im_dilation", N("Col2Im", ["x", "img", "blk"], ["y"], dilations=[0, 1]), c2i,
        [ints("img", [4, 4]), ints("blk", [2, 2])], opset=18)
    one(out, "col2im_dynamic", N("Col2Im", ["x", "img", "blk"], ["y"]), [T("x", F, ["n", 4, 9])],
        [ints("img", [4, 4]), ints("blk", [2, 2])], opset=18)
    one(out, "col2im_int", N("Col2Im", ["x", "img", "blk"], ["y"]), [T("x", I64, [1, 4, 9])],
        [ints("img", [4, 4]), ints("blk", [2, 2])], opset=18)
    theta = [T("theta", F, [2, 2, 3])]
    one(out, "affine_size", N("AffineGrid", ["theta", "size"], ["y"]), theta,
        [ints("size", [2, 1, 3])], opset=20)
    one(out, "affine_theta", N("AffineGrid", ["theta", "size"], ["y"]), theta,
        [ints("size", [2, 1, 2, 3, 4])], opset=20)
    one(out, "affine_spatial", N("AffineGrid", ["theta", "size"], ["y"]), theta,
        [ints("size", [2, 1, 0, 3])], opset=20)
    one(out, "affine_int", N("AffineGrid", ["theta", "size"], ["y"]),
        [T("theta", I64, [2, 2, 3])], [ints("size", [2, 1, 2, 3])], opset=20)
    one(out, "affine_align", N("AffineGrid", ["theta", "size"], ["y"], align_corners=2), theta,
        [ints("size", [2, 1, 2, 3])], opset=20)
    one(out, "affine_huge", N("AffineGrid", ["theta", "size"], ["y"]), theta,
        [ints("size", [2, 1, 16000000, 3])], opset=20)
    unpool = [T("x", F, [1, 1, 2, 2]), T("i", I64, [1, 1, 2, 2])]
    one(out, "unpool_shapes", N("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2]),
        [T("x", F, [1, 1, 2, 2]), T("i", I64, [1, 1, 2, 1])], opset=22)
    one(out, "unpool_float_indices", N("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2]),
        [T("x", F, [1, 1, 2, 2]), T("i", F, [1, 1, 2, 2])], opset=22)
    one(out, "unpool_dim", N("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[1, 1],
                             pads=[1, 0, 1, 0]), unpool, opset=22)
    one(out, "unpool_shape_length", N("MaxUnpool", ["x", "i", "s"], ["y"], kernel_shape=[2, 2]),
        unpool, [ints("s", [3, 3])], opset=22)
    one(out, "unpool_small", N("MaxUnpool", ["x", "i", "s"], ["y"], kernel_shape=[2, 2]),
        unpool, [ints("s", [1, 1, 2, 2])], opset=22)
    one(out, "unpool_dynamic", N("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2]),
        [T("x", F, ["n", 1, 2, 2]), T("i", I64, ["n", 1, 2, 2])], opset=22)
    one(out, "unpool_strides", N("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2],
                                 strides=[0, 1]), unpool, opset=22)
    rs = [T("x", F, [2, 4]), T("lens", I64, [2])]
    one(out, "reverse_axes", N("ReverseSequence", ["x", "lens"], ["y"], batch_axis=0,
                               time_axis=0), rs, opset=10)
    one(out, "reverse_axis_range", N("ReverseSequence", ["x", "lens"], ["y"], batch_axis=2),
        rs, opset=10)
    one(out, "reverse_rank", N("ReverseSequence", ["x", "lens"], ["y"]),
        [T("x", F, [4]), T("lens", I64, [2])], opset=10)
    one(out, "reverse_lens", N("ReverseSequence", ["x", "lens"], ["y"], batch_axis=0,
                               time_axis=1), [T("x", F, [2, 4]), T("lens", I64, [3])], opset=10)
    one(out, "reverse_dynamic", N("ReverseSequence", ["x", "lens"], ["y"]),
        [T("x", F, ["t", 2]), T("lens", I64, [2])], opset=10)
    bn = [T("s", F, [3]), T("b", F, [3]), T("m", F, [3]), T("v", F, [3])]
    one(out, "bn_training_rank", N("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                                   training_mode=1), [T("x", F, [3])] + bn, opset=15)
    one(out, "bn_training_stats", N("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                                    training_mode=1),
        [T("x", F, [2, 3]), T("s", F, [3]), T("b", F, [3]), T("m", F, [2]), T("v", F, [3])],
        opset=15)
    one(out, "bn_training_dynamic", N("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                                      training_mode=1), [T("x", F, ["n", 3])] + bn, opset=15)
    mp = [T("x", F, [1, 1, 4, 4])]
    one(out, "maxpool_indices_order", N("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2],
                                        storage_order=2), mp, opset=12)
    one(out, "maxpool_indices_dynamic", N("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2]),
        [T("x", F, [1, 1, "h", 4])], opset=12)
    one(out, "maxpool_indices_window", N("MaxPool", ["x"], ["y", "i"], kernel_shape=[33, 33]),
        [T("x", F, [1, 1, 40, 40])], opset=12)

    U8, I8 = TensorProto.UINT8, TensorProto.INT8
    one(out, "matmul_integer_type", N("MatMulInteger", ["a", "b"], ["y"]),
        [T("a", TensorProto.INT32, [2, 3]), T("b", U8, [3, 4])], opset=10)
    one(out, "matmul_integer_zero_type", N("MatMulInteger", ["a", "b", "az"], ["y"]),
        [T("a", U8, [2, 3]), T("b", U8, [3, 4]), T("az", I8, [1])], opset=10)
    one(out, "matmul_integer_dynamic", N("MatMulInteger", ["a", "b"], ["y"]),
        [T("a", U8, ["m", 3]), T("b", U8, [3, 4])], opset=10)
    q = lambda yz, s=F: [T("a", I8, [2, 3]), T("as", s, [1]), T("az", I8, [1]),  # noqa: E731
                         T("b", I8, [3, 4]), T("bs", F, [1]), T("bz", I8, [1]),
                         T("ys", F, [1]), T("yz", yz, [1])]
    qnode = N("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
    one(out, "qlinear_output_type", qnode, q(TensorProto.INT32), opset=21)
    one(out, "qlinear_scale_types", qnode, q(I8, F16), opset=21)
    cache = [T("cache", F, [2, 4, 3]), T("upd", F, [2, 2, 3]), T("idx", I64, [2])]
    one(out, "tensor_scatter_mode", N("TensorScatter", ["cache", "upd", "idx"], ["y"],
                                      mode="wrap"), cache, opset=24)
    one(out, "tensor_scatter_axis", N("TensorScatter", ["cache", "upd", "idx"], ["y"], axis=0),
        cache, opset=24)
    one(out, "tensor_scatter_fit", N("TensorScatter", ["cache", "upd"], ["y"], axis=1),
        [T("cache", F, [2, 4, 3]), T("upd", F, [2, 5, 3])], opset=24)
    one(out, "tensor_scatter_indices", N("TensorScatter", ["cache", "upd", "idx"], ["y"]),
        [T("cache", F, [2, 4, 3]), T("upd", F, [2, 2, 3]), T("idx", I64, [3])], opset=24)
    one(out, "tensor_scatter_dynamic", N("TensorScatter", ["cache", "upd"], ["y"]),
        [T("cache", F, ["b", 4, 3]), T("upd", F, ["b", 2, 3])], opset=24)

    one(out, "qlinear_conv_scales",
        N("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"]),
        [T("x", U8, [1, 1, 3, 3]), T("xs", F, []), T("xz", U8, []), T("w", U8, [2, 1, 1, 1]),
         T("ws", F16, [2]), T("wz", U8, [2]), T("ys", F, []), T("yz", U8, [])], opset=10)
    one(out, "conv_integer_type", N("ConvInteger", ["x", "w"], ["y"]),
        [T("x", TensorProto.INT32, [1, 1, 3, 3]), T("w", U8, [2, 1, 2, 2])], opset=10)
    one(out, "conv_integer_dynamic", N("ConvInteger", ["x", "w"], ["y"]),
        [T("x", U8, ["n", 1, 3, 3]), T("w", U8, [2, 1, 2, 2])], opset=10)
    one(out, "det_square", N("Det", ["x"], ["y"]), [T("x", F, [2, 3])], opset=22)
    one(out, "det_int", N("Det", ["x"], ["y"]), [T("x", I64, [3, 3])], opset=22)
    one(out, "det_dynamic", N("Det", ["x"], ["y"]), [T("x", F, ["n", 3, 3])], opset=22)
    one(out, "det_large", N("Det", ["x"], ["y"]), [T("x", F, [33, 33])], opset=22)


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    os.makedirs(argv[1], exist_ok=True)
    valid(argv[1])
    signal(argv[1])
    grids(argv[1])
    errors(argv[1])


if __name__ == "__main__":
    main(sys.argv)
