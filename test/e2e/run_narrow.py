# The casts of the sub-byte types (INT4, UINT4, INT2, UINT2, FLOAT4E2M1) and
# FLOAT8E8M0, compiled for the CPU and checked bit for bit against ONNX's
# reference implementation (onnx.reference) of Cast.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: run_narrow.py WORKDIR --kilnc PATH --kiln-run PATH

For each type: every bit pattern to f32, f16 and i32 (E8M0: those in i32's range); f32 probes
(every value of the type, the ties between neighbours and their f32
neighbours, out-of-range values, infinities, NaN, -0, random values) and the
same as f16 to the type; i32 values to the type (they wrap); for FLOAT8E8M0
also without saturation (round_mode "up", the only one kiln.cast has). kiln-run's .npy files hold one byte
per element, the element's bits low (ml_dtypes' layout, '|u1'). NaN matches
any NaN; everything else must be the same bits. Prints one PASS/FAIL line per
case and a summary; exits 1 if any case fails.
"""

import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto

from run_float8 import probes, reference_cast, run  # same directory: shared helpers

# kiln element type, ONNX type, bits per element.
TYPES = {"i4": (TensorProto.INT4, 4), "ui4": (TensorProto.UINT4, 4),
         "i2": (TensorProto.INT2, 2), "ui2": (TensorProto.UINT2, 2),
         "f4E2M1FN": (TensorProto.FLOAT4E2M1, 4), "f8E8M0FNU": (TensorProto.FLOAT8E8M0, 8)}


def as_type(bits, onnx_type):
    """The bit patterns as the ml_dtypes array of the ONNX type."""
    return bits.view(onnx.helper.tensor_dtype_to_np_dtype(onnx_type))


def compare(got, want):
    """Count of differing elements (bit patterns; NaN matches NaN) and where."""
    if got.dtype.kind == "f":
        nan = np.isnan(got) & np.isnan(want)
        bad = (got.view(f"u{got.itemsize}") != want.view(f"u{want.itemsize}")) & ~nan
    else:
        bad = got != want
    return int(bad.sum()), np.flatnonzero(bad)[:5]


def model_text(name, count, n, m):
    """Casts from every bit pattern (b), from f32 probes (x), from i32 (k)."""
    t = f"x{name}"
    decoded = [("f32", "f32"), ("f16", "f16"), ("i32", "i32")]
    encoded = [("from_f32", "x", "f32", ""), ("from_i32", "k", "i32", "")]
    if name == "f8E8M0FNU":
        encoded.append(("no_saturate", "x", "f32", "{saturate = false} "))
    results = [(o, f"tensor<{count}x{e}>") for o, e in decoded]
    results += [(o, f"tensor<{n if src == 'x' else m}{t}>") for o, src, _, _ in encoded]
    results.append(("from_f16", f"tensor<{n}{t}>"))
    body = [f"  %{o} = kiln.cast %b : tensor<{count}{t}> -> {ty}" for (o, _), (_, ty) in
            zip(decoded, results)]
    for (o, src, st, attrs), (_, ty) in zip(encoded, results[len(decoded):]):
        size = n if src == "x" else m
        body.append(f"  %{o} = kiln.cast %{src} {attrs}: tensor<{size}x{st}> -> {ty}")
    body.append(f"  %h = kiln.cast %x : tensor<{n}xf32> -> tensor<{n}xf16>")
    body.append(f"  %from_f16 = kiln.cast %h : tensor<{n}xf16> -> tensor<{n}{t}>")
    signature = ", ".join(f'{ty} {{kiln.name = "{o}"}}' for o, ty in results)
    names = ", ".join(f"%{o}" for o, _ in results)
    types = ", ".join(ty for _, ty in results)
    return (f'func.func @main(%b: tensor<{count}{t}> {{kiln.name = "b"}}, '
            f'%x: tensor<{n}xf32> {{kiln.name = "x"}}, %k: tensor<{m}xi32> {{kiln.name = "k"}})\n'
            f"    -> ({signature}) {{\n" + "\n".join(body) +
            f"\n  return {names} : {types}\n}}\n"), [o for o, _ in results]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("work")
    parser.add_argument("--kilnc", required=True)
    parser.add_argument("--kiln-run", required=True)
    args = parser.parse_args()
    failures = 0
    count = 0
    for name, (onnx_type, width) in TYPES.items():
        bits = np.arange(1 << width, dtype=np.uint8)
        typed = as_type(bits, onnx_type)
        values = reference_cast(typed, TensorProto.FLOAT)
        x = probes(values, small=[1e-30, 1e-45, 0.5, 0.25, 0.75, 1.5, 2.5])
        x16 = x.astype(np.float16)
        k = np.arange(-300, 300, dtype=np.int32)
        text, outputs = model_text(name, bits.size, x.size, k.size)
        try:
            out = run(args, args.work, name, text, {"b": bits, "x": x, "k": k})
        except RuntimeError as e:
            print(f"FAIL: {name}\n  {e}")
            failures += 1
            count += 1
            continue
        want = {"f32": values, "f16": reference_cast(typed, TensorProto.FLOAT16),
                "i32": reference_cast(typed, TensorProto.INT32)}
        for source, label in ((x, "from_f32"), (k, "from_i32"), (x16, "from_f16")):
            if name == "f8E8M0FNU" and label == "from_i32":
                source = source[source > 0]  # negative values are undefined
            want[label] = reference_cast(source, onnx_type).view(np.uint8)
        if name == "f8E8M0FNU":
            want["no_saturate"] = reference_cast(x, onnx_type, saturate=0).view(np.uint8)
        for output in outputs:
            count += 1
            got = out(output)
            if name == "f8E8M0FNU" and output == "from_i32":
                got = got[k > 0]
            if name == "f8E8M0FNU" and output == "i32":  # int32 holds 2^0 ... 2^30
                got, want[output] = got[127:158], want[output][127:158]
            bad, where = compare(got, want[output])
            case = f"{name} {output} ({got.size} values)"
            if bad:
                failures += 1
                print(f"FAIL: {case}: {bad} differ, e.g. at {list(where)}: got "
                      f"{got[where]}, want {want[output][where]}")
            else:
                print(f"PASS: {case}")
    # A byte with bits above an i4's is refused by the runtime (kiln-run: exit 1).
    count += 1
    case = os.path.join(args.work, "i4")
    bad_bits = np.arange(16, dtype=np.uint8)
    bad_bits[3] = 0x1F
    np.save(os.path.join(case, "bad.npy"), bad_bits)
    ran = subprocess.run([args.kiln_run, os.path.join(case, "model.so"), "--input",
                          f"b={os.path.join(case, 'bad.npy')}"], capture_output=True, text=True)
    message = "element 3 is 31: i4 takes the low 4 bits of a byte, the others must be zero"
    if ran.returncode == 1 and message in ran.stderr + ran.stdout:
        print("PASS: i4 input with a high bit set is refused")
    else:
        failures += 1
        print(f"FAIL: i4 input with a high bit set: exit {ran.returncode}: {ran.stderr.strip()}")
    print(f"narrow: {count - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
