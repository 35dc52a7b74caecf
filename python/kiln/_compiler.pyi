# Type stubs of kiln._compiler (python/src/CompilerModule.cpp).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

def compile(input: str, output: str, target: str, cpu: str, gpu: str, precision: str,
            weights: str, matmul_tile: str, input_shapes: list[str],
            max_fold_bytes: int) -> tuple[int, str]: ...
def check(input: str, output: str, target: str, cpu: str, gpu: str, precision: str,
          weights: str, matmul_tile: str, input_shapes: list[str],
          max_fold_bytes: int) -> tuple[int, str, list[tuple[str, str, int, str, list[str]]]]: ...
