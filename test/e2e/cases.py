# End-to-end cases: each is a small kiln model with a float64 numpy reference.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Cases for run_e2e.py, grouped by op family.

A case is (name, mlir_body, inputs, reference): `mlir_body` is a func.func
@main taking the inputs in order; `reference` computes the outputs in
float64 from the same inputs. Shapes include awkward sizes (1, 3, 7, 13,
127) so that remainder tiles are exercised.
"""

import math

import numpy as np

RNG = np.random.default_rng(20261129)


def rand(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, size=shape).astype(np.float32)


def ty(shape, dtype="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def unary(name, op, fn, shape=(3, 7), low=-2.0, high=2.0, attrs=""):
    x = rand(*shape, low=low, high=high)
    body = f"""func.func @main(%x: {ty(shape)}) -> {ty(shape)} {{
  %y = kiln.{op} %x {attrs}: {ty(shape)}
  return %y : {ty(shape)}
}}"""
    return (name, body, [x], lambda a: [fn(a[0].astype(np.float64))])


def binary(name, op, fn, lhs, rhs, out, dtype="f32"):
    x, y = rand(*lhs), rand(*rhs)
    body = f"""func.func @main(%x: {ty(lhs)}, %y: {ty(rhs)}) -> {ty(out)} {{
  %z = kiln.{op} %x, %y : ({ty(lhs)}, {ty(rhs)}) -> {ty(out)}
  return %z : {ty(out)}
}}"""
    return (name, body, [x, y], lambda a: [fn(a[0].astype(np.float64), a[1].astype(np.float64))])


erf = np.vectorize(math.erf)


def elementwise_cases():
    return [
        binary("add_broadcast", "add", np.add, (4, 1, 5), (3, 1), (4, 3, 5)),
        binary("sub", "sub", np.subtract, (13,), (13,), (13,)),
        binary("mul_scalar", "mul", np.multiply, (2, 7), (), (2, 7)),
        binary("div", "div", np.divide, (3, 4), (1, 4), (3, 4)),
        binary("max", "max", np.maximum, (6,), (6,), (6,)),
        unary("exp", "exp", np.exp),
        unary("log", "log", np.log, low=0.1, high=4.0),
        unary("sqrt", "sqrt", np.sqrt, low=0.0, high=4.0),
        unary("tanh", "tanh", np.tanh),
        unary("sigmoid", "sigmoid", lambda x: 1 / (1 + np.exp(-x))),
        unary("relu", "relu", lambda x: np.maximum(x, 0)),
        unary("erf", "erf", erf),
        unary("gelu_erf", "gelu none", lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2)))),
        unary("gelu_tanh", "gelu tanh",
              lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))),
        unary("clip", "clip", lambda x: np.clip(x, -0.5, 0.75),
              attrs="{min = -0.5 : f64, max = 0.75 : f64} "),
        unary("leaky_relu", "leaky_relu", lambda x: np.where(x >= 0, x, 0.1 * x),
              attrs="{alpha = 0.1 : f32} "),
    ]


def matmul_case(name, lhs, rhs, out):
    return binary(name, "matmul", np.matmul, lhs, rhs, out)


def contraction_cases():
    cases = [matmul_case(f"matmul_{m}x{k}x{n}", (m, k), (k, n), (m, n))
             for m, k, n in [(1, 1, 1), (3, 7, 13), (127, 33, 65), (64, 128, 96),
                             (13, 1000, 7), (1000, 3, 127), (7, 300, 1000), (100, 257, 70)]]
    cases.append(matmul_case("matmul_batch_broadcast", (2, 5, 7), (7, 3), (2, 5, 3)))
    cases.append(matmul_case("matmul_vector", (4, 6), (6,), (4,)))
    cases.append(matmul_case("matmul_dot", (13,), (13,), ()))
    cases.append(matmul_case("matmul_batched_4d", (2, 3, 5, 70), (2, 3, 70, 33), (2, 3, 5, 33)))
    cases.append(matmul_case("matmul_rows_3d", (3, 17, 40), (40, 70), (3, 17, 70)))
    cases.append(matmul_case("matmul_batch_stretch", (1, 5, 7), (4, 7, 3), (4, 5, 3)))
    a, w, b = rand(3, 16), rand(10, 16), rand(10)
    body = f"""func.func @main(%a: {ty((3, 16))}, %w: {ty((10, 16))}, %b: {ty((10,))}) -> {ty((3, 10))} {{
  %y = kiln.gemm %a, %w, %b {{trans_b = true, alpha = 0.5 : f32, beta = 2.0 : f32}} : ({ty((3, 16))}, {ty((10, 16))}, {ty((10,))}) -> {ty((3, 10))}
  return %y : {ty((3, 10))}
}}"""
    cases.append(("gemm_trans_b_alpha_beta", body, [a, w, b],
                  lambda x: [0.5 * (x[0].astype(np.float64) @ x[1].astype(np.float64).T) + 2.0 * x[2]]))
    return cases


def conv_reference(x, w, b, stride, pad, dilation, group):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - dilation * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dilation * (kw - 1) - 1) // stride + 1
    y = np.zeros((n, m, oh, ow))
    per = m // group
    for f in range(m):
        g = f // per
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg,
                           i * dilation: i * dilation + stride * (oh - 1) + 1: stride,
                           j * dilation: j * dilation + stride * (ow - 1) + 1: stride]
                y[:, f] += np.einsum("nchw,c->nhw", patch, w[f, :, i, j])
    if b is not None:
        y += b[None, :, None, None]
    return y


def batch_dims(shape, symbolic):
    """`shape` with its batch dim symbolic ('?') where `symbolic`."""
    return ("?",) + tuple(shape[1:]) if symbolic else shape


def named(shape):
    """The type of a function argument of `shape` with its symbolic batch named, so that
    the outputs' batch follows from the inputs' (as an ONNX model's dim names do)."""
    if shape[0] != "?":
        return ty(shape)
    names = ", ".join(['"batch"'] + ['""'] * (len(shape) - 1))
    return f"{ty(shape)} {{kiln.dim_names = [{names}]}}"


def result(shape):
    """The result type of a function returning one tensor of `shape` (named())."""
    return f"({named(shape)})" if shape[0] == "?" else ty(shape)


def conv_case(name, xs, ws, stride=1, pad=0, dilation=1, group=1, bias=True, relu=False,
              symbolic=False):
    """A conv (with bias, optionally ReLU after it); `symbolic` compiles it with the
    batch dim left symbolic (the inputs keep xs's batch)."""
    x, w = rand(*xs), rand(*ws)
    oh = (xs[2] + 2 * pad - dilation * (ws[2] - 1) - 1) // stride + 1
    ow = (xs[3] + 2 * pad - dilation * (ws[3] - 1) - 1) // stride + 1
    out = batch_dims((xs[0], ws[0], oh, ow), symbolic)
    inputs = [x, w]
    xt = batch_dims(xs, symbolic)
    args = f"%x: {named(xt)}, %w: {ty(ws)}"
    operands, types = "%x, %w", f"{ty(xt)}, {ty(ws)}"
    if bias:
        b = rand(ws[0])
        inputs.append(b)
        args += f", %b: {ty((ws[0],))}"
        operands += ", %b"
        types += f", {ty((ws[0],))}"
    attrs = (f"{{strides = array<i64: {stride}, {stride}>, dilations = array<i64: {dilation}, {dilation}>, "
             f"pads = array<i64: {pad}, {pad}, {pad}, {pad}>, group = {group} : i64}}")
    relu_line = f"\n  %y = kiln.relu %c : {ty(out)}" if relu else ""
    body = f"""func.func @main({args}) -> {result(out)} {{
  %{"c" if relu else "y"} = kiln.conv {operands} {attrs} : ({types}) -> {ty(out)}{relu_line}
  return %y : {ty(out)}
}}"""
    f64 = lambda a: a.astype(np.float64)

    def reference(a):
        y = conv_reference(f64(a[0]), f64(a[1]), f64(a[2]) if bias else None,
                           stride, pad, dilation, group)
        return [np.maximum(y, 0) if relu else y]
    return (name, body, inputs, reference)


def depthwise_block_case(name, xs, f, symbolic=False):
    """A stride-1 3x3 depthwise conv (pad 1), ReLU6, then a 1x1 conv with bias: on the
    CPU the ReLU6 runs in the depthwise kernel at the padded row pitch and the 1x1 conv
    reads that pitched result (conv taps)."""
    n, c, h, w = xs
    x, wd, bd, wp, bp = rand(*xs), rand(c, 1, 3, 3), rand(c), rand(f, c, 1, 1), rand(f)
    mid, out = batch_dims((n, c, h, w), symbolic), batch_dims((n, f, h, w), symbolic)
    xs = batch_dims(xs, symbolic)
    body = f"""func.func @main(%x: {named(xs)}, %wd: {ty((c, 1, 3, 3))}, %bd: {ty((c,))}, %wp: {ty((f, c, 1, 1))}, %bp: {ty((f,))}) -> {result(out)} {{
  %d = kiln.conv %x, %wd, %bd {{strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = {c} : i64}} : ({ty(xs)}, {ty((c, 1, 3, 3))}, {ty((c,))}) -> {ty(mid)}
  %r = kiln.clip %d {{min = 0.0 : f64, max = 6.0 : f64}} : {ty(mid)}
  %y = kiln.conv %r, %wp, %bp {{strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64}} : ({ty(mid)}, {ty((f, c, 1, 1))}, {ty((f,))}) -> {ty(out)}
  return %y : {ty(out)}
}}"""
    f64 = lambda a: a.astype(np.float64)

    def reference(a):
        d = conv_reference(f64(a[0]), f64(a[1]), f64(a[2]), 1, 1, 1, c)
        return [conv_reference(np.clip(d, 0, 6), f64(a[3]), f64(a[4]), 1, 0, 1, 1)]
    return (name, body, [x, wd, bd, wp, bp], reference)


def excite_block_case(name, xs, r, f, symbolic=False):
    """A squeeze-excite scale before a 1x1 conv (EfficientNet's MBConv tail): x times
    sigmoid(1x1 conv (C -> r -> C) of its global average pool), then a 1x1 conv with bias.
    On the CPU the scale is the 1x1 conv's B prologue (computed while packing B)."""
    n, c, h, w = xs
    x, w1, b1, w2, b2 = rand(*xs), rand(r, c, 1, 1), rand(r), rand(c, r, 1, 1), rand(c)
    wp, bp = rand(f, c, 1, 1), rand(f)
    pooled, squeezed, out = [batch_dims(s, symbolic)
                             for s in [(n, c, 1, 1), (n, r, 1, 1), (n, f, h, w)]]
    xs = batch_dims(xs, symbolic)
    conv1 = "{strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64}"
    body = f"""func.func @main(%x: {named(xs)}, %w1: {ty((r, c, 1, 1))}, %b1: {ty((r,))}, %w2: {ty((c, r, 1, 1))}, %b2: {ty((c,))}, %wp: {ty((f, c, 1, 1))}, %bp: {ty((f,))}) -> {result(out)} {{
  %p = kiln.global_avg_pool %x : ({ty(xs)}) -> {ty(pooled)}
  %s = kiln.conv %p, %w1, %b1 {conv1} : ({ty(pooled)}, {ty((r, c, 1, 1))}, {ty((r,))}) -> {ty(squeezed)}
  %e = kiln.conv %s, %w2, %b2 {conv1} : ({ty(squeezed)}, {ty((c, r, 1, 1))}, {ty((c,))}) -> {ty(pooled)}
  %g = kiln.sigmoid %e : {ty(pooled)}
  %m = kiln.mul %x, %g : ({ty(xs)}, {ty(pooled)}) -> {ty(xs)}
  %y = kiln.conv %m, %wp, %bp {conv1} : ({ty(xs)}, {ty((f, c, 1, 1))}, {ty((f,))}) -> {ty(out)}
  return %y : {ty(out)}
}}"""
    f64 = lambda a: a.astype(np.float64)

    def reference(a):
        p = f64(a[0]).mean(axis=(2, 3), keepdims=True)
        s = conv_reference(p, f64(a[1]), f64(a[2]), 1, 0, 1, 1)
        g = 1 / (1 + np.exp(-conv_reference(s, f64(a[3]), f64(a[4]), 1, 0, 1, 1)))
        return [conv_reference(f64(a[0]) * g, f64(a[5]), f64(a[6]), 1, 0, 1, 1)]
    return (name, body, [x, w1, b1, w2, b2, wp, bp], reference)


def inverted_residual_case(name, xs, e, f, stride=1, k=3, silu=False):
    """An expand 1x1 conv (bias, ReLU6 or SiLU), a k x k depthwise conv (stride, pad
    k // 2) with the same activation, then a 1x1 project conv with bias; with `silu`
    also a squeeze-excite scale of the depthwise result (its global average pool
    through a 1x1 conv and a sigmoid) before the project conv (EfficientNet's MBConv).
    On the CPU the expand conv's epilogue writes into the depthwise conv's zero
    padding (rows of at least 5 columns; vectors wrap into the next rows where the
    width is not a multiple of 16), and a stride-1 depthwise conv on rows narrower
    than 16 whose SiLU the pool also reads runs on the image rows with the SiLU."""
    n, c, h, w = xs
    pad = k // 2
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    we, be, wd, bd = rand(e, c, 1, 1), rand(e), rand(e, 1, k, k), rand(e)
    wp, bp, ws, bs = rand(f, e, 1, 1), rand(f), rand(e, e, 1, 1), rand(e)
    mid, dw, out, pooled = (n, e, h, w), (n, e, oh, ow), (n, f, oh, ow), (n, e, 1, 1)
    conv1 = "{strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64}"
    convd = (f"{{strides = array<i64: {stride}, {stride}>, dilations = array<i64: 1, 1>, "
             f"pads = array<i64: {pad}, {pad}, {pad}, {pad}>, group = {e} : i64}}")

    def act(src, dst, t):
        if silu:
            return (f"  %{dst}_s = kiln.sigmoid %{src} : {ty(t)}\n"
                    f"  %{dst} = kiln.mul %{src}, %{dst}_s : ({ty(t)}, {ty(t)}) -> {ty(t)}\n")
        return f"  %{dst} = kiln.clip %{src} {{min = 0.0 : f64, max = 6.0 : f64}} : {ty(t)}\n"
    excite = ""
    last = "a"
    if silu:
        excite = (f"  %p = kiln.global_avg_pool %a : ({ty(dw)}) -> {ty(pooled)}\n"
                  f"  %q = kiln.conv %p, %ws, %bs {conv1} : ({ty(pooled)}, {ty((e, e, 1, 1))}, {ty((e,))}) -> {ty(pooled)}\n"
                  f"  %g = kiln.sigmoid %q : {ty(pooled)}\n"
                  f"  %m = kiln.mul %a, %g : ({ty(dw)}, {ty(pooled)}) -> {ty(dw)}\n")
        last = "m"
    body = (f"func.func @main(%x: {ty(xs)}, %we: {ty((e, c, 1, 1))}, %be: {ty((e,))}, "
            f"%wd: {ty((e, 1, k, k))}, %bd: {ty((e,))}, %wp: {ty((f, e, 1, 1))}, %bp: {ty((f,))}, "
            f"%ws: {ty((e, e, 1, 1))}, %bs: {ty((e,))}) -> {ty(out)} {{\n"
            f"  %u = kiln.conv %x, %we, %be {conv1} : ({ty(xs)}, {ty((e, c, 1, 1))}, {ty((e,))}) -> {ty(mid)}\n"
            + act("u", "v", mid) +
            f"  %d = kiln.conv %v, %wd, %bd {convd} : ({ty(mid)}, {ty((e, 1, k, k))}, {ty((e,))}) -> {ty(dw)}\n"
            + act("d", "a", dw) + excite +
            f"  %y = kiln.conv %{last}, %wp, %bp {conv1} : ({ty(dw)}, {ty((f, e, 1, 1))}, {ty((f,))}) -> {ty(out)}\n"
            f"  return %y : {ty(out)}\n}}")
    f64 = lambda a: a.astype(np.float64)

    def activation(y):
        return y / (1 + np.exp(-y)) if silu else np.clip(y, 0, 6)

    def reference(a):
        v = activation(conv_reference(f64(a[0]), f64(a[1]), f64(a[2]), 1, 0, 1, 1))
        d = activation(conv_reference(v, f64(a[3]), f64(a[4]), stride, pad, 1, e))
        if silu:
            q = conv_reference(d.mean(axis=(2, 3), keepdims=True), f64(a[7]), f64(a[8]), 1, 0, 1, 1)
            d = d / (1 + np.exp(-q))
        return [conv_reference(d, f64(a[5]), f64(a[6]), 1, 0, 1, 1)]
    return (name, body, [rand(*xs), we, be, wd, bd, wp, bp, ws, bs], reference)


def pool_reference(x, k, stride, pad, kind, include_pad=False, dilation=1):
    n, c, h, w = x.shape
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=fill)
    ones = np.pad(np.ones_like(x), ((0, 0), (0, 0), (pad, pad), (pad, pad)),
                  constant_values=1.0 if include_pad else 0.0)
    span = dilation * (k - 1) + 1
    oh = (h + 2 * pad - span) // stride + 1
    ow = (w + 2 * pad - span) // stride + 1
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            rows = slice(i * stride, i * stride + span, dilation)
            cols = slice(j * stride, j * stride + span, dilation)
            win = xp[:, :, rows, cols]
            if kind == "max":
                y[:, :, i, j] = win.max(axis=(2, 3))
            else:
                y[:, :, i, j] = win.sum(axis=(2, 3)) / ones[:, :, rows, cols].sum(axis=(2, 3))
    return y


