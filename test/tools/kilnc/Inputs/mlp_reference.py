# The float64 reference of examples/mlp.mlir: its constants read from the file, one input.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: mlp_reference.py MLP.mlir OUT_DIR

Writes OUT_DIR/image.npy (a fixed 1x8x1x1 image; some hidden units come out negative,
so the relu matters) and OUT_DIR/expected/output_0.npy = softmax(relu(x W1^T + b1) W2),
with W1, b1, W2 parsed from the model's kiln.constant ops.
"""

import json
import os
import re
import sys

import numpy as np


def constants(text):
    """{name: array} of the `%name = kiln.constant dense<[...]> : tensor<AxBxf32>` ops."""
    found = {}
    pattern = r"%(\w+) = kiln\.constant dense<(\[.*?\])> : tensor<([\dx]+)xf32>"
    for name, values, shape in re.findall(pattern, text, re.S):
        dims = [int(d) for d in shape.split("x")]
        found[name] = np.array(json.loads(values), np.float64).reshape(dims)
    return found


def main():
    model, out = sys.argv[1], sys.argv[2]
    with open(model) as f:
        c = constants(f.read())
    image = np.linspace(-1.0, 1.0, 8, dtype=np.float32).reshape(1, 8, 1, 1)
    h = np.maximum(image.reshape(1, 8).astype(np.float64) @ c["w1"].T + c["b1"], 0.0)
    y = h @ c["w2"]
    p = np.exp(y - y.max()) / np.exp(y - y.max()).sum()
    os.makedirs(os.path.join(out, "expected"), exist_ok=True)
    np.save(os.path.join(out, "image.npy"), image)
    np.save(os.path.join(out, "expected", "output_0.npy"), p.astype(np.float32))
    print("reference:", " ".join(f"{v:.6f}" for v in p.ravel()),
          "hidden units clipped by relu:", int((h == 0).sum()))


if __name__ == "__main__":
    main()
