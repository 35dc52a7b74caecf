# The ONNX backend node test cases on disk: found in the onnx package or generated from it.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Where the node test cases come from, and how one case's data becomes .npy files.

The onnx wheel used to ship `onnx/backend/test/data/node/<case>/` (model.onnx and
test_data_set_0/{input,output}_N.pb). Recent wheels ship only the generators
(`onnx.backend.test.case.node`), so when the data directory is absent we run the
generators once and write the same layout, as ONNX's own `backend-test-tools
generate-data` does for model cases. `ops.json` next to the cases maps each case to
the ONNX op it tests (an `_expanded` case tests the same op through its function body).
"""

import json
import os
import re
import shutil

import numpy as np
import onnx
from onnx import numpy_helper

EXPANDED = re.compile(r"_expanded(_ver\d+)?$")
# What kiln-run reads and writes (docs/runtime.md, ".npy files").
NPY_DTYPES = {"float32", "float16", "float64", "int8", "uint8", "int16", "int32", "int64", "bool",
              "uint16", "uint32", "uint64"}
# ONNX types without a NumPy dtype: kiln-run reads and writes their raw bit patterns
# as this NumPy dtype when the model's signature has the type (docs/cli.md).
# The sub-byte types and E8M0 come from numpy_helper as ml_dtypes arrays, one byte per
# element with the element's bits low (int4 -1 is 0x0F), which is kiln-run's layout.
RAW_BITS = {onnx.TensorProto.BFLOAT16: np.uint16, onnx.TensorProto.FLOAT8E4M3FN: np.uint8,
            onnx.TensorProto.FLOAT8E4M3FNUZ: np.uint8, onnx.TensorProto.FLOAT8E5M2: np.uint8,
            onnx.TensorProto.FLOAT8E5M2FNUZ: np.uint8, onnx.TensorProto.INT4: np.uint8,
            onnx.TensorProto.UINT4: np.uint8, onnx.TensorProto.INT2: np.uint8,
            onnx.TensorProto.UINT2: np.uint8, onnx.TensorProto.FLOAT4E2M1: np.uint8,
            onnx.TensorProto.FLOAT8E8M0: np.uint8}


def shipped_node_dir():
    """The onnx package's own node test directory, or None if this wheel lacks it."""
    path = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
    return path if os.path.isdir(path) else None


def _write_value(path, value, type_proto, name):
    """Writes one input/output value as ONNX's test data .pb, like backend-test-tools."""
    if type_proto.HasField("sequence_type"):
        proto = numpy_helper.from_list(value, name)
    elif type_proto.HasField("optional_type"):
        proto = numpy_helper.from_optional(value, name)
    elif type_proto.HasField("map_type"):
        proto = numpy_helper.from_dict(value, name)
    elif isinstance(value, onnx.TensorProto):
        proto = value
    else:
        proto = numpy_helper.from_array(value, name)
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())


def generate_node_cases(out_dir):
    """Runs the onnx node test generators into out_dir (once per onnx version)."""
    stamp = os.path.join(out_dir, "ops.json")
    if os.path.exists(stamp):
        with open(stamp) as f:
            if json.load(f).get("onnx_version") == onnx.__version__:
                return out_dir
    import warnings
    import onnx.backend.test.case.node as node_cases  # slow import: 6 s of generators

    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = node_cases.collect_testcases(None)
    ops = {}
    for case in cases:
        graph = case.model.graph
        case_dir = os.path.join(out_dir, case.name)
        data_dir = os.path.join(case_dir, "test_data_set_0")
        os.makedirs(data_dir)
        with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        inputs, outputs = case.data_sets[0]
        for j, value in enumerate(inputs):
            _write_value(os.path.join(data_dir, f"input_{j}.pb"), value,
                         graph.input[j].type, graph.input[j].name)
        for j, value in enumerate(outputs):
            _write_value(os.path.join(data_dir, f"output_{j}.pb"), value,
                         graph.output[j].type, graph.output[j].name)
        if len(graph.node) == 1 and not EXPANDED.search(case.name):
            ops[case.name] = graph.node[0].op_type
    with open(stamp, "w") as f:
        json.dump({"onnx_version": onnx.__version__, "ops": ops}, f, indent=0, sort_keys=True)
    return out_dir


def list_cases(node_dir):
    """[(case name, op type)] for every case directory under node_dir, sorted by name."""
    ops = {}
    stamp = os.path.join(node_dir, "ops.json")
    if os.path.exists(stamp):
        with open(stamp) as f:
            ops = json.load(f)["ops"]
    names = sorted(d for d in os.listdir(node_dir)
                   if os.path.isfile(os.path.join(node_dir, d, "model.onnx")))
    result = []
    for name in names:
        op = ops.get(name) or ops.get(EXPANDED.sub("", name))
        if op is None:
            model = onnx.load(os.path.join(node_dir, name, "model.onnx"), load_external_data=False)
            op = model.graph.node[0].op_type if len(model.graph.node) == 1 else "(graph)"
        result.append((name, op))
    return result


def safe_name(name):
    """The file name kiln-run uses for a tensor name (kiln-run --output-dir/--compare)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def _read_tensor(path):
    proto = onnx.TensorProto()
    with open(path, "rb") as f:
        proto.ParseFromString(f.read())
    return numpy_helper.to_array(proto)


def read_constant_inputs(path):
    """{case: [input name, ...]} from lines `case input...  # why` (constant-inputs.txt)."""
    bound = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            if len(fields) < 2 or fields[0] in bound:
                raise ValueError(f"{path}:{number}: expected `case input...` once per case, "
                                 f"got '{line.strip()}'")
            bound[fields[0]] = fields[1:]
    return bound