def pool_case(name, op, xs, k, stride, pad, include_pad=False, dilation=1):
    x = rand(*xs)
    span = dilation * (k - 1) + 1
    oh = (xs[2] + 2 * pad - span) // stride + 1
    ow = (xs[3] + 2 * pad - span) // stride + 1
    out = (xs[0], xs[1], oh, ow)
    extra = ", count_include_pad = true" if include_pad else ""
    body = f"""func.func @main(%x: {ty(xs)}) -> {ty(out)} {{
  %y = kiln.{op} %x {{kernel_shape = array<i64: {k}, {k}>, strides = array<i64: {stride}, {stride}>, dilations = array<i64: {dilation}, {dilation}>, pads = array<i64: {pad}, {pad}, {pad}, {pad}>{extra}}} : ({ty(xs)}) -> {ty(out)}
  return %y : {ty(out)}
}}"""
    kind = "max" if op == "max_pool" else "avg"
    return (name, body, [x], lambda a: [pool_reference(a[0].astype(np.float64), k, stride, pad, kind,
                                                       include_pad, dilation)])


def conv_cases():
    return [
        conv_case("conv_3x3_s1_p1", (1, 3, 7, 7), (4, 3, 3, 3), pad=1),
        conv_case("conv_7x7_s2_p3", (2, 3, 13, 13), (8, 3, 7, 7), stride=2, pad=3),
        conv_case("conv_dilated", (1, 4, 9, 9), (5, 4, 3, 3), dilation=2, bias=False),
        conv_case("conv_grouped", (1, 6, 8, 8), (4, 3, 3, 3), pad=1, group=2),
        conv_case("conv_depthwise", (1, 5, 7, 7), (5, 1, 3, 3), stride=2, pad=1, group=5),
        conv_case("conv_1x1", (1, 16, 5, 5), (7, 16, 1, 1)),
        # Awkward sizes through the matmul kernels (shifted taps for stride 1,
        # im2col otherwise), depthwise with odd strides and dilations.
        conv_case("conv_3x3_13x13_c7_f13", (2, 7, 13, 13), (13, 7, 3, 3), pad=1),
        # Wide rows: the shifted per-tap matmul form (at most 1/8 of the columns discarded).
        conv_case("conv_3x3_wide_33", (2, 5, 9, 33), (6, 5, 3, 3), pad=1),
        conv_case("conv_3x3_wide_dilated", (1, 3, 11, 40), (4, 3, 3, 3), pad=2, dilation=2),
        conv_case("conv_5x3_dilated_pad2", (1, 3, 13, 11), (7, 3, 5, 3), pad=2, dilation=2),
        conv_case("conv_3x3_f127_s3", (1, 13, 14, 14), (127, 13, 3, 3), stride=3, pad=1),
        conv_case("conv_1x1_s2", (3, 7, 13, 13), (1, 7, 1, 1), stride=2, bias=False),
        conv_case("conv_1x1_pad1", (1, 3, 7, 7), (13, 3, 1, 1), pad=1),
        conv_case("conv_3x3_1x1_image", (1, 127, 1, 1), (3, 127, 3, 3), pad=1),
        conv_case("conv_depthwise_s1_13", (2, 7, 13, 13), (7, 1, 3, 3), pad=1, group=7),
        conv_case("conv_depthwise_s1_d2_wide", (2, 4, 10, 21), (4, 1, 3, 3), pad=2, dilation=2,
                  group=4),
        # 7x8 = 56 taps: over the unrolled limit (49), the reduction-loop form.
        conv_case("conv_depthwise_7x8", (1, 3, 12, 12), (3, 1, 7, 8), pad=1, group=3),
        conv_case("conv_depthwise_s3_d2", (1, 3, 29, 29), (3, 1, 5, 5), stride=3, pad=2,
                  dilation=2, group=3),
        conv_case("conv_depthwise_127w", (1, 2, 5, 127), (2, 1, 3, 3), stride=2, group=2,
                  bias=False),
        conv_case("conv_grouped_3", (1, 9, 7, 7), (6, 3, 3, 3), stride=2, pad=1, group=3),
        depthwise_block_case("depthwise_relu6_pointwise_9x9", (2, 6, 9, 9), 5),
        depthwise_block_case("depthwise_relu6_pointwise_20x20", (1, 17, 20, 20), 33),
        depthwise_block_case("depthwise_relu6_pointwise_1x3", (1, 4, 1, 3), 3),
        # B prologues (batch 1, image rows of >= 16: one or two masked loads per tap
        # and vector), with row panels and a leftover, and a squeeze-excite scale.
        depthwise_block_case("depthwise_relu6_pointwise_16x16", (1, 8, 16, 16), 7),
        depthwise_block_case("depthwise_relu6_pointwise_37x41", (1, 5, 37, 41), 70),
        excite_block_case("excite_pointwise_12x12", (1, 24, 12, 12), 6, 16),
        excite_block_case("excite_pointwise_b2", (2, 10, 9, 7), 3, 5),
        # Any batch, static or symbolic, is one dispatch per conv with its epilogue
        # (bias, ReLU) and B prologue (a batched conv taps contraction).
        conv_case("conv_3x3_relu_b2", (2, 5, 20, 20), (8, 5, 3, 3), pad=1, relu=True),
        conv_case("conv_3x3_relu_batch", (3, 5, 20, 20), (8, 5, 3, 3), pad=1, relu=True,
                  symbolic=True),
        conv_case("conv_3x3_s2_relu_batch", (2, 6, 13, 13), (9, 6, 3, 3), stride=2, pad=1,
                  relu=True, symbolic=True),
        conv_case("conv_1x1_relu_batch", (2, 16, 5, 5), (7, 16, 1, 1), relu=True,
                  symbolic=True),
        conv_case("conv_3x3_relu_b17", (17, 3, 6, 6), (4, 3, 3, 3), pad=1, relu=True),
        depthwise_block_case("depthwise_relu6_pointwise_16x16_b2", (2, 8, 16, 16), 7),
        depthwise_block_case("depthwise_relu6_pointwise_16x16_batch", (3, 8, 16, 16), 7,
                             symbolic=True),
        excite_block_case("excite_pointwise_b3", (3, 24, 12, 12), 6, 16),
        excite_block_case("excite_pointwise_batch", (2, 24, 12, 12), 6, 16, symbolic=True),
        # Expand conv epilogues written into the depthwise conv's zero padding: rows
        # of 17 (vectors wrap into the next row; 289 columns end in a one-column
        # tail), 32 (whole vectors), 20 with a stride-2 depthwise conv, 12 and 5
        # (a vector spans up to three and four rows); rows of 4 keep the copy.
        # SiLU with a squeeze-excite: on rows of 7 the depthwise conv runs on the
        # image rows with its SiLU, on rows of 18 flat.
        inverted_residual_case("inverted_residual_17x17", (1, 5, 17, 17), 12, 6),
        inverted_residual_case("inverted_residual_32x32", (1, 4, 32, 32), 8, 4),
        inverted_residual_case("inverted_residual_20x20_s2", (1, 3, 20, 20), 7, 5, stride=2),
        inverted_residual_case("inverted_residual_12x12", (1, 3, 12, 12), 6, 4),
        inverted_residual_case("inverted_residual_5x5", (1, 3, 5, 5), 6, 4),
        inverted_residual_case("inverted_residual_4x4", (1, 3, 4, 4), 6, 4),
        inverted_residual_case("mbconv_silu_7x7_k5", (1, 4, 7, 7), 9, 5, k=5, silu=True),
        inverted_residual_case("mbconv_silu_18x18", (1, 4, 18, 18), 8, 5, silu=True),
        inverted_residual_case("mbconv_silu_16x16_s2", (1, 3, 16, 16), 6, 4, stride=2, silu=True),
        pool_case("max_pool_3x3_s2_p1", "max_pool", (1, 3, 9, 9), 3, 2, 1),
        pool_case("avg_pool_exclude_pad", "avg_pool", (1, 2, 7, 7), 3, 2, 1),
        pool_case("avg_pool_include_pad", "avg_pool", (1, 2, 7, 7), 3, 2, 1, include_pad=True),
    ]


