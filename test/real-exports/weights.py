#!/usr/bin/env python3
# Strips the weights of an ONNX export down to per-tensor statistics, and
# restores seeded random weights with those statistics.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: weights.py strip IN.onnx OUT.onnx | weights.py restore IN.onnx OUT.onnx [--external-data]

A full torchvision export is 5-500 MiB, almost all of it weights. The
real-exports zoo keeps what the exporter wrote -- every node, attribute, shape
chain and constant -- and replaces each float initializer of more than
KEEP_ELEMENTS elements by its shape plus its mean, standard deviation, minimum
and maximum (in the initializer's doc_string). `restore` draws normal values
with that mean and deviation, clipped to [min, max], seeded by the tensor's
name, so a restored model is the same on every machine and its activations
keep the magnitudes of the original (a positive running variance stays
positive, a BN-folded conv keeps its scale). A stripped model is not a valid
model until restored: onnxruntime refuses an initializer without data.
`restore --external-data` writes the weights to OUT.onnx.data next to OUT.onnx
(ONNX external data, as exporters write models over 2 GiB).
"""

import os
import sys
import zlib

import numpy as np
import onnx
from onnx import numpy_helper

KEEP_ELEMENTS = 64
MARK = "kiln-stripped"
FLOATS = (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE)


def initializers(model):
    """Every initializer, including those of subgraphs (If/Loop bodies)."""
    def walk(graph):
        yield from graph.initializer
        for node in graph.node:
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    yield from walk(attr.g)
                for g in attr.graphs:
                    yield from walk(g)
    yield from walk(model.graph)


def strip(model):
    count = 0
    for init in initializers(model):
        if init.data_type not in FLOATS or int(np.prod(init.dims)) <= KEEP_ELEMENTS:
            continue
        value = numpy_helper.to_array(init).astype(np.float64)
        stats = (value.mean(), value.std(), value.min(), value.max())
        dims, name, dtype = list(init.dims), init.name, init.data_type
        init.Clear()
        init.name, init.data_type = name, dtype
        init.dims.extend(dims)
        init.doc_string = MARK + " " + " ".join(f"{s:.9g}" for s in stats)
        count += 1
    return count


def restore(model):
    count = 0
    for init in initializers(model):
        if not init.doc_string.startswith(MARK):
            continue
        mean, std, low, high = (float(s) for s in init.doc_string.split()[1:])
        rng = np.random.default_rng(zlib.crc32(init.name.encode()))
        value = np.clip(rng.normal(mean, std, list(init.dims)), low, high)
        dtype = onnx.helper.tensor_dtype_to_np_dtype(init.data_type)
        init.CopyFrom(numpy_helper.from_array(value.astype(dtype), init.name))
        count += 1
    return count


def main():
    args = sys.argv[1:]
    external = "--external-data" in args
    if external:
        args.remove("--external-data")
    if len(args) != 3 or args[0] not in ("strip", "restore") or (external and args[0] != "restore"):
        sys.exit(__doc__)
    model = onnx.load(args[1])
    count = (strip if args[0] == "strip" else restore)(model)
    if external:
        onnx.save(model, args[2], save_as_external_data=True, all_tensors_to_one_file=True,
                  location=os.path.basename(args[2]) + ".data")
    else:
        onnx.save(model, args[2])
    print(f"{args[0]}: {count} initializers, {args[2]}")


if __name__ == "__main__":
    main()
