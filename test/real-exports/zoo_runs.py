# The run-time sizes and inputs the real-exports zoo is checked at, and onnxruntime's outputs.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Shared by test/e2e/run_real_exports.py (the CPU check here) and
test/real-exports/cuda_bundle.py (the CUDA check on a GPU machine), so that
both run each model at the same sizes on the same inputs.

A model's first symbolic input dim is the batch, a second one the sequence;
each size (batch, seq) draws its inputs from a generator seeded by the size.
"""

import numpy as np
import onnx

SIZES = [(1, 8), (3, 13)]  # (batch, sequence) per run
DTYPES = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.INT64: np.int64}


def graph_inputs(model):
    """The graph inputs that are not initializers."""
    initializers = {init.name for init in model.graph.initializer}
    return [value for value in model.graph.input if value.name not in initializers]


def input_shape(value, batch, seq):
    """The input's dims at this size: its first symbolic dim the batch, a second the sequence."""
    dims, symbolic = [], 0
    for dim in value.type.tensor_type.shape.dim:
        if dim.HasField("dim_value"):
            dims.append(dim.dim_value)
        else:
            dims.append(batch if symbolic == 0 else seq)
            symbolic += 1
    return dims


def has_sequence(model):
    """Whether an input has a second symbolic dim (runs then vary the sequence too)."""
    return any(sum(not d.HasField("dim_value") for d in v.type.tensor_type.shape.dim) > 1
               for v in graph_inputs(model))


def size_label(model, batch, seq):
    return f"batch={batch}" + (f" seq={seq}" if has_sequence(model) else "")


def sample_inputs(model, batch, seq):
    """{name: array} at this size: token ids in [0, 100), else standard normal floats."""
    rng = np.random.default_rng(batch * 100 + seq)
    inputs = {}
    for value in graph_inputs(model):
        dims = input_shape(value, batch, seq)
        dtype = DTYPES[value.type.tensor_type.elem_type]
        inputs[value.name] = (rng.integers(0, 100, dims) if dtype == np.int64
                              else rng.standard_normal(dims)).astype(dtype)
    return inputs


def reference(model_path, inputs):
    """onnxruntime's outputs (CPU provider, graph optimizations off)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, inputs)))


def weak_reference_note(reference):
    """A note when the reference cannot tell a wrong kernel from a right one:
    every output the same for each batch row (the restored weights let the
    input fade out, e.g. GoogLeNet's std-0.01 init through 20 layers) or all
    zero (torchvision's ViT zero-initializes its head)."""
    for value in reference.values():
        if value.dtype.kind == "f" and not np.any(value):
            return " (weak: the reference is all zero)"
        if value.dtype.kind == "f" and value.ndim and value.shape[0] > 1 and \
                np.array_equal(value, np.broadcast_to(value[:1], value.shape)):
            return " (weak: the reference is the same for every batch row)"
    return ""
