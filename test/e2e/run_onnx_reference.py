# ONNX ops that the importer composes from kiln ops (Resize's weight-matrix
# path, TfIdfVectorizer, DeformConv, RoiAlign-16; the reference ignores
# RoiAlign-10's older default coordinates), compiled for the CPU and
# checked against ONNX's reference implementation (onnx.reference) on
# variants the ONNX backend node tests do not cover.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: run_onnx_reference.py WORKDIR --kilnc PATH --kiln-run PATH [--filter RE]

Each case is one node with seeded inputs; shape-deciding operands (Resize's
scales/sizes/roi) are initializers. Outputs must match the reference within
rtol 1e-3, atol 1e-5, in the reference's dtype (integer and bool outputs: exactly;
scripts/compare_outputs.py). Prints one PASS/FAIL
line per case and a summary; exits 1 if any case fails.
"""

import argparse
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from compare_outputs import mismatch  # noqa: E402

RNG = np.random.default_rng(20261202)
F, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64


def rand(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, size=shape).astype(np.float32)


def case(name, op, inputs, out_names=("y",), inits=None, opset=22, **attrs):
    """inputs: {name: array} fed at run time; inits: {name: array} baked in
    (an empty name in `order` skips an optional input)."""
    inits = inits or {}
    order = attrs.pop("order", None) or list(inputs) + list(inits)
    node = helper.make_node(op, order, list(out_names), **attrs)
    graph_inputs = [helper.make_tensor_value_info(
        n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape) for n, v in inputs.items()]
    outputs = [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in out_names]
    graph = helper.make_graph([node], name, graph_inputs, outputs,
                              [numpy_helper.from_array(v, n) for n, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return name, model, inputs


def resize_cases():
    x = rand(2, 3, 9, 7)
    s = lambda *v: np.array(v, np.float32)  # noqa: E731
    z = lambda *v: np.array(v, np.int64)  # noqa: E731
    empty = np.array([], np.float32)
    return [
        case("resize_linear_antialias_uneven", "Resize", {"x": x},
             inits={"roi": empty, "scales": s(1, 1, 0.4, 0.6)}, mode="linear", antialias=1),
        case("resize_cubic_antialias_axes", "Resize", {"x": x},
             inits={"roi": empty, "scales": s(0.3, 0.5)}, mode="cubic", antialias=1,
             axes=[3, 2]),
        case("resize_cubic_antialias_upsample", "Resize", {"x": x},
             inits={"roi": empty, "scales": s(1, 1, 1.7, 0.5)}, mode="cubic", antialias=1,
             cubic_coeff_a=-0.5),
        case("resize_linear_antialias_sizes_align", "Resize", {"x": x},
             inits={"roi": empty, "sizes": z(2, 3, 4, 3)}, mode="linear", antialias=1,
             coordinate_transformation_mode="align_corners", order=["x", "roi", "", "sizes"]),
        case("resize_cubic_exclude_asymmetric", "Resize", {"x": x},
             inits={"roi": empty, "scales": s(1, 1, 1.5, 2.0)}, mode="cubic", exclude_outside=1,
             coordinate_transformation_mode="asymmetric"),
        case("resize_cubic_exclude_not_larger", "Resize", {"x": x},
             inits={"roi": empty, "sizes": z(5, 5)}, mode="cubic", exclude_outside=1,
             axes=[2, 3], keep_aspect_ratio_policy="not_larger",
             order=["x", "roi", "", "sizes"]),
        case("resize_crop_nearest_extrapolate", "Resize", {"x": x},
             inits={"roi": s(0.2, -0.3, 1.1, 0.9), "sizes": z(6, 8)}, mode="nearest",
             coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-3.0,
             axes=[2, 3], order=["x", "roi", "", "sizes"]),
        case("resize_crop_cubic_all_axes", "Resize", {"x": x},
             inits={"roi": s(0, 0, 0.1, 0.3, 1, 1, 0.7, 1.2), "sizes": z(2, 3, 5, 4)},
             mode="cubic", coordinate_transformation_mode="tf_crop_and_resize",
             order=["x", "roi", "", "sizes"]),
        case("resize_crop_linear_one_row", "Resize", {"x": x},
             inits={"roi": s(0.25, 0.1, 0.75, 0.8), "sizes": z(1, 3)}, mode="linear",
             coordinate_transformation_mode="tf_crop_and_resize", axes=[2, 3],
             order=["x", "roi", "", "sizes"]),
    ]


def tfidf_cases():
    pool = [2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 5, 5, 5]  # unigrams 2 3 5 4; bigrams; a trigram
    counts = [0, 4, 10]
    tokens = RNG.integers(2, 9, size=(3, 11))
    common = dict(pool_int64s=pool, ngram_counts=counts, ngram_indexes=[0, 1, 2, 3, 4, 5, 6, 7],
                  min_gram_length=1, max_gram_length=3, max_skip_count=2)
    weights = [0.5, 1.5, 2.0, 0.25, 3.0, 1.0, 0.75, 4.0]
    return [
        case("tfidf_tf_uni_to_tri", "TfIdfVectorizer", {"x": tokens.astype(np.int64)}, opset=9,
             mode="TF", **common),
        case("tfidf_idf_weights", "TfIdfVectorizer", {"x": tokens.astype(np.int32)}, opset=9,
             mode="IDF", weights=weights, **common),
        case("tfidf_tfidf_weights_1d", "TfIdfVectorizer", {"x": tokens[0].astype(np.int32)},
             opset=9, mode="TFIDF", weights=weights, **common),
        case("tfidf_bigrams_shared_column", "TfIdfVectorizer",
             {"x": tokens.astype(np.int64)}, opset=9, mode="TF", pool_int64s=[5, 6, 7, 8, 5, 6],
             ngram_counts=[0, 0], ngram_indexes=[1, 0, 1], min_gram_length=2,
             max_gram_length=2, max_skip_count=4),
    ]


def sampling_cases():
    x = rand(2, 4, 7, 6)
    w = rand(6, 2, 3, 2)
    offset = rand(2, 2 * 2 * 3 * 2, 3, 3, low=-2.0, high=2.0)
    mask = rand(2, 2 * 3 * 2, 3, 3, low=0.0, high=1.0)
    rois = np.array([[0.5, 1.0, 9.0, 12.0], [-3.0, -2.0, 4.0, 3.0], [2.0, 2.0, 2.5, 2.2],
                     [10.0, 11.0, 16.0, 15.0]], np.float32)
    batch = np.array([1, 0, 1, 0], np.int64)
    feature = rand(2, 3, 7, 8)
    return [
        case("deform_conv_groups_stride_dilation", "DeformConv",
             {"x": x, "w": w, "offset": offset, "b": rand(6), "mask": mask}, opset=19,
             group=2, offset_group=2, strides=[2, 2], dilations=[2, 1], pads=[2, 1, 1, 0]),
        case("deform_conv_no_offsets_is_conv", "DeformConv",
             {"x": x, "w": rand(3, 4, 2, 2), "offset": np.zeros((2, 8, 6, 5), np.float32)},
             opset=22),
        case("roi_align_avg_scaled", "RoiAlign", {"x": feature, "rois": rois, "b": batch},
             opset=16, output_height=3, output_width=2, sampling_ratio=3, spatial_scale=0.5),
        case("roi_align_max_output_half_pixel", "RoiAlign",
             {"x": feature, "rois": rois, "b": batch}, opset=16, mode="max",
             coordinate_transformation_mode="output_half_pixel", output_height=2,
             output_width=4, sampling_ratio=1, spatial_scale=0.5),
    ]


GROUPS = {"resize": resize_cases, "sampling": sampling_cases, "tfidf": tfidf_cases}


def run(args, name, model, inputs):
    case_dir = os.path.join(args.work, name)
    os.makedirs(case_dir, exist_ok=True)
    path = os.path.join(case_dir, "model.onnx")
    onnx.save(model, path)
    so = os.path.join(case_dir, "model.so")
    compiled = subprocess.run([args.kilnc, path, "-o", so], capture_output=True, text=True)
    if compiled.returncode != 0:
        raise RuntimeError("compile failed: " + compiled.stderr.strip())
    command = [args.kiln_run, so, "--output-dir", os.path.join(case_dir, "out"),
               "--threads", "2"]
    for input_name, value in inputs.items():
        np.save(os.path.join(case_dir, input_name + ".npy"), value)
        command += ["--input", f"{input_name}={os.path.join(case_dir, input_name + '.npy')}"]
    ran = subprocess.run(command, capture_output=True, text=True)
    if ran.returncode != 0:
        raise RuntimeError("run failed: " + (ran.stderr.strip() or ran.stdout.strip()))
    return [np.load(os.path.join(case_dir, "out", o.name + ".npy")) for o in model.graph.output]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("group", choices=sorted(GROUPS) + ["all"])
    parser.add_argument("work")
    parser.add_argument("--kilnc", required=True)
    parser.add_argument("--kiln-run", required=True)
    parser.add_argument("--filter", default="")
    args = parser.parse_args()
    groups = sorted(GROUPS) if args.group == "all" else [args.group]
    passed = failed = 0
    for group in groups:
        for name, model, inputs in GROUPS[group]():
            if not re.search(args.filter, name):
                continue
            want = ReferenceEvaluator(model).run(None, inputs)
            try:
                got = run(args, name, model, inputs)
                problems = []
                for output, w, g in zip(model.graph.output, want, got):
                    problem = mismatch(g, w, rtol=1e-3, atol=1e-5)
                    if problem:
                        problems.append(f"{output.name}: {problem}")
                if problems:
                    raise RuntimeError("; ".join(problems))
                print(f"PASS: {name}")
                passed += 1
            except RuntimeError as e:
                print(f"FAIL: {name}\n  {e}")
                failed += 1
    print(f"{args.group}: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
