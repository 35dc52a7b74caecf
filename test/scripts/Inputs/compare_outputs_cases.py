# Prints what scripts/compare_outputs.py says about a few got/want pairs (compare-outputs.test).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os
import sys

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "scripts"))
from compare_outputs import mismatch  # noqa: E402

bf16 = np.array([1.5, -2.0], ml_dtypes.bfloat16)
CASES = {
    "int off by 3": (np.array([3000, 1]), np.array([3003, 1])),
    "int64 above 2^53": (np.array([2**60]), np.array([2**60 + 1])),
    "bool flipped": (np.array([True, False]), np.array([True, True])),
    "int32 for int64": (np.array([1, 2], np.int32), np.array([1, 2], np.int64)),
    "f32 for f64": (np.array([1.0], np.float32), np.array([1.0])),
    "float within": (np.array([1.0, np.nan], np.float32), np.array([1.0005, np.nan], np.float32)),
    "float outside": (np.array([1.0, 2.0], np.float32), np.array([1.1, 2.0], np.float32)),
    "shape": (np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32)),
    "bf16 raw bits": (bf16.view(np.uint16), bf16),
}
for name, (got, want) in CASES.items():
    print(f"{name}: {mismatch(got, want) or 'ok'}")
