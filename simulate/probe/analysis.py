"""What a probe's matrices say about the host: latency classes, hidden sharing, unstable pairs,
and the communication cost of each level of the topology (a pure function of the matrices).

Input: one or more *repetitions*, each mapping a pair of OS CPUs ``(i, j)`` (``i < j``) to a
`PairSample` -- the one-way latency of a cache line bounced between them (ns) and the rate of a
compute loop on each while the other runs it too, over its rate alone.

* **Latency classes.**  Cache hierarchies are steps, not a continuum: SMT siblings exchange a line
  in ~10-25 ns, cores sharing an L2 in ~30-50, an L3 in ~60-120, sockets in ~150-300.  All samples
  of all repetitions are sorted and cut wherever one value is at least ``GAP`` (1.5) times the
  previous one (a gap the batch-median noise of a single pair, ~10-20%, does not produce);
  classes are numbered from the fastest (0).  Each repetition's pair gets the class of its sample.
* **Interference.**  A pair *interferes* in a repetition when the slower of its two loops runs at
  ``SMT_RATIO`` (0.75) of its rate alone or less: SMT siblings share execution units and lose
  30-50%; separate cores lose a few percent (frequency, shared cache).
* **Expected behaviour of a level.**  Every pair shares one level of the topology (its innermost
  common domain; ``machine`` at the top).  A level's class is the median class of its pairs, its
  interference the majority; the tree says every pair of a level behaves alike.
* **Hidden sharing**: a pair that, in every repetition, is faster than its level's class, or
  whose median ratio interferes where its level's pairs do not -- sharing that the topology (sysfs) does not show.
* **Unstable placement**: a pair whose latency class changes between repetitions -- on a guest,
  vCPUs that the hypervisor moved between host cores while the probe ran.  One repetition cannot
  show it (the analysis says so).  Interference is judged on the median over repetitions only: a
  busy neighbour process on a shared host flips a single repetition's ratio, never the latency
  class of a batch median.
* **Costs per level**: the median over the level's regular pairs (neither hidden nor unstable) of
  each pair's median latency, with the range over those pairs; in cycles at the topology's clock.
  The tree stays uniform: pairs it cannot express are reported, not averaged in.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

MACHINE = "machine"
GAP = 1.5
SMT_RATIO = 0.75

Pair = tuple[int, int]


@dataclass(frozen=True)
class PairSample:
    """One measurement of one pair: latency (ns, one way) and each CPU's loop rate ratio."""

    latency_ns: float
    ratio_i: float = 1.0
    ratio_j: float = 1.0

    @property
    def ratio(self) -> float:
        return min(self.ratio_i, self.ratio_j)


Repetition = dict[Pair, PairSample]


@dataclass
class LevelCost:
    """The measured cost of a message between two CPUs whose innermost shared level is `level`."""

    level: str
    pairs: int
    latency_ns: float
    low_ns: float
    high_ns: float
    cycles: float | None
    left_out: int = 0

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class PairReport:
    """A pair the tree cannot express: its level, per-repetition latencies, classes, ratios."""

    pair: Pair
    level: str
    latencies: list[float]
    classes: list[int]
    ratios: list[float]
    smt_like: bool

    def to_dict(self) -> dict:
        return {**self.__dict__, "pair": list(self.pair)}


@dataclass
class Analysis:
    cpus: list[int]
    repetitions: int
    boundaries: list[float]
    level_of: dict[Pair, str]
    level_class: dict[str, int]
    costs: list[LevelCost]
    hidden: list[PairReport]
    unstable: list[PairReport]
    stable_share: float | None
    latency_spread: float | None
    worst_ratio: float
    findings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "cpus": self.cpus,
            "repetitions": self.repetitions,
            "class_boundaries_ns": self.boundaries,
            "level_class": self.level_class,
            "costs": [c.to_dict() for c in self.costs],
            "hidden_sharing": [p.to_dict() for p in self.hidden],
            "unstable": [p.to_dict() for p in self.unstable],
            "stable_share": self.stable_share,
            "latency_spread": self.latency_spread,
            "worst_ratio": self.worst_ratio,
            "findings": self.findings,
        }


