#!/usr/bin/env python3
# Writes the models of the sequence and optional lit tests (good and bad,
# deterministic). The good ones have tensor inputs and outputs and use
# sequences and optionals inside, as exporters' graphs do.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: make_sequence_models.py OUTDIR [GROUP...]"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64
B = TensorProto.BOOL
GROUPS = {}


def register(fn):
    GROUPS[fn.__name__] = fn
    return fn


def T(name, dtype=F, shape=None):
    return helper.make_tensor_value_info(name, dtype, shape)


def S(name, dtype=F):
    """A sequence-of-tensors value info."""
    return helper.make_tensor_sequence_value_info(name, dtype, None)


def O(name, dtype=F):
    """An optional-sequence value info."""
    return helper.make_value_info(
        name, helper.make_optional_type_proto(
            helper.make_sequence_type_proto(helper.make_tensor_type_proto(dtype, None))))


def N(op, inputs, outputs, name=None, **attrs):
    return helper.make_node(op, inputs, outputs, name=name or outputs[0], **attrs)


def const(name, array):
    return N("Constant", [], [name], value=numpy_helper.from_array(np.asarray(array)))


def graph(nodes, inputs, outputs, name="body"):
    return helper.make_graph(nodes, name, inputs, outputs)


def save(out, name, nodes, inputs, outputs, opset=18):
    model = helper.make_model(graph(nodes, inputs, outputs, "g"),
                              opset_imports=[helper.make_opsetid("", opset)],
                              ir_version=8, producer_name="kiln-test")
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())


@register
def sequences(out):
    # Construct, insert at a constant position, erase, at, length, concat, stack.
    save(out, "seq_ops", [
        N("SequenceConstruct", ["x", "y"], ["s"]),
        N("Add", ["x", "y"], ["z"]),
        const("one", np.array(1, np.int64)),
        N("SequenceInsert", ["s", "z", "one"], ["s3"]),     # x, z, y
        N("SequenceErase", ["s3"], ["s2"]),                 # x, z
        const("last", np.array(-1, np.int64)),
        N("SequenceAt", ["s3", "last"], ["at"]),            # y
        N("SequenceLength", ["s3"], ["n"]),                 # 3
        N("ConcatFromSequence", ["s2"], ["c"], axis=0),     # [x; z]
        N("ConcatFromSequence", ["s3"], ["st"], axis=-1, new_axis=1),
    ], [T("x", F, [2, 3]), T("y", F, [2, 3])],
        [T("at"), T("n", I64), T("c"), T("st")])
    # SplitToSequence: sizes, a chunk size, one per row without the axis.
    save(out, "seq_split", [
        const("sizes", np.array([2, 4], np.int64)),
        N("SplitToSequence", ["x", "sizes"], ["a"], axis=1),
        const("one", np.array(1, np.int64)),
        N("SequenceAt", ["a", "one"], ["a1"]),              # x[:, 2:6]
        const("four", np.array(4, np.int64)),
        N("SplitToSequence", ["x", "four"], ["b"], axis=1),  # widths 4, 2
        N("ConcatFromSequence", ["b"], ["whole"], axis=1),  # x again
        N("SplitToSequence", ["x"], ["rows"], keepdims=0),
        N("SequenceLength", ["rows"], ["n"]),               # 3
        const("two", np.array(2, np.int64)),
        N("SequenceAt", ["rows", "two"], ["row2"]),         # x[2]
    ], [T("x", F, [3, 6])], [T("a1"), T("whole"), T("n", I64), T("row2")])
    # SequenceMap over the rows with a whole tensor, then a stack.
    body = graph([N("Add", ["r", "w"], ["o"]), N("Shape", ["r"], ["shape"])],
                 [T("r", F, [6]), T("w", F, [6])], [T("o", F, [6]), T("shape", I64, [1])])
    save(out, "seq_map", [
        N("SplitToSequence", ["x"], ["rows"], keepdims=0),
        N("SequenceMap", ["rows", "w"], ["sums", "shapes"], body=body),
        N("ConcatFromSequence", ["sums"], ["y"], axis=0, new_axis=1),
        N("ConcatFromSequence", ["shapes"], ["dims"], axis=0),
    ], [T("x", F, [3, 6]), T("w", F, [6])], [T("y"), T("dims", I64)])
    # A Loop (3 iterations) carrying a sequence that grows, like ONNX's
    # test_loop13_seq: iteration i appends x[0:i+1].
    loop_body = graph([
        N("Identity", ["cond_in"], ["cond_out"]),
        const("start", np.array([0], np.int64)),
        const("one", np.array(1, np.int64)),
        N("Add", ["i", "one"], ["end"]),
        const("axes", np.array([0], np.int64)),
        N("Unsqueeze", ["end", "axes"], ["end1"]),
        N("Slice", ["x", "start", "end1"], ["part"]),
        N("SequenceInsert", ["seq_in", "part"], ["seq_out"]),
    ], [T("i", I64, []), T("cond_in", B, []), S("seq_in")], [T("cond_out", B, []), S("seq_out")])
    save(out, "seq_loop", [
        const("m", np.array(3, np.int64)),
        const("go", np.array(True)),
        N("SequenceEmpty", [], ["empty"], dtype=F),
        N("Loop", ["m", "go", "empty"], ["seq"], body=loop_body),
        N("ConcatFromSequence", ["seq"], ["y"], axis=0),    # x[0:1], x[0:2], x[0:3]
    ], [T("x", F, [3])], [T("y")])
    # If with a run-time condition: both branches give two-tensor sequences.
    then_body = graph([N("SequenceConstruct", ["x", "y"], ["ts"])], [], [S("ts")], "then")
    else_body = graph([N("SequenceConstruct", ["y", "x"], ["es"])], [], [S("es")], "else")
    save(out, "seq_if", [
        N("If", ["c"], ["s"], then_branch=then_body, else_branch=else_body),
        N("ConcatFromSequence", ["s"], ["y2"], axis=0),
    ], [T("c", B, []), T("x", F, [2]), T("y", F, [2])], [T("y2")])


