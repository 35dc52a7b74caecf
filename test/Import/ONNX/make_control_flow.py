#!/usr/bin/env python3
# Writes the control-flow models (If, Scan, Loop, RNN/GRU/LSTM) the importer's
# lit tests read, good and hostile (deterministic).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: make_control_flow.py OUTDIR [NAME...]"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64
B = TensorProto.BOOL
MODELS = {}


def register(fn):
    MODELS[fn.__name__] = fn
    return fn


def T(name, dtype=F, shape=None):
    return helper.make_tensor_value_info(name, dtype or TensorProto.UNDEFINED, shape)


def N(op, inputs, outputs, name=None, **attrs):
    return helper.make_node(op, inputs, outputs, name=name or outputs[0], **attrs)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def const(name, array):
    return N("Constant", [], [name], value=numpy_helper.from_array(np.asarray(array)))


def graph(nodes, inputs, outputs, name="body", inits=()):
    return helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))


def save(out, name, nodes, inputs, outputs, inits=(), opset=13):
    model = helper.make_model(graph(nodes, inputs, outputs, "g", inits),
                              opset_imports=[helper.make_opsetid("", opset)],
                              ir_version=8, producer_name="kiln-test")
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())


# --- If -----------------------------------------------------------------------

def branch(op, name, out="r"):
    """A branch computing op(x, x) from the outer value x."""
    return graph([N(op, ["x", "x"], [out], name=name)], [], [T(out)], name=name)


@register
def if_models(out):
    x = T("x", F, [2, 3])
    # A condition that folds at import time: only the taken branch is built.
    save(out, "if_const", [
        N("Shape", ["x"], ["s"]), N("Size", ["s"], ["n"]), const("two", np.int64(2)),
        N("Equal", ["n", "two"], ["c"]),
        N("If", ["c"], ["y"], then_branch=branch("Add", "then_add", "t"),
          else_branch=branch("Mul", "else_mul", "e"))], [x], [T("y")])
    # A run-time condition: both branches and a select.
    save(out, "if_runtime", [
        N("If", ["c"], ["y"], then_branch=branch("Add", "then_add", "t"),
          else_branch=branch("Mul", "else_mul", "e"))], [T("c", B, []), x], [T("y")])
    # The branches give different shapes: clean unsupported.
    other = graph([N("ReduceSum", ["x"], ["e"], name="sum", keepdims=0)], [], [T("e")],
                  name="else_sum")
    save(out, "if_shapes", [
        N("If", ["c"], ["y"], then_branch=branch("Add", "then_add", "t"),
          else_branch=other)], [T("c", B, []), x], [T("y")])
    # Two outputs in a branch of a one-output If.
    two = graph([N("Add", ["x", "x"], ["t"], name="a")], [], [T("t"), T("t")],
                name="two")
    save(out, "if_arity", [
        N("If", ["c"], ["y"], then_branch=two, else_branch=two)],
         [T("c", B, []), x], [T("y")])
    # A branch that is not a graph.
    save(out, "if_not_graph", [
        N("If", ["c"], ["y"], then_branch=3, else_branch=3)], [T("c", B, []), x],
         [T("y")])
    # A condition of two values.
    save(out, "if_cond_shape", [
        N("If", ["c"], ["y"], then_branch=branch("Add", "then_add", "t"),
          else_branch=branch("Mul", "else_mul", "e"))], [T("c", B, [2]), x], [T("y")])
    # A body node reads a name nobody defines.
    bad = graph([N("Add", ["x", "nowhere"], ["t"], name="a")], [], [T("t")], name="bad")
    save(out, "if_undefined", [
        N("If", ["c"], ["y"], then_branch=bad, else_branch=bad)], [T("c", B, []), x],
         [T("y")])
    # A body defines a name twice.
    dup = graph([N("Add", ["x", "x"], ["t"], name="a"), N("Mul", ["x", "x"], ["t"], name="m")],
                [], [T("t")], name="dup")
    save(out, "if_duplicate", [
        N("If", ["c"], ["y"], then_branch=dup, else_branch=dup)], [T("c", B, []), x],
         [T("y")])
    # An unsupported op inside a body is reported before anything is built.
    uniq = graph([N("Unique", ["x"], ["t"], name="u")], [], [T("t")], name="uniq")
    save(out, "if_body_unsupported", [
        N("If", ["c"], ["y"], then_branch=uniq, else_branch=uniq)],
         [T("c", B, []), x], [T("y")])
    # Ifs nested 20 deep (each branch holds the next If).
    inner = branch("Add", "leaf", "r0")
    for depth in range(1, 21):
        inner = graph([N("If", ["c"], ["r%d" % depth], name="if%d" % depth,
                         then_branch=inner, else_branch=inner)], [],
                      [T("r%d" % depth)], name="level%d" % depth)
    save(out, "if_deep", inner.node, [T("c", B, []), x], [T("r20")])
    # The body reads a value whose producer comes after the If in the file:
    # the reader orders the If after it.
    save(out, "if_order", [
        N("If", ["c"], ["y"], then_branch=branch("Add", "then_z", "t"),
          else_branch=branch("Mul", "else_z", "e")),
        N("Neg", ["w"], ["x"])], [T("c", B, []), T("w", F, [2, 3])], [T("y")])


