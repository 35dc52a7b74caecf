# Per-class conv speed of a CNN on the CPU: kilnc --report=cost joined with kiln-run --trace.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: convclass.py --model MODEL.onnx --shape input=1x3x224x224 --kilnc LABEL=KILNC...
                     [--kiln-run KILN_RUN] [--threads 1] [--bench 9] [--rounds 2] [--work DIR]
                     [--ort]

Compiles the model with each kilnc (--report=cost: FLOPs per dispatch), then runs the
artifacts in interleaved rounds (kiln-run --threads T --warmup 1 --bench R --trace).
Each dispatch's time is its minimum over all timed runs (the least-disturbed sample on
a shared machine). Dispatches are grouped into classes by the first Conv node in their
name (kernel, stride, output size, and whether K = C*kh*kw is 64 or less), others by
their kind; prints a markdown table of MFLOP, ms and GFLOP/s per class and artifact.
With --ort, onnxruntime's time per class too (SessionOptions.enable_profiling, each
node's minimum over the rounds x bench runs after a warm-up, classed by the shapes in
the profile: ORT fuses activations and residual adds into its convs as Kiln does),
and the last artifact's ms minus onnxruntime's.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys

import onnx
from onnx import shape_inference

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
import roofline  # noqa: E402  (same directory: its trace parser)


def conv_classes(path, shapes):
    """{conv node name: class} from the ONNX graph with inferred shapes."""
    model = onnx.load(path)
    for value in model.graph.input:
        if value.name in shapes:
            dims = value.type.tensor_type.shape.dim
            for dim, size in zip(dims, shapes[value.name]):
                dim.ClearField("dim_param")
                dim.dim_value = size
    model = shape_inference.infer_shapes(model)
    dims = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
            for v in list(model.graph.value_info) + list(model.graph.output)}
    weights = {t.name: list(t.dims) for t in model.graph.initializer}
    classes = {}
    for node in model.graph.node:
        if node.op_type != "Conv":
            continue
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        w = weights.get(node.input[1], [0, 0, 0, 0])
        k = w[2] if len(w) == 4 else 0
        stride = (attrs.get("strides") or [1])[0]
        group = attrs.get("group", 1)
        out = dims.get(node.output[0], [0, 0, 0, 0])
        kind = "depthwise " if group > 1 and group == out[1] else ""
        small = " K<=64" if group == 1 and w[1] * k * k <= 64 else ""
        classes[node.name] = f"{kind}{k}x{k}/{stride} @{out[2]}{small}"
    return classes


def compile_model(kilnc, model, shape_args, artifact):
    proc = subprocess.run([kilnc, model, "-o", artifact, "--report=cost",
                           "--report-format=json"] + shape_args,
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stderr[proc.stderr.index("["):])


def trace_minimums(kiln_run, artifact, threads, bench, trace):
    """{dispatch id: min over runs of its per-run time (ms)}, [run ms]."""
    subprocess.run([kiln_run, artifact, "--threads", str(threads), "--warmup", "1",
                    "--bench", str(bench), "--trace", trace],
                   capture_output=True, text=True, check=True)
    times, run = roofline.parse_trace(trace)
    return {d: t["min"] for d, t in times.items()}, run["runs"]


def ort_classes(model, shapes, threads, runs, work):
    """{class: ms} of onnxruntime's nodes, each its minimum over `runs` profiled runs."""
    import numpy as np
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.enable_profiling = True
    options.profile_file_prefix = os.path.join(work, "ort_profile")
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    feed = {name: np.random.rand(*dims).astype(np.float32) for name, dims in shapes.items()}
    session.run(None, feed)
    for _ in range(runs):
        session.run(None, feed)
    path = session.end_profiling()
    with open(path) as f:
        events = json.load(f)
    os.remove(path)
    times, classes = collections.defaultdict(list), {}
    for e in events:
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        node, args = e["name"][:-len("_kernel_time")], e["args"]
        times[node].append(e["dur"] / 1e3)
        if args.get("op_name") != "Conv":
            classes[node] = {"Gemm": "matmul", "MaxPool": "pooling_nchw_max"}.get(
                args.get("op_name"), args.get("op_name", node))
            continue
        x, w = args["input_type_shape"][0]["float"], args["input_type_shape"][1]["float"]
        out = args["output_type_shape"][0]["float"]
        k, stride = w[2], max(1, round(x[2] / out[2]))
        kind = "depthwise " if w[1] == 1 and x[1] > 1 else ""
        small = " K<=64" if not kind and w[1] * k * k <= 64 else ""
        classes[node] = f"{kind}{k}x{k}/{stride} @{out[2]}{small}"
    table = collections.defaultdict(float)
    for node, ts in times.items():
        table[classes[node]] += min(ts[1:] or ts)  # the first is the warm-up
    return table


