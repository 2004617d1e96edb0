"""The spec's objective as one object: its name, direction, unit and the one way to print it.

A spec names one of `OBJECTIVES` (``objective:``, docs/design.md, "Vocabulary"). Every figure the
project records -- a measured throughput, a latency, a bound, an estimated optimum -- is kept in
its **natural orientation**: packets per second for the throughput objectives, seconds for
``latency``. Where an algorithm needs one direction (CP-SAT maximises, the EVT module estimates
an upper endpoint, a comparison keeps the best), it works on the **score**, the number to
maximise: the value itself for a maximised objective, minus the value for a minimised one
(`Objective.score`, its own inverse). No other module decides a direction or a unit by comparing
the objective's name.

`specs` vocabulary: every package may import it; it imports nothing but `specs.display`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from tasksolve.specs import display

OBJECTIVES = ("total_throughput", "min_throughput", "latency")


@dataclass(frozen=True)
class Objective:
    """One objective: ``name`` (a spec's ``objective``), ``sense`` (``max`` or ``min``),
    ``unit`` (SI: ``packets/s`` or ``s``) and ``quantity`` (``throughput`` or ``latency``)."""

    name: str
    sense: Literal["max", "min"]
    unit: str
    quantity: str

    @classmethod
    def of(cls, objective: str | Objective) -> Objective:
        """The objective named `objective` (an `Objective` is returned as it is)."""
        if isinstance(objective, Objective):
            return objective
        if objective not in OBJECTIVES:
            raise ValueError(f"unknown objective `{objective}` (one of {', '.join(OBJECTIVES)})")
        if objective == "latency":
            return cls("latency", "min", "s", "latency")
        return cls(objective, "max", "packets/s", "throughput")

    @property
    def minimize(self) -> bool:
        return self.sense == "min"

    def score(self, value):
        """The number to maximise for a natural `value` (a float or a NumPy array): `value`, or
        ``-value`` for a minimised objective. Its own inverse: ``score(score(v)) == v``, so it
        also turns a score back into the natural value."""
        return -value if self.minimize else value

    def better(self, a: float, b: float) -> bool:
        """Whether natural value `a` is strictly better than `b`."""
        return a < b if self.minimize else a > b

    def best(self, values):
        """The best of natural `values` (an iterable or a NumPy array)."""
        return min(values) if self.minimize else max(values)

    def worst(self, values):
        """The worst of natural `values` (an iterable or a NumPy array)."""
        return max(values) if self.minimize else min(values)

    def loss(self, value: float | None, best: float | None) -> float | None:
        """How much worse `value` is than `best`, as a share of `best` (0 for the best, positive
        otherwise): ``1 - value/best`` for a maximised objective, ``value/best - 1`` for a
        minimised one; None when either is missing or `best` is not a positive number."""
        if value is None or best is None or not best > 0 or not math.isfinite(best):
            return None
        return value / best - 1.0 if self.minimize else 1.0 - value / best

    def format(self, value: float | None, half_width: float | None = None, digits: int = 4) -> str:
        """The one formatter of an objective's value: ``10.94 Mpps``, ``2.130 us``, ``-`` for None,
        ``10.94 Mpps ± 31 kpps`` with a half-width (`specs.display.quantity` does the scaling)."""
        return display.quantity(value, self.unit, half_width, digits)

    def axis(self) -> tuple[float, str]:
        """A plot axis: the factor from the unit to the shown one, and the axis title."""
        return (1e6, "latency (us)") if self.minimize else (1e-6, "throughput (Mpps)")

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "sense": self.sense, "unit": self.unit}
