# Kiln's lit suite: FileCheck tests for the dialect, passes, pipelines and tools.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "Kiln"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit", "Inputs"]

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
config.substitutions.append(("%kiln_src", config.kiln_src_root))
# lit itself, for the test of the ctest wrapper test/run-lit.py.
import shutil  # noqa: E402

lit_path = (shutil.which("lit", path=config.llvm_tools_dir)
            or shutil.which("llvm-lit", path=config.llvm_tools_dir) or "lit")
config.substitutions.append(("%lit", lit_path))

tool_dirs = [config.kiln_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(
    ["kiln-opt", "kilnc", "kiln-run", "kiln-tune",
     "kiln-fuzz-onnx", "kiln-fuzz-mlir", "kiln-fuzz-artifact"], tool_dirs)

# Hand-written fake artifacts built by test/unit/runtime for the kiln-run tests.
config.substitutions.append(
    ("%kiln_test_models",
     os.path.join(config.kiln_obj_root, "test", "unit", "runtime", "models")))

# %python is the test virtualenv's Python (onnx, numpy; KILN_TEST_PYTHON,
# default build/.venv): it runs the model generators and the end-to-end
# checks. lit's own %python (its interpreter) comes later in the list, so
# this one wins.
config.substitutions.insert(0, ("%python", config.python_executable))

# Full tool paths, for scripts that take them as arguments.
config.substitutions.append(
    ("%kilnc_path", os.path.join(config.kiln_tools_dir, "kilnc")))
config.substitutions.append(
    ("%kiln_run_path", os.path.join(config.kiln_tools_dir, "kiln-run")))

# CUDA target. ptxas checks the PTX kilnc writes; it is looked up on PATH, then
# in $CUDA_HOME/bin and /usr/local/cuda/bin (where the CUDA toolkit installs it).
# Without it those tests are reported UNSUPPORTED (skipped) and test/run-lit.py
# lists them with the reason; with KILN_REQUIRE_PTXAS=1 (CI: .ci/run) a missing
# ptxas is an error instead. `cuda-driver` marks a machine where libcuda.so.1
# loads (the no-driver error tests need its absence).
import ctypes

cuda_bins = [os.path.join(os.environ[v], "bin") for v in ("CUDA_HOME", "CUDA_PATH")
             if os.environ.get(v)] + ["/usr/local/cuda/bin"]
ptxas = shutil.which("ptxas") or shutil.which("ptxas", path=os.pathsep.join(cuda_bins))
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
elif os.environ.get("KILN_REQUIRE_PTXAS") == "1":
    lit_config.fatal("KILN_REQUIRE_PTXAS=1 but no ptxas on PATH or in "
                     + ", ".join(cuda_bins) + " (install the CUDA toolkit)")
else:
    lit_config.note("ptxas not found: the CUDA PTX validity tests are skipped")
# `avx512bf16` marks a compiling machine whose CPU runs vdpbf16ps (the e2e
# runs of kilnc --precision=bf16 on the CPU need it; their codegen tests name
# a --cpu instead); `avx512f` one that runs code compiled for x86-64-v4.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        cpu_flags = cpuinfo.read()
        if " avx512_bf16" in cpu_flags:
            config.available_features.add("avx512bf16")
        if " avx512f" in cpu_flags:
            config.available_features.add("avx512f")
except OSError:
    pass
try:
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass

# `%limits -- CMD` runs CMD under the hostile-input limits (test/hostile/limits.py:
# a clean error, exit 1, at most 1 s of CPU and 256 MiB). Sanitizer builds
# keep the clean-error checks but not the CPU and memory limits, which their
# instrumentation and shadow memory distort.
sanitized = config.kiln_sanitizers.upper() in ("ON", "1", "TRUE", "YES")
if sanitized:
    config.available_features.add("sanitizers")
config.substitutions.insert(0, (
    "%limits",
    "%s %s%s" % (config.python_executable,
                    os.path.join(config.kiln_src_root, "test", "hostile", "limits.py"),
                    " --no-limits" if sanitized else "")))