def reduce_case(name, kind, shape, axes, keep, fn):
    x = rand(*shape, low=0.1 if kind in ("prod", "l2") else -1.0, high=1.0)
    out = tuple(1 if i in axes else d for i, d in enumerate(shape)) if keep else \
        tuple(d for i, d in enumerate(shape) if i not in axes)
    body = f"""func.func @main(%x: {ty(shape)}) -> {ty(out)} {{
  %y = kiln.reduce {kind} %x {{axes = array<i64: {", ".join(map(str, axes))}>, keepdims = {str(keep).lower()}}} : ({ty(shape)}) -> {ty(out)}
  return %y : {ty(out)}
}}"""
    return (name, body, [x], lambda a: [fn(a[0].astype(np.float64), tuple(axes), keep)])


def softmax_case(name, op, shape, axis):
    x = rand(*shape, low=-5, high=5)
    body = f"""func.func @main(%x: {ty(shape)}) -> {ty(shape)} {{
  %y = kiln.{op} %x {{axis = {axis} : i64}} : {ty(shape)}
  return %y : {ty(shape)}
}}"""

    def ref(a):
        v = a[0].astype(np.float64)
        m = v.max(axis=axis, keepdims=True)
        e = np.exp(v - m)
        s = e.sum(axis=axis, keepdims=True)
        return [e / s if op == "softmax" else v - m - np.log(s)]
    return (name, body, [x], ref)


