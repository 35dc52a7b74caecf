# kilnc quantize: calibrates a float ONNX model and writes an int8 QDQ model.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: kilnc quantize MODEL.onnx --calibration DIR -o OUT.onnx
                      [--method minmax|percentile|entropy] [--percentile P]
                      [--per-tensor] [--activations u8|s8] [--report FILE.json]

Started by `kilnc quantize` (which adds --kilnc and --kiln-run); docs/quantization.md
is the manual. DIR holds the calibration inputs: one folder per sample with
INPUT_NAME.npy for every graph input, or the .npy files themselves (one sample).
Writes OUT.onnx (Conv, MatMul and Gemm with constant weights in QDQ form) and
reports its accuracy against the float model over the calibration samples.
Exit code 0 on success, 1 on any error (an `error:` line says what).
"""

import argparse
import json
import os
import sys

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calibration  # noqa: E402
import qdq_graph  # noqa: E402


class QuantizeError(Exception):
    """A problem reported as `error: ...` (exit 1)."""


def load_model(path):
    if not os.path.isfile(path):
        raise QuantizeError(f"model '{path}' does not exist")
    try:
        model = onnx.load(path)
    except Exception as e:  # a file that is not a model
        raise QuantizeError(f"cannot read '{path}' as an ONNX model: {e}") from None
    return model


def graph_inputs(model):
    inits = {i.name for i in model.graph.initializer}
    return [v for v in model.graph.input if v.name not in inits]


def load_samples(directory, model):
    """[{input name: array}] from DIR/<sample>/<input>.npy or DIR/<input>.npy."""
    if not os.path.isdir(directory):
        raise QuantizeError(f"calibration directory '{directory}' does not exist")
    names = [v.name for v in graph_inputs(model)]
    folders = sorted(e.path for e in os.scandir(directory) if e.is_dir())
    if not folders and any(f.endswith(".npy") for f in os.listdir(directory)):
        folders = [directory]
    if not folders:
        raise QuantizeError(f"calibration directory '{directory}' holds no samples "
                            "(a folder per sample with INPUT.npy files, or .npy files)")
    samples = []
    for folder in folders:
        sample = {}
        for name in names:
            path = os.path.join(folder, f"{name}.npy")
            if not os.path.isfile(path):
                raise QuantizeError(f"calibration sample '{folder}' has no '{name}.npy' "
                                    f"(the model's inputs: {', '.join(names)})")
            sample[name] = np.load(path)
        samples.append(sample)
    return samples


def session(model, optimize=True):
    import onnxruntime as ort
    options = ort.SessionOptions()
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"])


def calibrate(model, plan, samples, collector):
    """Runs the float model with the plan's activations as extra outputs."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    inputs = {v.name for v in graph_inputs(model)}
    outputs = {o.name for o in probe.graph.output}
    for name in plan.activations():
        if name not in inputs and name not in outputs:
            probe.graph.output.append(onnx.helper.make_empty_tensor_value_info(name))
    try:
        run = session(probe, optimize=False)
    except Exception as e:
        raise QuantizeError(f"onnxruntime cannot load the float model: {e}") from None
    names = [o.name for o in run.get_outputs()]

    def values(sample):
        try:
            result = dict(zip(names, run.run(names, sample)))
        except Exception as e:
            raise QuantizeError(f"onnxruntime cannot run a calibration sample: "
                                f"{str(e).splitlines()[0]}") from None
        result.update(sample)
        return result

    passes = [collector.observe] + ([collector.bin] if collector.needs_second_pass() else [])
    for record in passes:
        for sample in samples:
            seen = values(sample)
            for name in plan.activations():
                record(name, seen[name])


