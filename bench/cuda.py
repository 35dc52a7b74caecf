# CUDA benchmark: Kiln kernels vs PyTorch eager and torch.compile on the same GPU.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: cuda.py compile --out DIR --kilnc PATH [--gpu sm_90a]   (here, with kilnc)
       cuda.py run --out DIR --kiln-run PATH [--no-compile]     (on the GPU machine)

The cases are bench/kernels.py's (SGEMM, ResNet-50 conv layers, softmax and
layernorm rows), plus half-precision GEMMs (f16 and bf16 at 4096^3 and
8192^3: a model C = A @ B in that dtype compiled with --precision=fp16|bf16,
so the Hopper GEMM template with f32 accumulation, timed against
torch.matmul in the same dtype, i.e. cuBLAS) and tf32 GEMMs (f32 model,
--precision=tf32, against torch.matmul with TF32 allowed; Kiln's time
includes the transpose kernel that makes the input B K-major) and fp32 GEMMs
(--precision=fp32: 3xTF32, Kiln's time including the kernels that split A
and B; against torch.matmul with TF32 off, i.e. cuBLAS SGEMM). `compile` writes each case's CUDA artifact, inputs and
parameters; `run` times Kiln with `kiln-run --device cuda --bench` (its
`device_ms` line: inputs on the device to last kernel done, launches
included, host<->device copies excluded)
and PyTorch (eager, and torch.compile unless --no-compile) with CUDA events
on the same inputs, checks Kiln's output against PyTorch's (fp32, TF32 off),
and prints a markdown table (median ms, GFLOP/s or GB/s, Kiln / PyTorch).
"""

import json
import os
import re
import subprocess
import sys

import numpy as np

import cuda_models  # same directory (bench/, and py/ of the CUDA bundle)


def compile_cases(args):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import kernels  # noqa: E402  (onnx is needed here only)
    from onnx import numpy_helper

    os.makedirs(args.out, exist_ok=True)
    index = []
    for i, case in enumerate([] if args.half_gemm_only else kernels.cases(quick=args.quick)):
        case_dir = os.path.join(args.out, f"case{i:02d}")
        os.makedirs(case_dir, exist_ok=True)
        onnx_path = os.path.join(case_dir, "model.onnx")
        with open(onnx_path, "wb") as f:
            f.write(case.model.SerializeToString())
        # Inputs are drawn again on the GPU machine (they are large; the
        # weights, compiled into the artifact, travel as param_*.npy).
        shapes = {name: list(value.shape) for name, value in case.inputs.items()}
        for init in case.model.graph.initializer:
            np.save(os.path.join(case_dir, f"param_{init.name}.npy"), numpy_helper.to_array(init))
        node = case.model.graph.node[0]
        attrs = {a.name: (list(a.ints) if a.ints else a.i if a.type == 2 else a.f)
                 for a in node.attribute}
        compiled = subprocess.run([args.kilnc, onnx_path, "--target=cuda", f"--gpu={args.gpu}",
                                   "-o", os.path.join(case_dir, "model.so")],
                                  capture_output=True, text=True)
        os.remove(onnx_path)
        meta = {"name": case.name, "kind": case.kind, "flops": case.flops, "bytes": case.bytes,
                "inputs": sorted(case.inputs), "shapes": shapes, "attrs": attrs,
                "compiled": compiled.returncode == 0,
                "error": compiled.stderr.strip().splitlines()[-1:] if compiled.returncode else []}
        with open(os.path.join(case_dir, "meta.json"), "w") as f:
            json.dump(meta, f)
        index.append(case_dir)
        print(f"{case.name}: {'compiled' if meta['compiled'] else 'FAILED ' + str(meta['error'])}")
    compile_half_gemms(args)
    compile_gelu_gemms(args)


HALF_GEMMS = [("f16", "fp16", 4096), ("f16", "fp16", 8192),
              ("bf16", "bf16", 4096), ("bf16", "bf16", 8192), ("bf16", "bf16", 4000),
              ("f32", "tf32", 4096), ("f32", "tf32", 8192),
              ("f32", "fp32", 4096), ("f32", "fp32", 8192)]


def compile_half_gemms(args):
    """kiln-dialect models C = A @ B in f16/bf16 (inputs made on the GPU machine)."""
    for dtype, precision, n in HALF_GEMMS:
        case_dir = os.path.join(args.out, f"gemm_{precision if dtype == 'f32' else dtype}_{n}")
        os.makedirs(case_dir, exist_ok=True)
        t = f"tensor<{n}x{n}x{dtype}>"
        with open(os.path.join(case_dir, "model.mlir"), "w") as f:
            f.write(f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n"
                    f"  %c = kiln.matmul %a, %b : ({t}, {t}) -> {t}\n  return %c : {t}\n}}\n")
        compiled = subprocess.run([args.kilnc, os.path.join(case_dir, "model.mlir"),
                                   "--target=cuda", f"--gpu={args.gpu}",
                                   f"--precision={precision}",
                                   "-o", os.path.join(case_dir, "model.so")],
                                  capture_output=True, text=True)
        meta = {"name": f"gemm {precision if dtype == 'f32' else dtype} {n}^3", "kind": "gemm",
                "dtype": dtype, "precision": precision,
                "flops": 2.0 * n ** 3, "bytes": 3 * (4.0 if dtype == "f32" else 2.0) * n * n, "inputs": ["input_0", "input_1"],
                "shapes": {"input_0": [n, n], "input_1": [n, n]}, "attrs": {},
                "compiled": compiled.returncode == 0,
                "error": compiled.stderr.strip().splitlines()[-1:] if compiled.returncode else []}
        with open(os.path.join(case_dir, "meta.json"), "w") as f:
            json.dump(meta, f)
        print(f"{meta['name']}: {'compiled' if meta['compiled'] else 'FAILED ' + str(meta['error'])}")


GELU_GEMMS = [("f16", 4096), ("f16", 8192)]


def compile_gelu_gemms(args):
    """gelu(A @ B + bias) in f16: the GEMM template's fused epilogue against cuBLAS
    followed by PyTorch's separate bias and GELU kernels (issue 6)."""
    for dtype, n in GELU_GEMMS:
        case_dir = os.path.join(args.out, f"gemm_gelu_{dtype}_{n}")
        os.makedirs(case_dir, exist_ok=True)
        t, v = f"tensor<{n}x{n}x{dtype}>", f"tensor<{n}x{dtype}>"
        with open(os.path.join(case_dir, "model.mlir"), "w") as f:
            f.write(f"func.func @main(%a: {t}, %b: {t}, %bias: {v}) -> {t} {{\n"
                    f"  %c = kiln.matmul %a, %b : ({t}, {t}) -> {t}\n"
                    f"  %d = kiln.add %c, %bias : ({t}, {v}) -> {t}\n"
                    f"  %e = kiln.gelu none %d : {t}\n  return %e : {t}\n}}\n")
        compiled = subprocess.run([args.kilnc, os.path.join(case_dir, "model.mlir"),
                                   "--target=cuda", f"--gpu={args.gpu}", "--precision=fp16",
                                   "-o", os.path.join(case_dir, "model.so")],
                                  capture_output=True, text=True)
        meta = {"name": f"gemm + bias + gelu {dtype} {n}^3", "kind": "gemm_gelu",
                "dtype": dtype, "precision": "fp16",
                "flops": 2.0 * n ** 3, "bytes": 3 * 2.0 * n * n,
                "inputs": ["input_0", "input_1", "input_2"],
                "shapes": {"input_0": [n, n], "input_1": [n, n], "input_2": [n]}, "attrs": {},
                "compiled": compiled.returncode == 0,
                "error": compiled.stderr.strip().splitlines()[-1:] if compiled.returncode else []}
        with open(os.path.join(case_dir, "meta.json"), "w") as f:
            json.dump(meta, f)
        print(f"{meta['name']}: {'compiled' if meta['compiled'] else 'FAILED ' + str(meta['error'])}")