# --- Scan ---------------------------------------------------------------------

def scan_body():
    return graph([N("Add", ["s", "xi"], ["s2"], name="acc"),
                  N("Identity", ["s2"], ["o"], name="out")],
                 [T("s", F, [2]), T("xi", F, [2])], [T("s2"), T("o")])


@register
def scan_models(out):
    save(out, "scan_sum", [
        N("Scan", ["init", "x"], ["final", "partial"], body=scan_body(),
          num_scan_inputs=1, scan_input_directions=[1], scan_output_axes=[1])],
         [T("init", F, [2]), T("x", F, [3, 2])], [T("final"), T("partial")], opset=11)
    # Scan along axis 1 of a [2, 3] input with a state read from outside.
    body = graph([N("Add", ["s", "xi"], ["t"], name="acc"),
                  N("Mul", ["t", "scale"], ["s2"], name="scaled")],
                 [T("s", F, [2]), T("xi", F, [2])], [T("s2")])
    save(out, "scan_axis", [
        N("Scan", ["init", "x"], ["final"], body=body, num_scan_inputs=1,
          scan_input_axes=[1])],
         [T("init", F, [2]), T("x", F, [2, 3])], [T("final")],
         [init("scale", np.float32([0.5, 2]))], opset=11)
    # Scan-8 over a batch of 2.
    save(out, "scan8", [
        N("Scan", ["", "init", "x"], ["final", "partial"], body=scan_body(),
          num_scan_inputs=1)],
         [T("init", F, [2, 2]), T("x", F, [2, 3, 2])], [T("final"), T("partial")],
         opset=8)
    save(out, "scan8_lens", [
        N("Scan", ["lens", "init", "x"], ["final", "partial"], body=scan_body(),
          num_scan_inputs=1)],
         [T("lens", TensorProto.INT32, [2]), T("init", F, [2, 2]),
          T("x", F, [2, 3, 2])], [T("final"), T("partial")], opset=8)
    save(out, "scan_dynamic", [
        N("Scan", ["init", "x"], ["final", "partial"], body=scan_body(),
          num_scan_inputs=1)],
         [T("init", F, [2]), T("x", F, ["n", 2])], [T("final"), T("partial")], opset=11)
    save(out, "scan_count", [
        N("Scan", ["init", "x"], ["final", "partial"], body=scan_body(),
          num_scan_inputs=3)],
         [T("init", F, [2]), T("x", F, [3, 2])], [T("final"), T("partial")], opset=11)
    save(out, "scan_lengths", [
        N("Scan", ["x", "z"], ["final"], num_scan_inputs=2,
          body=graph([N("Add", ["a", "b"], ["c"], name="ab")],
                     [T("a", F, [2]), T("b", F, [2])], [T("c")]))],
         [T("x", F, [3, 2]), T("z", F, [4, 2])], [T("final")], opset=11)
    save(out, "scan_direction", [
        N("Scan", ["init", "x"], ["final", "partial"], body=scan_body(),
          num_scan_inputs=1, scan_input_directions=[2])],
         [T("init", F, [2]), T("x", F, [3, 2])], [T("final"), T("partial")], opset=11)
    save(out, "scan_body_type", [
        N("Scan", ["init", "x"], ["final", "partial"], num_scan_inputs=1,
          body=graph([N("Add", ["s", "xi"], ["s2"], name="acc"),
                      N("Identity", ["s2"], ["o"], name="out")],
                     [T("s", I64, [2]), T("xi", F, [2])], [T("s2"), T("o")]))],
         [T("init", F, [2]), T("x", F, [3, 2])], [T("final"), T("partial")], opset=11)
    # 200000 iterations: over the unrolling budget.
    save(out, "scan_huge", [
        N("Scan", ["init", "x"], ["final", "partial"], body=scan_body(),
          num_scan_inputs=1)],
         [T("init", F, [2]), T("x", F, [200000, 2])], [T("final"), T("partial")],
         opset=11)