def accuracy(model, quantized, samples):
    """Per output: worst absolute error, relative to max|float|, and top-1
    agreement for [N, classes] outputs, over all samples."""
    float_run, q_run = session(model), session(quantized)
    names = [o.name for o in float_run.get_outputs()]
    stats = {n: {"max_err": 0.0, "max_ref": 0.0, "top1_same": 0, "top1_total": 0}
             for n in names}
    for sample in samples:
        ref = float_run.run(names, sample)
        got = q_run.run(names, sample)
        for name, r, g in zip(names, ref, got):
            s = stats[name]
            if r.dtype.kind != "f":
                continue
            s["max_err"] = max(s["max_err"], float(np.abs(r - g).max(initial=0.0)))
            s["max_ref"] = max(s["max_ref"], float(np.abs(r).max(initial=0.0)))
            if r.ndim == 2 and r.shape[1] > 1:
                s["top1_same"] += int((r.argmax(1) == g.argmax(1)).sum())
                s["top1_total"] += r.shape[0]
    return stats


def main(argv):
    p = argparse.ArgumentParser(prog="kilnc quantize", description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--calibration", required=True, metavar="DIR")
    p.add_argument("-o", "--output", required=True, metavar="OUT.onnx")
    p.add_argument("--method", default="minmax", choices=calibration.METHODS)
    p.add_argument("--percentile", type=float, default=99.99)
    p.add_argument("--per-tensor", action="store_true",
                   help="one scale per weight instead of one per output channel")
    p.add_argument("--activations", default="u8", choices=("u8", "s8"),
                   help="activation type: u8 asymmetric (default) or s8 symmetric")
    p.add_argument("--report", metavar="FILE.json")
    p.add_argument("--kilnc", help=argparse.SUPPRESS)
    p.add_argument("--kiln-run", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if not 0 < args.percentile <= 100:
        raise QuantizeError(f"--percentile={args.percentile}, expected a value in (0, 100]")
    if os.path.abspath(args.output) == os.path.abspath(args.model):
        raise QuantizeError("the output would overwrite the input model; choose another -o")

    model = load_model(args.model)
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    if opset < 13 and not args.per_tensor:
        raise QuantizeError(f"per-channel weights need opset 13 (the model has opset {opset}); "
                            "pass --per-tensor")
    plan = qdq_graph.Plan(model)
    if not plan.nodes:
        raise QuantizeError("nothing to quantize: no Conv, MatMul or Gemm with a constant "
                            "float weight")
    samples = load_samples(args.calibration, model)
    collector = calibration.RangeCollector(args.method, args.percentile)
    calibrate(model, plan, samples, collector)
    quantized = qdq_graph.rewrite(model, plan, collector.ranges(),
                                  per_channel=not args.per_tensor,
                                  signed_activations=args.activations == "s8")
    onnx.checker.check_model(quantized)
    onnx.save(quantized, args.output)
    counts = {}
    for node, _, _ in plan.nodes:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    ops = ", ".join(f"{op} {n}" for op, n in sorted(counts.items()))
    print(f"kilnc quantize: {len(plan.activations())} activations calibrated ({args.method}) "
          f"over {len(samples)} samples; {len(plan.nodes)} nodes quantized ({ops}), weights "
          f"int8 {'per tensor' if args.per_tensor else 'per channel'}, activations "
          f"{args.activations}")
    try:
        stats = accuracy(model, quantized, samples)
    except Exception as e:
        raise QuantizeError(f"onnxruntime cannot run the quantized model '{args.output}': "
                            f"{str(e).splitlines()[0]}") from None
    print(f"wrote {args.output}; onnxruntime runs it. Against the float model over "
          f"{len(samples)} samples:")
    for name, s in stats.items():
        rel = s["max_err"] / s["max_ref"] if s["max_ref"] else 0.0
        line = f"  output '{name}': max_err {s['max_err']:.3g} ({rel:.2e} of max|float|)"
        if s["top1_total"]:
            line += (f", top-1 agreement {s['top1_same']}/{s['top1_total']} "
                     f"({100.0 * s['top1_same'] / s['top1_total']:.1f}%)")
        print(line)
    if args.report:
        with open(args.report, "w") as f:
            json.dump({"model": args.model, "output": args.output, "method": args.method,
                       "samples": len(samples), "quantized_nodes": counts,
                       "per_channel": not args.per_tensor, "activations": args.activations,
                       "outputs": stats}, f, indent=2)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except QuantizeError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