def reduction_cases():
    cases = [
        reduce_case("reduce_sum_all", "sum", (3, 7), [0, 1], False, lambda x, a, k: x.sum(axis=a, keepdims=k)),
        reduce_case("reduce_mean_last_keep", "mean", (2, 3, 127), [2], True, lambda x, a, k: x.mean(axis=a, keepdims=k)),
        reduce_case("reduce_max_mid", "max", (4, 13, 3), [1], False, lambda x, a, k: x.max(axis=a, keepdims=k)),
        reduce_case("reduce_min", "min", (5, 6), [0], True, lambda x, a, k: x.min(axis=a, keepdims=k)),
        reduce_case("reduce_prod", "prod", (3, 4), [1], False, lambda x, a, k: x.prod(axis=a, keepdims=k)),
        reduce_case("reduce_l2", "l2", (3, 9), [1], True, lambda x, a, k: np.sqrt((x * x).sum(axis=a, keepdims=k))),
        reduce_case("reduce_log_sum_exp", "log_sum_exp", (2, 1000), [1], False,
                    lambda x, a, k: np.log(np.exp(x).sum(axis=a, keepdims=k))),
        softmax_case("softmax_last", "softmax", (3, 1000), -1),
        softmax_case("softmax_axis1", "softmax", (2, 7, 3), 1),
        softmax_case("log_softmax", "log_softmax", (4, 13), 1),
    ]
    x, g, b = rand(2, 5, 64), rand(64), rand(64)
    body = f"""func.func @main(%x: {ty((2, 5, 64))}, %g: {ty((64,))}, %b: {ty((64,))}) -> {ty((2, 5, 64))} {{
  %y = kiln.layer_norm %x, %g, %b {{axis = -1 : i64, epsilon = 1.0e-5 : f32}} : ({ty((2, 5, 64))}, {ty((64,))}, {ty((64,))}) -> {ty((2, 5, 64))}
  return %y : {ty((2, 5, 64))}
}}"""

    def layer_norm(a):
        v = a[0].astype(np.float64)
        mu = v.mean(-1, keepdims=True)
        var = ((v - mu) ** 2).mean(-1, keepdims=True)
        return [(v - mu) / np.sqrt(var + 1e-5) * a[1] + a[2]]
    cases.append(("layer_norm", body, [x, g, b], layer_norm))
    xs = (2, 3, 4, 4)
    x, s, bb, m, v = rand(*xs), rand(3), rand(3), rand(3), rand(3, low=0.5, high=2.0)
    body = f"""func.func @main(%x: {ty(xs)}, %s: {ty((3,))}, %b: {ty((3,))}, %m: {ty((3,))}, %v: {ty((3,))}) -> {ty(xs)} {{
  %y = kiln.batch_norm %x, %s, %b, %m, %v {{epsilon = 1.0e-5 : f32}} : ({ty(xs)}, {ty((3,))}, {ty((3,))}, {ty((3,))}, {ty((3,))}) -> {ty(xs)}
  return %y : {ty(xs)}
}}"""
    c = lambda t: t.astype(np.float64)[None, :, None, None]
    cases.append(("batch_norm", body, [x, s, bb, m, v],
                  lambda a: [(a[0] - c(a[3])) / np.sqrt(c(a[4]) + 1e-5) * c(a[1]) + c(a[2])]))
    cases += arg_reduction_cases()
    return cases