def class_boundaries(values: list[float], gap: float = GAP) -> list[float]:
    """Thresholds between latency classes: the geometric mean of the two values on either side of
    every gap of at least `gap` times in the sorted values (module docstring)."""
    ordered = sorted(v for v in values if v > 0 and math.isfinite(v))
    return [math.sqrt(a * b) for a, b in zip(ordered, ordered[1:]) if b >= gap * a]


def class_of(value: float, boundaries: list[float]) -> int:
    return sum(1 for b in boundaries if value > b)


def pair_levels(cpus: list[int], topology=None) -> dict[Pair, str]:
    """The innermost level each pair of OS CPUs shares in `topology` (``machine`` without one)."""
    pairs = [(a, b) for i, a in enumerate(cpus) for b in cpus[i + 1 :]]
    if topology is None:
        return dict.fromkeys(pairs, MACHINE)
    context = {cpu: c for c, cpu in enumerate(topology.os_cpu_list)}
    missing = [cpu for cpu in cpus if cpu not in context]
    if missing:
        raise ValueError(f"CPU(s) {', '.join(map(str, missing))} are not in the topology `{topology.name}`")
    found = {}
    for a, b in pairs:
        k = topology.shared_level(context[a], context[b])
        found[(a, b)] = MACHINE if k < 0 else topology.level_names[k]
    return found


def analyse(repetitions: list[Repetition], topology=None, clock_hz: float | None = None) -> Analysis:
    """Classes, hidden sharing, unstable pairs and per-level costs (module docstring)."""
    if not repetitions or not repetitions[0]:
        raise ValueError("no measurement to analyse")
    pairs = sorted(repetitions[0])
    for r, rep in enumerate(repetitions[1:], start=2):
        if sorted(rep) != pairs:
            raise ValueError(f"repetition {r} measured other pairs than repetition 1")
    cpus = sorted({c for p in pairs for c in p})
    level_of = pair_levels(cpus, topology)
    if clock_hz is None and topology is not None:
        clock_hz = float(topology.clock)
    boundaries = class_boundaries([rep[p].latency_ns for rep in repetitions for p in pairs])
    classes = {p: [class_of(rep[p].latency_ns, boundaries) for rep in repetitions] for p in pairs}
    bursts = {p: statistics.median(rep[p].ratio for rep in repetitions) <= SMT_RATIO for p in pairs}
    levels = sorted(set(level_of.values()), key=lambda n: _level_rank(n, topology))
    level_class, level_burst = {}, {}
    for name in levels:
        members = [p for p in pairs if level_of[p] == name]
        level_class[name] = int(statistics.median_low([c for p in members for c in classes[p]]))
        level_burst[name] = sum(bursts[p] for p in members) * 2 > len(members)
    hidden, unstable = [], []
    for p in pairs:
        name = level_of[p]
        smt_like = bursts[p] and not level_burst[name]
        changed = len(set(classes[p])) > 1
        if not changed and not smt_like and min(classes[p]) >= level_class[name]:
            continue
        report = PairReport(
            p,
            name,
            [rep[p].latency_ns for rep in repetitions],
            classes[p],
            [round(rep[p].ratio, 4) for rep in repetitions],
            smt_like,
        )
        (unstable if changed else hidden).append(report)
    odd_pairs = {r.pair for r in hidden + unstable}
    costs = [_level_cost(name, pairs, level_of, repetitions, odd_pairs, clock_hz) for name in levels]
    medians = {p: statistics.median(rep[p].latency_ns for rep in repetitions) for p in pairs}
    spread = None
    if len(repetitions) > 1:
        spread = (
            statistics.median(
                (max(rep[p].latency_ns for rep in repetitions) - min(rep[p].latency_ns for rep in repetitions))
                / medians[p]
                for p in pairs
                if p not in odd_pairs
            )
            if len(odd_pairs) < len(pairs)
            else None
        )
    analysis = Analysis(
        cpus=cpus,
        repetitions=len(repetitions),
        boundaries=[round(b, 2) for b in boundaries],
        level_of=level_of,
        level_class=level_class,
        costs=costs,
        hidden=hidden,
        unstable=unstable,
        stable_share=None if len(repetitions) < 2 else 1 - len(unstable) / len(pairs),
        latency_spread=spread,
        worst_ratio=min(rep[p].ratio for rep in repetitions for p in pairs),
    )
    analysis.findings = findings(analysis, topology)
    return analysis