@register
def optionals(out):
    seq_type = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, [2]))
    # Like ONNX's test_loop16_seq_none: an empty optional carried into a Loop
    # whose body replaces it with a sequence, then appends to it.
    then_body = graph([const("zero", np.zeros(1, np.float32)),
                       N("SequenceConstruct", ["zero"], ["init"])], [], [S("init")], "then")
    else_body = graph([N("OptionalGetElement", ["opt_in"], ["got"])], [], [S("got")], "else")
    loop_body = graph([
        N("Identity", ["cond_in"], ["cond_out"]),
        N("OptionalHasElement", ["opt_in"], ["has"]),
        N("Not", ["has"], ["none"]),
        N("If", ["none"], ["seq"], then_branch=then_body, else_branch=else_body),
        N("SequenceInsert", ["seq", "x"], ["seq_out"]),
    ], [T("i", I64, []), T("cond_in", B, []), O("opt_in")], [T("cond_out", B, []), S("seq_out")])
    save(out, "opt_loop", [
        const("m", np.array(2, np.int64)),
        const("go", np.array(True)),
        N("Optional", [], ["nothing"], type=seq_type),
        N("Loop", ["m", "go", "nothing"], ["seq"], body=loop_body),
        N("ConcatFromSequence", ["seq"], ["y"], axis=0),    # 0, x, x
    ], [T("x", F, [1])], [T("y")], opset=16)
    # Has/get on an optional tensor, an empty optional, no input, a tensor.
    save(out, "opt_ops", [
        N("Optional", ["x"], ["ox"]),
        N("OptionalHasElement", ["ox"], ["has_x"]),
        N("OptionalGetElement", ["ox"], ["got_x"]),
        N("Optional", [], ["empty"], type=helper.make_tensor_type_proto(F, [2])),
        N("OptionalHasElement", ["empty"], ["has_empty"]),
        N("OptionalHasElement", [], ["has_nothing"]),
        N("OptionalHasElement", ["x"], ["has_tensor"]),
        N("OptionalGetElement", ["x"], ["got_tensor"]),
        N("Add", ["got_x", "got_tensor"], ["sum"]),
        N("SequenceConstruct", ["x"], ["s"]),
        N("Optional", ["s"], ["os"]),
        N("OptionalGetElement", ["os"], ["s2"]),
        N("SequenceLength", ["s2"], ["n"]),
    ], [T("x", F, [2])], [T("has_x", B), T("has_empty", B), T("has_nothing", B),
                          T("has_tensor", B), T("sum"), T("n", I64)])