def arg_reduction_cases():
    """ArgMax / ArgMin over long rows (a block of threads per row on CUDA):
    integer values, so every row has ties, whose first (or, with
    select_last_index, last) index must win; a row of -inf (no element beats
    the initial value: index 0); two +inf in one row."""
    x = np.round(rand(4, 5000, low=-4, high=4)).astype(np.float32)
    x[1, :] = -np.inf
    x[2, 77] = x[2, 4321] = np.inf
    body = f"""func.func @main(%x: {ty((4, 5000))}) -> {ty((4,), "i64")} {{
  %i = kiln.argmax %x {{axis = 1 : i64, keepdims = false}} : ({ty((4, 5000))}) -> {ty((4,), "i64")}
  return %i : {ty((4,), "i64")}
}}"""
    cases = [("argmax_ties_long_rows", body, [x], lambda a: [a[0].argmax(axis=1)])]
    y = np.round(rand(2, 3, 1031, low=-3, high=3)).astype(np.float32)
    body = f"""func.func @main(%x: {ty((2, 3, 1031))}) -> {ty((2, 3, 1), "i64")} {{
  %i = kiln.argmin %x {{axis = 2 : i64, keepdims = true, select_last_index = true}} : ({ty((2, 3, 1031))}) -> {ty((2, 3, 1), "i64")}
  return %i : {ty((2, 3, 1), "i64")}
}}"""
    last = lambda a: [(1030 - a[0][..., ::-1].argmin(axis=2))[..., None]]
    cases.append(("argmin_last_index_keepdims", body, [y], last))
    return cases


