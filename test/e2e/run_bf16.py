# kilnc --precision=bf16 on the CPU: matmuls, gemms and convolutions with bf16
# operands and f32 accumulation, against float64 references.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: run_bf16.py WORKDIR --kilnc PATH --kiln-run PATH

Each case is a small kiln model compiled with --precision=bf16 and run with
random inputs; its outputs are compared with a float64 reference computed
from the same inputs and weights. Sizes are awkward on purpose: K not a
multiple of the 256-deep cache block, odd K (a zero row pads the last k
pair), M = 1, N not a multiple of 16, a dynamic M (rows past the register
tile's panels read A unpacked), constant and run-time B, conv weights packed
at compile time, strided and 1x1 convs.

Tolerance. bf16 keeps 8 significant bits: rounding x to bf16 gives
x(1 + d), |d| <= u = 2^-8. A product of two rounded operands is off by at
most (1 + u)^2 - 1 < 2.01u relatively, and the f32 accumulation adds
about K 2^-24 relatively, so each output y = sum a_i b_i obeys
|y - y64| <= (2.01 u + K 2^-24) sum |a_i b_i| (the activation epilogue is
1-Lipschitz, the bias exact). The check uses that bound per element,
scaled by 1.05. It also requires the largest error to exceed what f32
operands would give (1e-5 of sum |a_i b_i|): a build that silently kept
f32 products fails, as does a wrong layout (errors of order 1).
Prints one PASS/FAIL line per case and a summary; exits 1 on any failure.
"""

import argparse
import os
import sys

import numpy as np

from run_float8 import run as run_model

U = 2.0 ** -8


def run(args, name, model, inputs):
    """Compiles `model` with --precision=bf16 and runs it on `inputs`."""
    return run_model(args, args.work, name, model, inputs, flags=["--precision=bf16"])("y")


def dense(values):
    """A kiln.constant's dense<...> literal of an f32 array."""
    return np.array2string(values.astype(np.float32), separator=",", threshold=1 << 30,
                           floatmode="unique", max_line_width=1 << 30).replace("\n", "")


def ty(shape):
    return "tensor<" + "x".join("?" if d is None else str(d) for d in shape) + "xf32>"


def matmul_case(m, k, n, constant_b, dynamic_m, rng):
    """y = x @ w (w constant or an input), with M dynamic if asked."""
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((k, n)).astype(np.float32)
    xt = ty((None if dynamic_m else m, k))
    yt = ty((None if dynamic_m else m, n))
    rows = ', kiln.dim_names = ["rows", ""]' if dynamic_m else ""
    if constant_b:
        model = (f'func.func @main(%x: {xt} {{kiln.name = "x"{rows}}}) -> '
                 f'({yt} {{kiln.name = "y"{rows}}}) {{\n'
                 f"  %w = kiln.constant dense<{dense(w)}> : {ty((k, n))}\n"
                 f"  %y = kiln.matmul %x, %w : ({xt}, {ty((k, n))}) -> {yt}\n"
                 f"  return %y : {yt}\n}}\n")
        inputs = {"x": x}
    else:
        model = (f'func.func @main(%x: {xt} {{kiln.name = "x"}}, %w: {ty((k, n))} '
                 f'{{kiln.name = "w"}}) -> ({yt} {{kiln.name = "y"}}) {{\n'
                 f"  %y = kiln.matmul %x, %w : ({xt}, {ty((k, n))}) -> {yt}\n"
                 f"  return %y : {yt}\n}}\n")
        inputs = {"x": x, "w": w}
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    return model, inputs, x64 @ w64, np.abs(x64) @ np.abs(w64), k


def gemm_case(m, k, n, rng):
    """y = relu(x @ w^T + b), constant w and b: the bias and ReLU are the
    kernel's epilogue."""
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    model = (f'func.func @main(%x: {ty((m, k))} {{kiln.name = "x"}}) -> '
             f'({ty((m, n))} {{kiln.name = "y"}}) {{\n'
             f"  %w = kiln.constant dense<{dense(w)}> : {ty((n, k))}\n"
             f"  %b = kiln.constant dense<{dense(b)}> : {ty((n,))}\n"
             f"  %g = kiln.gemm %x, %w, %b {{trans_b = true}} : ({ty((m, k))}, {ty((n, k))}, "
             f"{ty((n,))}) -> {ty((m, n))}\n"
             f"  %y = kiln.relu %g : {ty((m, n))}\n"
             f"  return %y : {ty((m, n))}\n}}\n")
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    return model, {"x": x}, np.maximum(x64 @ w64.T + b, 0), np.abs(x64) @ np.abs(w64.T), k


def conv_case(c, f, size, kernel, stride, pad, rng):
    """y = conv(x, w) + b (NCHW, batch 1), constant w and b."""
    x = rng.standard_normal((1, c, size, size)).astype(np.float32)
    w = rng.standard_normal((f, c, kernel, kernel)).astype(np.float32)
    b = rng.standard_normal(f).astype(np.float32)
    out = (size + 2 * pad - kernel) // stride + 1
    xt, wt, yt = ty((1, c, size, size)), ty((f, c, kernel, kernel)), ty((1, f, out, out))
    model = (f'func.func @main(%x: {xt} {{kiln.name = "x"}}) -> ({yt} {{kiln.name = "y"}}) {{\n'
             f"  %w = kiln.constant dense<{dense(w)}> : {wt}\n"
             f"  %b = kiln.constant dense<{dense(b)}> : {ty((f,))}\n"
             f"  %y = kiln.conv %x, %w, %b {{strides = array<i64: {stride}, {stride}>, "
             f"dilations = array<i64: 1, 1>, pads = array<i64: {pad}, {pad}, {pad}, {pad}>}}"
             f" : ({xt}, {wt}, {ty((f,))}) -> {yt}\n"
             f"  return %y : {yt}\n}}\n")
    x64 = np.pad(x.astype(np.float64)[0], ((0, 0), (pad, pad), (pad, pad)))
    # im2col in float64: patches [C*kh*kw, out*out].
    cols = np.empty((c * kernel * kernel, out * out))
    for ci in range(c):
        for i in range(kernel):
            for j in range(kernel):
                window = x64[ci, i:i + stride * out:stride, j:j + stride * out:stride]
                cols[(ci * kernel + i) * kernel + j] = window.reshape(-1)
    w64 = w.astype(np.float64).reshape(f, -1)
    ref = (w64 @ cols + b[:, None]).reshape(1, f, out, out)
    scale = (np.abs(w64) @ np.abs(cols)).reshape(1, f, out, out)
    return model, {"x": x}, ref, scale, c * kernel * kernel


def cases(rng):
    """(name, model, inputs, reference, sum |a b|, K)."""
    for m, k, n in [(1, 7, 5), (1, 300, 17), (7, 513, 33), (13, 257, 100), (6, 1, 16),
                    (50, 1001, 70)]:
        yield (f"matmul-const-{m}x{k}x{n}",) + matmul_case(m, k, n, True, False, rng)
    for m, k, n in [(1, 64, 16), (9, 255, 47), (70, 600, 130)]:
        yield (f"matmul-input-{m}x{k}x{n}",) + matmul_case(m, k, n, False, False, rng)
    for m, k, n in [(11, 37, 19), (3, 300, 64)]:
        yield (f"matmul-dynamic-m-{m}x{k}x{n}",) + matmul_case(m, k, n, True, True, rng)
    yield ("gemm-relu-5x129x31",) + gemm_case(5, 129, 31, rng)
    # conv taps (K = 27 and 3*3*19: odd), strided im2col gather, 1x1.
    yield ("conv3x3-c3",) + conv_case(3, 8, 20, 3, 1, 1, rng)
    yield ("conv3x3-c19",) + conv_case(19, 13, 17, 3, 1, 1, rng)
    yield ("conv3x3-stride2",) + conv_case(5, 16, 15, 3, 2, 1, rng)
    # 1x1: odd C keeps A f32 (converted when packed), even C packs it at
    # compile time.
    yield ("conv1x1-c33",) + conv_case(33, 24, 14, 1, 1, 0, rng)
    yield ("conv1x1-c32",) + conv_case(32, 20, 9, 1, 1, 0, rng)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("work")
    parser.add_argument("--kilnc", required=True)
    parser.add_argument("--kiln-run", required=True)
    args = parser.parse_args()
    rng = np.random.default_rng(22)
    failures = count = 0
    for name, model, inputs, ref, scale, k in cases(rng):
        count += 1
        try:
            got = run(args, name, model, inputs)
        except RuntimeError as e:
            failures += 1
            print(f"FAIL: {name}\n  {e}")
            continue
        err = np.abs(got.astype(np.float64) - ref)
        bound = 1.05 * (2.01 * U + k * 2.0 ** -24) * scale + 1e-30
        ratio = float((err / bound).max())
        bf16_seen = float((err / (scale + 1e-30)).max())
        rel = float(err.max() / (np.abs(ref).max() + 1e-30))
        summary = (f"{name}: max error {ratio:.2f} of the bf16 bound, "
                   f"{rel:.1e} of max |y|")
        if got.shape != ref.shape or ratio > 1.0:
            failures += 1
            print(f"FAIL: {summary} (shape {got.shape}, want {ref.shape})")
        elif bf16_seen < 1e-5:
            failures += 1
            print(f"FAIL: {name}: error {bf16_seen:.1e} of sum |a b|: f32 products, not bf16")
        else:
            print(f"PASS: {summary}")
    print(f"bf16: {count - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
