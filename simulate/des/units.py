"""How the simulation (`simulate.des`) holds a resource's capacity and demands, and the same
values as the fluid bounds read them (`solver.certify.fluid_bound`), so that the bounds bound the
run the simulation makes.

A slot's load is a sum of demands and a thread's rate ``capacity / load`` (docs/design.md,
"Semantics every oracle shares"), so the values are held as integers of one unit per resource:
loads add and subtract exactly, and co-located threads get their rates from who is there, never
from the order of the additions.  The unit is ``1 / SCALE`` of 1.0 where every nonzero finite
value of the resource is at least `MIN_UNITS` of them (values rounded to 1e-9 of 1.0: a
relative rounding of at most 5e-4, far less at the capacities and demands people write); else
(a capacity of 1e-12 beside demands near 1: the capacity would round to no unit, a rate of 0)
the values are held exactly, in the largest power of two dividing every one of them: a float is
an integer times a power of two, and Python's integers hold the quotients however far apart
the values lie (1e-300 beside 1.0: integers of about 1,050 bits, for such a resource only).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np

from tasksolve.simulate.des.ports import SCALE

#: the fewest `SCALE` units a nonzero capacity or demand may round to before its resource's
#: values are held exactly instead
MIN_UNITS = 1000


def _nano(value: float) -> int:
    """`value` in `SCALE` units per 1.0, rounded."""
    return int(round(value * SCALE))


def _exact(values: Iterable[float]) -> bool:
    return any(0 < v < math.inf and v * SCALE < MIN_UNITS for v in values)


def resource_units(values: Iterable[float]) -> Callable[[float], int]:
    """One resource's capacity and demands (`values`, every one the function will be given) ->
    the function giving each as an integer of the resource's unit."""
    values = [float(v) for v in values]
    if not _exact(values):
        return _nano
    shift = max(v.as_integer_ratio()[1] for v in values if 0 < v < math.inf).bit_length() - 1

    def exact(v: float) -> int:
        numerator, denominator = float(v).as_integer_ratio()
        return numerator << (shift - denominator.bit_length() + 1)

    return exact


def held(capacity: np.ndarray, demand: np.ndarray, idle: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Capacities (per resource), demands and idle demands (threads x resources) as the
    simulation holds them, in the spec's unit: rounded to ``1 / SCALE``, or exact (the module
    docstring); an infinite capacity (contention off) stays infinite."""
    capacity = np.array(capacity, dtype=float)
    demand, idle = np.array(demand, dtype=float), np.array(idle, dtype=float)
    for r in range(len(capacity)):
        if _exact([capacity[r], *demand[:, r], *idle[:, r]]):
            continue
        if math.isfinite(capacity[r]):
            capacity[r] = _nano(capacity[r]) / SCALE
        for table in (demand, idle):
            table[:, r] = [_nano(v) / SCALE for v in table[:, r]]
    return capacity, demand, idle