def movement_cases():
    cases = []
    x = rand(2, 3, 4)
    cases.append(("transpose", f"""func.func @main(%x: {ty((2, 3, 4))}) -> {ty((4, 2, 3))} {{
  %y = kiln.transpose %x {{perm = array<i64: 2, 0, 1>}} : ({ty((2, 3, 4))}) -> {ty((4, 2, 3))}
  return %y : {ty((4, 2, 3))}
}}""", [x], lambda a: [a[0].transpose(2, 0, 1)]))
    cases.append(("concat_slice", f"""func.func @main(%x: {ty((2, 3, 4))}) -> {ty((2, 3, 3))} {{
  %c = kiln.concat %x, %x {{axis = 2 : i64}} : ({ty((2, 3, 4))}, {ty((2, 3, 4))}) -> {ty((2, 3, 8))}
  %y = kiln.slice %c {{starts = array<i64: 1>, ends = array<i64: -1>, axes = array<i64: 2>, steps = array<i64: 2>}} : ({ty((2, 3, 8))}) -> {ty((2, 3, 3))}
  return %y : {ty((2, 3, 3))}
}}""", [x], lambda a: [np.concatenate([a[0], a[0]], axis=2)[:, :, 1:-1:2]]))
    table = rand(11, 5)
    ids = np.array([[0, 3, -1], [10, 2, 2]], dtype=np.int64)
    cases.append(("gather_negative_index", f"""func.func @main(%t: {ty((11, 5))}, %i: {ty((2, 3), "i64")}) -> {ty((2, 3, 5))} {{
  %y = kiln.gather %t, %i {{axis = 0 : i64}} : ({ty((11, 5))}, {ty((2, 3), "i64")}) -> {ty((2, 3, 5))}
  return %y : {ty((2, 3, 5))}
}}""", [table, ids], lambda a: [a[0][a[1]]]))
    data = rand(3, 4)
    picks = np.array([[0, 3], [-1, 1], [2, 2]], dtype=np.int64)
    cases.append(("gather_elements", f"""func.func @main(%x: {ty((3, 4))}, %i: {ty((3, 2), "i64")}) -> {ty((3, 2))} {{
  %y = kiln.gather_elements %x, %i {{axis = 1 : i64}} : ({ty((3, 4))}, {ty((3, 2), "i64")}) -> {ty((3, 2))}
  return %y : {ty((3, 2))}
}}""", [data, picks], lambda a: [np.take_along_axis(a[0], np.where(a[1] < 0, a[1] + 4, a[1]), axis=1)]))
    cube = rand(4, 5, 6)
    tuples = np.array([[0, 1], [3, -1], [2, 4]], dtype=np.int64)
    cases.append(("gather_nd", f"""func.func @main(%x: {ty((4, 5, 6))}, %i: {ty((3, 2), "i64")}) -> {ty((3, 6))} {{
  %y = kiln.gather_nd %x, %i : ({ty((4, 5, 6))}, {ty((3, 2), "i64")}) -> {ty((3, 6))}
  return %y : {ty((3, 6))}
}}""", [cube, tuples], lambda a: [np.stack([a[0][r, c] for r, c in a[1]])]))
    x = rand(1, 6, 1, 2)
    cases.append(("reshape_squeeze_unsqueeze", f"""func.func @main(%x: {ty((1, 6, 1, 2))}) -> {ty((3, 1, 4))} {{
  %s = kiln.squeeze %x {{axes = array<i64: 0, 2>}} : ({ty((1, 6, 1, 2))}) -> {ty((6, 2))}
  %r = kiln.reshape %s : ({ty((6, 2))}) -> {ty((3, 4))}
  %u = kiln.unsqueeze %r {{axes = array<i64: 1>}} : ({ty((3, 4))}) -> {ty((3, 1, 4))}
  return %u : {ty((3, 1, 4))}
}}""", [x], lambda a: [a[0].reshape(3, 1, 4)]))
    x = rand(2, 3)
    cases.append(("pad_tile", f"""func.func @main(%x: {ty((2, 3))}) -> {ty((8, 5))} {{
  %p = kiln.pad constant %x {{pads = array<i64: 1, 0, 1, 2>, value = 0.5 : f64}} : ({ty((2, 3))}) -> {ty((4, 5))}
  %t = kiln.tile %p {{repeats = array<i64: 2, 1>}} : ({ty((4, 5))}) -> {ty((8, 5))}
  return %t : {ty((8, 5))}
}}""", [x], lambda a: [np.tile(np.pad(a[0], ((1, 1), (0, 2)), constant_values=0.5), (2, 1))]))
    x = rand(3, 7, low=-5, high=5)
    cases.append(("argmax_select_cast", f"""func.func @main(%x: {ty((3, 7))}) -> ({ty((3,), "i64")}, {ty((3, 7))}) {{
  %i = kiln.argmax %x {{axis = 1 : i64, keepdims = false}} : ({ty((3, 7))}) -> {ty((3,), "i64")}
  %z = kiln.constant dense<0.0> : tensor<f32>
  %c = kiln.greater %x, %z : ({ty((3, 7))}, tensor<f32>) -> {ty((3, 7), "i1")}
  %f = kiln.cast %c : {ty((3, 7), "i1")} -> {ty((3, 7))}
  %s = kiln.select %c, %x, %f : ({ty((3, 7), "i1")}, {ty((3, 7))}, {ty((3, 7))}) -> {ty((3, 7))}
  return %i, %s : {ty((3,), "i64")}, {ty((3, 7))}
}}""", [x], lambda a: [a[0].argmax(axis=1), np.where(a[0] > 0, a[0], 0.0)]))
    return cases


