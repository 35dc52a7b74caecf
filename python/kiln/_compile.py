# kiln.compile and kiln.check: the compile driver kilnc runs, called in-process.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ._model import Model


@dataclass(frozen=True)
class OpTypeSupport:
    """One op type of an ONNX model, as ``kilnc --check`` lists it."""

    op_type: str
    domain: str
    count: int
    supported: bool
    why: str  # "" when supported
    nodes: tuple[str, ...]  # unsupported types: "'name'", or "#index" for an unnamed node


@dataclass(frozen=True)
class CheckReport:
    """``kilnc --check``: whether the model compiles, its text and its op types."""

    supported: bool
    text: str
    op_types: tuple[OpTypeSupport, ...]

    @property
    def unsupported_ops(self) -> tuple[OpTypeSupport, ...]:
        return tuple(op for op in self.op_types if not op.supported)

    def __str__(self) -> str:
        return self.text


class CompileError(Exception):
    """A compile failed. ``str(error)`` is the text kilnc prints on stderr;
    for ONNX models ``unsupported_ops`` lists the op types the importer lacks
    (``kilnc --check``'s list) and ``check`` holds the whole check report."""

    def __init__(self, message: str, check: CheckReport | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.check = check
        self.unsupported_ops: tuple[OpTypeSupport, ...] = check.unsupported_ops if check else ()


def _model_file(model: Any, example_inputs: Any, workdir: tempfile.TemporaryDirectory) -> str:
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model)
    path = os.path.join(workdir.name, "model.onnx")
    if isinstance(model, (bytes, bytearray, memoryview)):
        with open(path, "wb") as f:
            f.write(model)
        return path
    if type(model).__name__ == "ModelProto" and hasattr(model, "SerializeToString"):
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        return path
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and isinstance(model, torch.nn.Module):
        if example_inputs is None:
            raise TypeError("a torch.nn.Module needs example_inputs (a tuple of tensors) "
                            "to be exported to ONNX")
        if not isinstance(example_inputs, tuple):
            example_inputs = (example_inputs,)
        torch.onnx.export(model.eval(), example_inputs, path, dynamo=False)
        return path
    raise TypeError(f"model: expected a path, bytes, an onnx.ModelProto or a torch.nn.Module, "
                    f"got {type(model).__name__}")


def _flags(input_path: str, output: str, target: str, precision: str,
           input_shapes: Mapping[str, Sequence[int]] | None, weights: str, cpu: str,
           gpu: str, matmul_tile: str | None, max_fold_bytes: int) -> dict[str, Any]:
    shapes = []
    for name, dims in (input_shapes or {}).items():
        shapes.append(f"{name}={'x'.join(str(int(d)) for d in dims)}")
    return dict(input=input_path, output=output, target=target, cpu=cpu, gpu=gpu,
                precision=precision, weights=weights, matmul_tile=matmul_tile or "",
                input_shapes=shapes, max_fold_bytes=max_fold_bytes)


def _check(flags: dict[str, Any]) -> CheckReport:
    from . import _compiler

    code, text, op_types = _compiler.check(**flags)
    ops = tuple(OpTypeSupport(op_type=op, domain=domain, count=count, supported=not why,
                              why=why, nodes=tuple(nodes))
                for domain, op, count, why, nodes in op_types)
    return CheckReport(supported=code == 0, text=text, op_types=ops)


def check(model: Any, *, input_shapes: Mapping[str, Sequence[int]] | None = None,
          example_inputs: Any = None) -> CheckReport:
    """``kilnc --check``: whether Kiln compiles the ONNX model, op type by op
    type, then the import and the graph and linalg stages."""
    workdir = tempfile.TemporaryDirectory(prefix="kiln-")
    with workdir:
        path = _model_file(model, example_inputs, workdir)
        if not path.endswith(".onnx"):
            raise ValueError(f"check reads ONNX models (.onnx) only, got '{path}'")
        return _check(_flags(path, "-", "cpu", "fp32", input_shapes, "embed", "native",
                             "sm_90a", None, 64 << 20))


def compile(model: Any, target: str = "cpu", precision: str = "fp32", *,
            input_shapes: Mapping[str, Sequence[int]] | None = None, weights: str = "embed",
            output: str | os.PathLike | None = None, example_inputs: Any = None,
            cpu: str = "native", gpu: str = "sm_90a", matmul_tile: str | None = None,
            max_fold_bytes: int = 64 << 20, threads: int = 0, max_bytes: int = 0,
            load: bool = True) -> Model | str:
    """Compiles a model with kilnc's driver and loads the artifact.

    model: a path (.onnx or .mlir), the bytes of an ONNX model, an
      onnx.ModelProto, or a torch.nn.Module with example_inputs (exported with
      torch.onnx.export; torch is optional).
    target: "cpu" or "cuda"; precision: kilnc --precision (fp32, tf32, fp16, bf16).
    input_shapes: {input name: dims}, kilnc --input-shape.
    weights: "embed", "external" (a side file next to the artifact) or "none".
    output: where the artifact goes; None keeps it in a temporary directory
      that lives as long as the returned model.
    threads, max_bytes: as kiln.load. The rest are kilnc's flags of the same names.
    load: False only compiles (e.g. for a GPU elsewhere) and returns the artifact's
      path; it needs output.
    Raises CompileError with kilnc's message when the compile fails.
    """
    if target not in ("cpu", "cuda"):
        raise ValueError(f"target='{target}', expected 'cpu' or 'cuda'")
    if not load and output is None:
        raise ValueError("load=False returns the artifact's path: give output")
    workdir = tempfile.TemporaryDirectory(prefix="kiln-")
    path = _model_file(model, example_inputs, workdir)
    artifact = os.fspath(output) if output is not None else os.path.join(workdir.name,
                                                                         "model.so")
    flags = _flags(path, artifact, target, precision, input_shapes, weights, cpu, gpu,
                   matmul_tile, max_fold_bytes)
    from . import _compiler

    code, messages = _compiler.compile(**flags)
    if code != 0:
        report = _check(flags) if path.endswith(".onnx") and os.path.isfile(path) else None
        workdir.cleanup()
        raise CompileError(messages.rstrip("\n"), report)
    keep = workdir if output is None else None
    if output is not None:
        workdir.cleanup()
    if not load:
        return artifact
    return Model(artifact, device=target, threads=threads, max_bytes=max_bytes, _keep=keep)
