"""Validation of a sample of numbers before any analysis (one clear `EVTError` per problem)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tasksolve.evt.errors import EVTError

#: Fewest observations `analyze` accepts: below this no tail can be separated from the body.
MIN_SAMPLE = 20


def as_sample(values: Any, *, min_n: int = MIN_SAMPLE, name: str = "sample") -> np.ndarray:
    """Return `values` as a 1-D float array, or raise `EVTError` saying what is wrong.

    Rejects: non-numeric content, more than one dimension, NaN or infinite values, fewer than
    `min_n` values, and constant samples (no spread: no tail to model).
    """
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise EVTError(f"{name} must contain only numbers ({exc})") from None
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise EVTError(f"{name} must be one-dimensional (got shape {arr.shape})")
    if arr.size == 0:
        raise EVTError(f"{name} is empty")
    bad = ~np.isfinite(arr)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        kind = "NaN" if np.isnan(arr[first]) else "infinite"
        raise EVTError(
            f"{name} contains {int(bad.sum())} non-finite value(s); the first, at position {first + 1}, is {kind}"
        )
    if arr.size < min_n:
        raise EVTError(f"{name} has {arr.size} value(s); at least {min_n} are needed")
    if np.ptp(arr) == 0.0:
        raise EVTError(f"{name} is constant (every value is {arr[0]:g}): there is no tail to model")
    return arr