# --- Loop ---------------------------------------------------------------------

def loop_body(cond_from=None):
    nodes = [N("Cast", ["i"], ["fi"], name="fi", to=F),
             N("Add", ["y", "fi"], ["y2"], name="acc"),
             N("Identity", ["y2"], ["o"], name="out")]
    if cond_from == "count":
        # Folds while unrolling: the iteration number is a constant.
        nodes.append(N("Less", ["i", "limit"], ["c2"], name="more"))
    elif cond_from == "values":
        # Depends on the carried values: known only at run time.
        nodes.append(N("ReduceSum", ["y2"], ["sum"], name="sum", keepdims=0))
        nodes.append(N("Less", ["sum", "flimit"], ["c2"], name="more"))
    else:
        nodes.append(N("Identity", ["c"], ["c2"], name="cond"))
    return graph(nodes, [T("i", I64, []), T("c", B, []), T("y", F, [2])],
                 [T("c2"), T("y2"), T("o")])


@register
def loop_models(out):
    m = init("m", np.int64(3))
    save(out, "loop", [
        N("Loop", ["m", "", "y0"], ["y", "ys"], body=loop_body())],
         [T("y0", F, [2])], [T("y"), T("ys")], [m])
    # The condition the body computes folds while unrolling: stops after 2.
    save(out, "loop_cond", [
        N("Loop", ["", "t", "y0"], ["y", "ys"], body=loop_body("count"))],
         [T("y0", F, [2])], [T("y"), T("ys")],
         [init("t", np.bool_(True)), init("limit", np.int64(1))])
    save(out, "loop_trip_input", [
        N("Loop", ["m", "", "y0"], ["y", "ys"], body=loop_body())],
         [T("m", I64, []), T("y0", F, [2])], [T("y"), T("ys")])
    save(out, "loop_cond_runtime", [
        N("Loop", ["m", "", "y0"], ["y", "ys"], body=loop_body("values"))],
         [T("y0", F, [2])], [T("y"), T("ys")], [m, init("flimit", np.float32(2))])
    save(out, "loop_zero", [
        N("Loop", ["m", "", "y0"], ["y", "ys"], body=loop_body())],
         [T("y0", F, [2])], [T("y"), T("ys")], [init("m", np.int64(0))])
    # No trip count and a condition that stays true: over the budget.
    save(out, "loop_forever", [
        N("Loop", ["", "t", "y0"], ["y"],
          body=graph([N("Identity", ["c"], ["c2"], name="cond"),
                      N("Identity", ["y"], ["y2"], name="same")],
                     [T("i", I64, []), T("c", B, []), T("y", F, [2])],
                     [T("c2"), T("y2")]))],
         [T("y0", F, [2])], [T("y")], [init("t", np.bool_(True))])
    seq = graph([N("Identity", ["c"], ["c2"], name="cond"),
                 N("Identity", ["s"], ["s2"], name="same")],
                [T("i", I64, []), T("c", B, []),
                 helper.make_tensor_sequence_value_info("s", F, None)],
                [T("c2"), T("s2")])
    save(out, "loop_sequence", [
        N("Loop", ["m", "", "y0"], ["y"], body=seq)], [T("y0", F, [2])], [T("y")], [m])


# --- Function-body idioms (AffineGrid's) -------------------------------------------

