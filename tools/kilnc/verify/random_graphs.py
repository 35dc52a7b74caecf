# Random valid ONNX graphs over ops Kiln supports, for differential testing against onnxruntime.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: random_graphs.py --kilnc PATH --kiln-run PATH (--count N | --hours H) [--seed S]
                        [--per-model K] [--out DIR] [--target cpu|cuda]

Each graph (2-40 nodes) is drawn from a seed: ops, shapes, broadcasts,
attributes, fan-in (operands picked among every earlier value) and fan-out
(several consumers; extra graph outputs). Values are kept where float
comparison means something: every value carries a bound on its magnitude,
an op that could overflow or lose all precision (exp of a large value, a
division by something near zero, a long product) is only drawn where the
bound allows it, denominators and logarithms get `abs(x) + 1`, matmul and
conv weights are scaled by 1/sqrt(fan-in).

K graphs (--per-model, default 16) are merged side by side into one model so
that one kilnc compile checks them all; a merged model that mismatches is
split and each failing graph goes through `kilnc verify`'s bisection, which
writes its reproducer under --out. Prints one line per mismatch and a
summary `random graphs: N checked, M mismatched`; exits 1 on a mismatch.
--xfail lists known failures (docs/robustness.md), strictly: a listed seed
must fail with the listed status (kiln-error: Kiln cannot compile or run it).
"""

import argparse
import math
import os
import sys
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graph_edit  # noqa: E402
import kiln_verify  # noqa: E402

OPSET = 20
DIMS = [1, 2, 3, 4, 5, 7, 8, 16]
# Magnitude bounds: values stay below LIMIT; exp only of values below 4.
LIMIT = 1e3


class Value:
    def __init__(self, name, shape, mag, kind="f"):
        self.name, self.shape, self.mag, self.kind = name, tuple(shape), mag, kind


class Builder:
    """One random graph under construction."""

    def __init__(self, rng):
        self.rng = rng
        self.nodes, self.inputs, self.initializers, self.values = [], [], [], []
        self.feeds = {}
        self.serial = 0

    def fresh(self, stem):
        self.serial += 1
        return f"{stem}{self.serial}"

    def choice(self, items):
        return items[int(self.rng.integers(len(items)))]

    def new_input(self, shape):
        name = self.fresh("x")
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        self.feeds[name] = self.rng.uniform(-1, 1, shape).astype(np.float32)
        value = Value(name, shape, 1.0)
        self.values.append(value)
        return value

    def constant(self, array, stem="c"):
        name = self.fresh(stem)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, shape, fan_in):
        scale = 1.0 / math.sqrt(max(fan_in, 1))
        array = self.rng.uniform(-scale, scale, shape).astype(np.float32)
        return self.constant(array, "w")

    def add(self, op, inputs, shape, mag, kind="f", outputs=1, **attrs):
        names = [self.fresh("v") for _ in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, names, name=self.fresh(op + "_"),
                                           **attrs))
        results = [Value(n, shape, min(mag, LIMIT), kind) for n in names]
        self.values += results
        return results[0]

    def floats(self, max_mag=LIMIT):
        return [v for v in self.values if v.kind == "f" and v.mag <= max_mag]

    def pick(self, max_mag=LIMIT, rank=None, min_rank=0):
        candidates = [v for v in self.floats(max_mag)
                      if (rank is None or len(v.shape) == rank) and len(v.shape) >= min_rank]
        return self.choice(candidates) if candidates else None

    def positive(self, value):
        """abs(x) + 1: a denominator or logarithm argument at least 1."""
        absolute = self.add("Abs", [value.name], value.shape, value.mag)
        one = self.constant(np.array(1.0, np.float32))
        return self.add("Add", [absolute.name, one], value.shape, value.mag + 1)


def broadcast_partner(builder, shape):
    """A value (existing, or a new constant) whose shape broadcasts with `shape`."""
    rng = builder.rng
    same = [v for v in builder.floats() if v.shape == tuple(shape)]
    if same and rng.random() < 0.5:
        return builder.choice(same)
    rank = len(shape)
    drop = int(rng.integers(0, rank + 1))
    partner = [d if rng.random() < 0.6 else 1 for d in shape[drop:]]
    if rng.random() < 0.5:
        array = rng.uniform(-1, 1, partner).astype(np.float32)
        return Value(builder.constant(array), partner, 1.0)
    return builder.new_input(partner)


def gen_unary(b):
    x = b.pick()
    if x is None:
        return
    op = b.choice(["Neg", "Abs", "Tanh", "Sigmoid", "Relu", "Sin", "Cos", "Erf", "Exp",
                   "Log", "Sqrt", "Reciprocal", "LeakyRelu", "Elu", "Selu", "HardSigmoid",
                   "Softplus", "HardSwish", "Gelu", "Clip"])
    mag = x.mag
    if op == "Exp":
        x = b.pick(max_mag=4.0)
        if x is None:
            return
        b.add("Exp", [x.name], x.shape, math.exp(x.mag))
    elif op in ("Log", "Sqrt", "Reciprocal"):
        p = b.positive(x)
        b.add(op, [p.name], x.shape, mag + 1 if op != "Reciprocal" else 1.0)
    elif op == "Clip":
        low = b.constant(np.array(-0.5, np.float32))
        high = b.constant(np.array(0.75, np.float32))
        b.add("Clip", [x.name, low, high], x.shape, 0.75)
    elif op in ("Tanh", "Sigmoid", "Sin", "Cos", "Erf", "HardSigmoid"):
        b.add(op, [x.name], x.shape, 1.0)
    elif op == "Softplus":
        b.add(op, [x.name], x.shape, mag + 1)
    elif op == "Selu":
        b.add(op, [x.name], x.shape, 1.06 * mag + 2)
    elif op == "Gelu":
        b.add(op, [x.name], x.shape, mag, approximate=b.choice(["none", "tanh"]))
    else:
        b.add(op, [x.name], x.shape, mag + 1)


def gen_binary(b):
    x = b.pick()
    if x is None:
        return
    y = broadcast_partner(b, x.shape)
    shape = np.broadcast_shapes(x.shape, y.shape)
    op = b.choice(["Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "Sum", "Mean"])
    if op == "Div":
        d = b.positive(y)
        b.add("Div", [x.name, d.name], shape, x.mag)
    elif op == "Mul":
        if x.mag * y.mag > LIMIT:
            return
        b.add("Mul", [x.name, y.name], shape, x.mag * y.mag)
    elif op == "Pow":
        base = b.positive(x)
        if base.mag > 8:
            return
        exponent = b.constant(np.array(b.choice([0.5, 2.0, 3.0, -1.0]), np.float32))
        b.add("Pow", [base.name, exponent], x.shape, base.mag ** 3)
    elif op in ("Sum", "Mean"):
        z = broadcast_partner(b, shape)
        shape = np.broadcast_shapes(shape, z.shape)
        b.add(op, [x.name, y.name, z.name], shape, x.mag + y.mag + z.mag)
    else:
        b.add(op, [x.name, y.name], shape, x.mag + y.mag)


def gen_compare_select(b):
    x = b.pick()
    if x is None:
        return
    y = broadcast_partner(b, x.shape)
    shape = np.broadcast_shapes(x.shape, y.shape)
    op = b.choice(["Less", "Greater", "LessOrEqual", "GreaterOrEqual"])
    cond = b.add(op, [x.name, y.name], shape, 1.0, kind="b")
    if b.rng.random() < 0.5:
        b.add("Cast", [cond.name], shape, 1.0, to=TensorProto.FLOAT)
    else:
        b.add("Where", [cond.name, x.name, y.name], shape, max(x.mag, y.mag))


def gen_matmul(b):
    x = b.pick(min_rank=2, max_mag=30)
    if x is None:
        return
    k, n = x.shape[-1], b.choice(DIMS)
    if b.rng.random() < 0.5 and len(x.shape) == 2:
        w = b.weight((n, k), k)
        bias = b.weight((n,), 1)
        b.add("Gemm", [x.name, w, bias], (x.shape[0], n), x.mag * math.sqrt(k) + 1,
              transB=1, alpha=float(b.choice([1.0, 0.5])))
    else:
        w = b.weight((k, n), k)
        b.add("MatMul", [x.name, w], x.shape[:-1] + (n,), x.mag * math.sqrt(k))


def gen_reduce(b):
    x = b.pick(min_rank=1)
    if x is None:
        return
    rank = len(x.shape)
    op = b.choice(["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "Softmax",
                   "LogSoftmax", "ArgMax"])
    axis = int(b.rng.integers(rank))
    if op in ("Softmax", "LogSoftmax"):
        mag = 1.0 if op == "Softmax" else 2 * x.mag + math.log(x.shape[axis]) + 1
        b.add(op, [x.name], x.shape, mag, axis=axis)
        return
    keep = int(b.rng.integers(2))
    shape = [d for i, d in enumerate(x.shape) if i != axis or keep]
    if keep:
        shape[axis] = 1
    if op == "ArgMax":
        index = b.add(op, [x.name], shape, x.shape[axis], kind="i", axis=axis, keepdims=keep)
        b.add("Cast", [index.name], shape, x.shape[axis], to=TensorProto.FLOAT)
        return
    axes = b.constant(np.array([axis], np.int64), "axes")
    mag = x.mag * (x.shape[axis] if op == "ReduceSum" else 1)
    b.add(op, [x.name, axes], shape, mag, keepdims=keep)


def gen_movement(b):
    x = b.pick(min_rank=1)
    if x is None:
        return
    rank = len(x.shape)
    op = b.choice(["Transpose", "Reshape", "Concat", "Slice", "Unsqueeze", "Flatten",
                   "Expand"])
    if op == "Transpose":
        perm = [int(p) for p in b.rng.permutation(rank)]
        b.add(op, [x.name], [x.shape[p] for p in perm], x.mag, perm=perm)
    elif op == "Reshape":
        size = int(np.prod(x.shape))
        shape = [size] if b.rng.random() < 0.3 else factor(b, size)
        target = b.constant(np.array(shape, np.int64), "shape")
        b.add(op, [x.name, target], shape, x.mag)
    elif op == "Concat":
        axis = int(b.rng.integers(rank))
        others = [v for v in b.floats() if len(v.shape) == rank and all(
            v.shape[i] == x.shape[i] for i in range(rank) if i != axis)]
        y = b.choice(others)
        shape = list(x.shape)
        shape[axis] += y.shape[axis]
        b.add(op, [x.name, y.name], shape, max(x.mag, y.mag), axis=axis)
    elif op == "Slice":
        axis = int(b.rng.integers(rank))
        size = x.shape[axis]
        start = int(b.rng.integers(size))
        step = int(b.choice([1, 1, 2]))
        end = int(b.rng.integers(start + 1, size + 1))
        shape = list(x.shape)
        shape[axis] = len(range(start, end, step))
        names = [b.constant(np.array([v], np.int64), "s") for v in (start, end, axis, step)]
        b.add(op, [x.name] + names, shape, x.mag)
    elif op == "Unsqueeze":
        if rank >= 4:
            return
        axis = int(b.rng.integers(rank + 1))
        shape = list(x.shape)
        shape.insert(axis, 1)
        b.add(op, [x.name, b.constant(np.array([axis], np.int64), "axes")], shape, x.mag)
    elif op == "Flatten":
        axis = int(b.rng.integers(rank + 1))
        shape = [int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis:]))]
        b.add(op, [x.name], shape, x.mag, axis=axis)
    else:
        shape = [d if d != 1 else b.choice([1, 3]) for d in x.shape]
        target = b.constant(np.array(shape, np.int64), "shape")
        b.add(op, [x.name, target], shape, x.mag)


def factor(b, size):
    """A random shape of 2-3 dims whose product is `size`."""
    dims = []
    rest = size
    for _ in range(int(b.rng.integers(1, 3))):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0]
        d = b.choice(divisors)
        dims.append(d)
        rest //= d
    return dims + [rest]


def gen_conv(b):
    x = b.pick(rank=4, max_mag=30)
    if x is None:
        x = b.new_input((b.choice([1, 2]), b.choice([1, 3, 4]), b.choice([5, 7, 8]),
                         b.choice([5, 6, 8])))
    n, c, h, w = x.shape
    op = b.choice(["Conv", "Conv", "MaxPool", "AveragePool", "GlobalAveragePool",
                   "BatchNormalization", "InstanceNormalization"])
    kernel = [int(b.choice([1, 2, 3])), int(b.choice([1, 3]))]
    kernel = [min(kernel[0], h), min(kernel[1], w)]
    stride = [int(b.choice([1, 2])), int(b.choice([1, 2]))]
    pads = [int(b.rng.integers(0, k)) for k in kernel] * 2
    out = [(h + pads[0] + pads[2] - kernel[0]) // stride[0] + 1,
           (w + pads[1] + pads[3] - kernel[1]) // stride[1] + 1]
    if op == "Conv":
        group = b.choice([g for g in (1, c) if c % g == 0])
        f = b.choice([1, 4, 8]) * group
        fan_in = c // group * kernel[0] * kernel[1]
        weight = b.weight((f, c // group) + tuple(kernel), fan_in)
        bias = b.weight((f,), 1)
        b.add(op, [x.name, weight, bias], (n, f) + tuple(out),
              x.mag * math.sqrt(fan_in) + 1, kernel_shape=kernel, strides=stride, pads=pads,
              group=group)
    elif op == "MaxPool":
        b.add(op, [x.name], (n, c) + tuple(out), x.mag, kernel_shape=kernel, strides=stride,
              pads=pads)
    elif op == "AveragePool":
        b.add(op, [x.name], (n, c) + tuple(out), x.mag, kernel_shape=kernel, strides=stride,
              pads=pads, count_include_pad=int(b.rng.integers(2)))
    elif op == "GlobalAveragePool":
        b.add(op, [x.name], (n, c, 1, 1), x.mag)
    elif op == "BatchNormalization":
        scale, bias = b.weight((c,), 1), b.weight((c,), 1)
        mean = b.constant(b.rng.uniform(-0.5, 0.5, c).astype(np.float32))
        var = b.constant(b.rng.uniform(0.5, 2.0, c).astype(np.float32))
        b.add(op, [x.name, scale, bias, mean, var], x.shape, 2 * x.mag + 2)
    else:
        scale, bias = b.weight((c,), 1), b.weight((c,), 1)
        b.add(op, [x.name, scale, bias], x.shape, 2 * math.sqrt(h * w) + 1)


def gen_layer_norm(b):
    x = b.pick(min_rank=1)
    if x is None or x.shape[-1] < 2:
        return
    d = x.shape[-1]
    b.add("LayerNormalization", [x.name, b.weight((d,), 1), b.weight((d,), 1)], x.shape,
          math.sqrt(d) + 1, axis=-1)


GENERATORS = [(gen_unary, 5), (gen_binary, 5), (gen_compare_select, 1), (gen_matmul, 2),
              (gen_reduce, 2), (gen_movement, 3), (gen_conv, 2), (gen_layer_norm, 1)]


def random_graph(seed):
    """(model, feeds) of the graph of `seed`."""
    rng = np.random.default_rng(seed)
    b = Builder(rng)
    for _ in range(int(rng.integers(1, 4))):
        rank = int(rng.integers(1, 5))
        b.new_input(tuple(int(b.choice(DIMS)) for _ in range(rank)))
    target = int(rng.integers(2, 41))
    weights = np.array([w for _, w in GENERATORS], np.float64)
    attempts = 0
    while len(b.nodes) < target and attempts < 400:
        attempts += 1
        generator = GENERATORS[int(rng.choice(len(GENERATORS), p=weights / weights.sum()))][0]
        generator(b)
    consumed = {n for node in b.nodes for n in node.input}
    produced = [v for v in b.values[len(b.inputs):] if v.kind == "f"]
    outputs = [v for v in produced if v.name not in consumed]
    outputs += [v for v in produced if v not in outputs and rng.random() < 0.15]
    if not outputs:
        outputs = b.floats()[-1:]
    used = consumed | {v.name for v in outputs}
    inputs = [i for i in b.inputs if i.name in used]
    feeds = {i.name: b.feeds[i.name] for i in inputs}
    graph = helper.make_graph(
        b.nodes, f"random_{seed}", inputs,
        [helper.make_tensor_value_info(v.name, TensorProto.FLOAT, list(v.shape))
         for v in outputs], b.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 10
    return model, feeds


# --- Driver ----------------------------------------------------------------------


class Options:
    """The settings kiln_verify.Runner reads."""

    def __init__(self, args):
        self.kilnc, self.kiln_run, self.target = args.kilnc, args.kiln_run, args.target
        self.kilnc_arg, self.precision, self.threads = list(args.kilnc_arg), None, 2


def read_xfail(path):
    """{seed: status} of the known failures (`SEED STATUS  # why` lines)."""
    known = {}
    if path:
        with open(path) as f:
            for line in f:
                fields = line.split("#")[0].split()
                if fields:
                    known[int(fields[0])] = fields[1]
    return known


def check_batch(runner, seeds, args, log):
    """Number of unexpected results among `seeds` (merged, then one by one): a
    mismatch not in --xfail, or an --xfail seed that passes or fails otherwise."""
    expected = {seed: args.known[seed] for seed in seeds if seed in args.known}
    # Known failures run alone; the others merged, and alone only if that fails.
    failures = 0
    for seed in expected:
        failures += check_alone(runner, seed, *random_graph(seed), expected, args, log)
    seeds = [seed for seed in seeds if seed not in expected]
    if not seeds:
        return failures
    graphs = [random_graph(seed) for seed in seeds]
    tags = [f"g{seed}_" for seed in seeds]
    merged = graph_edit.merge_disjoint([m for m, _ in graphs], tags)
    feeds = {tag + name: value for (_, f), tag in zip(graphs, tags) for name, value in f.items()}
    result = kiln_verify.check(runner, merged, feeds, args.rtol, args.atol, tag="batch")
    if result["status"] == "agree":
        return failures
    found = 0
    for seed, (model, graph_feeds) in zip(seeds, graphs):
        found += check_alone(runner, seed, model, graph_feeds, expected, args, log)
    if found == 0:
        log(f"MISMATCH batch {seeds[0]}..{seeds[-1]}: only merged: {result['status']}")
        found = 1
    return failures + found


def check_alone(runner, seed, model, graph_feeds, expected, args, log):
    """1 when the graph of `seed` alone is an unexpected result, else 0."""
    alone = kiln_verify.check(runner, model, graph_feeds, args.rtol, args.atol,
                              tag=f"graph-{seed}")
    if seed in expected:
        if alone["status"] == expected[seed]:
            log(f"known failure seed {seed}: {alone['status']} (--xfail)")
            return 0
        log(f"MISMATCH seed {seed}: {alone['status']}, --xfail expects {expected[seed]}")
        return 1
    if alone["status"] == "agree":
        return 0
    reason = alone.get("error") or alone.get("reference_error") or alone.get("bad")
    log(f"MISMATCH seed {seed}: {alone['status']}: {reason}")
    write_failure(seed, model, graph_feeds, args, log)
    return 1


def write_failure(seed, model, feeds, args, log):
    """The graph under --out/seed-N/ and `kilnc verify`'s bisection of it."""
    if not args.out:
        return
    directory = os.path.join(args.out, f"seed-{seed}")
    kiln_verify.write_model_dir(directory, graph_edit.name_nodes(model), feeds)
    verify_args = [directory, "--kilnc", args.kilnc, "--kiln-run", args.kiln_run,
                   "--target", args.target, "--rtol", str(args.rtol), "--atol", str(args.atol),
                   "--reproducer", directory + "-reproducer", "--force",
                   "--json", directory + "/verify.json"]
    verify_args += [f"--kilnc-arg={a}" for a in args.kilnc_arg]
    kiln_verify.main(verify_args)
    reproducer = directory + "-reproducer"
    log(f"  graph: {directory}" + (f", reproducer: {reproducer}"
                                  if os.path.isdir(reproducer) else ""))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kilnc", required=True)
    parser.add_argument("--kiln-run", required=True)
    parser.add_argument("--target", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--kilnc-arg", action="append", default=[])
    parser.add_argument("--seed", type=int, default=0, help="first graph's seed")
    parser.add_argument("--count", type=int, help="graphs to check")
    parser.add_argument("--hours", type=float, help="check graphs for this long instead")
    parser.add_argument("--per-model", type=int, default=16)
    parser.add_argument("--rtol", type=float, default=1e-3)
    parser.add_argument("--atol", type=float, default=1e-4)
    parser.add_argument("--out", help="write each mismatching graph and its reproducer here")
    parser.add_argument("--work", default=None, help="scratch directory")
    parser.add_argument("--xfail", help="known failures: lines `SEED STATUS  # why` "
                        "(strict: such a seed must fail with that status)")
    args = parser.parse_args(argv)
    args.known = read_xfail(args.xfail)
    if (args.count is None) == (args.hours is None):
        parser.error("give exactly one of --count and --hours")
    import tempfile

    work = args.work or tempfile.mkdtemp(prefix="kiln-random-")
    runner = kiln_verify.Runner(Options(args), work)
    deadline = time.monotonic() + (args.hours or 0) * 3600
    seed, checked, failed = args.seed, 0, 0
    started = time.monotonic()
    while (args.count is not None and checked < args.count) or (
            args.hours is not None and time.monotonic() < deadline):
        size = args.per_model if args.count is None else min(args.per_model,
                                                             args.count - checked)
        seeds = list(range(seed, seed + size))
        failed += check_batch(runner, seeds, args, print)
        seed += size
        checked += size
        if args.hours is not None and checked % 400 == 0:
            print(f"progress: {checked} graphs, {failed} mismatched, "
                  f"{time.monotonic() - started:.0f} s", flush=True)
        if args.work is None:
            clear(work)
    print(f"random graphs: {checked} checked (seeds {args.seed}..{seed - 1}), "
          f"{failed} mismatched", flush=True)
    return 1 if failed else 0


def clear(directory):
    import shutil

    for entry in os.listdir(directory):
        shutil.rmtree(os.path.join(directory, entry), ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
