# The --small model zoo (bench/models) compiled with kiln.compile and run with
# kiln.Model, against onnxruntime's references: check.py's criterion and
# zoo-cpu-xfail.txt's expected failures.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from conftest import REPO

import kiln

sys.path.insert(0, os.path.join(REPO, "bench", "models"))
import check  # noqa: E402
import zoo  # noqa: E402

BATCH = 2


def expected_failures():
    listed = {}
    with open(os.path.join(REPO, "test", "conformance", "zoo-cpu-xfail.txt")) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if line:
                listed[line[0]] = line[1]
    return listed


@pytest.fixture(scope="module")
def compiled_zoo(tmp_path_factory):
    """Every small zoo model, compiled two at a time (compiles release the GIL)."""
    out = tmp_path_factory.mktemp("zoo")
    dirs = {name: zoo.write_model(name, str(out), True, [BATCH]) for name in zoo.MODELS}

    def compile_one(name):
        with open(os.path.join(dirs[name], "meta.json")) as f:
            shapes = json.load(f)["batches"][str(BATCH)]
        try:
            return name, kiln.compile(os.path.join(dirs[name], "model.onnx"),
                                      input_shapes=shapes, threads=1)
        except kiln.CompileError as error:
            return name, error

    with ThreadPoolExecutor(2) as pool:
        return {name: (dirs[name], result) for name, result in pool.map(compile_one, dirs)}


@pytest.mark.parametrize("name", list(zoo.MODELS))
def test_zoo_model_matches_onnxruntime(compiled_zoo, name):
    model_dir, model = compiled_zoo[name]
    xfail = expected_failures().get(name)
    if isinstance(model, kiln.CompileError):
        assert xfail, f"{name}: compile failed:\n{model}"
        pytest.xfail(f"{name}: listed in zoo-cpu-xfail.txt ({xfail})")
    batch_dir = os.path.join(model_dir, f"b{BATCH}")
    inputs = {n[:-4]: np.load(os.path.join(batch_dir, "inputs", n))
              for n in os.listdir(os.path.join(batch_dir, "inputs"))}
    results = model(**inputs)
    results = results if isinstance(results, tuple) else (results,)
    wrong = []
    for info, got in zip(model.outputs, results):
        want = np.load(os.path.join(batch_dir, "reference", info.name + ".npy"))
        assert got.dtype == want.dtype and got.shape == want.shape, info.name
        scale = max(float(np.abs(want).max()), 1e-30)
        err = np.abs(got.astype(np.float64) - want.astype(np.float64))
        if (err > check.RTOL * np.abs(want) + check.ATOL * scale).any():
            wrong.append(f"{info.name} max_err/max|ref|={float(err.max()) / scale:.1e}")
    if xfail:
        assert wrong, f"{name} passes but zoo-cpu-xfail.txt lists it ({xfail})"
        pytest.xfail(f"{name}: {'; '.join(wrong)}")
    assert not wrong, "; ".join(wrong)
