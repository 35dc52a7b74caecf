# Decoder exports with a KV cache through kilnc + kiln-run, against onnxruntime and transformers.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: run_decoders.py WORKDIR (--kilnc PATH | --prebuilt DIR) --kiln-run PATH
                        [--target cpu|cuda] [--device cpu|cuda] [--ort-optimized]
                        [MODEL.onnx...]

Each export (default: test/llm/models/*.onnx, written by export_decoders.py:
inputs input_ids, attention_mask, position_ids and past_key_values.*, outputs
logits and present.*, with symbolic batch, sequence and past dims) is
compiled once as exported (CPU target) and
  1. run at three shapes against onnxruntime's CPU provider (every output,
     rtol 1e-3, atol 1e-4): a prefill without a past (past 0), a prefill
     after a past (past 5, sequence 4, batch 2) and a decode step (past 9,
     sequence 1, batch 3), with random ids and caches;
  2. used for greedy generation from the prompt in MODEL's .generate.npz
     (prefill, then one decode step per token, each step's present fed back as
     the next past), whose ids must equal transformers' `generate` ids in the
     npz exactly.
With --ort-optimized, Kiln compiles onnxruntime's own optimization of each
export instead (ORT_ENABLE_EXTENDED on the CPU provider, written with
optimized_model_filepath: its com.microsoft FusedMatMul, FastGelu, QuickGelu
...), still checked against onnxruntime on the export as given.
--target cuda compiles with kilnc --target=cuda; --device cuda runs kiln-run
--device cuda. --prebuilt DIR takes each artifact from DIR/<export name>.so
instead of compiling (the GPU machine has no kilnc: scripts/llm-cuda-bundle
compiles them here).
Prints one line per failure and a summary; exits 1 on any failure.
"""

import argparse
import glob
import os
import subprocess
import sys

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
from compare_outputs import mismatch  # noqa: E402

SHAPES = [(1, 0, 6), (2, 5, 4), (3, 9, 1)]  # (batch, past, sequence)


def feeds_for(session, batch, past, seq, rng):
    feed = {}
    for i in session.get_inputs():
        if i.name == "input_ids":
            feed[i.name] = rng.integers(0, 1000, (batch, seq)).astype(np.int64)
        elif i.name == "attention_mask":
            feed[i.name] = np.ones((batch, past + seq), np.int64)
        elif i.name == "position_ids":
            feed[i.name] = np.tile(np.arange(past, past + seq), (batch, 1)).astype(np.int64)
        else:  # a cache [batch, kv_heads, past, head] (exporters name the dims differently)
            shape = [batch, i.shape[1], past, i.shape[3]]
            feed[i.name] = rng.standard_normal(shape).astype(np.float32)
    return feed


class Kiln:
    def __init__(self, args, artifact, work):
        self.args, self.artifact, self.work = args, artifact, work
        self.calls = 0

    def run(self, feed):
        self.calls += 1
        out = os.path.join(self.work, f"run{self.calls}")
        os.makedirs(out, exist_ok=True)
        cmd = [self.args.kiln_run, self.artifact, "--output-dir", out,
               "--device", self.args.device]
        for key, array in feed.items():
            path = os.path.join(out, f"in.{key}.npy")
            np.save(path, array)
            cmd += ["--input", f"{key}={path}"]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode:
            raise RuntimeError(f"kiln-run: {run.stderr.strip()}")
        return {name: np.load(os.path.join(out, f"{name}.npy"))
                for name in self.outputs}


def generate(kiln, session, prompt, steps):
    """Greedy ids: prefill the prompt, then one token per decode step."""
    batch = prompt.shape[0]
    past_names = [i.name for i in session.get_inputs() if i.name.startswith("past_key_values")]
    present_names = [o.name for o in session.get_outputs() if o.name.startswith("present")]
    feed = feeds_for(session, batch, 0, prompt.shape[1], np.random.default_rng(0))
    feed["input_ids"] = prompt
    ids = prompt
    for _ in range(steps):
        out = kiln.run(feed)
        token = out["logits"][:, -1].argmax(-1).astype(np.int64)[:, None]
        ids = np.concatenate([ids, token], 1)
        total = ids.shape[1]
        feed = {"input_ids": token,
                "attention_mask": np.ones((batch, total), np.int64),
                "position_ids": np.full((batch, 1), total - 1, np.int64)}
        feed.update({p: out[q] for p, q in zip(past_names, present_names)})
    return ids


def ort_optimized(path, work):
    """onnxruntime's extended graph optimization of `path`, as a file."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = os.path.join(work, "ort-optimized.onnx")
    ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    return options.optimized_model_filepath


def check_model(path, args):
    name = os.path.basename(path).split(".")[0]
    work = os.path.join(args.work, os.path.basename(path)[:-5])
    os.makedirs(work, exist_ok=True)
    if args.prebuilt:
        artifact = os.path.join(args.prebuilt, os.path.basename(path)[:-len(".onnx")] + ".so")
        if not os.path.exists(artifact):
            return 0, [f"FAIL: {path}: no artifact {artifact}"]
    else:
        artifact = os.path.join(work, "model.so")
        source = ort_optimized(path, work) if args.ort_optimized else path
        built = subprocess.run([args.kilnc, source, "-o", artifact, "--target=" + args.target],
                               capture_output=True, text=True)
        if built.returncode:
            return 0, [f"FAIL: {path}: kilnc: {built.stderr.strip()}"]
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    outputs = [o.name for o in session.get_outputs()]
    kiln = Kiln(args, artifact, work)
    kiln.outputs = outputs
    problems, runs = [], 0
    rng = np.random.default_rng(7)
    for batch, past, seq in SHAPES:
        runs += 1
        feed = feeds_for(session, batch, past, seq, rng)
        want = session.run(outputs, feed)
        try:
            got = kiln.run(feed)
        except RuntimeError as e:
            problems.append(f"FAIL: {name} batch {batch} past {past} seq {seq}: {e}")
            continue
        for out, expected in zip(outputs, want):
            problem = mismatch(got[out], expected, rtol=1e-3, atol=1e-4)
            if problem:
                problems.append(f"FAIL: {name} batch {batch} past {past} seq {seq} "
                                f"output {out}: {problem}")
    reference = path[:-len(".onnx")] + ".generate.npz"
    if not os.path.exists(reference):
        reference = os.path.join(os.path.dirname(path), f"{name}.generate.npz")
    if os.path.exists(reference):
        runs += 1
        expected = np.load(reference)
        prompt, ids = expected["prompt"].astype(np.int64), expected["ids"]
        try:
            got = generate(kiln, session, prompt, ids.shape[1] - prompt.shape[1])
            if not np.array_equal(got, ids):
                first = int(np.argmax((got != ids).any(0)))
                problems.append(f"FAIL: {name} generate: ids differ from transformers' from "
                                f"position {first}: {got[:, first:first + 4].tolist()} vs "
                                f"{ids[:, first:first + 4].tolist()}")
            else:
                print(f"{os.path.basename(path)}: generated {ids.shape[1] - prompt.shape[1]} tokens x "
                      f"{ids.shape[0]} sequences, equal to transformers' greedy ids")
        except RuntimeError as e:
            problems.append(f"FAIL: {name} generate: {e}")
    return runs, problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("work")
    parser.add_argument("--kilnc")
    parser.add_argument("--prebuilt")
    parser.add_argument("--kiln-run", required=True)
    parser.add_argument("--target", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--ort-optimized", action="store_true")
    parser.add_argument("models", nargs="*")
    args = parser.parse_intermixed_args()
    if bool(args.kilnc) == bool(args.prebuilt):
        parser.error("give one of --kilnc and --prebuilt")
    models = args.models or sorted(glob.glob(os.path.join(HERE, "models", "*.onnx")))
    runs = failed = 0
    for path in models:
        count, problems = check_model(path, args)
        runs += count
        failed += len(problems)
        for p in problems:
            print(p)
    print(f"decoders: {len(models)} models, {runs} checks, {failed} failures")
    return 1 if failed or not models else 0


if __name__ == "__main__":
    sys.exit(main())
