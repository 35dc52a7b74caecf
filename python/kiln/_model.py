# kiln.Model and kiln.load: compiled models run from Python through libkiln_runtime.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass
from typing import Any, Iterator, NamedTuple, Sequence

import numpy as np

from . import _runtime

_DEVICES = {"cpu": _runtime.DEVICE_CPU, "cuda": _runtime.DEVICE_CUDA}

# Kiln dtypes NumPy lacks: ml_dtypes' names for them. The runtime hands them
# back (and takes them) as unsigned integers of the same width.
_ML_DTYPES = {
    "bf16": "bfloat16", "f8e4m3fn": "float8_e4m3fn", "f8e4m3fnuz": "float8_e4m3fnuz",
    "f8e5m2": "float8_e5m2", "f8e5m2fnuz": "float8_e5m2fnuz", "i4": "int4", "u4": "uint4",
    "i2": "int2", "u2": "uint2", "f4e2m1": "float4_e2m1fn", "f8e8m0": "float8_e8m0fnu",
}
_NUMPY_DTYPES = {
    "f32": np.float32, "f16": np.float16, "f64": np.float64, "i8": np.int8, "u8": np.uint8,
    "i16": np.int16, "i32": np.int32, "i64": np.int64, "bool": np.bool_, "u16": np.uint16,
    "u32": np.uint32, "u64": np.uint64,
}


def numpy_dtype(kiln_dtype: str) -> np.dtype:
    """The NumPy dtype of a Kiln dtype name; ml_dtypes' for bf16 and the small floats."""
    if kiln_dtype in _NUMPY_DTYPES:
        return np.dtype(_NUMPY_DTYPES[kiln_dtype])
    import ml_dtypes  # an optional dependency, needed only for these dtypes

    return np.dtype(getattr(ml_dtypes, _ML_DTYPES[kiln_dtype]))


class TensorInfo(NamedTuple):
    """One input or output: symbolic dims are their names (``"batch"``)."""

    name: str
    dtype: str
    shape: tuple[int | str, ...]


@dataclass(frozen=True)
class LatencyStats:
    """Milliseconds per run: kiln-run --bench's statistics (p90 is the nearest rank)."""

    min: float
    median: float
    p90: float
    max: float
    mean: float


@dataclass(frozen=True)
class BenchmarkResult:
    runs: int
    throughput: float  # runs per second
    latency_ms: LatencyStats
    device_ms: LatencyStats | None  # CUDA: the model's time on the device


@dataclass(frozen=True)
class ProfileRow:
    dispatch: str  # the kernel's name from the fusion stage; "(outside dispatches)" last
    id: int  # its trace id (kilnc --report=cost lists the same ids); -1 for the rest
    share: float  # percent of the runs' time
    total_ms: float
    mean_ms: float
    calls: int


class Profile(list):
    """kiln-run --profile's table: a list of ProfileRow, largest first, then the
    time outside dispatches. ``str()`` prints the table; ``to_pandas()`` needs pandas."""

    def __init__(self, rows: list[ProfileRow], runs: int, run_ms: float) -> None:
        super().__init__(rows)
        self.runs = runs
        self.ms_per_run = run_ms / runs if runs else 0.0

    def __str__(self) -> str:
        lines = [f"profile: {self.runs} runs, {len(self) - 1} dispatches, "
                 f"{self.ms_per_run:.3f} ms per run",
                 f"  {'share':>6}  {'total_ms':>10}  {'mean_ms':>10}  {'calls':>6}  {'id':>4}  dispatch"]
        for row in self:
            if row.id < 0:
                lines.append(f"  {row.share:>5.1f}%  {row.total_ms:>10.3f}  {'':>10}  {'':>6}  "
                             f"{'':>4}  {row.dispatch}")
            else:
                lines.append(f"  {row.share:>5.1f}%  {row.total_ms:>10.3f}  {row.mean_ms:>10.4f}  "
                             f"{row.calls:>6}  {row.id:>4}  {row.dispatch}")
        return "\n".join(lines)

    def to_pandas(self) -> Any:
        import pandas  # optional

        return pandas.DataFrame([row.__dict__ for row in self])


