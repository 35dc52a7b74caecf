#!/usr/bin/env python3
# Writes the models of the ai.onnx.ml and ai.onnx.preview.training lit tests
# (good and bad, deterministic); each model imports only its own domain.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: make_domain_models.py OUTDIR [GROUP...]"""

import os
import sys

import numpy as np
from onnx import AttributeProto, TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
D = TensorProto.DOUBLE
I64 = TensorProto.INT64
B = TensorProto.BOOL
ML = "ai.onnx.ml"
TRAINING = "ai.onnx.preview.training"
GROUPS = {}


def register(fn):
    GROUPS[fn.__name__] = fn
    return fn


def T(name, dtype=F, shape=None):
    return helper.make_tensor_value_info(name, dtype, shape)


def save(out, name, nodes, inputs, outputs, domain, version):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(domain, version)],
                              ir_version=10, producer_name="kiln-test")
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())


# --- ai.onnx.preview.training ----------------------------------------------------

def optimizer(out, name, op, groups, n=1, shape=(2,), inputs=None, outputs=None,
              rate=(F, []), count=(I64, []), dtype=F, **attrs):
    """A one-node model of optimizer `op` updating n tensors with state `groups`."""
    letters = ["X", "G"] + groups
    names = [f"{g}{i}" for g in letters for i in range(n)]
    outs = [f"{g}{i}_new" for g in ["X"] + groups for i in range(n)]
    node_inputs = ["R", "T"] + names if inputs is None else inputs
    node_outputs = outs if outputs is None else outputs
    node = helper.make_node(op, node_inputs, node_outputs, name=op.lower(), domain=TRAINING,
                            **attrs)
    save(out, name, [node],
         [T("R", *rate), T("T", *count)] + [T(v, dtype, list(shape)) for v in names],
         [T(v, dtype, list(shape)) for v in node_outputs], TRAINING, 1)


@register
def training(out):
    optimizer(out, "adagrad", "Adagrad", ["H"], decay_factor=0.1, epsilon=1e-5,
              norm_coefficient=0.001)
    optimizer(out, "adam2", "Adam", ["V", "H"], n=2, alpha=0.95, beta=0.85, epsilon=0.01,
              norm_coefficient=0.001, norm_coefficient_post=0.5)
    optimizer(out, "momentum", "Momentum", ["V"], alpha=0.95, beta=0.1, mode="standard",
              norm_coefficient=0.001)
    optimizer(out, "nesterov", "Momentum", ["V"], alpha=0.95, beta=1.0, mode="nesterov",
              norm_coefficient=0.01, dtype=D)
    # Errors.
    optimizer(out, "bad_inputs", "Adagrad", ["H"], inputs=["R", "T", "X0", "G0"],
              outputs=["X0_new", "H0_new"])
    optimizer(out, "bad_outputs", "Adagrad", ["H"], outputs=["X0_new"])
    optimizer(out, "bad_rate_rank", "Adagrad", ["H"], rate=(F, [1]))
    optimizer(out, "bad_count_type", "Adagrad", ["H"], count=(F, []))
    optimizer(out, "bad_int_x", "Adagrad", ["H"], dtype=I64)
    optimizer(out, "bad_mode", "Momentum", ["V"], alpha=0.9, beta=0.1, mode="heavy",
              norm_coefficient=0.0)
    optimizer(out, "bad_no_alpha", "Momentum", ["V"], beta=0.1, mode="standard",
              norm_coefficient=0.0)
    # X is [2], its gradient [3].
    node = helper.make_node("Adagrad", ["R", "T", "X", "G", "H"], ["Xn", "Hn"], name="adagrad",
                            domain=TRAINING)
    save(out, "bad_shapes", [node],
         [T("R", F, []), T("T", I64, []), T("X", F, [2]), T("G", F, [3]), T("H", F, [2])],
         [T("Xn", F, [2]), T("Hn", F, [2])], TRAINING, 1)
    node = helper.make_node("Adagrad", ["R", "T", "X", "G", "H"], ["Xn", "Hn"], name="adagrad",
                            domain=TRAINING)
    save(out, "bad_training_opset", [node],
         [T("R", F, []), T("T", I64, []), T("X", F, [2]), T("G", F, [2]), T("H", F, [2])],
         [T("Xn", F, [2]), T("Hn", F, [2])], TRAINING, 2)


