# kilnc quantize: the QDQ rewrite of an ONNX graph.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Inserts QuantizeLinear/DequantizeLinear pairs in the format onnxruntime's
quantizer writes (QDQ): around each Conv, MatMul and Gemm whose weight is a
constant, the activation inputs go through Q -> DQ (8-bit, one scale per
tensor) and the weight becomes an int8 initializer read through DQ (per
output channel by default). Biases and every other op stay float; a runtime
that understands QDQ (onnxruntime, Kiln) turns the pattern into integer
arithmetic.
"""

import onnx
from onnx import TensorProto, helper, numpy_helper

import calibration

QUANTIZABLE = ("Conv", "MatMul", "Gemm")


def weight_axis(node, weight):
    """The output-channel axis of a node's weight: Conv's filters [F, C, ...]
    axis 0; MatMul's [K, N] axis 1; Gemm's B [K, N] (or [N, K] with transB)."""
    if node.op_type == "Conv":
        return 0
    if node.op_type == "Gemm":
        trans = next((a.i for a in node.attribute if a.name == "transB"), 0)
        return 0 if trans else 1
    return weight.ndim - 1


class Plan:
    """What to quantize: per node, which inputs are activations and which
    is its constant weight (input 1)."""

    def __init__(self, model):
        self.inits = {i.name: i for i in model.graph.initializer}
        self.nodes = []  # (node, activation input names, weight name)
        for node in model.graph.node:
            if node.op_type not in QUANTIZABLE or node.domain not in ("", "ai.onnx"):
                continue
            if len(node.input) < 2 or node.input[1] not in self.inits:
                continue
            if self.inits[node.input[1]].data_type != TensorProto.FLOAT:
                continue
            self.nodes.append((node, [node.input[0]], node.input[1]))

    def activations(self):
        """The activation tensors to calibrate, in graph order, once each."""
        seen = []
        for _, names, _ in self.nodes:
            for name in names:
                if name not in seen:
                    seen.append(name)
        return seen


def rewrite(model, plan, ranges, per_channel=True, signed_activations=False):
    """Returns a QDQ copy of `model`; `ranges` maps each activation of the
    plan to its calibrated (lo, hi)."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    graph = out.graph
    new_inits, new_nodes = [], {}  # nodes to insert before a node's index
    activation_dq = {}
    for name in plan.activations():
        lo, hi = ranges[name]
        scale, zero = calibration.activation_params(lo, hi, signed_activations)
        base = f"{name}_kq"
        new_inits += [numpy_helper.from_array(scale, f"{base}_scale"),
                      numpy_helper.from_array(zero, f"{base}_zero_point")]
        activation_dq[name] = (
            [helper.make_node("QuantizeLinear", [name, f"{base}_scale", f"{base}_zero_point"],
                              [f"{base}_q"], name=f"{base}_QuantizeLinear"),
             helper.make_node("DequantizeLinear",
                              [f"{base}_q", f"{base}_scale", f"{base}_zero_point"],
                              [f"{base}_dq"], name=f"{base}_DequantizeLinear")],
            f"{base}_dq")
    weight_dq = {}
    for node, _, weight_name in plan.nodes:
        if weight_name in weight_dq:
            continue
        weight = numpy_helper.to_array(plan.inits[weight_name])
        axis = weight_axis(node, weight) if per_channel and weight.ndim > 1 else None
        q, scale, zero = calibration.weight_params(weight, axis)
        base = f"{weight_name}_kq"
        new_inits += [numpy_helper.from_array(q, f"{base}_int8"),
                      numpy_helper.from_array(scale if axis is not None else scale.reshape(()),
                                              f"{base}_scale"),
                      numpy_helper.from_array(zero if axis is not None else zero.reshape(()),
                                              f"{base}_zero_point")]
        attrs = {"axis": axis} if axis is not None else {}
        weight_dq[weight_name] = (
            helper.make_node("DequantizeLinear",
                             [f"{base}_int8", f"{base}_scale", f"{base}_zero_point"],
                             [f"{base}_dq"], name=f"{base}_DequantizeLinear", **attrs),
            f"{base}_dq")
    # Rewire the quantized nodes (`graph` is a copy of `model.graph`, node
    # for node); each Q/DQ goes right before its first user.
    placed = set()
    rebuilt = []
    for original in model.graph.node:
        copy = onnx.NodeProto()
        copy.CopyFrom(original)
        match = next(((names, weight) for node, names, weight in plan.nodes
                      if node is original), None)
        if match:
            names, weight_name = match
            for name in names:
                if name not in placed:
                    rebuilt += activation_dq[name][0]
                    placed.add(name)
                copy.input[0] = activation_dq[name][1]
            if weight_name not in placed:
                rebuilt.append(weight_dq[weight_name][0])
                placed.add(weight_name)
            copy.input[1] = weight_dq[weight_name][1]
        rebuilt.append(copy)
    del graph.node[:]
    graph.node.extend(rebuilt)
    graph.initializer.extend(new_inits)
    # Weights no float node reads any more are dropped.
    read = {i for n in graph.node for i in n.input}
    keep = [i for i in graph.initializer if i.name in read or
            i.name in {o.name for o in graph.output}]
    del graph.initializer[:]
    graph.initializer.extend(keep)
    return out
