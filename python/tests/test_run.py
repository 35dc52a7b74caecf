# kiln.Model: signatures, runs against onnxruntime, zero-copy inputs, threads,
# benchmark, trace and profile.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import json
import os
import sys
import threading
import time

import numpy as np
import pytest
from conftest import mlp_model, onnxruntime_outputs, two_input_model

import kiln


def test_import_loads_no_compiler():
    """`import kiln` alone loads the runtime, never the LLVM-linked compiler module."""
    import subprocess

    code = ("import sys, kiln; print('kiln._compiler' in sys.modules, "
            "'kiln._runtime' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True"]


def test_runtime_module_needs_no_llvm():
    import subprocess

    import kiln._runtime

    needed = subprocess.run(["readelf", "-d", kiln._runtime.__file__], capture_output=True,
                            text=True, check=True).stdout
    assert "NEEDED" in needed
    assert "libLLVM" not in needed and "libMLIR" not in needed


def test_signature(mlp):
    assert mlp.inputs == [kiln.TensorInfo("x", "f32", ("batch", 8))]
    assert mlp.outputs == [kiln.TensorInfo("y", "f32", ("batch", 4))]
    assert mlp.info["threads"] == 2
    assert mlp.device == "cpu"
    assert "x: f32['batch', 8]" in repr(mlp)


@pytest.mark.parametrize("batch", [1, 3, 64])
def test_matches_onnxruntime(mlp, mlp_onnx, batch):
    x = np.random.default_rng(batch).standard_normal((batch, 8)).astype(np.float32)
    y = mlp(x)
    assert isinstance(y, np.ndarray) and y.dtype == np.float32 and y.shape == (batch, 4)
    np.testing.assert_allclose(y, onnxruntime_outputs(mlp_onnx, {"x": x})[0],
                               rtol=1e-4, atol=1e-5)


def test_keywords_and_several_outputs(two_input):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 2.0, dtype=np.float32)
    total, product = two_input(b=b, a=a)
    np.testing.assert_array_equal(total, a + b)
    np.testing.assert_array_equal(product, a * b)
    total, product = two_input(a, b=b)
    np.testing.assert_array_equal(product, a * b)


def test_lists_are_converted(two_input):
    total, _ = two_input([[1, 2, 3], [4, 5, 6]], np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(total, [[2, 3, 4], [5, 6, 7]])


def test_outputs_outlive_the_model():
    model = kiln.compile(two_input_model())
    a = np.ones((2, 3), np.float32)
    total, _ = model(a, a)
    del model
    import gc

    gc.collect()
    np.testing.assert_array_equal(total, 2 * a)


def test_contiguous_numpy_input_is_not_copied(mlp):
    x = np.ones((4, 8), np.float32)
    assert mlp._impl.input_addresses([x]) == [x.ctypes.data]
    readonly = np.ones((4, 8), np.float32)
    readonly.flags.writeable = False
    assert mlp._impl.input_addresses([readonly]) == [readonly.ctypes.data]


def test_dlpack_input_without_numpy_type(mlp, mlp_onnx):
    """Any __dlpack__ object works, read in place (here a wrapper only NumPy can read)."""

    class Capsule:
        def __init__(self, array):
            self.array = array

        def __dlpack__(self, **kwargs):
            return self.array.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    x = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
    assert mlp._impl.input_addresses([Capsule(x)]) == [x.ctypes.data]
    np.testing.assert_allclose(mlp(Capsule(x)), onnxruntime_outputs(mlp_onnx, {"x": x})[0],
                               rtol=1e-4, atol=1e-5)


def test_non_contiguous_input_is_copied_and_correct(mlp, mlp_onnx):
    wide = np.random.default_rng(1).standard_normal((3, 16)).astype(np.float32)
    x = wide[:, ::2]  # strided view
    assert not x.flags.c_contiguous
    assert mlp._impl.input_addresses([x]) != [x.ctypes.data]
    np.testing.assert_allclose(mlp(x), onnxruntime_outputs(mlp_onnx, {"x": x.copy()})[0],
                               rtol=1e-4, atol=1e-5)


def test_outputs_round_trip_through_dlpack(mlp):
    y = mlp(np.ones((2, 8), np.float32))
    again = np.from_dlpack(y)
    assert again.ctypes.data == y.ctypes.data


def test_torch_cpu_tensors():
    torch = pytest.importorskip("torch")
    model = kiln.compile(mlp_model())
    x = torch.randn(5, 8)
    assert model._impl.input_addresses([x]) == [x.data_ptr()]
    y = model(x)
    np.testing.assert_allclose(y, model(x.numpy()))
    back = torch.from_dlpack(y)
    assert back.data_ptr() == y.ctypes.data


def test_concurrent_calls_from_threads(mlp, mlp_onnx):
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal((16, 8)).astype(np.float32) for _ in range(8)]
    expected = [onnxruntime_outputs(mlp_onnx, {"x": x})[0] for x in inputs]
    errors = []

    def worker(i):
        try:
            for _ in range(50):
                np.testing.assert_allclose(mlp(inputs[i]), expected[i], rtol=1e-4, atol=1e-5)
        except Exception as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_runs_release_the_gil(mlp):
    """A Python thread keeps running while another thread is inside the model: it
    ticks in the middle of a long benchmark call (a held GIL would stop it for the
    whole call, apart from the switch interval at its ends)."""
    x = np.ones((1 << 16, 8), np.float32)
    ticks = []
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.0005)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        start = time.perf_counter()
        mlp.benchmark(x, warmup=0, runs=1500)
        end = time.perf_counter()
    finally:
        done.set()
        t.join()
    margin = 0.05
    assert end - start > 4 * margin, "the benchmark call is too short to tell"
    inside = [tick for tick in ticks if start + margin < tick < end - margin]
    assert len(inside) > 10