# --- ai.onnx.ml ------------------------------------------------------------------

def tree(out, name, x_type=F, x_shape=(8, 2), **overrides):
    """A two-tree ensemble: tree 0 splits on feature 0 then feature 1, tree 1 is
    one node whose branches reach the same leaf (a constant). That leaf's index
    is the root's node index too: ONNX's reference reads the leaf of a one-node
    tree at the root's index, the spec at its branches' leaf."""
    np_type = np.float64 if x_type == D else np.float32
    attrs = dict(
        n_targets=2,
        tree_roots=[0, 2],
        nodes_featureids=[0, 1, 0],
        nodes_modes=numpy_helper.from_array(np.array([0, 3, 0], np.uint8), "nodes_modes"),
        nodes_splits=numpy_helper.from_array(np.array([1.5, -2.5, 0.0], np_type),
                                             "nodes_splits"),
        nodes_truenodeids=[0, 1, 2],
        nodes_trueleafs=[1, 1, 1],
        nodes_falsenodeids=[1, 2, 2],
        nodes_falseleafs=[0, 1, 1],
        leaf_targetids=[0, 1, 1],
        leaf_weights=numpy_helper.from_array(np.array([1.0, 10.0, 0.5], np_type),
                                             "leaf_weights"),
    )
    attrs.update(overrides)
    given = {k: v for k, v in attrs.items() if v is not None and v != []}
    node = helper.make_node("TreeEnsemble", ["X"], ["Y"], name="trees", domain=ML, **given)
    for key in (k for k, v in attrs.items() if v == []):
        node.attribute.append(helper.make_attribute(key, [], attr_type=AttributeProto.INTS))
    save(out, name, [node], [T("X", x_type, list(x_shape))], [T("Y", x_type, None)], ML, 5)


