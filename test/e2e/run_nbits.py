# onnxruntime's MatMulNBits (block-quantized 2/4/8-bit weights) on the CPU's
# low-bit kernel, against a float64 reference of the dequantized weights.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: run_nbits.py WORKDIR --kilnc PATH --kiln-run PATH

Each case is one com.microsoft MatMulNBits node with constant weights
(B [N, blocks, block * bits / 8] packed low bits first, scales, optional
zero points packed like B or as floats, optional bias), written here with
numpy. Kilnc must keep the weight low-bit (a kiln.matmul_nbits_kernel with
the expected `bits` in --emit=graph; a case with more rows than the kernel
takes must not have one). The output is compared per element with
`A @ W^T (+ bias)` in float64, W = (q - zero) * scale from the same
integers, within 1e-5 of sum_k |A[m, k] W[n, k]| (f32 sums and the
kernel's `q * s - z * s` rounding are far below; a wrong nibble, zero point,
scale or block is an error of at least one term, about 1/K of that sum).
Sizes are awkward on purpose: M = 1, 2, 3, 7 and 8 (the 4-, 2- and 1-row
tiles), K not a multiple of the block (K = 100 with blocks of 16 and 32,
300 with 128) and odd (the last k pair half used), N odd and off the panel
width, a batched A, block sizes 16, 32 and 128, with and without zero
points, with a bias, 8- and 2-bit weights.
Prints one PASS/FAIL line per case and a summary; exits 1 on any failure.
"""

import argparse
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from run_float8 import run as run_model


def pack(values, bits):
    """[..., n] integers below 2^bits into bytes along the last axis, low bits first."""
    per = 8 // bits
    n = values.shape[-1]
    padded = np.zeros(values.shape[:-1] + (-(-n // per) * per,), np.uint8)
    padded[..., :n] = values
    padded = padded.reshape(values.shape[:-1] + (-1, per)).astype(np.uint16)
    shifts = (np.arange(per) * bits).astype(np.uint16)
    return (padded << shifts).sum(axis=-1).astype(np.uint8)


def nbits_case(rng, a_shape, n, block, bits, zeros, bias):
    """A MatMulNBits model and (inputs, float64 reference)."""
    k = a_shape[-1]
    blocks = -(-k // block)
    q = rng.integers(0, 2**bits, size=(n, blocks * block)).astype(np.uint8)
    scales = rng.uniform(0.01, 0.1, size=(n, blocks)).astype(np.float32)
    scales[0, 0] = 0.0  # a zero scale: its block contributes nothing
    initializers = [
        numpy_helper.from_array(pack(q.reshape(n, blocks, block), bits), "B"),
        numpy_helper.from_array(scales.reshape(-1), "scales"),
    ]
    inputs = ["A", "B", "scales"]
    if zeros == "packed":
        zero = rng.integers(0, 2**bits, size=(n, blocks)).astype(np.uint8)
        initializers.append(numpy_helper.from_array(pack(zero, bits), "zero_points"))
        inputs.append("zero_points")
    elif zeros == "float":
        zero = rng.uniform(0, 2**bits - 1, size=(n, blocks)).astype(np.float32)
        initializers.append(numpy_helper.from_array(zero.reshape(-1), "zero_points"))
        inputs.append("zero_points")
    else:
        zero = np.full((n, blocks), 2 ** (bits - 1), np.float32)
    w = (q.astype(np.float64) - np.repeat(zero.astype(np.float64), block, axis=1)) * np.repeat(
        scales.astype(np.float64), block, axis=1)
    w = w[:, :k]
    if bias:
        b = rng.standard_normal(n).astype(np.float32)
        initializers.append(numpy_helper.from_array(b, "bias"))
        inputs += [""] * (5 - len(inputs)) + ["bias"]
    node = helper.make_node("MatMulNBits", inputs, ["Y"], domain="com.microsoft", K=k, N=n,
                            bits=bits, block_size=block)
    out_shape = list(a_shape[:-1]) + [n]
    graph = helper.make_graph(
        [node], "nbits", [helper.make_tensor_value_info("A", TensorProto.FLOAT, list(a_shape))],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, out_shape)], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 10
    a = rng.standard_normal(a_shape).astype(np.float32)
    a64 = a.astype(np.float64)
    ref = a64 @ w.T + (b.astype(np.float64) if bias else 0.0)
    scale = np.abs(a64) @ np.abs(w).T
    return model, {"A": a}, ref, scale


# name: (A shape, N, block, bits, zero points, bias, kernel expected)
CASES = {
    "m1_k100_b32_n7_zp": ((1, 100), 7, 32, 4, "packed", False, True),
    "m3_k100_b16_n33_bias": ((3, 100), 33, 16, 4, None, True, True),
    "m1_k300_b128_n70_zp_bias_batched": ((1, 1, 300), 70, 128, 4, "packed", True, True),
    "m7_k256_b32_n65_zp": ((7, 256), 65, 32, 4, "packed", False, True),
    "m1_k99_b32_n40_zp_odd_k": ((1, 99), 40, 32, 4, "packed", False, True),
    "m8_k128_b32_n100_bias": ((2, 4, 128), 100, 32, 4, None, True, True),
    "m2_k64_b16_n9_float_zp": ((2, 64), 9, 16, 4, "float", False, True),
    "m3_k100_b32_n19_8bit_zp": ((3, 100), 19, 32, 8, "packed", True, True),
    "m1_k100_b16_n17_8bit": ((1, 100), 17, 16, 8, None, False, True),
    "m1_k64_b16_n9_2bit_zp": ((1, 64), 9, 16, 2, "packed", False, True),
    "m24_k100_b32_n33_f32_path": ((24, 100), 33, 32, 4, "packed", True, False),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("work")
    parser.add_argument("--kilnc", required=True)
    parser.add_argument("--kiln-run", required=True)
    args = parser.parse_args()
    rng = np.random.default_rng(22)
    failures = 0
    for name, (a_shape, n, block, bits, zeros, bias, kernel) in CASES.items():
        model, inputs, ref, scale = nbits_case(rng, a_shape, n, block, bits, zeros, bias)
        try:
            got = run_model(args, args.work, name, model, inputs)("Y")
            graph = subprocess.run([args.kilnc, f"{args.work}/{name}/model.onnx", "--emit=graph"],
                                   capture_output=True, text=True)
            kept = re.findall(r"kiln\.matmul_nbits_kernel .*bits = (\d+)", graph.stdout)
            expected_bits = "4" if bits <= 4 else "8"
            if kernel and kept != [expected_bits]:
                raise RuntimeError(f"expected one {expected_bits}-bit kiln.matmul_nbits_kernel "
                                   f"in --emit=graph, found {kept} {graph.stderr.strip()}")
            if not kernel and kept:
                raise RuntimeError("a kiln.matmul_nbits_kernel for more rows than it takes")
            if got.shape != ref.shape:
                raise RuntimeError(f"shape {got.shape}, expected {ref.shape}")
            error = np.abs(got.astype(np.float64) - ref) / (scale + 1e-30)
            worst = float(error.max())
            status = "PASS" if worst <= 1e-5 else "FAIL"
            print(f"{status} {name}: max |error| / sum|a w| = {worst:.2e}")
        except RuntimeError as e:
            status = "FAIL"
            print(f"FAIL {name}: {e}")
        failures += status == "FAIL"
    print(f"nbits: {len(CASES) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
