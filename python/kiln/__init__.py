# Kiln from Python: compile models with kilnc's driver, run them with libkiln_runtime.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Kiln, an ahead-of-time tensor compiler, from Python (docs/python.md).

    import kiln
    model = kiln.compile("model.onnx")          # or kiln.load("model.so")
    y = model(x)                                # NumPy in, NumPy out
    print(model.benchmark(warmup=10, runs=100).latency_ms)

``import kiln`` loads only the runtime (no LLVM); the compiler's extension
module is loaded by the first kiln.compile or kiln.check.
"""

from ._compile import CheckReport, CompileError, OpTypeSupport, check, compile
from ._model import (BenchmarkResult, LatencyStats, Model, Profile, ProfileRow, TensorInfo,
                     load)

__all__ = [
    "BenchmarkResult", "CheckReport", "CompileError", "LatencyStats", "Model", "OpTypeSupport",
    "Profile", "ProfileRow", "TensorInfo", "check", "compile", "load",
]
__version__ = "0.1.0"
