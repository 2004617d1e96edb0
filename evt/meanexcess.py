"""Mean residual life (mean excess) function and its linearity above a threshold.

Coles 2001, section 4.3.1: if excesses of ``u0`` are GPD(xi, sigma_u0), then for every
``v > u0`` the mean excess is linear in v (eq. 4.9)::

    e(v) = E[X - v | X > v] = (sigma_u0 + xi (v - u0)) / (1 - xi)        (xi < 1)

so a threshold is acceptable where the empirical mean excess is linear above it. The
empirical version at level v is the mean of ``x - v`` over the ``m(v)`` observations strictly
above v; its standard error under the GPD is ``e(v) / sqrt((1 - 2 xi) m(v))`` (xi < 1/2), which
gives the confidence band of the plot and the standardised deviations used by
`evt.threshold` to measure linearity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: fewest observations above a level for its mean excess to be shown or used
MIN_COUNT = 10


@dataclass(frozen=True)
class MeanExcess:
    """Empirical mean excess ``e(v)`` at `levels`, with the counts above each level and the
    half-width of an approximate 95% band (normal approximation, ``1.96 * sd / sqrt(m)``)."""

    levels: np.ndarray
    values: np.ndarray
    counts: np.ndarray
    half_width: np.ndarray

    def to_dict(self) -> dict:
        return {
            "levels": self.levels.tolist(),
            "values": self.values.tolist(),
            "counts": self.counts.tolist(),
            "half_width": self.half_width.tolist(),
        }


def mean_excess(sample: np.ndarray, levels: np.ndarray | None = None, *, min_count: int = MIN_COUNT) -> MeanExcess:
    """Empirical mean excess of `sample` at `levels` (default: every distinct value that has
    at least `min_count` observations strictly above it). Ties are handled exactly."""
    xs = np.sort(np.asarray(sample, dtype=float))
    n = xs.size
    suffix = np.concatenate([np.cumsum(xs[::-1])[::-1], [0.0]])  # suffix[i] = sum xs[i:]
    if levels is None:
        levels = np.unique(xs)
    levels = np.asarray(levels, dtype=float)
    idx = np.searchsorted(xs, levels, side="right")
    counts = n - idx
    keep = counts >= max(min_count, 1)
    levels, idx, counts = levels[keep], idx[keep], counts[keep]
    values = suffix[idx] / counts - levels
    # sample standard deviation of the excesses above each level, from suffix sums of squares
    sq = np.concatenate([np.cumsum((xs**2)[::-1])[::-1], [0.0]])
    mean_x = suffix[idx] / counts
    var = np.maximum(sq[idx] / counts - mean_x**2, 0.0) * counts / np.maximum(counts - 1, 1)
    half = 1.96 * np.sqrt(var / counts)
    return MeanExcess(levels, values, counts, half)


def linearity_deviation(y: np.ndarray, xi: float, sigma: float, *, min_count: int = MIN_COUNT) -> float:
    """Root-mean-square standardised deviation of the empirical mean excess of the excesses
    `y` from the line implied by the fitted GPD(xi, sigma) (eq. 4.9 above), over the levels
    ``v = y_(j)`` with at least `min_count` excesses above them.

    ``z(v) = (e_hat(v) - e(v)) / (e(v) / sqrt((1 - 2 xi) m(v)))``; about 0.5-0.9 at the 90% point
    when the GPD holds (see `evt.threshold`). NaN when xi >= 1/2 (infinite variance) or when
    fewer than two levels qualify.
    """
    if not xi < 0.5:
        return math.nan
    me = mean_excess(y, np.asarray(y, dtype=float), min_count=min_count)
    if me.levels.size < 2:
        return math.nan
    fitted = (sigma + xi * me.levels) / (1.0 - xi)
    ok = fitted > 0
    if ok.sum() < 2:
        return math.nan
    sd = fitted[ok] / np.sqrt((1.0 - 2.0 * xi) * me.counts[ok])
    z = (me.values[ok] - fitted[ok]) / sd
    return float(np.sqrt(np.mean(z**2)))