@register
def body_idioms(out):
    # Split of a shape: the parts stay constants, so the Expand is static.
    save(out, "split_shape", [
        N("Shape", ["x"], ["s"]),
        N("Split", ["s"], ["n", "c"], num_outputs=2),
        N("Concat", ["n", "c"], ["nc"], axis=0),
        N("Expand", ["one", "nc"], ["y"])],
         [T("x", F, [2, 3])], [T("y")], [init("one", np.float32([1]))], opset=18)
    # Range over one-element 1-D bounds.
    save(out, "range_1d", [N("Range", ["s", "l", "d"], ["y"])], [], [T("y")],
         [init("s", np.int64([0])), init("l", np.int64([4])), init("d", np.int64([1]))],
         opset=13)


# --- RNN, GRU, LSTM -------------------------------------------------------------

@register
def recurrent_models(out):
    rng = np.random.default_rng(0)
    T_, B_, I_, H_ = 2, 1, 3, 4

    def layer(name, op, gates, dirs=1, inputs=None, x_shape=(T_, B_, I_), w=None,
              **attrs):
        w = w if w is not None else rng.standard_normal((dirs, gates * H_, I_))
        inits = [init("W", w.astype(np.float32)),
                 init("R", rng.standard_normal((dirs, gates * H_, H_)).astype(np.float32)),
                 init("B", np.zeros((dirs, 2 * gates * H_), np.float32))]
        names = inputs or ["X", "W", "R", "B"]
        outs = ["Y", "Y_h"]
        save(out, name, [N(op, names, outs, name="rnn", hidden_size=H_, **attrs)],
             [T("X", F, list(x_shape))] +
             ([T("lens", TensorProto.INT32, [B_])] if "lens" in names else []),
             [T("Y"), T("Y_h")], inits, opset=14)

    layer("rnn", "RNN", 1)
    layer("gru_bidirectional", "GRU", 3, dirs=2, direction="bidirectional")
    layer("lstm_lens", "LSTM", 4, inputs=["X", "W", "R", "B", "lens"])
    layer("lstm_forget", "LSTM", 4, input_forget=1)
    layer("rnn_activation", "RNN", 1, activations=["Elu"])
    layer("rnn_alpha", "RNN", 1, activation_alpha=[0.5])
    layer("rnn_direction", "RNN", 1, direction="sideways")
    layer("rnn_layout", "RNN", 1, layout=2)
    layer("rnn_dynamic", "RNN", 1, x_shape=("t", B_, I_))
    layer("rnn_weights", "RNN", 1, w=rng.standard_normal((1, 4, 5)))
    layer("gru_activations", "GRU", 3, activations=["Sigmoid"])


# --- LinearAttention (opset 27) ------------------------------------------------

@register
def linear_attention_models(out):
    def model(name, inputs, shapes, opset=27, **attrs):
        ins = [T(n, F, list(shp)) for n, shp in zip(inputs, shapes) if n]
        save(out, name, [N("LinearAttention", list(inputs), ["o", "s"], name="la", **attrs)],
             ins, [T("o"), T("s")], opset=opset)

    qkv = [(1, 2, 8), (1, 2, 8), (1, 2, 8)]
    # gated_delta (the default) with GQA: 4 query heads over 2 KV heads.
    model("la_gqa", ["q", "k", "v", "", "g", "b"],
          [(1, 2, 16), (1, 2, 8), (1, 2, 8), None, (1, 2, 8), (1, 2, 2)],
          q_num_heads=4, kv_num_heads=2)
    model("la_linear", ["q", "k", "v"], qkv, q_num_heads=2, kv_num_heads=2,
          update_rule="linear")
    model("la_rule", ["q", "k", "v"], qkv, q_num_heads=2, kv_num_heads=2,
          update_rule="softmax")
    model("la_needs_decay", ["q", "k", "v"], qkv, q_num_heads=2, kv_num_heads=2,
          update_rule="gated")
    model("la_heads", ["q", "k", "v"], qkv, q_num_heads=3, kv_num_heads=2,
          update_rule="linear")
    model("la_decay_dim", ["q", "k", "v", "", "g"], qkv[:3] + [None, (1, 2, 3)],
          q_num_heads=2, kv_num_heads=2, update_rule="gated")
    model("la_dynamic", ["q", "k", "v"], [("b", 2, 8), ("b", 2, 8), ("b", 2, 8)],
          q_num_heads=2, kv_num_heads=2, update_rule="linear")


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    for name in argv[2:] or MODELS:
        MODELS[name](out)


if __name__ == "__main__":
    main(sys.argv)
