# Fused CPU attention kernel against a float64 numpy reference.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: run_attention.py WORKDIR --kilnc K --kiln-run R

Each case is a kiln-dialect function with one kiln.attention that the CPU kernel
computes (checked: --report=fusion names an attention dispatch): several query and
key blocks with partial tails, causal, masks the same for every query and varying
along the queries, the head merge folded in, one query vector.
"""

import argparse
import os
import subprocess
import sys

import numpy as np


def mlir_type(shape):
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


def case_text(b, h, sq, sk, d, mask, causal, scale, merge):
    q, kv = [b, h, sq, d], [b, h, sk, d]
    args = [f'%q: {mlir_type(q)} {{kiln.name = "q"}}', f'%k: {mlir_type(kv)} {{kiln.name = "k"}}',
            f'%v: {mlir_type(kv)} {{kiln.name = "v"}}']
    operands, types = "%q, %k, %v", [mlir_type(q), mlir_type(kv), mlir_type(kv)]
    if mask is not None:
        args.append(f'%m: {mlir_type(mask)} {{kiln.name = "m"}}')
        operands += ", %m"
        types.append(mlir_type(mask))
    attrs = [f"scale = {scale} : f32"] + (["is_causal = true"] if causal else [])
    out = [b, sq, h, d] if merge else q
    body = (f"  %o = kiln.attention {operands} {{{', '.join(attrs)}}} : "
            f"({', '.join(types)}) -> {mlir_type(q)}\n")
    result = "%o"
    if merge:
        body += (f"  %t = kiln.transpose %o {{perm = array<i64: 0, 2, 1, 3>}} : "
                 f"({mlir_type(q)}) -> {mlir_type(out)}\n")
        result = "%t"
    return (f"func.func @main({', '.join(args)}) -> ({mlir_type(out)} {{kiln.name = \"o\"}}) {{\n"
            f"{body}  return {result} : {mlir_type(out)}\n}}\n")


def reference(q, k, v, m, causal, scale, merge):
    s = np.einsum("bhid,bhjd->bhij", q.astype(np.float64), k.astype(np.float64)) * scale
    if m is not None:
        s = s + m
    if causal:
        sq, sk = s.shape[-2:]
        s = np.where(np.arange(sk)[None, :] > np.arange(sq)[:, None], -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    o = np.einsum("bhij,bhjd->bhid", p / p.sum(-1, keepdims=True), v.astype(np.float64))
    return o.transpose(0, 2, 1, 3) if merge else o


CASES = [
    # name, (b, h, sq, sk, d), mask shape or None, causal, merge
    ("bert_mask_merge", (2, 3, 150, 150, 32), (2, 1, 1, 150), False, True),
    ("causal_blocks", (1, 2, 150, 150, 64), None, True, False),
    ("query_mask", (2, 3, 70, 130, 16), (2, 1, 70, 130), False, False),
    ("mask_2d_short_query", (1, 4, 5, 67, 48), (5, 67), False, True),
    ("head_mask_causal", (1, 3, 33, 40, 16), (1, 3, 1, 40), True, False),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("work")
    ap.add_argument("--kilnc", required=True)
    ap.add_argument("--kiln-run", required=True)
    args = ap.parse_args()
    rng = np.random.default_rng(7)
    failed = 0
    for name, (b, h, sq, sk, d), mask, causal, merge in CASES:
        scale = 0.3
        wd = os.path.join(args.work, name)
        os.makedirs(wd, exist_ok=True)
        src = os.path.join(wd, "model.mlir")
        with open(src, "w") as f:
            f.write(case_text(b, h, sq, sk, d, mask, causal, scale, merge))
        inputs = {"q": rng.standard_normal([b, h, sq, d]), "k": rng.standard_normal([b, h, sk, d]),
                  "v": rng.standard_normal([b, h, sk, d])}
        if mask is not None:
            inputs["m"] = np.where(rng.random(mask) < 0.2, -1e4, rng.standard_normal(mask))
        inputs = {n: a.astype(np.float32) for n, a in inputs.items()}
        for n, a in inputs.items():
            np.save(os.path.join(wd, f"{n}.npy"), a)
        report = subprocess.run([args.kilnc, src, "--emit=dispatch", "--report=fusion", "-o", os.devnull],
                                capture_output=True, text=True)
        fused = report.returncode == 0 and "attention: kiln.attention_kernel" in report.stderr
        so = os.path.join(wd, "model.so")
        subprocess.run([args.kilnc, src, "-o", so], check=True)
        subprocess.run([args.kiln_run, so, "--output-dir", wd] +
                       [f"--input={n}={wd}/{n}.npy" for n in inputs], check=True,
                       stdout=subprocess.DEVNULL)
        got = np.load(os.path.join(wd, "o.npy"))
        want = reference(inputs["q"], inputs["k"], inputs["v"], inputs.get("m"), causal, scale, merge)
        err = float(np.abs(got - want).max() / np.abs(want).max())
        ok = fused and got.shape == want.shape and err < 1e-5
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'}: {name} fused={fused} rel_err={err:.1e}")
    print(f"attention: {len(CASES) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
