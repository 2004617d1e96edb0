"""Racing finalists: Kim & Nelson's fully sequential indifference-zone procedure (KN, 2001).

Kim, S.-H. and Nelson, B. L., "A fully sequential procedure for indifference-zone selection in
simulation", ACM TOMACS 11(3), 2001, §3.  With `k` plans, confidence ``1 - alpha``, an
indifference zone ``delta`` and a first stage of ``n0`` measurements of every plan:

* ``eta = ((2 alpha / (k - 1)) ** (-2 / (n0 - 1)) - 1) / 2`` and ``h2 = 2 eta (n0 - 1)`` (KN's
  Eq. for ``h^2`` with ``c = 1``);
* ``S2[i, l]``: the sample variance of the first-stage differences ``X[i, j] - X[l, j]``;
* after ``r`` rounds, plan ``i`` is eliminated when, for some surviving ``l``,
  ``mean_i(r) < mean_l(r) - W[i, l](r)`` with ``W = max(0, delta / (2 r) * (h2 S2 / delta**2 - r))``
  (KN's screening step; the larger mean is better here);
* the survivors get one more measurement each, and so on, until one is left.

If the best plan is at least ``delta`` better than every other, KN picks it with probability at
least ``1 - alpha`` (normal observations); plans within ``delta`` of it are interchangeable.

KN alone races plans *within* the zone of each other until ``r = h2 S2 / delta**2`` rounds (its
``W`` reaches 0): hundreds of rounds at a 5% noise and a 2% zone.  So after every screening the
race also stops when the leader is within ``delta`` of every survivor with confidence (Hsu's
multiple comparisons with the best, 1984: one-sided paired t intervals, Bonferroni over the
``k - 1`` comparisons); the survivors are then ties.  The error is split: ``alpha / 2`` to KN's
screening, ``alpha / 2`` to this stop.

Departures, each for measuring real programs: the zone is relative (``delta = zone * mean``
of the best first-stage plan: "within 2%"); the first ``warmup`` rounds are measured and
discarded (caches, frequency, page cache); every round measures every surviving plan once, in
a fresh random order whose first plan is never the last one measured (interleaved, never back to
back, so that a slow drift of the host falls on all plans alike and on the pairwise differences
KN works with); a ``budget`` of measurements may stop the race early, checked after the first stage (which
always completes: ``(warmup + n0) * k`` measurements); the survivors are then reported as ties,
with ``stopped`` saying so; and the winner is re-measured ``confirm`` times,
interleaved with its closest rival, so that its reported interval is free of the winner's curse
(the race's own mean of the winner is biased upward by its selection).
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

LOOKS = 8  # Hsu's stop is tested after n0, 2 n0, 4 n0, ... rounds: Bonferroni over these 8 looks


@dataclass
class PlanStats:
    """One plan's measurements in the race (warm-up excluded): mean, 95% half-width, count."""

    plan: Hashable
    values: list[float] = field(default_factory=list)
    eliminated_at: int | None = None

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values)

    def half_width(self, level: float = 0.95) -> float:
        return t_half_width(self.values, level)


@dataclass
class RaceResult:
    """The winner with its interval, the plans tied with it, and what the race spent."""

    best: Hashable
    mean: float
    half_width: float
    confirmed: bool
    ties: list[Hashable]
    stats: list[PlanStats]
    measurements: int
    rounds: int
    delta: float
    stopped: str

    def to_dict(self) -> dict:
        return {
            "best": self.best,
            "mean": self.mean,
            "half_width": self.half_width,
            "confirmed": self.confirmed,
            "ties": self.ties,
            "measurements": self.measurements,
            "rounds": self.rounds,
            "delta": self.delta,
            "stopped": self.stopped,
            "plans": [
                {
                    "plan": s.plan,
                    "mean": s.mean,
                    "half_width": s.half_width(),
                    "n": s.n,
                    "eliminated_at": s.eliminated_at,
                }
                for s in self.stats
            ],
        }


def t_half_width(values: Sequence[float], level: float = 0.95) -> float:
    """Half-width of the Student-t interval of the mean of `values` (inf for fewer than two)."""
    if len(values) < 2:
        return math.inf
    from tasksolve.simulate.output import t_quantile

    return t_quantile(len(values) - 1, 1 - (1 - level) / 2) * statistics.stdev(values) / math.sqrt(len(values))


def kn_h2(k: int, alpha: float, n0: int) -> float:
    """KN's ``h^2 = 2 eta (n0 - 1)``, ``eta = ((2 alpha / (k-1))^(-2/(n0-1)) - 1) / 2``."""
    eta = ((2 * alpha / (k - 1)) ** (-2 / (n0 - 1)) - 1) / 2
    return 2 * eta * (n0 - 1)


def _order(plans: list[int], last: int | None, rng: random.Random) -> list[int]:
    """A fresh random order of `plans` whose first is not `last` (never back to back)."""
    order = plans[:]
    rng.shuffle(order)
    if len(order) > 1 and order[0] == last:
        order[0], order[-1] = order[-1], order[0]
    return order


