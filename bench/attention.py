# Attention kernel benchmark: one exporter-style attention (BERT's additive mask) per model.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: attention.py --out DIR [--kilnc A --kilnc B ...] [--rounds N] [--runs N] [--threads T]

Writes DIR/attn_sSEQ.onnx: Q, K, V [1, 12, SEQ, 64] and an additive mask [1, 1, 1, SEQ]
as graph inputs, MatMul(Q, Transpose(K)) * 0.125 + mask -> Softmax -> MatMul(., V)
(kiln-recognize-attention makes it one kiln.attention), for SEQ in 128 and 512. Each
given kilnc compiles each model; the artifacts run interleaved (`kiln-run --bench`), and
the min and median over all rounds of each round's min and median are printed, with the
max abs difference of the outputs against numpy. FLOPs: 4·H·S²·D (the two products).
"""

import argparse
import os
import re
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper

HEADS, DIM = 12, 64


def model(seq):
    shape = [1, HEADS, seq, DIM]
    f32 = lambda n, s: helper.make_tensor_value_info(n, TensorProto.FLOAT, s)  # noqa: E731
    scale = helper.make_tensor("scale", TensorProto.FLOAT, [], [0.125])
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["s"]),
        helper.make_node("Mul", ["s", "scale"], ["ss"]),
        helper.make_node("Add", ["ss", "mask"], ["sm"]),
        helper.make_node("Softmax", ["sm"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["o"]),
    ]
    graph = helper.make_graph(nodes, f"attn{seq}",
                              [f32("q", shape), f32("k", shape), f32("v", shape),
                               f32("mask", [1, 1, 1, seq])], [f32("o", shape)], [scale])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def reference(q, k, v, mask):
    s = q @ k.transpose(0, 1, 3, 2) * np.float32(0.125) + mask
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--kilnc", action="append", required=True)
    ap.add_argument("--kiln-run", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--seqs", default="128,512")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(0)
    for seq in map(int, args.seqs.split(",")):
        path = os.path.join(args.out, f"attn_s{seq}.onnx")
        onnx.save(model(seq), path)
        inputs = {n: rng.standard_normal([1, HEADS, seq, DIM]).astype(np.float32) for n in "qkv"}
        inputs["mask"] = np.where(rng.random([1, 1, 1, seq]) < 0.1, -10000.0, 0.0).astype(np.float32)
        idir = os.path.join(args.out, f"in{seq}")
        os.makedirs(idir, exist_ok=True)
        for n, a in inputs.items():
            np.save(os.path.join(idir, f"{n}.npy"), a)
        ref = reference(inputs["q"], inputs["k"], inputs["v"], inputs["mask"])
        arts = []
        for i, kilnc in enumerate(args.kilnc):
            so = os.path.join(args.out, f"attn_s{seq}_{i}.so")
            subprocess.run([kilnc, path, "-o", so], check=True)
            odir = os.path.join(args.out, f"out{seq}_{i}")
            subprocess.run([args.kiln_run, so, "--output-dir", odir] +
                           [f"--input={n}={idir}/{n}.npy" for n in inputs], check=True,
                           stdout=subprocess.DEVNULL)
            err = float(np.abs(np.load(os.path.join(odir, "o.npy")) - ref).max())
            arts.append((so, err))
        stats = [[] for _ in arts]
        for _ in range(args.rounds):
            for i, (so, _) in enumerate(arts):
                out = subprocess.run([args.kiln_run, so, "--warmup", "3", "--bench", str(args.runs),
                                      "--threads", str(args.threads)],
                                     check=True, capture_output=True, text=True).stdout
                mn = float(re.search(r"min\s*[=:]?\s*([0-9.]+)", out).group(1))
                md = float(re.search(r"median\s*[=:]?\s*([0-9.]+)", out).group(1))
                stats[i].append((mn, md))
        flops = 4.0 * HEADS * seq * seq * DIM
        for i, (so, err) in enumerate(arts):
            mins = sorted(s[0] for s in stats[i])
            meds = sorted(s[1] for s in stats[i])
            print(f"seq {seq} kilnc#{i}: min {mins[0]:.3f} ms, median {meds[len(meds) // 2]:.3f} ms, "
                  f"{flops / mins[0] / 1e6:.1f} GFLOP/s at min, max_abs_err {err:.2e}")


if __name__ == "__main__":
    main()
