#!/usr/bin/env python3
# Writes the external-data models of the importer's lit tests (deterministic).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: make_external_models.py OUTDIR

OUTDIR/ext/<case>/model.onnx: an Add whose weight lives in an external file,
one folder per case -- a good one, and the hostile ones the importer must
refuse (paths escaping the model's folder through `..`, absolute paths and
symlinks, offsets and lengths past the end or overflowing, a missing file),
plus dims whose byte count overflows, raw data of the wrong size and large
weights written by onnx's own external-data writer.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_models import F, N, T, init, make, rand, save  # noqa: E402


def external_model(location, offset=None, length=None, dims=(4,), x_dims=None):
    w = TensorProto(name="w", data_type=F, dims=list(dims))
    w.data_location = TensorProto.EXTERNAL
    for key, value in [("location", location), ("offset", offset), ("length", length)]:
        if value is not None:
            entry = w.external_data.add()
            entry.key, entry.value = key, str(value)
    return make([N("Add", ["x", "w"], ["y"])], [T("x", F, list(x_dims or dims))],
                [T("y")], [w])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    root = os.path.join(out, "ext")
    os.makedirs(root, exist_ok=True)
    secret = os.path.join(root, "secret.bin")
    with open(secret, "wb") as f:
        f.write(np.arange(64, dtype=np.float32).tobytes())
    cases = {
        "good": ("weights.bin", 16, 16), "dotdot": ("../secret.bin", None, None),
        "nested_dotdot": ("a/../../secret.bin", None, None),
        "absolute": (secret, None, None),
        "symlink_file": ("link.bin", None, None),
        "symlink_dir": ("linkdir/secret.bin", None, None),
        "offset_past_end": ("weights.bin", 4096, None),
        "length_past_end": ("weights.bin", 250, None),
        "length_mismatch": ("weights.bin", 0, 12),
        "overflow_length": ("weights.bin", 0, 2**64 - 1),
        "overflow_offset": ("weights.bin", 2**64 - 8, None),
        "missing_file": ("nothere.bin", None, None),
    }
    for case, (location, offset, length) in cases.items():
        directory = os.path.join(root, case)
        os.makedirs(os.path.join(directory, "a"), exist_ok=True)
        with open(os.path.join(directory, "weights.bin"), "wb") as f:
            f.write(np.arange(64, dtype=np.float32).tobytes())
        for link, target in [("link.bin", "../secret.bin"), ("linkdir", "..")]:
            path = os.path.join(directory, link)
            if not os.path.lexists(path):
                os.symlink(target, path)
        save(directory, "model", external_model(location, offset, length))
    # Dims whose byte count overflows, and raw data of the wrong size.
    big = external_model("weights.bin", dims=(2**40, 2**40), x_dims=(1,))
    save(os.path.join(root, "good"), "overflow_dims", big)
    w = init("w", np.arange(4, dtype=np.float32))
    w.raw_data = w.raw_data[:12]
    save(root, "raw_size_mismatch",
         make([N("Add", ["x", "w"], ["y"])], [T("x", F, [4])], [T("y")], [w]))
    # Large weights from onnx's own external-data writer resolve and map.
    model = make([N("MatMul", ["x", "big"], ["y"])], [T("x", F, [1, 64])], [T("y")],
                 [init("big", rand(64, 32))])
    directory = os.path.join(root, "onnx_writer")
    os.makedirs(directory, exist_ok=True)
    onnx.save_model(model, os.path.join(directory, "model.onnx"),
                    save_as_external_data=True, location="data.bin", size_threshold=0)


if __name__ == "__main__":
    main()