def torch_fn(meta, params, torch):
    import torch.nn.functional as F
    kind, attrs = meta["kind"], meta["attrs"]
    if kind == "gemm":
        return lambda a, b: a @ b
    if kind == "gemm_gelu":  # cuBLAS, then the bias add and GELU as PyTorch's own kernels
        return lambda a, b, bias: F.gelu(a @ b + bias)
    if kind == "conv":
        stride, pads = attrs["strides"][0], attrs["pads"][0]
        groups = attrs.get("group", 1)
        return lambda x: F.conv2d(x, params["w"], params["b"], stride=stride, padding=pads,
                                  groups=groups)
    if kind == "softmax":
        return lambda x: torch.softmax(x, dim=-1)
    if kind == "layernorm":
        return lambda x: F.layer_norm(x, x.shape[-1:], params["g"], params["b"], eps=1e-5)
    raise ValueError(kind)


def time_torch(fn, inputs, torch, warmup=10, reps=50):
    for _ in range(warmup):
        fn(*inputs)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*inputs)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return float(np.median(times))


def run_kiln(kiln_run, case_dir, meta, out_dir, with_inputs=True):
    args = [kiln_run, os.path.join(case_dir, "model.so"), "--device", "cuda",
            "--warmup", "5", "--bench", "50"]
    if out_dir:
        args += ["--output-dir", out_dir]
    for name in meta["inputs"] if with_inputs else []:
        args += ["--input", f"{name}={os.path.join(case_dir, f'in_{name}.npy')}"]
    run = subprocess.run(args, capture_output=True, text=True)
    if run.returncode != 0:
        return None, None, (run.stderr.strip() or run.stdout.strip()).splitlines()[-1]
    device = re.search(r"device_ms min=\S+ median=(\S+)", run.stdout)
    host = re.search(r"latency_ms min=\S+ median=(\S+)", run.stdout)
    return (float(device.group(1)) if device else None), float(host.group(1)), None