def layer_norm_case(name, shape, axis, residual=False):
    """layer_norm over dims axis.. of x (+ r first when `residual`)."""
    params = shape[axis:]
    x, g, b = rand(*shape, low=-3, high=3), rand(*params), rand(*params)
    inputs = [x, g, b] + ([rand(*shape)] if residual else [])
    extra = f", %r: {ty(shape)}" if residual else ""
    add = f"%s = kiln.add %x, %r : ({ty(shape)}, {ty(shape)}) -> {ty(shape)}\n  " if residual else ""
    source = "%s" if residual else "%x"
    body = f"""func.func @main(%x: {ty(shape)}, %g: {ty(params)}, %b: {ty(params)}{extra}) -> {ty(shape)} {{
  {add}%y = kiln.layer_norm {source}, %g, %b {{axis = {axis} : i64, epsilon = 1.0e-5 : f32}} : ({ty(shape)}, {ty(params)}, {ty(params)}) -> {ty(shape)}
  return %y : {ty(shape)}
}}"""

    def ref(a):
        v = a[0].astype(np.float64) + (a[3] if residual else 0)
        axes = tuple(range(axis % len(shape), len(shape)))
        mu = v.mean(axes, keepdims=True)
        var = ((v - mu) ** 2).mean(axes, keepdims=True)
        return [(v - mu) / np.sqrt(var + 1e-5) * a[1] + a[2]]
    return (name, body, inputs, ref)


def scaled_masked_softmax_case(name, shape):
    """softmax(x * 0.125 + mask) with a mask broadcast over rows, as attention has."""
    x, mask = rand(*shape, low=-8, high=8), rand(1, shape[-1], low=-4, high=0)
    body = f"""func.func @main(%x: {ty(shape)}, %m: {ty((1, shape[-1]))}) -> {ty(shape)} {{
  %c = kiln.constant dense<0.125> : tensor<f32>
  %s = kiln.mul %x, %c : ({ty(shape)}, tensor<f32>) -> {ty(shape)}
  %a = kiln.add %s, %m : ({ty(shape)}, {ty((1, shape[-1]))}) -> {ty(shape)}
  %y = kiln.softmax %a {{axis = -1 : i64}} : {ty(shape)}
  return %y : {ty(shape)}
}}"""

    def ref(a):
        v = a[0].astype(np.float64) * 0.125 + a[1]
        e = np.exp(v - v.max(-1, keepdims=True))
        return [e / e.sum(-1, keepdims=True)]
    return (name, body, [x, mask], ref)


def int_reduce_case(name, kind, shape, axes, fn):
    x = RNG.integers(-1000, 1000, size=shape).astype(np.int64)
    out = tuple(d for i, d in enumerate(shape) if i not in axes)
    body = f"""func.func @main(%x: {ty(shape, "i64")}) -> {ty(out, "i64")} {{
  %y = kiln.reduce {kind} %x {{axes = array<i64: {", ".join(map(str, axes))}>, keepdims = false}} : ({ty(shape, "i64")}) -> {ty(out, "i64")}
  return %y : {ty(out, "i64")}
}}"""
    return (name, body, [x], lambda a: [fn(a[0], tuple(axes))])


ROW_SIZES = (1, 3, 7, 13, 127, 1000)


def row_cases():
    """Softmax, layer_norm and reductions at awkward row lengths (vector
    remainders, rows shorter than one vector, several partial accumulators)
    and over non-last axes; the CPU row kernels take the last-axis ones."""
    cases = []
    for n in ROW_SIZES:
        cases.append(softmax_case(f"softmax_5x{n}", "softmax", (5, n), -1))
        cases.append(layer_norm_case(f"layer_norm_3x{n}", (3, n), -1))
        cases.append(reduce_case(f"reduce_sum_4x{n}", "sum", (4, n), [1], False,
                                 lambda x, a, k: x.sum(axis=a, keepdims=k)))
        cases.append(reduce_case(f"reduce_max_2x3x{n}", "max", (2, 3, n), [2], True,
                                 lambda x, a, k: x.max(axis=a, keepdims=k)))
    fns = {"mean": lambda x, a, k: x.mean(axis=a, keepdims=k),
           "min": lambda x, a, k: x.min(axis=a, keepdims=k),
           "prod": lambda x, a, k: x.prod(axis=a, keepdims=k),
           "l1": lambda x, a, k: np.abs(x).sum(axis=a, keepdims=k),
           "l2": lambda x, a, k: np.sqrt((x * x).sum(axis=a, keepdims=k)),
           "sum_square": lambda x, a, k: (x * x).sum(axis=a, keepdims=k),
           "log_sum_exp": lambda x, a, k: np.log(np.exp(x).sum(axis=a, keepdims=k))}
    for kind, fn in fns.items():
        cases.append(reduce_case(f"reduce_{kind}_6x13", kind, (6, 13), [1], False, fn))
        cases.append(reduce_case(f"reduce_{kind}_127x3_axis0", kind, (127, 3), [0], False, fn))
    cases += [
        reduce_case("reduce_sum_7x13x5_axis1", "sum", (7, 13, 5), [1], True,
                    lambda x, a, k: x.sum(axis=a, keepdims=k)),
        reduce_case("reduce_mean_3x7x13_last2", "mean", (3, 7, 13), [1, 2], False,
                    lambda x, a, k: x.mean(axis=a, keepdims=k)),
        reduce_case("reduce_max_1000", "max", (1000,), [0], False,
                    lambda x, a, k: x.max(axis=a, keepdims=k)),
        softmax_case("softmax_7x13x5_axis1", "softmax", (7, 13, 5), 1),
        softmax_case("softmax_13x7_axis0", "softmax", (13, 7), 0),
        softmax_case("log_softmax_3x1000", "log_softmax", (3, 1000), -1),
        softmax_case("log_softmax_2x3x127", "log_softmax", (2, 3, 127), 2),
        layer_norm_case("layer_norm_2x3x13_last2", (2, 3, 13), -2),
        layer_norm_case("layer_norm_residual_4x127", (4, 127), -1, residual=True),
        scaled_masked_softmax_case("softmax_scaled_masked_12x127", (12, 127)),
        int_reduce_case("reduce_sum_i64_5x13", "sum", (5, 13), [1], lambda x, a: x.sum(axis=a)),
        int_reduce_case("reduce_max_i64_3x127", "max", (3, 127), [1], lambda x, a: x.max(axis=a)),
        int_reduce_case("reduce_min_i64_4x7_axis0", "min", (4, 7), [0], lambda x, a: x.min(axis=a)),
    ]
    return cases


