# Zoo CNNs quantized by onnxruntime's quantize_static: Kiln int8 against onnxruntime int8 and fp32.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: bench/int8_models.py [--models resnet50,mobilenetv2,bert] [--rounds 5] [--per-channel] [--baseline-kilnc PATH]

For each zoo model (bench/models/zoo.py, batch 1, written under --work):
quantizes it with onnxruntime's quantize_static (QDQ format, its default
8-bit types: s8 activations and weights; per-tensor weights unless
--per-channel; calibrated on 4 inputs: random-normal images, BERT's zoo
token ids and shuffles of them), compiles the QDQ model with kilnc (its QDQ
convs, depthwise convs and matmuls are integer kernels:
kiln-recognize-integer-matmul) and the float model, then times onnxruntime
int8 (the QDQ model), onnxruntime fp32, Kiln int8 and Kiln fp32 in
interleaved rounds (median of the rounds' medians, bench/timing.py). Checks
Kiln int8's first output against onnxruntime int8's: the largest
difference in units of the output's scale (the smallest step between its
values: meaningful for a DequantizeLinear's output) and relative to the
largest output, and, for a classifier's [N,
classes] output, whether the top-1 class agrees; and counts the convs left
float in Kiln's graph. Prints one table, and with --markdown the rows of a
docs/benchmarks/ record's table (bench/summarize.py reads "Kiln ms" and
"ORT ms", here both int8, qualified by the precision column). With
--baseline-kilnc, the QDQ model compiled by that kilnc (another commit's:
before a kernel change) is timed in the same rounds too ("base int8").
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "models"))
import timing  # noqa: E402
import zoo  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    build = os.path.join(ROOT, "build")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="resnet50,mobilenetv2")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reps", type=int, default=5, help="timed runs per round and side")
    p.add_argument("--warmup", type=int, default=1,
                   help="untimed kiln-run runs per round (each round is a new process; "
                   "onnxruntime's session stays warm across rounds)")
    p.add_argument("--per-channel", action="store_true", help="per-output-channel weights")
    p.add_argument("--op-types", help="quantize_static's op_types_to_quantize, comma-separated "
                   "(default: all it supports)")
    p.add_argument("--markdown", action="store_true", help="also print a markdown table")
    p.add_argument("--baseline-kilnc", help="also time the QDQ model compiled by this kilnc")
    p.add_argument("--work", default=os.path.join(build, "bench"))
    p.add_argument("--kilnc", default=os.path.join(build, "bin", "kilnc"))
    p.add_argument("--kiln-run", default=os.path.join(build, "bin", "kiln-run"))
    return p.parse_args()


def calibration_samples(inputs, rng):
    """4 calibration inputs like `inputs` (the zoo's): random-normal floats;
    integer inputs (BERT's token ids and attention mask) are the zoo's own,
    then three with the ids shuffled along the sequence."""
    samples = []
    for i in range(4):
        sample = {}
        for name, value in inputs.items():
            if value.dtype.kind == "f":
                sample[name] = rng.standard_normal(value.shape).astype(value.dtype)
            elif i and "ids" in name:
                sample[name] = rng.permutation(value, axis=-1)
            else:
                sample[name] = value
        samples.append(sample)
    return samples


