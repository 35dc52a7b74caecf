# Every error path of the package: the runtime's and kilnc's messages, as Python
# exceptions, and never a crash.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import re
import subprocess

import numpy as np
import onnx
import pytest
from conftest import mlp_model, tool
from onnx import TensorProto, helper

import kiln


def test_wrong_dim_is_a_value_error_with_the_runtime_message(mlp):
    with pytest.raises(ValueError, match=r"^input 'x' dim 1: got 7, expected 8$"):
        mlp(np.ones((2, 7), np.float32))


def test_wrong_rank(mlp):
    with pytest.raises(ValueError, match=r"^input 'x' rank: got 1, expected 2$"):
        mlp(np.ones(8, np.float32))


def test_wrong_dtype_is_a_type_error(mlp):
    with pytest.raises(TypeError, match=r"^input 'x' dtype: got f64, expected f32$"):
        mlp(np.ones((2, 8), np.float64))


def test_dtype_without_kiln_equivalent(mlp):
    with pytest.raises(TypeError, match=r"^input 'x' dtype: got 0 \(not a kiln_dtype\), "
                                        r"expected f32$"):
        mlp(np.ones((2, 8), np.complex64))


def test_input_count(two_input):
    a = np.ones((2, 3), np.float32)
    with pytest.raises(TypeError, match=r"^input count: got 1, expected 2 \('a', 'b'\)$"):
        two_input(a)
    with pytest.raises(TypeError, match=r"^input count: got 3, expected 2 \('a', 'b'\)$"):
        two_input(a, a, a)


def test_keyword_errors(two_input):
    a = np.ones((2, 3), np.float32)
    with pytest.raises(TypeError, match=r"^unknown input 'c', expected one of a, b$"):
        two_input(a=a, c=a)
    with pytest.raises(TypeError, match=r"^input 'a' is given twice$"):
        two_input(a, a=a)
    with pytest.raises(TypeError, match=r"^missing input 'b'$"):
        two_input(a=a)


def test_not_an_array(mlp):
    with pytest.raises(TypeError, match=r"^input 'x': expected a NumPy array or a __dlpack__ "
                                        r"tensor, got object$"):
        mlp(object())


def test_load_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.so"):
        kiln.load(tmp_path / "missing.so")
    garbage = tmp_path / "garbage.so"
    garbage.write_bytes(b"not an ELF file")
    with pytest.raises(ValueError, match="garbage.so"):
        kiln.load(garbage)
    with pytest.raises(ValueError, match="device='tpu', expected 'cpu' or 'cuda'"):
        kiln.load(garbage, device="tpu")
    with pytest.raises(ValueError, match="threads=-1"):
        kiln.load(garbage, threads=-1)


def test_byte_limit_is_a_memory_error(mlp_onnx):
    model = kiln.compile(mlp_onnx, max_bytes=1 << 20)
    model(np.ones((2, 8), np.float32))
    with pytest.raises(MemoryError, match="1048576"):
        model(np.ones((100000, 8), np.float32))


def kilnc_error(*args):
    """kilnc's stderr for a failing compile, without its colors."""
    result = subprocess.run([tool("kilnc"), *args], capture_output=True, text=True)
    assert result.returncode == 1
    return result.stderr.rstrip("\n")


def test_compile_error_has_kilnc_text_for_an_unsupported_op(tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Frobnicate", ["r"], ["y"], name="frob", domain="com.example")]
    info = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [3, 3])  # noqa
    graph = helper.make_graph(nodes, "frob", [info("x")], [info("y")])
    path = tmp_path / "frob.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                      helper.make_opsetid("com.example", 1)]),
              path)
    with pytest.raises(kiln.CompileError) as caught:
        kiln.compile(path, output=tmp_path / "frob.so")
    assert str(caught.value) == kilnc_error(str(path), "-o", str(tmp_path / "frob2.so"))
    assert "Frobnicate" in str(caught.value)
    [op] = caught.value.unsupported_ops
    assert (op.op_type, op.domain, op.count, op.supported, op.nodes) == \
        ("Frobnicate", "com.example", 1, False, ("'frob'",))
    assert op.why
    assert [o.op_type for o in caught.value.check.op_types] == ["Relu", "Frobnicate"]
    assert not caught.value.check.supported


def test_compile_error_for_a_bad_input_shape(tmp_path, mlp_onnx):
    path = tmp_path / "mlp.onnx"
    onnx.save(mlp_onnx, path)
    with pytest.raises(kiln.CompileError) as caught:
        kiln.compile(path, input_shapes={"x": [2, 9]})
    assert str(caught.value) == kilnc_error(str(path), "--input-shape=x=2x9", "-o",
                                            str(tmp_path / "out.so"))
    assert caught.value.unsupported_ops == ()


def test_compile_error_for_a_bad_flag_value(tmp_path):
    with pytest.raises(kiln.CompileError) as caught:
        kiln.compile(mlp_model(), matmul_tile="1x2x3")
    assert str(caught.value) == "kilnc: error: --matmul-tile='1x2x3': expected ROWSxVECTORSxMxNxK"
    with pytest.raises(kiln.CompileError, match="precision"):
        kiln.compile(mlp_model(), precision="fp7")


def test_compile_error_for_mlir_text(tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text("func.func @main( {\n")
    with pytest.raises(kiln.CompileError) as caught:
        kiln.compile(path)
    assert str(caught.value) == kilnc_error(str(path), "-o", str(tmp_path / "bad.so"))
    assert re.match(r".*bad\.mlir:1:\d+: error: ", str(caught.value))
    assert caught.value.check is None


def test_compile_argument_errors(tmp_path):
    with pytest.raises(ValueError, match="target='tpu'"):
        kiln.compile(mlp_model(), target="tpu")
    with pytest.raises(TypeError, match="expected a path, bytes, an onnx.ModelProto"):
        kiln.compile(42)
    with pytest.raises(kiln.CompileError, match="missing.onnx"):
        kiln.compile(tmp_path / "missing.onnx")


def test_check(mlp_onnx):
    report = kiln.check(mlp_onnx)
    assert report.supported
    assert [op.op_type for op in report.op_types] == ["Gemm", "Relu", "MatMul"]
    assert report.unsupported_ops == ()
    assert "supported: the model imports and lowers" in report.text