def race(
    plans: Sequence[Hashable],
    measure: Callable[[Hashable, int], float],
    *,
    zone: float = 0.02,
    alpha: float = 0.05,
    n0: int = 20,
    warmup: int = 1,
    confirm: int = 5,
    budget: int | None = None,
    seed: int = 0,
) -> RaceResult:
    """Race `plans` (larger is better) with `measure(plan, repeat_index)` (module docstring)."""
    if len(plans) < 1:
        raise ValueError("racing needs at least one plan")
    if n0 < 2 or not 0 < alpha < 1 - 1 / max(len(plans), 2) or zone <= 0:
        raise ValueError("racing needs n0 >= 2, 0 < alpha < 1 - 1/k and a positive zone")
    rng = random.Random(seed)
    stats = [PlanStats(p) for p in plans]
    counts = [0] * len(plans)
    last: list[int | None] = [None]

    def one_round(alive: list[int], keep: bool) -> None:
        for i in _order(alive, last[0], rng):
            value = float(measure(plans[i], counts[i]))
            counts[i] += 1
            last[0] = i
            if keep:
                stats[i].values.append(value)

    alive = list(range(len(plans)))
    for _ in range(warmup if len(plans) > 1 else 0):
        one_round(alive, keep=False)
    rounds, stopped = 0, "one plan left"
    if len(plans) > 1:
        for _ in range(n0):
            one_round(alive, keep=True)
        rounds = n0
        alive, stopped, rounds = _screen(stats, alive, one_round, rounds, zone, alpha, n0, budget, counts)
    best = max(alive, key=lambda i: stats[i].mean if stats[i].values else -math.inf)
    delta = zone * abs(stats[best].mean) if stats[best].values else 0.0
    confirmed, mean, half = False, math.nan, math.inf
    if stats[best].values:
        mean, half = stats[best].mean, stats[best].half_width()
    if confirm >= 2 and (budget is None or sum(counts) + 2 * confirm <= budget or len(plans) == 1):
        mean, half = _confirm(plans, stats, best, measure, counts, confirm, last, rng)
        confirmed = True
        delta = zone * abs(mean)
    ties = [
        plans[i]
        for i in range(len(plans))
        if i != best and (i in alive or (stats[i].values and stats[best].mean - stats[i].mean < delta))
    ]
    return RaceResult(plans[best], mean, half, confirmed, ties, stats, sum(counts), rounds, delta, stopped)


def _screen(stats, alive, one_round, rounds, zone, alpha, n0, budget, counts):
    """KN's screening loop from the first stage on; returns survivors, why it stopped, rounds."""
    k = len(alive)
    h2 = kn_h2(k, alpha / 2, n0)
    first = {i: stats[i].values[:n0] for i in alive}
    s2 = {}
    for i in alive:
        for j in alive:
            if i != j:
                diffs = [a - b for a, b in zip(first[i], first[j])]
                s2[i, j] = statistics.variance(diffs)
    lead = max(alive, key=lambda i: statistics.fmean(first[i]))
    delta = zone * max(abs(statistics.fmean(first[lead])) - t_half_width(first[lead]), 0.0)
    if delta <= 0:
        delta = zone * abs(statistics.fmean(first[lead]))
    looks = {n0 * 2**m for m in range(LOOKS)}
    while True:
        means = {i: statistics.fmean(stats[i].values[:rounds]) for i in alive}
        survivors = []
        for i in alive:
            w = {j: max(0.0, delta / (2 * rounds) * (h2 * s2[i, j] / delta**2 - rounds)) for j in alive if j != i}
            if all(means[i] >= means[j] - w[j] for j in w):
                survivors.append(i)
            else:
                stats[i].eliminated_at = rounds
        alive = survivors or [max(alive, key=means.get)]
        if len(alive) == 1:
            return alive, "one plan left", rounds
        if rounds in looks and _within_zone(stats, alive, rounds, delta, alpha / LOOKS, k):
            return alive, "the rest within the zone", rounds
        if budget is not None and sum(counts) + len(alive) > budget:
            return alive, "budget spent", rounds
        one_round(alive, keep=True)
        rounds += 1


def _within_zone(stats, alive, rounds, delta, alpha, k) -> bool:
    """Hsu's multiple comparisons with the best: the leader is within `delta` of every other
    survivor when each one-sided paired interval ``mean(X_lead - X_j) - t * s / sqrt(r) > -delta``
    (level ``1 - alpha / (2 (k - 1))``, Bonferroni over the comparisons)."""
    from tasksolve.simulate.output import t_quantile

    lead = max(alive, key=lambda i: statistics.fmean(stats[i].values[:rounds]))
    t = t_quantile(rounds - 1, 1 - alpha / (2 * (k - 1)))
    for j in alive:
        if j == lead:
            continue
        diffs = [a - b for a, b in zip(stats[lead].values[:rounds], stats[j].values[:rounds])]
        if statistics.fmean(diffs) - t * statistics.stdev(diffs) / math.sqrt(rounds) <= -delta:
            return False
    return True


def _confirm(plans, stats, best, measure, counts, confirm, last, rng):
    """`confirm` fresh measurements of the winner, interleaved with its closest rival; the
    winner's mean and half-width from those alone."""
    others = [i for i in range(len(plans)) if i != best and stats[i].values]
    rival = max(others, key=lambda i: stats[i].mean) if others else None
    fresh = []
    for _ in range(confirm):
        for i in _order([best] + ([rival] if rival is not None else []), last[0], rng):
            value = float(measure(plans[i], counts[i]))
            counts[i] += 1
            last[0] = i
            if i == best:
                fresh.append(value)
            else:
                stats[i].values.append(value)
    return statistics.fmean(fresh), t_half_width(fresh)