def _profile_from_events(events: list[tuple[str, int, int, int, int]]) -> Profile:
    """kiln-run --profile's aggregation of a trace's events."""
    rows: dict[int, list] = {}
    run_ms = dispatch_ms = 0.0
    runs = 0
    for name, dispatch, _thread, begin, end in events:
        ms = (end - begin) / 1e6
        if dispatch < 0:
            run_ms += ms
            runs += 1
            continue
        row = rows.setdefault(dispatch, [name, 0.0, 0])
        row[1] += ms
        row[2] += 1
        dispatch_ms += ms

    def share(ms: float) -> float:
        return 100.0 * ms / run_ms if run_ms > 0 else 0.0

    ordered = sorted(rows.items(), key=lambda item: -item[1][1])
    table = [ProfileRow(name, dispatch, share(total), total, total / calls, calls)
             for dispatch, (name, total, calls) in ordered]
    outside = max(0.0, run_ms - dispatch_ms)
    table.append(ProfileRow("(outside dispatches: validation, output allocation, glue)", -1,
                            share(outside), outside, 0.0, 0))
    return Profile(table, runs, run_ms)


def _to_host(value: Any) -> Any:
    """A host copy of a device-resident DLPack tensor (CUDA models read host memory)."""
    device = getattr(value, "__dlpack_device__", None)
    if device is None or device()[0] == 1:  # kDLCPU
        return value
    if hasattr(value, "get"):  # CuPy
        return value.get()
    if hasattr(value, "cpu"):  # PyTorch
        return value.cpu()
    return np.from_dlpack(value, device="cpu", copy=True)


