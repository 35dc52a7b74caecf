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