def run_cases(args):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    rows = []
    for case in sorted(os.listdir(args.out)):
        case_dir = os.path.join(args.out, case)
        if not os.path.isdir(case_dir) or (
                args.cases and not any(case.startswith(c) for c in args.cases.split(","))):
            continue
        with open(os.path.join(case_dir, "meta.json")) as f:
            meta = json.load(f)
        if not meta["compiled"]:
            rows.append((meta, None, None, None, None, "compile failed"))
            continue
        params = {f[6:-4]: torch.from_numpy(np.load(os.path.join(case_dir, f))).cuda()
                  for f in os.listdir(case_dir) if f.startswith("param_")}
        rng = np.random.default_rng(20261129)
        dtype = meta.get("dtype", "f32")
        half = dtype in ("f16", "bf16")
        numpy_type = {"f32": np.float32, "f16": np.float16}.get(dtype)
        if numpy_type is None:  # bf16: kiln-run draws uniform [-1, 1) inputs itself
            host_inputs = None
            inputs = [torch.rand(meta["shapes"][n], device="cuda", dtype=torch.bfloat16) * 2 - 1
                      for n in meta["inputs"]]
        else:
            host_inputs = [rng.standard_normal(meta["shapes"][n], np.float32).astype(numpy_type)
                           for n in meta["inputs"]]
            for name, value in zip(meta["inputs"], host_inputs):
                np.save(os.path.join(case_dir, f"in_{name}.npy"), value)
            inputs = [torch.from_numpy(value).cuda() for value in host_inputs]
        fn = torch_fn(meta, params, torch)
        # tf32 rows: cuBLAS with TF32 on is the reference and the rival.
        tf32 = meta.get("precision") == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = tf32
        want = fn(*inputs).double().cpu().numpy() if host_inputs is not None else None
        out_dir = os.path.join(case_dir, "out")
        kiln_device, kiln_host, error = run_kiln(args.kiln_run, case_dir, meta,
                                                 out_dir if want is not None else None,
                                                 host_inputs is not None)
        note = error or ""
        if not error and want is None:
            note = "inputs differ (kiln-run's random bf16); checked by gemm_check.py"
        elif not error:
            got = np.load(os.path.join(out_dir, os.listdir(out_dir)[0])).astype(np.float64)
            rel = np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)
            # f16 products round the output to f16 (rel. 2^-11) in both.
            note = f"rel_err {rel:.1e}" + ("" if rel < (1e-2 if half or tf32 else 1e-4)
                                           else " WRONG")
        eager = time_torch(fn, inputs, torch)
        compiled = None
        if not args.no_compile:
            try:
                compiled = time_torch(torch.compile(fn), inputs, torch)
            except Exception as e:  # noqa: BLE001  (report, keep going)
                note += f"; torch.compile failed: {type(e).__name__}"
        rows.append((meta, kiln_device, kiln_host, eager, compiled, note))
        print(f"{meta['name']}: kiln {kiln_device} ms (host {kiln_host}), eager {eager:.4f}, "
              f"compile {compiled}, {note}", flush=True)
    print_table(rows, torch.cuda.get_device_name())
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump([dict(meta=m, kiln_ms=k, kiln_host_ms=h, eager_ms=e, compile_ms=c, note=n)
                   for m, k, h, e, c, n in rows], f, indent=1)


def rate(meta, ms):
    if ms is None:
        return "-"
    if meta["kind"] in ("gemm", "gemm_gelu", "conv"):
        return f"{meta['flops'] / ms / 1e9:.2f} TFLOP/s"
    return f"{meta['bytes'] / ms / 1e6:.0f} GB/s"


def print_table(rows, device):
    fmt = lambda v: "-" if v is None else f"{v:.4f}"  # noqa: E731
    print(f"\n{device}, fp32 (TF32 off; gemm f16/bf16 rows in their dtype, f32 accumulation; "
          "gemm tf32 rows: f32 data, TF32 on in PyTorch), median of 50 runs after warm-up; Kiln = kernels only "
          "+ launches (host clock around run and synchronize), PyTorch = CUDA events; kiln-run = whole run incl. host<->device copies\n")
    print("| case | Kiln ms | Kiln rate | kiln-run ms | eager ms | eager rate | compile ms "
          "| Kiln / eager | Kiln / compile | check |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for meta, kiln, host, eager, compiled, note in rows:
        ratio = lambda ref: "-" if kiln is None or ref is None else f"{kiln / ref:.2f}x"  # noqa: E731
        print(f"| {meta['name']} | {fmt(kiln)} | {rate(meta, kiln)} | {fmt(host)} | {fmt(eager)} "
              f"| {rate(meta, eager)} | {fmt(compiled)} | {ratio(eager)} | {ratio(compiled)} "
              f"| {note} |")


def main():
    p = cuda_models.phase_parser(__doc__)
    p.add_argument("--gpu", default="sm_90a")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--half-gemm-only", action="store_true",
                   help="compile only the f16/bf16 GEMM cases")
    p.add_argument("--cases", help="run only the cases whose directory starts with one of "
                   "these comma-separated prefixes (e.g. gemm_gelu)")
    args = p.parse_args()
    if args.phase == "compile":
        compile_cases(args)
    else:
        run_cases(args)


if __name__ == "__main__":
    main()
