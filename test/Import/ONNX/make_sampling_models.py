#!/usr/bin/env python3
# Writes the models of sampling.test and error-sampling.test (deterministic).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: make_sampling_models.py OUTDIR

Models for Resize's weight-matrix path (ResizeHandlers.cpp: antialias,
exclude_outside, tf_crop_and_resize) and TfIdfVectorizer (TextHandlers.cpp):
valid models, and one model per diagnostic of those paths.
"""

import os
import sys

import numpy as np
from onnx import TensorProto

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_models import F, I64, T, N, init, make, save  # noqa: E402

I32 = TensorProto.INT32


def one(out, name, node, inputs, inits=(), opset=19):
    outs = [T(o, None) for o in node.output if o]
    save(out, name, make([node], inputs, outs, list(inits), opset=opset, ir=10))


def resize(out, name, x, inits, inputs=("x", "", "sc"), opset=19, **attrs):
    one(out, name, N("Resize", list(inputs), ["y"], name="rs", **attrs), [x], inits, opset)


def sc(*v):
    return init("sc", np.array(v, np.float32))


def sz(*v):
    return init("sz", np.array(v, np.int64))


def roi(*v):
    return init("roi", np.array(v, np.float32))


TFIDF = dict(mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=1,
             pool_int64s=[2, 3, 5, 4, 5, 6, 7, 8], ngram_counts=[0, 4],
             ngram_indexes=[0, 1, 2, 3, 4, 5])


def tfidf(out, name, x, opset=9, **attrs):
    merged = dict(TFIDF)
    merged.update(attrs)
    merged = {k: v for k, v in merged.items() if v is not None}
    one(out, name, N("TfIdfVectorizer", ["x"], ["y"], name="tf", **merged), [x], opset=opset)


def valid(out):
    x = T("x", F, [1, 1, 4, 4])
    resize(out, "resize_antialias", x, [sc(1, 1, 0.5, 0.5)], mode="linear", antialias=1)
    resize(out, "resize_antialias_one_axis", x, [sc(1, 1, 1, 0.5)], mode="cubic",
           antialias=1)
    resize(out, "resize_crop", x, [roi(0.5, -0.5, 1.0, 1.0), sz(2, 3)],
           inputs=("x", "roi", "", "sz"), mode="nearest", axes=[2, 3],
           coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=7.0)
    resize(out, "resize_exclude_f16", T("x", TensorProto.FLOAT16, [1, 1, 2, 4]),
           [sc(1, 1, 1, 2)], mode="cubic", exclude_outside=1)
    tfidf(out, "tfidf", T("x", I32, [2, 5]), mode="IDF", weights=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    tfidf(out, "tfidf_1d", T("x", I64, [4]), min_gram_length=2, max_skip_count=0)
    one(out, "deform_conv", N("DeformConv", ["x", "w", "off"], ["y"], name="dc"),
        [T("x", F, [1, 2, 4, 4]), T("w", F, [3, 2, 2, 2]), T("off", F, [1, 8, 3, 3])])
    one(out, "roi_align", N("RoiAlign", ["x", "r", "b"], ["y"], name="ra", output_height=2,
                            output_width=2, sampling_ratio=2),
        [T("x", F, [1, 2, 4, 4]), T("r", F, [3, 4]), T("b", I64, [3])])


def errors(out):
    x = T("x", F, [1, 1, 4, 4])
    resize(out, "resize_exclude_range", x, [sc(1, 1, 2, 2)], mode="cubic", exclude_outside=2)
    resize(out, "resize_weights_dynamic", T("x", F, ["n", 1, 4, 4]), [sc(1, 1, 0.5, 0.5)],
           mode="linear", antialias=1)
    resize(out, "resize_weights_int", T("x", I64, [1, 1, 4, 4]), [sc(1, 1, 0.5, 0.5)],
           mode="linear", antialias=1)
    resize(out, "resize_crop_no_roi", x, [sz(1, 1, 3, 3)], inputs=("x", "", "", "sz"),
           mode="linear", coordinate_transformation_mode="tf_crop_and_resize")
    resize(out, "resize_crop_roi_length", x, [roi(0, 0, 1), sz(1, 1, 3, 3)],
           inputs=("x", "roi", "", "sz"), mode="linear",
           coordinate_transformation_mode="tf_crop_and_resize")
    one(out, "resize_crop_roi_computed",
        N("Resize", ["x", "r", "", "sz"], ["y"], name="rs", mode="linear",
          coordinate_transformation_mode="tf_crop_and_resize"),
        [x, T("r", F, [8])], [sz(1, 1, 3, 3)])

    tokens = T("x", I64, [2, 5])
    tfidf(out, "tfidf_mode", tokens, mode="BM25")
    tfidf(out, "tfidf_strings", tokens, pool_int64s=None, pool_strings=["a", "b"])
    tfidf(out, "tfidf_no_pool", tokens, pool_int64s=None)
    tfidf(out, "tfidf_negative_index", tokens, ngram_indexes=[0, -1, 2, 3, 4, 5])
    tfidf(out, "tfidf_weights_short", tokens, mode="TFIDF", weights=[1.0, 2.0])
    tfidf(out, "tfidf_float_tokens", T("x", F, [2, 5]))
    tfidf(out, "tfidf_rank", T("x", I64, [2, 2, 5]))
    tfidf(out, "tfidf_dynamic", T("x", I64, ["n", 5]))
    tfidf(out, "tfidf_counts", tokens, ngram_counts=[0, 9])
    tfidf(out, "tfidf_indexes_short", tokens, ngram_indexes=[0, 1, 2])
    tfidf(out, "tfidf_min_length", tokens, min_gram_length=0)

    dc_in = [T("x", F, [1, 2, 4, 4]), T("w", F, [3, 2, 2, 2]), T("off", F, [1, 8, 3, 3])]
    dc = lambda **a: N("DeformConv", ["x", "w", "off"], ["y"], name="dc", **a)  # noqa: E731
    one(out, "deform_conv_offset_shape", dc(), dc_in[:2] + [T("off", F, [1, 8, 2, 3])])
    one(out, "deform_conv_rank", dc(), [T("x", F, [1, 2, 4]), T("w", F, [3, 2, 2]),
                                        T("off", F, [1, 4, 3])])
    one(out, "deform_conv_width_one", dc(kernel_shape=[2, 1]),
        [T("x", F, [1, 2, 4, 1]), T("w", F, [3, 2, 2, 1]), T("off", F, [1, 4, 3, 1])])
    one(out, "deform_conv_offset_group", dc(offset_group=3), dc_in)
    ra_in = [T("x", F, [1, 2, 4, 4]), T("r", F, [3, 4]), T("b", I64, [3])]
    ra = lambda **a: N("RoiAlign", ["x", "r", "b"], ["y"], name="ra", **a)  # noqa: E731
    one(out, "roi_align_adaptive", ra(), ra_in)
    one(out, "roi_align_mode", ra(mode="sum", sampling_ratio=2), ra_in)
    one(out, "roi_align_transform", ra(coordinate_transformation_mode="corner",
                                       sampling_ratio=2), ra_in)
    one(out, "roi_align_rois", ra(sampling_ratio=2), [ra_in[0], T("r", F, [3, 5]), ra_in[2]])


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    os.makedirs(argv[1], exist_ok=True)
    valid(argv[1])
    errors(argv[1])


if __name__ == "__main__":
    main(sys.argv)
