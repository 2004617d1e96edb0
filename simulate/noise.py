"""Measuring noisy figures: the contract every stochastic oracle keeps (the command oracle first).

* **Warm-up**: the first ``warmup`` runs of every plan are made and discarded (caches, frequency
  scaling, the page cache); they count in no interval.
* **Interleaving**: when several plans are compared, their runs are made in rounds, every round
  measures every plan still short of its precision once, and the round's order is rotated so
  that a plan is never measured twice back to back (a slow drift of the host then falls on all
  plans alike).  One plan alone is necessarily measured back to back; the note says so.
* **Interval**: a plan's figure is the mean of its runs, with the Student-t 95% half-width
  ``t(n-1, 0.975) * s / sqrt(n)`` (`t_interval`).  One run has an unknown spread: its
  half-width is ``inf`` and the note says "spread unknown", never 0.
* **Adaptive repeats**: after the first ``repeats`` runs, a plan whose relative half-width is
  above ``precision`` gets another run (in the next round) until it is within it or it has
  had ``budget`` runs (``budget`` defaults to ``repeats``: no adaptive runs).
* **Noise floor** (`noise_floor`): the host's noise, the pooled coefficient of variation
  ``sqrt(mean_i CV_i^2)`` of the repeated runs of the plans measured (each plan's ``CV_i =
  s_i / mean_i``, plans with two runs or more); every output that compares plans shows it, and a
  difference between two plans of the order of the floor is noise unless their intervals say
  otherwise.

Reference: the t interval of a mean of iid normal observations (Law, *Simulation Modeling and
Analysis*, 5th ed., §4.5, Eq. 4.12); the interleaving is common random *conditions* in the sense
of Kim & Nelson (2001), §2 (what `solver.selection.racing` relies on too).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class RepeatPolicy:
    """How many runs each plan gets: ``warmup`` discarded, at least ``repeats`` kept, more until
    the relative 95% half-width is at most ``precision`` or the plan has had ``budget`` runs."""

    repeats: int = 3
    warmup: int = 0
    precision: float = 0.01
    budget: int | None = None

    @property
    def most(self) -> int:
        return max(self.repeats, self.budget or self.repeats)

    def wants_more(self, runs: Sequence[float]) -> bool:
        """Whether a plan with these kept `runs` gets another."""
        if len(runs) < self.repeats:
            return True
        if len(runs) >= self.most:
            return False
        mean, half = t_interval(runs)
        return not (math.isfinite(half) and mean != 0 and half / abs(mean) <= self.precision)


def t_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """The mean of `values` and the half-width of its Student-t interval (Law Eq. 4.12); the
    half-width is ``inf`` for a single value (its spread is unknown)."""
    if not values:
        return math.nan, math.inf
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, math.inf
    from tasksolve.simulate.output import t_quantile

    n = len(values)
    return mean, t_quantile(n - 1, 1 - (1 - level) / 2) * statistics.stdev(values) / math.sqrt(n)


def interleaved(count: int, run: Callable[[int], float], policy: RepeatPolicy) -> list[list[float]]:
    """The kept runs of `count` plans, ``run(i)`` measuring plan ``i`` once (module docstring):
    warm-up rounds first, then rounds over the plans that want more, never one plan back to back
    when there are two or more in the round."""
    kept: list[list[float]] = [[] for _ in range(count)]
    last: list[int | None] = [None]

    def one_round(plans: list[int], keep: bool) -> None:
        if len(plans) > 1 and plans[0] == last[0]:
            plans = plans[1:] + plans[:1]
        for i in plans:
            value = run(i)
            last[0] = i
            if keep:
                kept[i].append(value)

    for r in range(policy.warmup):
        one_round(_rotated(list(range(count)), r), keep=False)
    r = 0
    while True:
        wanting = [i for i in range(count) if policy.wants_more(kept[i])]
        if not wanting:
            return kept
        one_round(_rotated(wanting, r), keep=True)
        r += 1


def _rotated(plans: list[int], by: int) -> list[int]:
    """`plans` rotated left by `by` (round ``r`` starts with another plan than round ``r - 1``)."""
    if not plans:
        return plans
    k = by % len(plans)
    return plans[k:] + plans[:k]


def coefficient_of_variation(values: Sequence[float]) -> float | None:
    """``s / |mean|`` of two values or more, else None."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    return statistics.stdev(values) / abs(mean) if mean else None


def noise_floor(runs: Sequence[Sequence[float]]) -> float | None:
    """The pooled CV ``sqrt(mean_i CV_i^2)`` of the plans with two runs or more; None without any."""
    cvs = [cv for cv in (coefficient_of_variation(r) for r in runs) if cv is not None]
    if not cvs:
        return None
    return math.sqrt(statistics.fmean(cv * cv for cv in cvs))


def describe(runs: Sequence[float], policy: RepeatPolicy, interleaved_with: int) -> str:
    """The note a measurement carries about its runs."""
    mean, half = t_interval(runs)
    shown = ", ".join(f"{x:.6g}" for x in runs[:20]) + (", ..." if len(runs) > 20 else "")
    spread = (
        "one run: spread unknown (half-width inf)"
        if len(runs) < 2
        else f"95% Student-t half-width {half:.4g} ({half / abs(mean):.2%} of the mean)"
        if mean
        else f"95% Student-t half-width {half:.4g}"
    )
    where = (
        f"interleaved with {interleaved_with} other plan(s)" if interleaved_with else "back to back (one plan measured)"
    )
    warm = f"{policy.warmup} warm-up run(s) discarded; " if policy.warmup else ""
    return f"mean of {len(runs)} run(s) of the command ({shown}), {where}; {warm}{spread}"