def _graph_inputs(model):
    initializers = {t.name for t in model.graph.initializer}
    return [v for v in model.graph.input if v.name not in initializers]


def bind_constant_inputs(case_dir, work_dir, names):
    """Writes work_dir/model.onnx: case_dir's model with the graph inputs `names` made
    initializers holding test_data_set_0's values (onnx-mlir's CONSTANT_INPUT); returns
    its path. Raises ValueError if a name is not a graph input of the case."""
    model = onnx.load(os.path.join(case_dir, "model.onnx"), load_external_data=False)
    positions = {v.name: j for j, v in enumerate(_graph_inputs(model))}
    for name in names:
        if name not in positions:
            raise ValueError(f"constant input '{name}' is not a graph input of the case")
        array = _read_tensor(os.path.join(case_dir, "test_data_set_0",
                                          f"input_{positions[name]}.pb"))
        model.graph.initializer.append(numpy_helper.from_array(array, name))
        kept = [v for v in model.graph.input if v.name != name]
        del model.graph.input[:]
        model.graph.input.extend(kept)
    path = os.path.join(work_dir, "model.onnx")
    onnx.save(model, path)
    return path


# The operands that decide an op's output shape, by position: the only ones
# test/conformance/constant-inputs.txt may bind (its header states the rule).
SHAPE_OPERANDS = {
    "Resize": {2, 3}, "Upsample": {1}, "Reshape": {1}, "Expand": {1}, "Tile": {1},
    "Split": {1}, "TopK": {1}, "Squeeze": {1}, "Unsqueeze": {1}, "Slice": {1, 2, 3, 4},
    "Pad": {1, 3}, "OneHot": {1}, "ConstantOfShape": {0}, "Range": {0, 1, 2},
    "CenterCropPad": {1}, "HannWindow": {0}, "HammingWindow": {0}, "BlackmanWindow": {0},
    "DFT": {1, 2}, "STFT": {1, 3}, "Col2Im": {1, 2}, "AffineGrid": {1}, "MaxUnpool": {2},
    "Loop": {0, 1}, "SplitToSequence": {1},
}


def not_shape_deciding(case_dir, name):
    """Why binding graph input `name` breaks the rule (it feeds no shape-deciding operand
    directly), or None. An `_expanded` case is not checked: its function body computes the
    operand from the input."""
    if case_dir.rstrip("/").endswith("_expanded"):
        return None
    model = onnx.load(os.path.join(case_dir, "model.onnx"), load_external_data=False)
    uses = [(node.op_type, j) for node in model.graph.node for j, x in enumerate(node.input)
            if x == name]
    if any(op.startswith("Reduce") and j == 1 or j in SHAPE_OPERANDS.get(op, ())
           for op, j in uses):
        return None
    feeds = ", ".join(f"{op} operand {j}" for op, j in uses) or "no node"
    return f"'{name}' feeds {feeds}, which does not decide an output shape"


def output_types(case_dir):
    """{graph output name: ONNX element type name ("FLOAT16", "BFLOAT16", ...)} of the
    case's tensor outputs."""
    model = onnx.load(os.path.join(case_dir, "model.onnx"), load_external_data=False)
    return {v.name: onnx.TensorProto.DataType.Name(v.type.tensor_type.elem_type)
            for v in model.graph.output if v.type.HasField("tensor_type")}


def graph_input_names(case_dir):
    """The names of the case's graph inputs that are not initializers, in order."""
    model = onnx.load(os.path.join(case_dir, "model.onnx"), load_external_data=False)
    return [v.name for v in _graph_inputs(model)]


def convert_data(case_dir, work_dir, bound=()):
    """Converts test_data_set_0's .pb files to .npy under work_dir.

    Returns [(input name, .npy path)] and the expected-output directory, or raises
    ValueError naming the value that .npy/kiln-run cannot hold (non-tensor types,
    strings, dtypes without a NumPy equivalent such as bfloat16 or float8). Inputs
    named in `bound` are skipped: bind_constant_inputs made them initializers.
    """
    model = onnx.load(os.path.join(case_dir, "model.onnx"), load_external_data=False)
    data_dir = os.path.join(case_dir, "test_data_set_0")
    graph_inputs = _graph_inputs(model)
    expected_dir = os.path.join(work_dir, "expected")
    os.makedirs(expected_dir, exist_ok=True)
    inputs = []
    for kind, values, directory in (("input", graph_inputs, work_dir),
                                    ("output", model.graph.output, expected_dir)):
        for j, info in enumerate(values):
            if kind == "input" and info.name in bound:
                continue
            if not info.type.HasField("tensor_type"):
                raise ValueError(f"{kind} '{info.name}' is not a tensor "
                                 f"({info.type.WhichOneof('value')})")
            pb = os.path.join(data_dir, f"{kind}_{j}.pb")
            array = _read_tensor(pb)
            elem = info.type.tensor_type.elem_type
            if elem in RAW_BITS:
                array = array.view(RAW_BITS[elem])
            elif array.dtype.name not in NPY_DTYPES:
                raise ValueError(f"{kind} '{info.name}' has dtype "
                                 f"{onnx.TensorProto.DataType.Name(elem)}, which kiln-run's "
                                 ".npy files cannot hold")
            path = os.path.join(directory, f"{kind}_{j}.npy" if kind == "input"
                                else safe_name(info.name) + ".npy")
            np.save(path, array)
            if kind == "input":
                inputs.append((info.name, path))
    return inputs, expected_dir
