"""Classes of measured figures: sorted values cut wherever one is at least `gap` times the one
below (the probe's latency classes, `simulate.probe.analysis`; its kinds of core by the compute
loop's rate, `simulate.probe.kinds`)."""

from __future__ import annotations

import math

GAP = 1.3


def class_boundaries(values: list[float], gap: float = GAP) -> list[float]:
    """Thresholds between classes: the geometric mean of the two values on either side of every
    gap of at least `gap` times in the sorted values."""
    ordered = sorted(v for v in values if v > 0 and math.isfinite(v))
    return [math.sqrt(a * b) for a, b in zip(ordered, ordered[1:]) if b >= gap * a]


def class_of(value: float, boundaries: list[float]) -> int:
    """The class of `value`: how many boundaries it is above."""
    return sum(1 for b in boundaries if value > b)