def _level_rank(name: str, topology) -> int:
    """Innermost shared level first, ``machine`` last."""
    if topology is None or name == MACHINE:
        return 1_000
    return -topology.level_names.index(name)


def _level_cost(name, pairs, level_of, repetitions, odd_pairs, clock_hz) -> LevelCost:
    members = [p for p in pairs if level_of[p] == name]
    regular = [p for p in members if p not in odd_pairs] or members
    per_pair = [statistics.median(rep[p].latency_ns for rep in repetitions) for p in regular]
    median = statistics.median(per_pair)
    return LevelCost(
        level=name,
        pairs=len(regular),
        latency_ns=round(median, 2),
        low_ns=round(min(per_pair), 2),
        high_ns=round(max(per_pair), 2),
        cycles=None if not clock_hz else round(median * clock_hz / 1e9, 1),
        left_out=len(members) - len(regular),
    )


def findings(analysis: Analysis, topology=None) -> list[str]:
    """One sentence per thing a user should know (hidden sharing, instability, costs' order)."""
    said = []
    by_level = {c.level: c for c in analysis.costs}
    for report in analysis.hidden:
        typical = by_level[report.level].latency_ns
        what = (
            "behave as SMT siblings (the compute loop loses >= 25%), unlike what"
            if report.smt_like
            else "share more than"
        )
        said.append(
            f"hidden sharing: CPUs {report.pair[0]} and {report.pair[1]} {what} the topology says "
            f"({report.level}): {_ns(report.latencies)} ns against {typical:g} ns for their level"
        )
    if analysis.unstable:
        moved = ", ".join(f"{a}-{b} ({_ns(r.latencies)} ns)" for r in analysis.unstable for a, b in [r.pair])
        said.append(
            f"unstable placement: {len(analysis.unstable)} pair(s) changed class between repetitions "
            f"({moved}): on a virtual machine the vCPUs move between host cores; a plan tuned to "
            "one moment may not hold at the next"
        )
    if analysis.repetitions < 2:
        said.append("one repetition: stability not tested (use --repeats 2 or more)")
    left = [c for c in analysis.costs if c.left_out]
    for cost in left:
        said.append(
            f"{cost.left_out} pair(s) of level {cost.level} left out of its cost: the uniform tree cannot express them"
        )
    for inner, outer in zip(analysis.costs, analysis.costs[1:]):
        if outer.low_ns <= inner.latency_ns <= outer.high_ns and inner.low_ns <= outer.latency_ns <= inner.high_ns:
            said.append(
                f"levels {inner.level} and {outer.level} cost the same within their ranges "
                f"({inner.latency_ns:g} and {outer.latency_ns:g} ns): the tree distinguishes what this host does not"
            )
        if inner.low_ns > outer.high_ns:
            said.append(
                f"level {inner.level} costs more than the level {outer.level} around it "
                f"({inner.latency_ns:g} ns against {outer.latency_ns:g} ns): the topology may be wrong"
            )
    said.append(
        f"interference: the worst pair ran the compute loop at {analysis.worst_ratio:.2f} of its rate alone"
        + ("" if analysis.worst_ratio > SMT_RATIO else " (SMT-like sharing of execution units)")
    )
    return said


def _ns(values: list[float]) -> str:
    return "/".join(f"{v:.0f}" for v in values)