AWKWARD = (1, 3, 7, 13, 127, 1000)


def random_cases(seed=20261130):
    """Seeded random kernels at awkward sizes (1, 3, 7, 13, 127, 1000) against float64:
    matmuls (2-D, batched, broadcast), convs with odd strides, groups, dilations and
    rectangular kernels, max/avg pools with strides, pads and dilations, and reductions
    over random axis sets. The seed fixes the cases; a new seed is a new test."""
    rng = np.random.default_rng(seed)
    pick = lambda options: options[int(rng.integers(len(options)))]  # noqa: E731
    cases = []
    while len(cases) < 8:  # 2-D matmuls, at most ~1.3e8 multiply-adds each
        m, k, n = pick(AWKWARD), pick(AWKWARD), pick(AWKWARD)
        if m * k * n <= 130_000_000:
            cases.append(matmul_case(f"rand_matmul_{m}x{k}x{n}", (m, k), (k, n), (m, n)))
    for i in range(3):
        b, m, k, n = pick((1, 3, 7)), pick(AWKWARD[:5]), pick(AWKWARD[:5]), pick(AWKWARD[:5])
        lhs = (b, m, k) if i != 2 else (1, m, k)
        rhs = (b, k, n) if i != 1 else (k, n)
        cases.append(matmul_case(f"rand_bmm{i}_{b}x{m}x{k}x{n}", lhs, rhs,
                                 (b, m, n)))
    convs = 0
    while convs < 10:
        group = pick((1, 1, 2, 3, "depthwise"))
        per = pick((1, 3, 7))
        c = per * (1 if group == "depthwise" else group)
        g = c if group == "depthwise" else group
        f = c if group == "depthwise" else g * pick((1, 3, 7, 13))
        kh, kw = pick((1, 2, 3, 5)), pick((1, 3, 7))
        stride, dilation = pick((1, 2, 3)), pick((1, 2, 3))
        pad = int(rng.integers(0, max(kh, kw)))
        h, w = pick((1, 3, 7, 13)), pick((3, 7, 13, 127))
        oh = (h + 2 * pad - dilation * (kh - 1) - 1) // stride + 1
        ow = (w + 2 * pad - dilation * (kw - 1) - 1) // stride + 1
        if oh < 1 or ow < 1:
            continue
        convs += 1
        cases.append(conv_case(f"rand_conv_{c}x{h}x{w}_f{f}_k{kh}x{kw}_s{stride}_d{dilation}_p{pad}_g{g}",
                               (pick((1, 2)), c, h, w), (f, c // g, kh, kw), stride=stride,
                               pad=pad, dilation=dilation, group=g, bias=bool(rng.integers(2))))
    pools = 0
    while pools < 8:
        op = pick(("max_pool", "avg_pool"))
        k, stride, dilation = pick((1, 2, 3, 5)), pick((1, 2, 3)), pick((1, 1, 2))
        if op == "avg_pool":
            dilation = 1  # ONNX AveragePool has dilations only from opset 19
        pad = int(rng.integers(0, (k + 1) // 2))  # ONNX: pads smaller than the kernel
        size = pick((3, 7, 13, 127))
        if (size + 2 * pad - dilation * (k - 1) - 1) // stride + 1 < 1:
            continue
        pools += 1
        include = op == "avg_pool" and bool(rng.integers(2))
        cases.append(pool_case(f"rand_{op}_{size}_k{k}_s{stride}_p{pad}_d{dilation}"
                               + ("_incl" if include else ""), op, (1, pick((1, 3, 13)), size, 7),
                               k, stride, pad, include_pad=include, dilation=dilation))
    kinds = {"sum": lambda x, a, k: x.sum(axis=a, keepdims=k),
             "mean": lambda x, a, k: x.mean(axis=a, keepdims=k),
             "max": lambda x, a, k: x.max(axis=a, keepdims=k),
             "min": lambda x, a, k: x.min(axis=a, keepdims=k),
             "l2": lambda x, a, k: np.sqrt((x * x).sum(axis=a, keepdims=k)),
             "sum_square": lambda x, a, k: (x * x).sum(axis=a, keepdims=k)}
    reductions = 0
    while reductions < 8:
        rank = pick((1, 2, 3))
        shape = tuple(pick(AWKWARD) for _ in range(rank))
        if np.prod(shape) > 200_000:
            continue
        axes = sorted({int(a) for a in rng.integers(0, rank, size=int(rng.integers(1, rank + 1)))})
        kind = pick(sorted(kinds))
        keep = bool(rng.integers(2))
        reductions += 1
        cases.append(reduce_case(f"rand_reduce_{kind}_{'x'.join(map(str, shape))}_axes"
                                 f"{''.join(map(str, axes))}{'_keep' if keep else ''}",
                                 kind, shape, axes, keep, kinds[kind]))
    return cases


FAMILIES = {
    "elementwise": elementwise_cases,
    "contraction": contraction_cases,
    "conv": conv_cases,
    "reduction": reduction_cases,
    "movement": movement_cases,
    "rows": row_cases,
    "random": random_cases,
}