@register
def ml(out):
    node = helper.make_node("Binarizer", ["X"], ["Y"], name="bin", domain=ML, threshold=0.5)
    save(out, "binarizer", [node], [T("X", F, [3, 4])], [T("Y", F, [3, 4])], ML, 1)
    node = helper.make_node("Binarizer", ["X"], ["Y"], name="bin", domain=ML)
    save(out, "bad_binarizer", [node], [T("X", B, [3])], [T("Y", B, [3])], ML, 1)
    node = helper.make_node("ArrayFeatureExtractor", ["X", "Y"], ["Z"], name="afe", domain=ML)
    save(out, "afe", [node], [T("X", F, [3, 4]), T("Y", I64, [1, 2])], [T("Z", F, [3, 2])],
         ML, 1)
    save(out, "afe_1d", [node], [T("X", F, [4]), T("Y", I64, [3])], [T("Z", F, [1, 3])],
         ML, 1)
    save(out, "bad_afe_index", [node], [T("X", F, [3, 4]), T("Y", F, [2])],
         [T("Z", F, [3, 2])], ML, 1)
    save(out, "bad_afe_scalar", [node], [T("X", F, []), T("Y", I64, [2])],
         [T("Z", F, [1, 2])], ML, 1)
    save(out, "bad_afe_dynamic", [node], [T("X", F, [3, 4]), T("Y", I64, ["a", 2])],
         [T("Z", F, [3, None])], ML, 1)
    tree(out, "tree_sum")
    tree(out, "tree_average", x_type=D, aggregate_function=0)
    tree(out, "tree_max", aggregate_function=3,
         nodes_missing_value_tracks_true=[1, 0, 0])
    tree(out, "tree_member",
         nodes_modes=numpy_helper.from_array(np.array([6, 3, 0], np.uint8), "nodes_modes"),
         membership_values=numpy_helper.from_array(
             np.array([1.0, 4.0, np.nan], np.float32), "membership_values"))
    # Errors.
    tree(out, "bad_tree_post", post_transform=2)
    tree(out, "bad_tree_mode",
         nodes_modes=numpy_helper.from_array(np.array([0, 9, 0], np.uint8), "nodes_modes"))
    tree(out, "bad_tree_feature", nodes_featureids=[0, 5, 0])
    tree(out, "bad_tree_branch", nodes_falsenodeids=[7, 2, 2])
    tree(out, "bad_tree_cycle", nodes_falsenodeids=[1, 0, 2], nodes_falseleafs=[0, 0, 1])
    tree(out, "bad_tree_members",
         nodes_modes=numpy_helper.from_array(np.array([6, 3, 0], np.uint8), "nodes_modes"))
    tree(out, "bad_tree_lengths", nodes_featureids=[0, 1])
    tree(out, "bad_tree_target", leaf_targetids=[0, 1, 2])
    tree(out, "bad_tree_rank", x_shape=(4,))
    tree(out, "bad_tree_roots", tree_roots=[])
    tree(out, "bad_tree_root", tree_roots=[0, 3])
    tree(out, "bad_tree_aggregate", aggregate_function=4)
    tree(out, "bad_tree_targets", n_targets=0)
    tree(out, "bad_tree_no_splits", nodes_splits=None)
    tree(out, "bad_tree_missing", nodes_missing_value_tracks_true=[1])
    tree(out, "bad_tree_leaves", leaf_targetids=[0, 1])
    tree(out, "bad_tree_empty", nodes_featureids=[], nodes_truenodeids=[], nodes_trueleafs=[],
         nodes_falsenodeids=[], nodes_falseleafs=[],
         nodes_modes=numpy_helper.from_array(np.zeros(0, np.uint8), "nodes_modes"),
         nodes_splits=numpy_helper.from_array(np.zeros(0, np.float32), "nodes_splits"))
    # A chain of 600 nodes, and 18 nodes whose branches both lead to the next.
    chain = 600
    tree(out, "bad_tree_deep", nodes_featureids=[0] * chain,
         nodes_modes=numpy_helper.from_array(np.zeros(chain, np.uint8), "nodes_modes"),
         nodes_splits=numpy_helper.from_array(np.zeros(chain, np.float32), "nodes_splits"),
         nodes_truenodeids=[0] * chain, nodes_trueleafs=[1] * chain,
         nodes_falsenodeids=list(range(1, chain)) + [0],
         nodes_falseleafs=[0] * (chain - 1) + [1], tree_roots=[0])
    dag = 18
    tree(out, "bad_tree_paths", nodes_featureids=[0] * dag,
         nodes_modes=numpy_helper.from_array(np.zeros(dag, np.uint8), "nodes_modes"),
         nodes_splits=numpy_helper.from_array(np.zeros(dag, np.float32), "nodes_splits"),
         nodes_truenodeids=list(range(1, dag)) + [0], nodes_trueleafs=[0] * (dag - 1) + [1],
         nodes_falsenodeids=list(range(1, dag)) + [0],
         nodes_falseleafs=[0] * (dag - 1) + [1], tree_roots=[0])
    node = helper.make_node("Binarizer", ["X"], ["Y"], name="bin", domain=ML)
    save(out, "bad_ml_opset", [node], [T("X", F, [3])], [T("Y", F, [3])], ML, 6)
    node = helper.make_node("LinearRegressor", ["X"], ["Y"], name="lr", domain=ML)
    save(out, "ml_unsupported", [node], [T("X", F, [3])], [T("Y", F, [3])], ML, 1)


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    for name in argv[2:] or GROUPS:
        GROUPS[name](out)


if __name__ == "__main__":
    main(sys.argv)