def test_benchmark(mlp):
    result = mlp.benchmark(np.ones((2, 8), np.float32), warmup=2, runs=20)
    assert result.runs == 20
    stats = result.latency_ms
    assert 0 < stats.min <= stats.median <= stats.p90 <= stats.max
    assert stats.min <= stats.mean <= stats.max
    assert result.throughput > 0
    assert result.device_ms is None


def test_benchmark_without_inputs_needs_static_shapes(mlp, two_input):
    assert two_input.benchmark(warmup=0, runs=3).runs == 3
    with pytest.raises(ValueError, match="input 'x' has symbolic dims \\(batch\\)"):
        mlp.benchmark(runs=3)


def test_trace(mlp, tmp_path):
    path = tmp_path / "trace.json"
    x = np.ones((2, 8), np.float32)
    with mlp.trace(path) as trace:
        mlp(x)
        mlp(x)
    mlp(x)  # after the block: not traced
    events = json.loads(path.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    runs = [e for e in events if e.get("name") == "run"]
    assert len(runs) == 2
    assert len(events) > 2  # and the dispatches of each run
    assert sum(1 for e in trace.events() if e[1] < 0) == 2


def test_profile(mlp):
    profile = mlp.profile(np.ones((2, 8), np.float32), runs=5)
    assert profile.runs == 5
    assert len(profile) >= 2
    dispatches = profile[:-1]
    assert all(row.calls == 5 for row in dispatches)
    assert [r.total_ms for r in dispatches] == sorted((r.total_ms for r in dispatches),
                                                      reverse=True)
    assert abs(sum(row.share for row in profile) - 100.0) < 1e-6 or profile[-1].share == 0
    assert str(profile).startswith("profile: 5 runs,")


def test_compile_options_reach_the_driver(mlp_onnx, tmp_path):
    """output, weights and input_shapes are kilnc's -o, --weights and --input-shape."""
    path = tmp_path / "mlp.so"
    model = kiln.compile(mlp_onnx, output=path, weights="external", input_shapes={"x": [3, 8]})
    assert model.inputs[0].shape == (3, 8)
    assert path.exists() and model.info["weights_path"].endswith(".weights")
    x = np.random.default_rng(5).standard_normal((3, 8)).astype(np.float32)
    np.testing.assert_allclose(kiln.load(path, threads=1)(x),
                               onnxruntime_outputs(mlp_onnx, {"x": x})[0], rtol=1e-4, atol=1e-5)


def test_compile_without_loading(mlp_onnx, tmp_path):
    path = kiln.compile(mlp_onnx, output=tmp_path / "m.so", load=False)
    assert path == str(tmp_path / "m.so") and os.path.exists(path)
    with pytest.raises(ValueError, match="load=False returns the artifact's path: give output"):
        kiln.compile(mlp_onnx, load=False)


def test_compile_from_bytes_and_mlir(mlp_onnx, tmp_path):
    model = kiln.compile(mlp_onnx.SerializeToString())
    assert model.outputs == [kiln.TensorInfo("y", "f32", ("batch", 4))]
    mlir = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "mlp.mlir")
    assert kiln.compile(mlir).inputs[0].dtype == "f32"


def test_compiles_in_threads_at_once(mlp_onnx):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        models = list(pool.map(lambda _: kiln.compile(mlp_onnx, threads=1), range(2)))
    x = np.ones((2, 8), np.float32)
    np.testing.assert_array_equal(models[0](x), models[1](x))
