# ONNX graph surgery for kilnc verify: node names, exposed intermediate values, sub-graphs.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The model edits of the verifier (docs/verify.md).

Every function returns a new ModelProto and leaves its argument alone. Node
order is the graph's own, which ONNX requires to be topological.
"""

import copy

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# Integer operands this small become initializers in a reproducer: Kiln reads
# shape-deciding operands (Reshape's shape, Slice's bounds) at compile time.
SMALL_INTEGER_ELEMENTS = 64


def name_nodes(model):
    """A copy whose every node has a unique name (unnamed ones get `OP_INDEX`):
    reports, fusion reports and bisection all speak of nodes by name."""
    model = copy.deepcopy(model)
    seen = set()
    for index, node in enumerate(model.graph.node):
        if not node.name or node.name in seen:
            base = f"{node.op_type}_{index}"
            name, suffix = base, 0
            while name in seen:
                suffix += 1
                name = f"{base}_{suffix}"
            node.name = name
        seen.add(node.name)
    return model


def _subgraph_reads(graph):
    """Names a sub-graph (If/Loop/Scan body) reads from the enclosing scope."""
    defined = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    reads = []
    for node in graph.node:
        for name in node_reads(node):
            if name and name not in defined:
                reads.append(name)
        defined.update(node.output)
    return reads


def node_reads(node):
    """Every value `node` reads: its inputs and, for control flow, the outer
    values its sub-graphs read."""
    reads = [n for n in node.input if n]
    for attribute in node.attribute:
        graphs = list(attribute.graphs)
        if attribute.HasField("g"):
            graphs.append(attribute.g)
        for graph in graphs:
            reads += _subgraph_reads(graph)
    return reads


def graph_input_names(model):
    initializers = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in initializers]


def inferred_types(model):
    """name -> TypeProto of every value onnx shape inference knows."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    except Exception:  # inference is best effort; unknown values are skipped
        inferred = model
    graph = inferred.graph
    types = {}
    for info in list(graph.value_info) + list(graph.input) + list(graph.output):
        if info.type.HasField("tensor_type") and info.type.tensor_type.elem_type:
            types[info.name] = info.type
    return types


def node_values(model, types):
    """[(node index, output name)] of every node output with a known tensor type,
    in topological order: the values bisection compares."""
    values = []
    for index, node in enumerate(model.graph.node):
        for name in node.output:
            if name and name in types:
                values.append((index, name))
    return values


def with_outputs(model, names, types):
    """A copy whose graph outputs are exactly `names` (typed from `types`)."""
    model = copy.deepcopy(model)
    del model.graph.output[:]
    for name in names:
        info = onnx.ValueInfoProto()
        info.name = name
        info.type.CopyFrom(types[name])
        model.graph.output.append(info)
    return model


def prefix(model, last, names, types):
    """Nodes 0..last with `names` as outputs; unused inputs and initializers go."""
    model = copy.deepcopy(model)
    kept = list(model.graph.node)[: last + 1]
    del model.graph.node[:]
    model.graph.node.extend(kept)
    model = with_outputs(model, names, types)
    read = {n for node in kept for n in node_reads(node)}
    _keep_only(model, read)
    return model


def _keep_only(model, read):
    graph = model.graph
    inputs = [i for i in graph.input if i.name in read]
    initializers = [t for t in graph.initializer if t.name in read]
    del graph.input[:]
    graph.input.extend(inputs)
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    del graph.value_info[:]


def _value_info(name, array):
    dtype = helper.np_dtype_to_tensor_dtype(array.dtype)
    return helper.make_tensor_value_info(name, dtype, list(array.shape))


def window(model, first, last, values, outputs, types):
    """A stand-alone model of nodes first..last. Values they read from outside
    the window come from `values` (the reference's): original initializers stay
    initializers, small integer tensors become initializers, the rest are graph
    inputs. Returns (model, {input name: array})."""
    source = model.graph
    nodes = list(source.node)[first: last + 1]
    produced = {n for node in nodes for n in node.output if n}
    initializers = {t.name: t for t in source.initializer}
    graph_inputs, feeds, new_initializers = [], {}, []
    seen = set()
    for node in nodes:
        for name in node_reads(node):
            if name in produced or name in seen:
                continue
            seen.add(name)
            if name in initializers:
                new_initializers.append(initializers[name])
                continue
            array = np.asarray(values[name])
            small_integer = array.dtype.kind in "iu" and array.size <= SMALL_INTEGER_ELEMENTS
            if small_integer:
                new_initializers.append(numpy_helper.from_array(array, name))
            else:
                graph_inputs.append(_value_info(name, array))
                feeds[name] = array
    graph = helper.make_graph(
        [copy.deepcopy(n) for n in nodes], f"{source.name or 'model'}_reproducer",
        graph_inputs, [], new_initializers)
    result = helper.make_model(graph, opset_imports=list(model.opset_import))
    result.ir_version = model.ir_version
    for function in model.functions:
        result.functions.append(function)
    result = with_outputs(result, outputs, types)
    return result, feeds


def merge_disjoint(models, prefixes):
    """One model holding every model of `models` side by side (names prefixed),
    so that one compile checks several graphs. Opsets: the highest of each domain."""
    nodes, inputs, outputs, initializers = [], [], [], []
    opsets = {}
    for model, tag in zip(models, prefixes):
        renamed = _prefixed(model.graph, tag)
        nodes += renamed.node
        inputs += renamed.input
        outputs += renamed.output
        initializers += renamed.initializer
        for opset in model.opset_import:
            opsets[opset.domain] = max(opsets.get(opset.domain, 0), opset.version)
    graph = helper.make_graph(nodes, "merged", inputs, outputs, initializers)
    merged = helper.make_model(
        graph, opset_imports=[helper.make_opsetid(d, v) for d, v in sorted(opsets.items())])
    merged.ir_version = max(m.ir_version for m in models)
    return merged


def _prefixed(graph, tag):
    graph = copy.deepcopy(graph)

    def rename(name):
        return f"{tag}{name}" if name else name

    for node in graph.node:
        node.name = rename(node.name)
        node.input[:] = [rename(n) for n in node.input]
        node.output[:] = [rename(n) for n in node.output]
    for collection in (graph.input, graph.output, graph.value_info):
        for info in collection:
            info.name = rename(info.name)
    for tensor in graph.initializer:
        tensor.name = rename(tensor.name)
    return graph


def elem_type_name(type_proto):
    return TensorProto.DataType.Name(type_proto.tensor_type.elem_type).lower()
