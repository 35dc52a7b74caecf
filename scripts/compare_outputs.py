# The rule every test harness uses to compare a Kiln output with its reference.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""mismatch(got, want, rtol, atol) -> None when they agree, else why not.

The rule of `kiln-run --compare` (docs/cli.md), for harnesses that compare in
Python: the dtype and the shape must be the reference's; integer and boolean
values must be equal (no tolerance: an int64 sum off by 3 is wrong); floats
agree like numpy.allclose(rtol, atol) with NaN equal to NaN. kiln-run writes
types NumPy lacks (bfloat16, the 8-bit floats) as their raw bits; such an
output is read as the reference's ml_dtypes type.
"""

import numpy as np


def _as_reference_type(got, want):
    """`got` viewed as `want`'s ml_dtypes type (kind 'V') when kiln-run wrote its raw bits."""
    same_size = got.dtype.itemsize == want.dtype.itemsize
    if want.dtype.kind == "V" and got.dtype.kind == "u" and same_size:
        return got.view(want.dtype)
    return got


def _is_integer(dtype):
    """bool, NumPy's integers and ml_dtypes' int4/uint4/int2/uint2."""
    return dtype.kind in "biu" or (dtype.kind == "V" and dtype.name.startswith(("int", "uint")))


def mismatch(got, want, rtol=1e-3, atol=1e-5):
    got, want = np.asarray(got), np.asarray(want)
    got = _as_reference_type(got, want)
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, expected {want.dtype}"
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if _is_integer(got.dtype):
        bad = got != want
        if bad.any():
            where = int(np.flatnonzero(bad)[0])
            return (f"{int(bad.sum())} of {got.size} elements differ ({got.dtype} is compared "
                    f"exactly); first at {where}: {got.ravel()[where]}, expected "
                    f"{want.ravel()[where]}")
        return None
    g, w = got.astype(np.float64), want.astype(np.float64)
    close = np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return None
    err = np.where(close, 0.0, np.abs(g - w))
    where = int(np.argmax(np.nan_to_num(err, nan=np.inf)))
    return (f"{int((~close).sum())} of {got.size} elements outside rtol={rtol:g} atol={atol:g}; "
            f"max abs error {err.ravel()[where]:.3g} at {where}")