@register
def errors(out):
    x = [T("x", F, [2, 3])]
    seq = N("SequenceConstruct", ["x", "x"], ["s"])
    save(out, "bad_runtime_position", [seq, N("SequenceAt", ["s", "p"], ["y"])],
         x + [T("p", I64, [])], [T("y")])
    save(out, "bad_position", [seq, const("p", np.array(2, np.int64)),
                               N("SequenceAt", ["s", "p"], ["y"])], x, [T("y")])
    save(out, "bad_position_values", [seq, const("p", np.array([0, 1], np.int64)),
                                     N("SequenceAt", ["s", "p"], ["y"])], x, [T("y")])
    save(out, "bad_not_sequence", [const("p", np.array(0, np.int64)),
                                   N("SequenceAt", ["x", "p"], ["y"])], x, [T("y")])
    save(out, "bad_optional_as_sequence", [N("Optional", ["x"], ["o"]),
                                           N("SequenceLength", ["o"], ["y"])], x, [T("y", I64)])
    save(out, "bad_tensor_op", [seq, N("Relu", ["s"], ["y"])], x, [T("y")])
    save(out, "bad_if_condition", [seq, N("If", ["s"], ["y"],
                                          then_branch=graph([], [], [T("x")], "t"),
                                          else_branch=graph([], [], [T("x")], "e"))],
         x, [T("y")])
    save(out, "bad_output", [seq], x, [S("s")])
    save(out, "bad_input", [N("SequenceLength", ["s"], ["y"])], [S("s")], [T("y", I64)])
    save(out, "bad_get_empty", [N("Optional", [], ["o"], type=helper.make_tensor_type_proto(F, [2])),
                                N("OptionalGetElement", ["o"], ["y"])], x, [T("y")])
    save(out, "bad_optional_type", [N("Optional", [], ["o"]),
                                    N("OptionalHasElement", ["o"], ["y"])], x, [T("y", B)])
    save(out, "bad_optional_optional", [N("Optional", ["x"], ["o"]), N("Optional", ["o"], ["oo"]),
                                        N("OptionalHasElement", ["oo"], ["y"])], x, [T("y", B)])
    save(out, "bad_concat_empty", [N("SequenceEmpty", [], ["s"]),
                                   N("ConcatFromSequence", ["s"], ["y"], axis=0)], x, [T("y")])
    save(out, "bad_concat_axis", [seq, N("ConcatFromSequence", ["s"], ["y"], axis=2)], x, [T("y")])
    save(out, "bad_concat_new_axis", [seq, N("ConcatFromSequence", ["s"], ["y"], axis=0,
                                             new_axis=2)], x, [T("y")])
    save(out, "bad_erase_empty", [N("SequenceEmpty", [], ["s"]), N("SequenceErase", ["s"], ["e"]),
                                  N("SequenceLength", ["e"], ["y"])], x, [T("y", I64)])
    save(out, "bad_element_type", [N("Cast", ["x"], ["xi"], to=I64),
                                   N("SequenceConstruct", ["x", "xi"], ["s"]),
                                   N("SequenceLength", ["s"], ["y"])], x, [T("y", I64)])
    save(out, "bad_construct_empty", [N("SequenceConstruct", [], ["s"]),
                                      N("SequenceLength", ["s"], ["y"])], x, [T("y", I64)])
    split = lambda name, value, **attrs: save(
        out, name, [const("k", np.array(value, np.int64)),
                    N("SplitToSequence", ["x", "k"], ["s"], **attrs),
                    N("SequenceLength", ["s"], ["y"])], x, [T("y", I64)])
    split("bad_split_sum", [1, 1], axis=1)
    split("bad_split_chunk", 0, axis=1)
    split("bad_split_negative", [4, -1], axis=1)
    split("bad_split_axis", [1, 2], axis=2)
    save(out, "bad_split_runtime", [N("SplitToSequence", ["x", "k"], ["s"], axis=1),
                                    N("SequenceLength", ["s"], ["y"])],
         x + [T("k", I64, [])], [T("y", I64)])
    save(out, "bad_split_dynamic", [N("SplitToSequence", ["x"], ["s"], axis=0),
                                    N("SequenceLength", ["s"], ["y"])],
         [T("x", F, ["n", 3])], [T("y", I64)])
    body = graph([N("Identity", ["r"], ["o"])], [T("r", F, [3])], [T("o", F, [3])])
    rows = N("SplitToSequence", ["x"], ["rows"], keepdims=0)
    save(out, "bad_map_arity", [rows, N("SequenceMap", ["rows", "x"], ["m"], body=body),
                                N("SequenceLength", ["m"], ["y"])], x, [T("y", I64)])
    body2 = graph([N("Identity", ["r"], ["o"])], [T("r", F, [3]), T("q", F, [3])],
                  [T("o", F, [3])])
    save(out, "bad_map_length", [rows, N("SequenceConstruct", ["x"], ["one"]),
                                 N("SequenceMap", ["rows", "one"], ["m"], body=body2),
                                 N("SequenceLength", ["m"], ["y"])], x, [T("y", I64)])
    save(out, "bad_map_optional", [rows, N("Optional", ["x"], ["o"]),
                                   N("SequenceMap", ["rows", "o"], ["m"], body=body2),
                                   N("SequenceLength", ["m"], ["y"])], x, [T("y", I64)])
    body3 = graph([N("Optional", ["r"], ["o"])], [T("r", F, [3])], [O("o")])
    save(out, "bad_map_output", [rows, N("SequenceMap", ["rows"], ["m"], body=body3),
                                 N("SequenceLength", ["m"], ["y"])], x, [T("y", I64)])
    then_body = graph([N("SequenceConstruct", ["x"], ["ts"])], [], [S("ts")], "then")
    else_body = graph([N("SequenceConstruct", ["x", "x"], ["es"])], [], [S("es")], "else")
    save(out, "bad_if_lengths", [N("If", ["c"], ["s"], then_branch=then_body,
                                   else_branch=else_body),
                                 N("ConcatFromSequence", ["s"], ["y"], axis=0)],
         x + [T("c", B, [])], [T("y")])
    # A Loop whose body declares a tensor where a sequence is carried, and
    # one whose scan output is a sequence.
    loop_body = graph([N("Identity", ["c"], ["c2"]), N("Identity", ["v"], ["v2"])],
                      [T("i", I64, []), T("c", B, []), T("v", F, [2, 3])],
                      [T("c2", B, []), T("v2", F, [2, 3])])
    save(out, "bad_body_input", [seq, const("m", np.array(2, np.int64)),
                                 N("Loop", ["m", "", "s"], ["r"], body=loop_body),
                                 N("SequenceLength", ["r"], ["y"])], x, [T("y", I64)])
    scan_body = graph([N("Identity", ["c"], ["c2"]), N("SequenceConstruct", ["x"], ["e"])],
                      [T("i", I64, []), T("c", B, [])], [T("c2", B, []), S("e")])
    save(out, "bad_scan_output", [const("m", np.array(2, np.int64)),
                                  N("Loop", ["m", ""], ["r"], body=scan_body)], x, [T("r")])
    cond_body = graph([N("SequenceConstruct", ["x"], ["e"])],
                      [T("i", I64, []), T("c", B, [])], [S("e")])
    save(out, "bad_loop_condition", [const("m", np.array(2, np.int64)),
                                     N("Loop", ["m", ""], [], name="loop", body=cond_body),
                                     N("Identity", ["x"], ["y"])], x, [T("y")])


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    for name in argv[2:] or GROUPS:
        GROUPS[name](out)


if __name__ == "__main__":
    main(sys.argv)
