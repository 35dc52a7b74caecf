# Compiles each model twice in different environments and checks the artifacts are byte-identical.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: run_reproducible.py ZOO WORKDIR --kilnc PATH [--target cpu|cuda] [--flag ARG]...

For every ZOO/MODEL/model.onnx (bench/models/zoo.py --small), two kilnc
compiles that differ in everything but the model bytes and the flags:
  A: the model at ZOO/MODEL/model.onnx, cwd WORKDIR/a, TMPDIR WORKDIR/a/tmp,
     output a/MODEL.so, MLIR's default thread pool, LC_ALL=C;
  B: a copy of the model at WORKDIR/b/copy/other-name.onnx, cwd WORKDIR/b,
     TMPDIR WORKDIR/b/tmp, output b/out/renamed.so, --mlir-disable-threading
     and pinned to one CPU (taskset, where it exists), LC_ALL=C.UTF-8,
     another $HOME and $KILN_CACHE_DIR.
Prints `MODEL: identical (N bytes)` or `MODEL: DIFFERENT (first byte K of N)`
and a summary; exits 1 if any pair differs. Symbolic input dims are fixed to 2
(--input-shape) on both compiles. --flag adds a kilnc argument to
run B only (the self-test: a flag that changes the code must be noticed).
"""

import argparse
import os
import shutil
import subprocess
import sys


def compile_model(kilnc, model, output, cwd, env, extra, prefix=()):
    """kilnc MODEL -o OUTPUT EXTRA..., run under `prefix` (taskset) in `cwd` with `env`."""
    os.makedirs(cwd, exist_ok=True)
    os.makedirs(env["TMPDIR"], exist_ok=True)
    os.makedirs(os.path.dirname(output), exist_ok=True)
    done = subprocess.run(list(prefix) + [kilnc, model, "-o", output] + extra, cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"kilnc failed on {model}: {done.stderr.strip()[-400:]}")


def static_shapes(model_path, batch=2):
    """--input-shape flags giving every symbolic input dim the size `batch` (the
    CUDA target compiles the zoo with static shapes, as scripts/cuda-bundle does)."""
    import onnx

    model = onnx.load(model_path, load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    flags = []
    for info in model.graph.input:
        if info.name in initializers:
            continue
        dims = [str(d.dim_value) if d.HasField("dim_value") else str(batch)
                for d in info.type.tensor_type.shape.dim]
        flags.append(f"--input-shape={info.name}={'x'.join(dims)}")
    return flags


def first_difference(a, b):
    for index, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return index
    return min(len(a), len(b))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("zoo")
    parser.add_argument("work")
    parser.add_argument("--kilnc", required=True)
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--flag", action="append", default=[])
    args = parser.parse_args()
    kilnc = os.path.abspath(args.kilnc)
    target = [f"--target={args.target}"]
    pinned = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    different = 0
    models = sorted(m for m in os.listdir(args.zoo)
                    if os.path.exists(os.path.join(args.zoo, m, "model.onnx")))
    for name in models:
        source = os.path.abspath(os.path.join(args.zoo, name, "model.onnx"))
        a_dir = os.path.abspath(os.path.join(args.work, name, "a"))
        b_dir = os.path.abspath(os.path.join(args.work, name, "b"))
        env_a = dict(os.environ, TMPDIR=os.path.join(a_dir, "tmp"), LC_ALL="C")
        env_b = dict(os.environ, TMPDIR=os.path.join(b_dir, "tmp"), LC_ALL="C.UTF-8",
                     HOME=b_dir, KILN_CACHE_DIR=os.path.join(b_dir, "cache"))
        copy = os.path.join(b_dir, "copy", "other-name.onnx")
        os.makedirs(os.path.dirname(copy), exist_ok=True)
        shutil.copyfile(source, copy)
        shapes = static_shapes(source)
        out_a = os.path.join(a_dir, f"{name}.so")
        out_b = os.path.join(b_dir, "out", "renamed.so")
        compile_model(kilnc, source, out_a, a_dir, env_a, target + shapes)
        compile_model(kilnc, copy, out_b, b_dir, env_b,
                      target + shapes + ["--mlir-disable-threading"] + args.flag, pinned)
        with open(out_a, "rb") as f:
            a = f.read()
        with open(out_b, "rb") as f:
            b = f.read()
        if a == b:
            print(f"{name}: identical ({len(a)} bytes)")
        else:
            different += 1
            print(f"{name}: DIFFERENT (first byte {first_difference(a, b)} of "
                  f"{len(a)} and {len(b)})")
    print(f"reproducible {args.target}: {len(models) - different} of {len(models)} identical")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
