# kilnc quantize: activation ranges from calibration runs (min-max, percentile, entropy).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Range estimators for `kilnc quantize` (docs/quantization.md).

Every estimator sees the float model's activations over the calibration inputs
and returns, per tensor, the range [lo, hi] its quantization must cover (lo <= 0
<= hi, so that zero is exact):

- `minmax`: the smallest and largest value seen;
- `percentile`: the P-th percentile of |x| (default 99.99) clipped to the values
  seen: outliers beyond it saturate;
- `entropy`: the clipping threshold on |x| whose 128-level quantized histogram is
  closest (Kullback-Leibler divergence) to the 2048-bin histogram of the values,
  as TensorRT's entropy calibrator does.

The histograms take two passes over the calibration set: the first finds each
tensor's largest |x|, the second bins the non-zero |x| over [0, that].
"""

import numpy as np

BINS = 2048
LEVELS = 128
METHODS = ("minmax", "percentile", "entropy")


class RangeCollector:
    """Accumulates what an estimator needs, one calibration run at a time."""

    def __init__(self, method, percentile=99.99):
        if method not in METHODS:
            raise ValueError(f"unknown calibration method '{method}', expected one of "
                             f"{', '.join(METHODS)}")
        self.method = method
        self.percentile = percentile
        self.lo, self.hi = {}, {}
        self.hist = {}

    def needs_second_pass(self):
        return self.method != "minmax"

    def observe(self, name, values):
        """First pass: the extremes."""
        values = np.asarray(values, dtype=np.float64)
        if values.size == 0:
            return
        lo, hi = float(values.min()), float(values.max())
        self.lo[name] = min(lo, self.lo.get(name, lo))
        self.hi[name] = max(hi, self.hi.get(name, hi))

    def bin(self, name, values):
        """Second pass: |x| binned over [0, largest |x| of the first pass]."""
        amax = max(abs(self.lo.get(name, 0.0)), abs(self.hi.get(name, 0.0)))
        if amax == 0.0:
            return
        # Exact zeros (half of a ReLU's output) are left out: zero is exact at
        # any threshold, and their spike in the first bin would pull the
        # entropy search toward thresholds that clip everything else.
        magnitudes = np.abs(np.asarray(values, dtype=np.float64))
        counts, _ = np.histogram(magnitudes[magnitudes != 0], bins=BINS, range=(0.0, amax))
        self.hist[name] = self.hist.get(name, 0) + counts

    def ranges(self):
        """{name: (lo, hi)} with lo <= 0 <= hi."""
        out = {}
        for name in self.lo:
            lo, hi = min(self.lo[name], 0.0), max(self.hi[name], 0.0)
            if self.method != "minmax" and name in self.hist:
                amax = max(-lo, hi)
                threshold = (percentile_threshold(self.hist[name], amax, self.percentile)
                             if self.method == "percentile"
                             else entropy_threshold(self.hist[name], amax))
                lo, hi = max(lo, -threshold), min(hi, threshold)
            out[name] = (lo, hi)
        return out


def percentile_threshold(hist, amax, percentile):
    """The upper edge of the bin where the cumulative count reaches `percentile` %."""
    cumulative = np.cumsum(hist)
    total = cumulative[-1]
    if total == 0:
        return amax
    index = int(np.searchsorted(cumulative, total * percentile / 100.0))
    return amax * min(index + 1, len(hist)) / len(hist)


def entropy_threshold(hist, amax):
    """TensorRT's entropy calibration: the threshold (a bin edge from LEVELS to
    BINS bins) minimising KL(P || Q), where P is the histogram clipped at the
    threshold (outliers added to its last bin) and Q is P quantized to LEVELS
    levels and expanded back over P's non-empty bins."""
    hist = np.asarray(hist, dtype=np.float64)
    best, best_kl = len(hist), np.inf
    for edge in range(LEVELS, len(hist) + 1):
        reference = hist[:edge].copy()
        reference[-1] += hist[edge:].sum()
        if reference.sum() == 0:
            continue
        nonzero = (hist[:edge] != 0).astype(np.float64)
        # LEVELS groups of consecutive bins; each level's mass is spread
        # evenly over its group's non-empty bins.
        bounds = (np.arange(LEVELS + 1) * edge) // LEVELS
        mass = np.add.reduceat(hist[:edge], bounds[:-1])
        used = np.add.reduceat(nonzero, bounds[:-1])
        per_bin = np.divide(mass, used, out=np.zeros(LEVELS), where=used > 0)
        quantized = np.repeat(per_bin, np.diff(bounds)) * nonzero
        p = reference / reference.sum()
        q_total = quantized.sum()
        if q_total == 0:
            continue
        q = quantized / q_total
        mask = p > 0
        if np.any(q[mask] == 0):
            continue  # P has mass where Q has none: infinite divergence
        kl = float(np.sum(p[mask] * np.log(p[mask] / q[mask])))
        if kl < best_kl:
            best, best_kl = edge, kl
    return amax * best / len(hist)


def activation_params(lo, hi, signed):
    """(scale, zero point) of an 8-bit activation covering [lo, hi]: uint8
    asymmetric, or int8 symmetric (zero point 0). A range of zero width gets
    scale 1 (a zero scale is invalid)."""
    if signed:
        amax = max(-lo, hi)
        scale = amax / 127.0 if amax > 0 else 1.0
        return np.float32(scale), np.int8(0)
    scale = (hi - lo) / 255.0 if hi > lo else 1.0
    zero = int(np.clip(round(-lo / scale), 0, 255))
    return np.float32(scale), np.uint8(zero)


def weight_params(weight, axis):
    """Per-channel int8 symmetric quantization of `weight` along `axis`
    (None: per tensor): (int8 values, float32 scales, int8 zero points)."""
    weight = np.asarray(weight, dtype=np.float32)
    if axis is None:
        amax = np.array(np.abs(weight).max())
    else:
        others = tuple(d for d in range(weight.ndim) if d != axis)
        amax = np.abs(weight).max(axis=others)
    scale = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
    shape = [1] * weight.ndim
    if axis is not None:
        shape[axis] = -1
    q = np.clip(np.round(weight / scale.reshape(shape)), -127, 127).astype(np.int8)
    return q, scale, np.zeros(scale.shape, dtype=np.int8)