def quantize(model_path, inputs, per_channel, rng, op_types=None):
    """The QDQ model of quantize_static; returns its path."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

    samples = calibration_samples(inputs, rng)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(samples)

        def get_next(self):
            return next(self.it, None)

    suffix = f"{int(per_channel)}" + ("-" + op_types.replace(",", "-") if op_types else "")
    out = model_path.replace(".onnx", f".qdq{suffix}.onnx")
    quantize_static(model_path, out, Reader(), quant_format=QuantFormat.QDQ,
                    per_channel=per_channel,
                    op_types_to_quantize=op_types.split(",") if op_types else None)
    return out


def compile_model(args, model_path, shapes, artifact, kilnc=None):
    command = [kilnc or args.kilnc, model_path, "-o", artifact]
    command += [f"--input-shape={k}={'x'.join(map(str, v))}" for k, v in shapes.items()]
    subprocess.run(command, check=True)
    graph = subprocess.run(command[:2] + command[4:] + ["--emit=graph"], check=True,
                           capture_output=True, text=True).stdout
    return artifact, graph.count("kiln.conv ")


def main():
    args = parse_args()
    rng = np.random.default_rng(0)
    zoo_dir = os.path.join(args.work, "zoo")
    ops = f", ops {args.op_types}" if args.op_types else ""
    print(f"int8 models (quantize_static QDQ, {'per-channel' if args.per_channel else 'per-tensor'}"
          f" weights{ops}): batch 1, {args.threads} threads, {args.rounds} interleaved rounds of "
          f"{args.reps} runs (kiln-run: {args.warmup} warm-up; load average "
          f"{os.getloadavg()[0]:.2f} at start)")
    rows = []
    print(f"  {'model':12} {'ORT int8 ms':>11} {'ORT fp32 ms':>11} {'Kiln int8 ms':>12} "
          f"{'Kiln fp32 ms':>12} {'int8/ORT int8':>13} {'int8/ORT fp32':>13} "
          f"{'int8/Kiln fp32':>14}  float convs; max |Kiln - ORT| (units); top-1")
    for name in args.models.split(","):
        model_dir = zoo.write_model(name, zoo_dir, False, [1])
        with open(os.path.join(model_dir, "meta.json")) as f:
            shapes = json.load(f)["batches"]["1"]
        fp32 = os.path.join(model_dir, "model.onnx")
        files = {k: os.path.join(model_dir, "b1", "inputs", k + ".npy") for k in shapes}
        inputs = {k: np.load(path) for k, path in files.items()}
        qdq = quantize(fp32, inputs, args.per_channel, rng, args.op_types)
        int8, float_convs = compile_model(args, qdq, shapes, qdq.replace(".onnx", ".so"))
        artifacts = {"int8": int8,
                     "fp32": compile_model(args, fp32, shapes,
                                           os.path.join(model_dir, "model-b1-fp32.so"))[0]}
        if args.baseline_kilnc:
            artifacts["base"] = compile_model(args, qdq, shapes, qdq.replace(".onnx", ".base.so"),
                                              args.baseline_kilnc)[0]
        out = os.path.join(model_dir, "out-int8")
        subprocess.run(timing.kiln_args(args.kiln_run, int8, files, args.threads) +
                       ["--output-dir", out], check=True, capture_output=True)
        sessions = {"ort_int8": timing.ort_session(qdq, args.threads),
                    "ort_fp32": timing.ort_session(fp32, args.threads)}
        output = sessions["ort_int8"].get_outputs()[0].name
        ref = sessions["ort_int8"].run(None, inputs)[0].astype(np.float64)
        got = np.load(os.path.join(out, output + ".npy")).astype(np.float64)
        steps = np.diff(np.unique(ref))
        unit = float(steps.min()) if steps.size else 1.0
        units = float(np.abs(got - ref).max() / unit)
        relative = float(np.abs(got - ref).max() / np.abs(ref).max())
        top1 = bool((got.argmax(-1) == ref.argmax(-1)).all()) if ref.ndim == 2 else None
        samples = {key: [] for key in ("ort_int8", "ort_fp32", *artifacts)}
        for _ in range(args.rounds):
            for key, session in sessions.items():
                samples[key].append(timing.ort_round(session, inputs, args.reps))
            for key, artifact in artifacts.items():
                samples[key].append(timing.kiln_round(
                    timing.kiln_args(args.kiln_run, artifact, files, args.threads), args.reps, 600,
                    args.warmup))
        ms = {key: statistics.median(v) for key, v in samples.items()}
        print(f"  {name:12} {ms['ort_int8']:11.2f} {ms['ort_fp32']:11.2f} {ms['int8']:12.2f} "
              f"{ms['fp32']:12.2f} {ms['int8'] / ms['ort_int8']:13.2f} "
              f"{ms['int8'] / ms['ort_fp32']:13.2f} {ms['int8'] / ms['fp32']:14.2f}  "
              f"{float_convs}; {units:.0f} ({relative:.1e} of max); "
              f"{'-' if top1 is None else 'agrees' if top1 else 'DIFFERS'}",
              flush=True)
        if "base" in ms:
            print(f"  {'':12} base int8 {ms['base']:.2f} ms [{min(samples['base']):.2f}–"
                  f"{max(samples['base']):.2f}], int8/base {ms['int8'] / ms['base']:.2f}")
        spread = {k: f"{ms[k]:.2f} [{min(v):.2f}–{max(v):.2f}]" for k, v in samples.items()}
        base = (f"{spread['base']} | {ms['int8'] / ms['base']:.2f}" if "base" in ms else "- | -")
        rows.append(f"| {name} | 1 | {args.threads} | int8 | {spread['int8']} | "
                    f"{spread['ort_int8']} | {ms['int8'] / ms['ort_int8']:.2f} | {base} | "
                    f"{spread['ort_fp32']} | {spread['fp32']} | {ms['int8'] / ms['ort_fp32']:.2f} | "
                    f"{float_convs} | {units:.0f} | {relative:.1e} |")
    print(f"  (load average {os.getloadavg()[0]:.2f} at the end)")
    if args.markdown:
        print("\n| model | batch | threads | precision | Kiln ms | ORT ms | Kiln/ORT time | "
              "base int8 ms | Kiln/base | ORT fp32 ms | Kiln fp32 ms | Kiln int8 / ORT fp32 | "
              "convs left f32 | max Kiln-ORT diff (units) | max Kiln-ORT diff / max ORT |")
        print("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
              "| ---: | ---: | ---: |")
        print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
