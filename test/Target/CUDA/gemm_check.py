# GPU correctness check of the CUDA GEMM template (kiln-cuda-gemm).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: gemm_check.py compile WORK --kilnc KILNC     (here: models, PTX checks)
       gemm_check.py run WORK --kiln-run KILN_RUN    (on a GPU machine)

Each case is a (batch) matmul model compiled with kilnc --target=cuda
--precision=fp16|bf16|tf32|fp32. `compile` also checks that the kernel module uses the
template (wgmma.mma_async and cp.async.bulk.tensor in the PTX) exactly for
the shapes it takes (tile multiples and ragged edges with N, K multiples of
8, or of 4 for tf32); the others use the generic SIMT kernels; products
with one row (the gemv_ cases) use the one-row kernel, which splits K over
a thread-block cluster exactly for the _split cases.
`run` draws fresh random inputs (a new seed each run), runs each artifact with
outputs poisoned with NaN (KILN_CUDA_POISON_OUTPUTS=1) and compares every
element with a float64 product of the inputs rounded to the precision:
|out - ref| <= 1e-4 * (|A| @ |B|) (f32 accumulation; an unwritten or
misplaced element fails by orders of magnitude). tf32 reads the f32 inputs
with 10 mantissa bits, rounded or truncated by the hardware: its reference
is the float64 product of the f32 inputs, within 2.5e-3 * (|A| @ |B|)
(two operands off by up to 2^-10 each). fp32 (3xTF32: split operands on
tf32 tensor cores) is held to 1e-5 * (|A| @ |B|) against the float64
product of the f32 inputs; where torch is installed it also prints the
error of cuBLAS SGEMM (cuDNN for convolutions, TF32 off) on the same
inputs. It also prints the error
against the float64 product of the unrounded inputs (the precision's cost).
The convolution cases (at batches 1, 2, 17 and 33: im2col + one GEMM
launch over all images with shared filters)
are checked the same way against a float64 convolution (with relu).
Without a CUDA driver `run` prints SKIPPED and exits 0.
"""

import argparse
import ctypes
import json
import os
import subprocess
import sys
import time

import numpy as np

# name, batch, M, N, K, precision, B is a compile-time weight, uses the template
CASES = [
    ("f16_256x256x128", 1, 256, 256, 128, "fp16", False, True),
    ("bf16_512x384x320", 1, 512, 384, 320, "bf16", False, True),
    ("bf16_128x128x64", 1, 128, 128, 64, "bf16", False, True),
    ("f16_batch3_256x128x192", 3, 256, 128, 192, "fp16", False, True),
    ("f16_weight_256x512x256", 1, 256, 512, 256, "fp16", True, True),
    ("bf16_2048x2048x2048", 1, 2048, 2048, 2048, "bf16", False, True),
    ("f16_ragged_200x136x72", 1, 200, 136, 72, "fp16", False, True),
    ("bf16_ragged_100x40x72", 1, 100, 40, 72, "bf16", False, True),
    ("f16_ragged_batch2_200x136x128", 2, 200, 136, 128, "fp16", False, True),
    ("bf16_ragged_1000x1064x520", 1, 1000, 1064, 520, "bf16", False, True),
    ("f16_generic_60x36x20", 1, 60, 36, 20, "fp16", False, False),
    # relu(A @ W + bias): the epilogue computes bias and relu (2 kernels in
    # all: A's conversion to f16 and the GEMM).
    ("f16_bias_relu_200x384x136", 1, 200, 384, 136, "fp16", True, True),
    # tf32: f32 operands, B transposed to K-major (a transpose kernel, or at
    # compile time for a weight); k steps of 32.
    ("tf32_256x256x128", 1, 256, 256, 128, "tf32", False, True),
    ("tf32_2048x2048x2048", 1, 2048, 2048, 2048, "tf32", False, True),
    ("tf32_batch3_256x128x192", 3, 256, 128, 192, "tf32", False, True),
    ("tf32_weight_256x512x256", 1, 256, 512, 256, "tf32", True, True),
    ("tf32_ragged_200x136x72", 1, 200, 136, 72, "tf32", False, True),
    ("tf32_ragged_batch2_200x132x100", 2, 200, 132, 100, "tf32", False, True),
    ("tf32_ragged_1000x1060x516", 1, 1000, 1060, 516, "tf32", False, True),
    ("tf32_generic_60x30x20", 1, 60, 30, 20, "tf32", False, False),
    # relu(A @ W + bias) with W transposed at compile time: one kernel.
    ("tf32_bias_relu_200x384x136", 1, 200, 384, 136, "tf32", True, True),
    # fp32 (3xTF32): A split by a kernel into [As | Ab | Ab], B into
    # [Bb ; Bs ; Bb] (then transposed), or at compile time for a weight;
    # one tf32 product over 3K. N or K not a multiple of 4: SIMT.
    ("fp32_256x256x128", 1, 256, 256, 128, "fp32", False, True),
    ("fp32_2048x2048x2048", 1, 2048, 2048, 2048, "fp32", False, True),
    ("fp32_batch3_256x128x192", 3, 256, 128, 192, "fp32", False, True),
    ("fp32_weight_256x512x256", 1, 256, 512, 256, "fp32", True, True),
    ("fp32_ragged_200x136x72", 1, 200, 136, 72, "fp32", False, True),
    ("fp32_ragged_batch2_200x132x100", 2, 200, 132, 100, "fp32", False, True),
    ("fp32_ragged_1000x1060x516", 1, 1000, 1060, 516, "fp32", False, True),
    ("fp32_generic_60x30x20", 1, 60, 30, 20, "fp32", False, False),
    ("fp32_generic_64x32x18", 1, 64, 32, 18, "fp32", False, False),
    # relu(A @ W + bias): A's split and the GEMM with bias and relu.
    ("fp32_bias_relu_200x384x136", 1, 200, 384, 136, "fp32", True, True),
    # One row (a decode step's projections): the one-row kernel, not the
    # template; "split" ones split K over a thread-block cluster (checked in
    # the PTX). A ~1B Llama's key/value projection (8 slices of 2 row
    # steps), its q/o (bf16, 8 slices), its down projection (8 slices of 6
    # steps, the last slice's steps past K skipped), N = 72 (a block's
    # columns past N) with K = 1000 (rows past K), an unsplit one (8448
    # columns: a loop of two groups of 8 steps, then a step past K = 2056),
    # K = 15360 with N = 256 (8 slices of 16 steps in a guarded loop, the
    # last slice's second group past K), and the key/value projection with
    # bias + relu (applied once, to the slices' sum).
    ("gemv_f16_weight_1x256x2048_split", 1, 1, 256, 2048, "fp16", True, False),
    ("gemv_bf16_1x2048x2048_split", 1, 1, 2048, 2048, "bf16", False, False),
    ("gemv_f16_1x2048x5632_split", 1, 1, 2048, 5632, "fp16", False, False),
    ("gemv_f16_ragged_1x72x1000_split", 1, 1, 72, 1000, "fp16", False, False),
    ("gemv_bf16_1x8448x2056", 1, 1, 8448, 2056, "bf16", False, False),
    ("gemv_f16_1x256x15360_split", 1, 1, 256, 15360, "fp16", False, False),
    ("gemv_f16_bias_relu_1x256x2048_split", 1, 1, 256, 2048, "fp16", True, False),
]

# Kernels of a product with a weight B and bias + relu in the epilogue.
BIAS_KERNELS = {"tf32": 1, "fp32": 2}


# Convolutions (NCHW; at any batch the CUDA policy keeps them one
# linalg.conv_2d_nchw_fchw, then im2col + one GEMM launch over all images
# through the template; relu after): name, x shape, w shape, stride, pad,
# precision, and whether a bias and a residual input come before the relu.
# Every case must compile to two kernels: the im2col kernel (reading the
# unpadded input) and the GEMM whose epilogue computes bias, residual and
# relu.
CONV_CASES = [
    ("conv_f16_3x3_17x16x12x12_f32", (17, 16, 12, 12), (32, 16, 3, 3), 1, 1, "fp16", False),
    ("conv_bf16_3x3s2_17x8x15x15_f24", (17, 8, 15, 15), (24, 8, 3, 3), 2, 1, "bf16", False),
    ("conv_f16_3x3_17x16x7x7_f64_p49", (17, 16, 7, 7), (64, 16, 3, 3), 1, 1, "fp16", False),
    ("conv_tf32_3x3_17x32x7x7_f40_p49", (17, 32, 7, 7), (40, 32, 3, 3), 1, 1, "tf32", False),
    ("conv_tf32_1x1_17x64x14x14_f36", (17, 64, 14, 14), (36, 64, 1, 1), 1, 0, "tf32", False),
    ("conv_bf16_3x3_33x64x28x28_f128", (33, 64, 28, 28), (128, 64, 3, 3), 1, 1, "bf16", False),
    # An RGB stem (K = 3*7*7 = 147): zero channels pad K to 8*49 (f16) or 4*49.
    ("conv_f16_7x7s2_17x3x40x40_f64_stem", (17, 3, 40, 40), (64, 3, 7, 7), 2, 3, "fp16", False),
    ("conv_tf32_7x7s2_17x3x40x40_f64_stem", (17, 3, 40, 40), (64, 3, 7, 7), 2, 3, "tf32", False),
    # relu(conv + bias + residual): tile multiples (P = 256, F = 128), a
    # strided 1x1 downsample with ragged P and F, tf32.
    ("conv_f16_3x3_17x32x16x16_f128_bias_res", (17, 32, 16, 16), (128, 32, 3, 3), 1, 1, "fp16",
     True),
    ("conv_bf16_1x1s2_17x64x14x14_f72_bias_res", (17, 64, 14, 14), (72, 64, 1, 1), 2, 0, "bf16",
     True),
    ("conv_tf32_3x3_17x16x9x9_f40_bias_res", (17, 16, 9, 9), (40, 16, 3, 3), 1, 1, "tf32", True),
    # fp32 (3xTF32): the input split into [xb ; xs ; xb] along C (one more
    # kernel), the filters [Ws | Wb | Wb] now; then im2col + products.
    ("conv_fp32_3x3_17x32x7x7_f40_p49", (17, 32, 7, 7), (40, 32, 3, 3), 1, 1, "fp32", False),
    ("conv_fp32_7x7s2_17x3x40x40_f64_stem", (17, 3, 40, 40), (64, 3, 7, 7), 2, 3, "fp32", False),
    ("conv_fp32_3x3_17x16x9x9_f40_bias_res", (17, 16, 9, 9), (40, 16, 3, 3), 1, 1, "fp32", True),
    # Small batches (per-image products before the batch became the GEMM's
    # grid).
    ("conv_f16_3x3_1x16x12x12_f32_b1", (1, 16, 12, 12), (32, 16, 3, 3), 1, 1, "fp16", False),
    ("conv_f16_7x7s2_1x3x40x40_f64_stem_b1", (1, 3, 40, 40), (64, 3, 7, 7), 2, 3, "fp16", False),
    ("conv_bf16_3x3_2x32x16x16_f128_bias_res_b2", (2, 32, 16, 16), (128, 32, 3, 3), 1, 1, "bf16",
     True),
    ("conv_tf32_3x3_2x16x9x9_f40_bias_res_b2", (2, 16, 9, 9), (40, 16, 3, 3), 1, 1, "tf32", True),
    ("conv_fp32_3x3_1x16x9x9_f40_bias_res_b1", (1, 16, 9, 9), (40, 16, 3, 3), 1, 1, "fp32", True),
]

# Convolutions compiled with a symbolic batch (none yet: a kiln MLIR model
# with a `?` batch is refused, its output shape not traced to the inputs).
SYMBOLIC_BATCH = set()

# Tolerance of |out - ref| in units of |A| @ |B| (the products of absolute
# values): f32 accumulation; tf32 reads operands with 10 mantissa bits.
TOLERANCE = {"tf32": 2.5e-3, "fp32": 1e-5}


def conv_model(x_shape, w_shape, stride, pad, weight, bias=None, symbolic=False):
    n, _, h, w = x_shape
    f, _, kh, kw = w_shape
    oh, ow = (h + 2 * pad - kh) // stride + 1, (w + 2 * pad - kw) // stride + 1
    if symbolic:
        n = "?"
    xt = "tensor<" + "x".join(map(str, (n, *x_shape[1:]))) + "xf32>"
    wt = "tensor<" + "x".join(map(str, w_shape)) + "xf32>"
    yt = f"tensor<{n}x{f}x{oh}x{ow}xf32>"
    if bias is not None:
        return (f"func.func @main(%x: {xt}, %r: {yt}) -> {yt} {{\n"
                f"  %w = {hex_constant(weight, wt)}\n"
                f"  %b = {hex_constant(bias, f'tensor<{f}xf32>')}\n"
                f"  %c = kiln.conv %x, %w, %b {{strides = array<i64: {stride}, {stride}>, "
                f"dilations = array<i64: 1, 1>, pads = array<i64: {pad}, {pad}, {pad}, {pad}>}} "
                f": ({xt}, {wt}, tensor<{f}xf32>) -> {yt}\n"
                f"  %s = kiln.add %c, %r : ({yt}, {yt}) -> {yt}\n"
                f"  %o = kiln.relu %s : {yt}\n  return %o : {yt}\n}}\n")
    return (f"func.func @main(%x: {xt}) -> {yt} {{\n"
            f"  %w = {hex_constant(weight, wt)}\n"
            f"  %c = kiln.conv %x, %w {{strides = array<i64: {stride}, {stride}>, dilations = "
            f"array<i64: 1, 1>, pads = array<i64: {pad}, {pad}, {pad}, {pad}>}} : ({xt}, {wt}) -> {yt}\n"
            f"  %r = kiln.relu %c : {yt}\n  return %r : {yt}\n}}\n")


def conv_reference(x, w, stride, pad):
    """float64 NCHW convolution through im2col."""
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    f, c, kh, kw = w.shape
    windows = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    windows = windows[:, :, ::stride, ::stride]  # n, c, oh, ow, kh, kw
    return np.einsum("ncyxij,fcij->nfyx", windows, w, optimize=True)


def tensor(batch, rows, cols):
    return f"tensor<{batch}x{rows}x{cols}xf32>" if batch > 1 else f"tensor<{rows}x{cols}xf32>"


def hex_constant(value, type_):
    return f"kiln.constant dense<\"0x{value.astype('<f4').tobytes().hex().upper()}\"> : {type_}"


def model_text(batch, m, n, k, weight, bias=None):
    a, b, c = tensor(batch, m, k), tensor(batch, k, n), tensor(batch, m, n)
    if bias is not None:
        return (f"func.func @main(%a: {a}) -> {c} {{\n"
                f"  %b = {hex_constant(weight, b)}\n"
                f"  %bias = {hex_constant(bias, f'tensor<{n}xf32>')}\n"
                f"  %p = kiln.matmul %a, %b : ({a}, {b}) -> {c}\n"
                f"  %s = kiln.add %p, %bias : ({c}, tensor<{n}xf32>) -> {c}\n"
                f"  %r = kiln.relu %s : {c}\n"
                f"  return %r : {c}\n}}\n")
    if weight is None:
        return (f"func.func @main(%a: {a}, %b: {b}) -> {c} {{\n"
                f"  %c = kiln.matmul %a, %b : ({a}, {b}) -> {c}\n"
                f"  return %c : {c}\n}}\n")
    hex_bytes = weight.astype("<f4").tobytes().hex().upper()
    return (f"func.func @main(%a: {a}) -> {c} {{\n"
            f"  %b = kiln.constant dense<\"0x{hex_bytes}\"> : {b}\n"
            f"  %c = kiln.matmul %a, %b : ({a}, {b}) -> {c}\n"
            f"  return %c : {c}\n}}\n")


def compile_cases(args):
    failures = 0
    rng = np.random.default_rng()
    for name, batch, m, n, k, precision, has_weight, template in CASES:
        case = os.path.join(args.work, name)
        os.makedirs(case, exist_ok=True)
        weight = rng.standard_normal((k, n), np.float32) if has_weight else None
        bias = rng.standard_normal(n, np.float32) if "bias" in name else None
        if weight is not None:
            np.save(os.path.join(case, "weight.npy"), weight)
        if bias is not None:
            np.save(os.path.join(case, "bias.npy"), bias)
        with open(os.path.join(case, "model.mlir"), "w") as f:
            f.write(model_text(batch, m, n, k, weight, bias))
        flags = ["--target=cuda", f"--precision={precision}"]
        ptx = subprocess.run([args.kilnc, os.path.join(case, "model.mlir"), *flags, "--emit=ptx",
                              "-o", "-"], capture_output=True, text=True)
        lib = subprocess.run([args.kilnc, os.path.join(case, "model.mlir"), *flags,
                              "-o", os.path.join(case, "model.so")], capture_output=True, text=True)
        os.remove(os.path.join(case, "model.mlir"))
        error = None
        if ptx.returncode or lib.returncode:
            error = "compile failed: " + (ptx.stderr or lib.stderr).strip()
        else:
            used = "wgmma.mma_async" in ptx.stdout and "cp.async.bulk.tensor" in ptx.stdout
            kernels = ptx.stdout.count(".entry ")
            one_row = name.startswith("gemv_")
            split = "mapa.shared::cluster" in ptx.stdout and ".reqnctapercluster" in ptx.stdout
            if used != template:
                error = f"the GEMM template is {'used' if used else 'not used'}, expected " \
                        f"{'it' if template else 'the generic path or the one-row kernel'}"
            elif one_row and split != name.endswith("_split"):
                error = f"the one-row kernel {'splits' if split else 'does not split'} K, " \
                        f"expected {'a split' if name.endswith('_split') else 'none'}"
            elif bias is not None and kernels != BIAS_KERNELS.get(precision, 2):
                error = f"{kernels} kernels, expected {BIAS_KERNELS.get(precision, 2)} " \
                        "(bias and relu in the GEMM's epilogue)"
        with open(os.path.join(case, "meta.json"), "w") as f:
            json.dump({"batch": batch, "m": m, "n": n, "k": k, "precision": precision,
                       "weight": has_weight, "template": template}, f)
        print(("PASS: " if error is None else "FAIL: ") + name + " (compile)" +
              ("" if error is None else "\n  " + error))
        failures += error is not None
    for name, x_shape, w_shape, stride, pad, precision, residual in CONV_CASES:
        case = os.path.join(args.work, name)
        os.makedirs(case, exist_ok=True)
        weight = rng.standard_normal(w_shape, np.float32)
        np.save(os.path.join(case, "weight.npy"), weight)
        bias = rng.standard_normal(w_shape[0], np.float32) if residual else None
        if bias is not None:
            np.save(os.path.join(case, "bias.npy"), bias)
        with open(os.path.join(case, "model.mlir"), "w") as f:
            f.write(conv_model(x_shape, w_shape, stride, pad, weight, bias,
                               symbolic=name in SYMBOLIC_BATCH))
        flags = ["--target=cuda", f"--precision={precision}"]
        ptx = subprocess.run([args.kilnc, os.path.join(case, "model.mlir"), *flags, "--emit=ptx",
                              "-o", "-"], capture_output=True, text=True)
        lib = subprocess.run([args.kilnc, os.path.join(case, "model.mlir"), *flags,
                              "-o", os.path.join(case, "model.so")], capture_output=True, text=True)
        os.remove(os.path.join(case, "model.mlir"))
        error = None
        if ptx.returncode or lib.returncode:
            error = "compile failed: " + (ptx.stderr or lib.stderr).strip()
        elif "wgmma.mma_async" not in ptx.stdout:
            error = "the convolution does not use the GEMM template"
        elif ptx.stdout.count(".entry ") != (3 if precision == "fp32" else 2):
            error = (f"{ptx.stdout.count('.entry ')} kernels, expected "
                     f"{3 if precision == 'fp32' else 2} (fp32: the input's split; im2col, and "
                     "the GEMM with its epilogue)")
        with open(os.path.join(case, "meta.json"), "w") as f:
            json.dump({"conv": True, "x": x_shape, "stride": stride, "pad": pad,
                       "precision": precision}, f)
        print(("PASS: " if error is None else "FAIL: ") + name + " (compile)" +
              ("" if error is None else "\n  " + error))
        failures += error is not None
    total = len(CASES) + len(CONV_CASES)
    print(f"gemm compile: {total - failures} passed, {failures} failed")
    return 1 if failures else 0


def round_to(x, precision):
    if precision in ("tf32", "fp32"):
        return x.astype(np.float32).astype(np.float64)
    if precision == "fp16":
        return x.astype(np.float16).astype(np.float64)
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16  # round to nearest even
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def _torch():
    """torch with CUDA and TF32 off (cuBLAS SGEMM, cuDNN f32), or None."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return torch


def cublas_sgemm(a, b):
    """The same product by cuBLAS in f32 (float64 result), or None."""
    torch = _torch()
    if torch is None:
        return None
    return torch.matmul(torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()).double().cpu().numpy()


def cudnn_conv(x, w, stride, pad):
    """The same convolution by cuDNN in f32 (float64 result), or None."""
    torch = _torch()
    if torch is None:
        return None
    return torch.nn.functional.conv2d(torch.from_numpy(x).cuda(), torch.from_numpy(w).cuda(),
                                      stride=stride, padding=pad).double().cpu().numpy()


def have_driver():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def run_cases(args):
    if not have_driver():
        print("SKIPPED: gemm GPU check (no CUDA driver: libcuda.so.1 not found)")
        return 0
    failures = 0
    seed = time.time_ns() % (2**32)
    rng = np.random.default_rng(seed)
    print(f"gemm run: input seed {seed}")
    env = dict(os.environ, KILN_CUDA_POISON_OUTPUTS="1")
    for name, *_ in CASES:
        case = os.path.join(args.work, name)
        with open(os.path.join(case, "meta.json")) as f:
            meta = json.load(f)
        batch, m, n, k, precision = (meta[key] for key in ("batch", "m", "n", "k", "precision"))
        lead = (batch,) if batch > 1 else ()
        a = rng.standard_normal(lead + (m, k)).astype(np.float32)
        b = (np.load(os.path.join(case, "weight.npy")) if meta["weight"]
             else rng.standard_normal(lead + (k, n)).astype(np.float32))
        cmd = [args.kiln_run, os.path.join(case, "model.so"), "--device", "cuda",
               "--output-dir", os.path.join(case, "out")]
        np.save(os.path.join(case, "in_a.npy"), a)
        cmd += ["--input", f"input_0={os.path.join(case, 'in_a.npy')}"]
        if not meta["weight"]:
            np.save(os.path.join(case, "in_b.npy"), b)
            cmd += ["--input", f"input_1={os.path.join(case, 'in_b.npy')}"]
        run = subprocess.run(cmd, capture_output=True, text=True, env=env)
        error = None
        if run.returncode:
            error = "run failed: " + (run.stderr.strip() or run.stdout.strip())
        else:
            outs = sorted(os.listdir(os.path.join(case, "out")))
            out = np.load(os.path.join(case, "out", outs[0])).astype(np.float64)
            ar, br = round_to(a, precision), round_to(b.astype(np.float32), precision)
            ref = np.matmul(ar, br)
            scale = np.matmul(np.abs(ar), np.abs(br))
            epilogue = lambda x: x  # noqa: E731
            if os.path.exists(os.path.join(case, "bias.npy")):
                bias = np.load(os.path.join(case, "bias.npy")).astype(np.float64)
                epilogue = lambda x: np.maximum(x + bias, 0.0)  # noqa: E731
            ref = epilogue(ref)
            tolerance = TOLERANCE.get(precision, 1e-4)
            bad = ~(np.abs(out - ref) <= tolerance * scale)  # NaN fails too
            exact = epilogue(np.matmul(a.astype(np.float64), b.astype(np.float64)))
            rel = np.linalg.norm(out - exact) / np.linalg.norm(exact)
            detail = f"rel. error vs unrounded f64 {rel:.2e}"
            if precision == "fp32":
                detail += f", max {np.max(np.abs(out - ref) / scale):.2e} of |A||B|"
                sgemm = cublas_sgemm(a, b)
                if sgemm is not None:
                    sgemm = epilogue(sgemm)
                    detail += (f"; cuBLAS SGEMM {np.linalg.norm(sgemm - exact) / np.linalg.norm(exact):.2e}"
                               f", max {np.max(np.abs(sgemm - ref) / scale):.2e}")
            if bad.any():
                first = tuple(int(i) for i in np.argwhere(bad)[0])
                error = (f"{int(bad.sum())} of {out.size} elements wrong (NaN: "
                         f"{int(np.isnan(out).sum())}); first at {first}: {out[first]} vs "
                         f"{ref[first]}; {detail}")
            elif rel > 1e-2:
                error = detail + " > 1e-2"
            else:
                name += f" ({detail})"
        print(("PASS: " if error is None else "FAIL: ") + name +
              ("" if error is None else "\n  " + error))
        failures += error is not None
    for name, *_ in CONV_CASES:
        case = os.path.join(args.work, name)
        with open(os.path.join(case, "meta.json")) as f:
            meta = json.load(f)
        precision, stride, pad = meta["precision"], meta["stride"], meta["pad"]
        x = rng.standard_normal(meta["x"]).astype(np.float32)
        w = np.load(os.path.join(case, "weight.npy"))
        np.save(os.path.join(case, "in_x.npy"), x)
        cmd = [args.kiln_run, os.path.join(case, "model.so"), "--device", "cuda",
               "--output-dir", os.path.join(case, "out"),
               "--input", f"input_0={os.path.join(case, 'in_x.npy')}"]
        add = np.float64(0.0)
        if os.path.exists(os.path.join(case, "bias.npy")):
            bias = np.load(os.path.join(case, "bias.npy")).astype(np.float64)
            n, _, h, wd = meta["x"]
            f, _, kh, kw = w.shape
            oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
            r = rng.standard_normal((n, f, oh, ow)).astype(np.float32)
            np.save(os.path.join(case, "in_r.npy"), r)
            cmd += ["--input", f"input_1={os.path.join(case, 'in_r.npy')}"]
            add = bias[None, :, None, None] + r.astype(np.float64)
        run = subprocess.run(cmd, capture_output=True, text=True, env=env)
        error = None
        if run.returncode:
            error = "run failed: " + (run.stderr.strip() or run.stdout.strip())
        else:
            outs = sorted(os.listdir(os.path.join(case, "out")))
            out = np.load(os.path.join(case, "out", outs[0])).astype(np.float64)
            xr, wr = round_to(x, precision), round_to(w, precision)
            ref = np.maximum(conv_reference(xr, wr, stride, pad) + add, 0.0)
            scale = conv_reference(np.abs(xr), np.abs(wr), stride, pad) + 1e-3
            tolerance = TOLERANCE.get(precision, 1e-4)
            bad = ~(np.abs(out - ref) <= tolerance * scale)  # NaN fails too
            exact = np.maximum(conv_reference(x.astype(np.float64), w.astype(np.float64),
                                              stride, pad) + add, 0.0)
            rel = np.linalg.norm(out - exact) / np.linalg.norm(exact)
            detail = f"rel. error vs unrounded f64 {rel:.2e}"
            if precision == "fp32" and out.shape == ref.shape:
                detail += f", max {np.max(np.abs(out - ref) / scale):.2e} of |x||w|"
                cudnn = cudnn_conv(x, w, stride, pad)
                if cudnn is not None:
                    cudnn = np.maximum(cudnn + add, 0.0)
                    detail += (f"; cuDNN f32 {np.linalg.norm(cudnn - exact) / np.linalg.norm(exact):.2e}"
                               f", max {np.max(np.abs(cudnn - ref) / scale):.2e}")
            if out.shape != ref.shape:
                error = f"output shape {out.shape}, expected {ref.shape}"
            elif bad.any():
                first = tuple(int(i) for i in np.argwhere(bad)[0])
                error = (f"{int(bad.sum())} of {out.size} elements wrong (NaN: "
                         f"{int(np.isnan(out).sum())}); first at {first}: {out[first]} vs "
                         f"{ref[first]}; {detail}")
            elif rel > 1e-2:
                error = detail + " > 1e-2"
            else:
                name += f" ({detail})"
        print(("PASS: " if error is None else "FAIL: ") + name +
              ("" if error is None else "\n  " + error))
        failures += error is not None
    total = len(CASES) + len(CONV_CASES)
    print(f"gemm run: {total - failures} passed, {failures} failed")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("phase", choices=["compile", "run"])
    parser.add_argument("work")
    parser.add_argument("--kilnc")
    parser.add_argument("--kiln-run")
    args = parser.parse_args()
    if args.phase == "compile" and not args.kilnc:
        parser.error("compile needs --kilnc")
    if args.phase == "run" and not args.kiln_run:
        parser.error("run needs --kiln-run")
    return compile_cases(args) if args.phase == "compile" else run_cases(args)


if __name__ == "__main__":
    sys.exit(main())
