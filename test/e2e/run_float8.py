# The 8-bit float casts, compiled for the CPU and checked bit for bit against
# ONNX's reference implementation (onnx.reference) of Cast.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: run_float8.py WORKDIR --kilnc PATH --kiln-run PATH

For each 8-bit float type: every bit pattern to f32 and f16; and f32 values
(every value of the type, the ties between neighbours, their neighbours one f32
ulp away, subnormals, out-of-range values, infinities, NaN, -0) to the type
with saturate 1 and 0; and a reshape and transpose of the bit patterns. kiln-run's .npy files hold the 8-bit values as raw bits
('|u1'). NaN matches any NaN; everything else must be the same bits. Prints one
PASS/FAIL line per case and a summary; exits 1 if any case fails.
"""

import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

TYPES = {"f8E4M3FN": 17, "f8E4M3FNUZ": 18, "f8E5M2": 19, "f8E5M2FNUZ": 20}


def reference_cast(x, onnx_type, **attributes):
    """x Cast to `onnx_type` by ONNX's reference evaluator (attributes: saturate)."""
    node = helper.make_node("Cast", ["x"], ["y"], to=onnx_type, **attributes)
    source = onnx.helper.np_dtype_to_tensor_dtype(x.dtype)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", source, [x.size])],
                              [helper.make_tensor_value_info("y", onnx_type, [x.size])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    return ReferenceEvaluator(model).run(None, {"x": x})[0]


def decode(bits, onnx_type):
    """Every bit pattern's value as f32 (ONNX's reference, Cast to FLOAT)."""
    node = helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", onnx_type, [256])],
                              [helper.make_tensor_value_info("y", 1, [256])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    x = reference_cast(np.zeros(256, np.float32), onnx_type, saturate=1)  # for the dtype only
    return ReferenceEvaluator(model).run(None, {"x": bits.view(x.dtype)})[0]


def probes(values, small=None):
    """f32 probes around the type's finite values; `small` replaces the
    default small magnitudes (below the smallest normal, underflow)."""
    finite = np.unique(np.abs(values[np.isfinite(values)]))
    ties = (finite[:-1].astype(np.float64) + finite[1:]) / 2
    near = np.concatenate([np.nextafter(ties.astype(np.float32), np.float32(np.inf)),
                           np.nextafter(ties.astype(np.float32), np.float32(0))])
    top = finite.max()
    if small is None:
        small = [finite[1] / 4, finite[1] * 0.5001, 1e-30]
    special = np.array([top * 1.03, top * 1.2, top * 4, 1e30, np.finfo(np.float32).max,
                        np.inf, np.nan, 0.0, *small], np.float32)
    rng = np.random.default_rng(0)
    random = (rng.standard_normal(2000) * 10.0 ** rng.uniform(-6, 5, 2000)).astype(np.float32)
    magnitudes = np.concatenate([finite, ties.astype(np.float32), near, special])
    return np.concatenate([magnitudes, -magnitudes, random]).astype(np.float32)


def same_bits(got, want, values_got, values_want):
    nan = np.isnan(values_got) & np.isnan(values_want)
    bad = (got != want) & ~nan
    return int(bad.sum()), np.flatnonzero(bad)[:5]


def run(args, work, name, model, inputs, flags=()):
    """Compiles the model (MLIR text, or an ONNX ModelProto) with kilnc
    `flags` and runs it; returns a loader of the outputs' arrays by name.
    (run_bf16.py and run_int8.py use it too.)"""
    case = os.path.join(work, name)
    os.makedirs(case, exist_ok=True)
    if isinstance(model, str):
        path = os.path.join(case, "model.mlir")
        with open(path, "w") as f:
            f.write(model)
    else:
        path = os.path.join(case, "model.onnx")
        onnx.save(model, path)
    so = os.path.join(case, "model.so")
    compiled = subprocess.run([args.kilnc, *flags, path, "-o", so], capture_output=True,
                              text=True)
    if compiled.returncode != 0:
        raise RuntimeError("compile failed: " + compiled.stderr.strip())
    command = [args.kiln_run, so, "--output-dir", os.path.join(case, "out"), "--threads", "2"]
    for input_name, value in inputs.items():
        np.save(os.path.join(case, input_name + ".npy"), value)
        command += ["--input", f"{input_name}={os.path.join(case, input_name + '.npy')}"]
    ran = subprocess.run(command, capture_output=True, text=True)
    if ran.returncode != 0:
        raise RuntimeError("run failed: " + (ran.stderr.strip() or ran.stdout.strip()))
    return lambda output: np.load(os.path.join(case, "out", output + ".npy"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("work")
    parser.add_argument("--kilnc", required=True)
    parser.add_argument("--kiln-run", required=True)
    args = parser.parse_args()
    failures = 0
    count = 0
    for name, onnx_type in TYPES.items():
        bits = np.arange(256, dtype=np.uint8)
        values = decode(bits, onnx_type)
        x = probes(values)
        n = x.size
        model = f"""func.func @main(%b: tensor<256x{name}> {{kiln.name = "b"}}, %x: tensor<{n}xf32> {{kiln.name = "x"}})
    -> (tensor<256xf32> {{kiln.name = "f32"}}, tensor<256xf16> {{kiln.name = "f16"}},
        tensor<{n}x{name}> {{kiln.name = "sat"}}, tensor<{n}x{name}> {{kiln.name = "nosat"}},
        tensor<{n}x{name}> {{kiln.name = "from_f16"}}, tensor<16x16x{name}> {{kiln.name = "moved"}}) {{
  %f32 = kiln.cast %b : tensor<256x{name}> -> tensor<256xf32>
  %f16 = kiln.cast %b : tensor<256x{name}> -> tensor<256xf16>
  %sat = kiln.cast %x : tensor<{n}xf32> -> tensor<{n}x{name}>
  %nosat = kiln.cast %x {{saturate = false}} : tensor<{n}xf32> -> tensor<{n}x{name}>
  %h = kiln.cast %x : tensor<{n}xf32> -> tensor<{n}xf16>
  %from_f16 = kiln.cast %h : tensor<{n}xf16> -> tensor<{n}x{name}>
  %square = kiln.reshape %b : (tensor<256x{name}>) -> tensor<16x16x{name}>
  %moved = kiln.transpose %square {{perm = array<i64: 1, 0>}} : (tensor<16x16x{name}>) -> tensor<16x16x{name}>
  return %f32, %f16, %sat, %nosat, %from_f16, %moved : tensor<256xf32>, tensor<256xf16>, tensor<{n}x{name}>, tensor<{n}x{name}>, tensor<{n}x{name}>, tensor<16x16x{name}>
}}"""
        try:
            out = run(args, args.work, name, model, {"b": bits, "x": x})
        except RuntimeError as e:
            print(f"FAIL: {name}\n  {e}")
            failures += 1
            count += 1
            continue
        x16 = x.astype(np.float16).astype(np.float32)
        checks = [("to f32", out("f32").view(np.uint32), values.view(np.uint32), out("f32"), values),
                  ("to f16", out("f16").view(np.uint16), values.astype(np.float16).view(np.uint16),
                   out("f16"), values)]
        for label, got_name, source, saturate in (("saturate", "sat", x, 1),
                                                  ("no saturate", "nosat", x, 0),
                                                  ("from f16", "from_f16", x16, 1)):
            want = reference_cast(source, onnx_type, saturate=saturate).view(np.uint8)
            got = out(got_name)
            checks.append((label, got, want, values[got], values[want]))
        moved = bits.reshape(16, 16).T.ravel()
        checks.append(("reshape, transpose", out("moved").ravel(), moved, values[out("moved").ravel()],
                       values[moved]))
        for label, got, want, values_got, values_want in checks:
            count += 1
            bad, where = same_bits(got, want, values_got, values_want)
            case = f"{name} {label} ({got.size} values)"
            if bad:
                failures += 1
                print(f"FAIL: {case}: {bad} differ, e.g. at {list(where)}: got "
                      f"{got[where]}, want {want[where]}")
            else:
                print(f"PASS: {case}")
    print(f"float8: {count - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
