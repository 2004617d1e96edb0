"""Sample-size formulas of random sampling (ASPLOS'12, Radojkovic et al., section 3.1).

If a fraction `p` of all plans are "among the best p", a sample of `n` independent uniform
draws contains at least one of them with probability ``P = 1 - (1 - p)^n``; conversely
``n = ceil(log(1 - P) / log(1 - p))`` draws are needed for probability `P`.
"""

from __future__ import annotations

import math

import numpy as np

from tasksolve.evt.errors import EVTError


def _check_p(p: float, name: str = "p") -> float:
    try:
        p = float(p)
    except (TypeError, ValueError):
        raise EVTError(f"{name} must be a number") from None
    if not 0.0 < p < 1.0:
        raise EVTError(f"{name} must be strictly between 0 and 1 (got {p:g})")
    return p


def capture_probability(p: float, n: int | np.ndarray) -> float | np.ndarray:
    """Probability that `n` uniform draws include one of the best fraction `p`: 1 - (1 - p)^n.

    `n` may be an array (vectorised). Computed as ``-expm1(n * log1p(-p))`` so that tiny `p`
    keep full precision.
    """
    p = _check_p(p)
    n_arr = np.asarray(n, dtype=float)
    if np.any(n_arr < 0) or not np.all(np.isfinite(n_arr)):
        raise EVTError("n must be a finite, non-negative number of draws")
    out = -np.expm1(n_arr * math.log1p(-p))
    return float(out) if out.ndim == 0 else out


def samples_needed(p: float, prob: float) -> int:
    """Smallest n with ``capture_probability(p, n) >= prob``: ceil(log(1 - prob) / log(1 - p))."""
    p = _check_p(p)
    prob = _check_p(prob, "prob")
    n = max(1, int(math.ceil(math.log1p(-prob) / math.log1p(-p))))
    # guard the ceiling against rounding in the logarithms
    while n > 1 and capture_probability(p, n - 1) >= prob:
        n -= 1
    while capture_probability(p, n) < prob:
        n += 1
    return n