def classify(name, classes):
    for node in re.findall(r"[^ ,]+", name.split(" ", 1)[1] if " " in name else name):
        node = node.lstrip("/")
        for key in (node, "/" + node):
            if key in classes:
                return classes[key]
    return name.split(" ")[0]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True)
    p.add_argument("--shape", action="append", default=[], help="NAME=1x3x224x224")
    p.add_argument("--kilnc", action="append", required=True, help="LABEL=PATH")
    p.add_argument("--kiln-run", default=os.path.join(ROOT, "build", "bin", "kiln-run"))
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--bench", type=int, default=9)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--work", default="/tmp/convclass")
    p.add_argument("--ort", action="store_true", help="add onnxruntime's time per class")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    shapes = {s.split("=")[0]: [int(d) for d in s.split("=")[1].split("x")] for s in args.shape}
    shape_args = [f"--input-shape={s}" for s in args.shape]
    classes = conv_classes(args.model, shapes)
    labels, costs, best, runs = [], {}, {}, {}
    for spec in args.kilnc:
        label, kilnc = spec.split("=", 1)
        labels.append(label)
        artifact = os.path.join(args.work, f"{label}.so")
        costs[label] = compile_model(kilnc, args.model, shape_args, artifact)
        best[label], runs[label] = {}, []
    for _ in range(args.rounds):
        for label in labels:
            times, run_ms = trace_minimums(args.kiln_run, os.path.join(args.work, f"{label}.so"),
                                           args.threads, args.bench,
                                           os.path.join(args.work, "trace.json"))
            for d, t in times.items():
                best[label][d] = min(t, best[label].get(d, t))
            runs[label] += run_ms
    table = collections.OrderedDict()
    for label in labels:
        for cost in costs[label]:
            if cost["id"] not in best[label]:
                continue
            row = table.setdefault(classify(cost["name"], classes),
                                   {lb: [0, 0, 0.0] for lb in labels})
            row[label][0] += 1
            row[label][1] += max(cost["flops"], 0)
            row[label][2] += best[label][cost["id"]]
    ort_ms = ort_classes(args.model, shapes, args.threads, args.rounds * args.bench,
                         args.work) if args.ort else None
    head = "| class | dispatches | MFLOP |" + "".join(f" ms {lb} | GFLOP/s {lb} |" for lb in labels)
    if ort_ms is not None:
        head += f" ms ORT | GFLOP/s ORT | {labels[-1]} - ORT ms |"
    print(head)
    print("| --- | ---: | ---: |" + " ---: | ---: |" * len(labels) + " ---: | ---: | ---: |" *
          (ort_ms is not None))
    order = sorted(table, key=lambda c: -table[c][labels[0]][2])
    total = {lb: [0, 0, 0.0] for lb in labels}
    for c in order + ["all"]:
        row = total if c == "all" else table[c]
        if c != "all":
            for lb in labels:
                total[lb] = [x + y for x, y in zip(total[lb], row[lb])]
        first = row[labels[0]]
        cells = "".join(
            f" {row[lb][2]:.2f} | {row[lb][1] / row[lb][2] / 1e6 if row[lb][2] else 0:.0f} |"
            for lb in labels)
        if ort_ms is not None:
            ms = sum(ort_ms.values()) if c == "all" else ort_ms.get(c, 0.0)
            rate = first[1] / ms / 1e6 if ms else 0
            cells += f" {ms:.2f} | {rate:.0f} | {row[labels[-1]][2] - ms:+.2f} |"
        print(f"| {c} | {first[0]} | {first[1] / 1e6:.0f} |{cells}")
    for lb in labels:
        print(f"{lb}: run min {min(runs[lb]):.2f} ms, median "
              f"{sorted(runs[lb])[len(runs[lb]) // 2]:.2f} ms over {len(runs[lb])} runs",
              file=sys.stderr)


if __name__ == "__main__":
    main()