class Model:
    """A compiled model loaded with one session; see kiln.load.

    Calling it runs the model: ``model(x)`` or ``model(x=x)`` with NumPy arrays
    or any ``__dlpack__`` tensor on the host (row-major ones are read in place,
    without a copy). Returns one NumPy array per output (a tuple when there are
    several). Calls from several threads run at once: the GIL is released while
    the model runs.
    """

    def __init__(self, path: str | os.PathLike, device: str = "cpu", threads: int = 0,
                 max_bytes: int = 0, _keep: Any = None) -> None:
        if device not in _DEVICES:
            raise ValueError(f"device='{device}', expected 'cpu' or 'cuda'")
        if threads < 0:
            raise ValueError(f"threads={threads}: expected >= 0 (0: one per core)")
        if max_bytes < 0:
            raise ValueError(f"max_bytes={max_bytes}: expected >= 0 (0: physical memory)")
        self._impl = _runtime.LoadedModel(os.fspath(path), _DEVICES[device], threads, max_bytes)
        self._keep = _keep  # e.g. the temporary directory of kiln.compile's artifact
        self.device = device
        self.inputs = [TensorInfo(*i) for i in self._impl.inputs()]
        self.outputs = [TensorInfo(*o) for o in self._impl.outputs()]
        self._input_names = [i.name for i in self.inputs]
        self._bit_patterns = [o.dtype in _ML_DTYPES for o in self.outputs]
        self._needs_views = any(self._bit_patterns)
        self._trace: _runtime.Trace | None = None
        self._trace_lock = threading.Lock()

    @property
    def info(self) -> dict[str, Any]:
        """The artifact's descriptor and the session's options (kiln_model_info)."""
        return self._impl.info()

    def __repr__(self) -> str:
        sig = ", ".join(f"{i.name}: {i.dtype}{list(i.shape)}" for i in self.inputs)
        out = ", ".join(f"{o.name}: {o.dtype}{list(o.shape)}" for o in self.outputs)
        return f"<kiln.Model {self.info['path']!r} ({sig}) -> ({out}) on {self.device}>"

    def _arguments(self, args: tuple, kwargs: dict) -> Sequence[Any]:
        """The inputs in the model's order, as arrays the runtime can read."""
        if kwargs:
            if args:
                args = list(args) + [None] * (len(self._input_names) - len(args))
            else:
                args = [None] * len(self._input_names)
            for name, value in kwargs.items():
                if name not in self._input_names:
                    raise TypeError(f"unknown input '{name}', expected one of "
                                    f"{', '.join(self._input_names)}")
                index = self._input_names.index(name)
                if args[index] is not None:
                    raise TypeError(f"input '{name}' is given twice")
                args[index] = value
            missing = [n for n, a in zip(self._input_names, args) if a is None]
            if missing:
                raise TypeError(f"missing input{'s' if len(missing) > 1 else ''} "
                                f"{', '.join(repr(m) for m in missing)}")
        converted = None
        for i, value in enumerate(args):
            if type(value) is np.ndarray and value.dtype.kind != "V":
                continue
            if converted is None:
                converted = list(args)
            converted[i] = self._as_array(i, value)
        return args if converted is None else converted

    def _as_array(self, index: int, value: Any) -> Any:
        info = self.inputs[index] if index < len(self.inputs) else None
        if isinstance(value, np.ndarray):
            if info is not None and info.dtype in _ML_DTYPES and value.dtype.itemsize in (1, 2):
                return value.view(f"u{value.dtype.itemsize}")  # ml_dtypes: the bit patterns
            return value
        if hasattr(value, "__dlpack__"):
            return _to_host(value) if self.device == "cuda" else value
        if info is not None and isinstance(value, (list, tuple, int, float, bool, np.generic)):
            return np.asarray(value, dtype=numpy_dtype(info.dtype))
        return value  # the runtime module names the input and the type it got

    def _results(self, results: Any) -> Any:
        if not self._needs_views:
            return results
        if len(self.outputs) == 1:
            return results.view(numpy_dtype(self.outputs[0].dtype))
        return tuple(r.view(numpy_dtype(o.dtype)) if bits else r
                     for r, o, bits in zip(results, self.outputs, self._bit_patterns))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._results(self._impl.run(self._arguments(args, kwargs), self._trace))

    def _example_inputs(self) -> list[np.ndarray]:
        """Seeded random inputs for benchmark and profile calls without inputs."""
        rng = np.random.default_rng(0)
        arrays = []
        for info in self.inputs:
            symbolic = [d for d in info.shape if isinstance(d, str)]
            if symbolic:
                raise ValueError(f"input '{info.name}' has symbolic dims "
                                 f"({', '.join(symbolic)}): pass the inputs to run it on")
            dtype = numpy_dtype(info.dtype) if info.dtype in _NUMPY_DTYPES else np.uint8
            arrays.append(rng.standard_normal(info.shape).astype(dtype))
        return arrays

    def benchmark(self, *args: Any, warmup: int = 10, runs: int = 100,
                  **kwargs: Any) -> BenchmarkResult:
        """kiln-run --warmup W --bench N: timed runs of the C API (no Python in
        the loop) on the given inputs, or seeded random ones without any."""
        if warmup < 0:
            raise ValueError(f"warmup={warmup}: expected >= 0")
        inputs = self._arguments(args, kwargs) if args or kwargs else self._example_inputs()
        stats = self._impl.benchmark(inputs, warmup, runs)
        device = stats.get("device_ms")
        return BenchmarkResult(
            runs=stats["runs"], throughput=stats["throughput"],
            latency_ms=LatencyStats(**{k: stats[k] for k in ("min", "median", "p90", "max", "mean")}),
            device_ms=LatencyStats(**device) if device else None)

    @contextlib.contextmanager
    def trace(self, path: str | os.PathLike) -> Iterator[_runtime.Trace]:
        """Records every run of this model inside the ``with`` block (one event
        per run and per dispatch), then writes Chrome trace JSON (Perfetto,
        chrome://tracing) to ``path``: kiln-run --trace."""
        trace = _runtime.Trace()
        with self._trace_lock:
            if self._trace is not None:
                raise RuntimeError("this model is already being traced")
            self._trace = trace
        try:
            yield trace
        finally:
            self._trace = None
            trace.write_json(os.fspath(path))

    def profile(self, *args: Any, warmup: int = 1, runs: int = 10, **kwargs: Any) -> Profile:
        """kiln-run --profile: runs the model ``runs`` times traced (after
        ``warmup`` untraced runs) and returns the per-dispatch table."""
        if runs < 1:
            raise ValueError(f"runs={runs}: expected >= 1")
        inputs = self._arguments(args, kwargs) if args or kwargs else self._example_inputs()
        for _ in range(warmup):
            self._impl.run(inputs, None)
        trace = _runtime.Trace()
        for _ in range(runs):
            self._impl.run(inputs, trace)
        return _profile_from_events(trace.events())


def load(path: str | os.PathLike, device: str = "cpu", threads: int = 0,
         max_bytes: int = 0) -> Model:
    """Loads a compiled artifact (``kilnc --emit=lib``) with one session.

    device: "cpu" or "cuda" (an artifact compiled with target="cuda").
    threads: the session's worker threads, the caller's included; 0 = one per core.
    max_bytes: the most one run may allocate (outputs and scratch); 0 = physical memory.
    """
    return Model(path, device=device, threads=threads, max_bytes=max_bytes)
