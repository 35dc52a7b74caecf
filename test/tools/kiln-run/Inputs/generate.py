# Regenerates the .npy inputs and references of the kiln-run lit tests (NumPy).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os

import numpy as np

os.chdir(os.path.dirname(os.path.abspath(__file__)))
for d in ["add_one_ref", "add_one_off", "add_one_shape", "masked_sum_ref"]:
    os.makedirs(d, exist_ok=True)

x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
np.save("x.npy", x)
np.save("add_one_ref/y.npy", x + 1)
off = x + 1
off[0, 0, 0] += 0.5  # outside the default tolerance, inside --atol 1
np.save("add_one_off/y.npy", off)
np.save("add_one_shape/y.npy", (x + 1).reshape(2, 12))
np.save("x_i32.npy", x.astype(np.int32))
np.save("x_2x3x5.npy", np.zeros((2, 3, 5), np.float32))
np.save("fortran.npy", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))

ids = np.arange(18, dtype=np.int64).reshape(2, 9)
mask = np.arange(18).reshape(2, 9) % 3 == 0
np.save("ids.npy", ids)
np.save("mask.npy", mask)
np.save("mask_2x7.npy", np.ones((2, 7), np.bool_))
np.save("masked_sum_ref/sum.npy", (ids * mask).sum(1))
np.save("masked_sum_ref/valid_count.npy", mask.sum(1).astype(np.int32))

# compare.test, exact integers: a sum off by 1 (within --rtol 0.1 of 36), a count
# saved as int64 for an int32 output.
os.makedirs("masked_sum_off", exist_ok=True)
np.save("masked_sum_off/sum.npy", (ids * mask).sum(1) + np.array([0, 1]))
np.save("masked_sum_off/valid_count.npy", mask.sum(1).astype(np.int32))
os.makedirs("masked_sum_dtype", exist_ok=True)
np.save("masked_sum_dtype/sum.npy", (ids * mask).sum(1))
np.save("masked_sum_dtype/valid_count.npy", mask.sum(1).astype(np.int64))

# compare.test, copy_all (in_<t> -> out_<t>, n = 3, bool [2, 3]): int64 values
# above 2^53, where doubles cannot tell 2^60 from 2^60 + 1, and a flipped bool.
copy_in = {"f32": np.array([1.5, -2, 3], np.float32), "f16": np.array([1, 2, 3], np.float16),
           "f64": np.array([0.1, 0.2, 0.3]), "i8": np.array([-1, 2, 3], np.int8),
           "u8": np.array([1, 2, 255], np.uint8), "i16": np.array([-300, 2, 3], np.int16),
           "i32": np.array([-70000, 2, 3], np.int32),
           "i64": np.array([2**60, -(2**60), 7], np.int64),
           "bool": np.array([[True, False, True], [False, False, True]])}
for d in ["copy_ref", "copy_i64_big", "copy_bool_flip"]:
    os.makedirs(d, exist_ok=True)
for t, v in copy_in.items():
    np.save(f"copy_in_{t}.npy", v)
    for d in ["copy_ref", "copy_i64_big", "copy_bool_flip"]:
        np.save(f"{d}/out_{t}.npy", v)
np.save("copy_i64_big/out_i64.npy", copy_in["i64"] + np.array([1, 0, 0]))
np.save("copy_bool_flip/out_bool.npy", ~copy_in["bool"])

# bf16.test: bf16 values as their raw bits ('<u2'), the convention of docs/cli.md.
bf16_bits = np.array([0x3F80, 0xC040, 0x3EAB, 0x7F80], np.uint16)  # 1, -3, 0.333984375, inf
np.save("bf16_x.npy", bf16_bits)
np.save("bf16_x_u8.npy", bf16_bits.astype(np.uint8))
y = np.array([1.0, 1.00390625, 1.01171875, -2.5], np.float32)  # ties round to even
np.save("bf16_y.npy", y)
np.save("bf16_ref/a.npy", np.array([1.0, -3.0, 0.333984375, np.inf], np.float32))
np.save("bf16_ref/b.npy", np.array([0x3F80, 0x3F80, 0x3F82, 0xC020], np.uint16))
os.makedirs("bf16_off", exist_ok=True)
np.save("bf16_off/a.npy", np.array([1.0, -3.0, 0.333984375, np.inf], np.float32))
np.save("bf16_off/b.npy", np.array([0x3F80, 0x3F81, 0x3F82, 0xC020], np.uint16))
