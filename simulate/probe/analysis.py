"""What a probe's matrices say about the host: latency classes, hidden sharing, unstable pairs,
and the communication cost of each level of the topology (a pure function of the matrices).

Input: one or more *repetitions*, each mapping a pair of OS CPUs ``(i, j)`` (``i < j``) to a
`PairSample` -- the one-way latency of a cache line bounced between them (ns) and, where it was
measured, the rate of a compute loop on each while the other runs it too, over its rate alone
(a public latency matrix carries no such ratio: nothing is said about interference then).

* **Latency classes.**  Cache hierarchies are steps, not a continuum: SMT siblings exchange a line
  in ~10-25 ns, cores sharing an L2 in ~30-50, an L3 in ~60-120, sockets in ~150-300.  All samples
  of all repetitions are sorted and cut wherever one value is at least ``GAP`` (1.3) times the
  previous one: within one population consecutive sorted latencies lie far closer (many pairs
  over a range of ~10-20% batch-median noise), while the steps of a hierarchy are 1.4x or more
  (a dual EPYC 7742's ~132 ns socket pairs end at 158 ns, its ~267 ns ones start at 223); a lone
  outlier cut off this way is reported as an odd pair of its level, not as a level.  Classes are
  numbered from the fastest (0).  Each repetition's pair gets the class of its sample.
* **Interference.**  A pair *interferes* in a repetition when the slower of its two loops runs at
  ``SMT_RATIO`` (0.75) of its rate alone or less: SMT siblings share execution units and lose
  30-50%; separate cores lose a few percent (frequency, shared cache).
* **Populations of a level.**  Every pair shares one level of the topology (its innermost
  common domain; ``machine`` at the top, and for every pair when no topology is given: a flat set
  of CPUs).  The tree says every pair of a level behaves alike; the level's stable pairs are
  grouped by class, and each class holding at least ``POPULATION_SHARE`` (a tenth) of them is a
  *population* of the level, reported with its median, range, size and CPUs -- two populations
  are two figures, never averaged into one no pair has.  The level's *main* population is the
  largest (a tie goes to the slower: a plan that assumes the cheaper figure may be wrong).
* **Odd pairs**: a stable pair in a class that is no population of its level is *faster* than its
  level (hidden sharing: sharing the topology does not show) or *slower*; a pair whose median
  ratio interferes where its level's pairs do not is hidden sharing too (SMT-like).
* **Unstable placement**: a pair whose latency class changes between repetitions -- on a guest,
  vCPUs that the hypervisor moved between host cores while the probe ran.  One repetition cannot
  show it (the analysis says so).  Interference is judged on the median over repetitions only: a
  busy neighbour process on a shared host flips a single repetition's ratio, never the latency
  class of a batch median.
* **Costs per level**: the median over the main population's regular pairs of each pair's median
  latency, with the range over those pairs; in cycles at the topology's clock (none without one).
  The tree stays uniform: pairs it cannot express are reported, not averaged in.
* **Kinds of core**: CPUs whose compute loop runs at different rates alone (a hybrid's P and E
  cores), told apart from the rates alone where they were kept (`simulate.probe.kinds`).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tasksolve.simulate.probe.classes import class_boundaries, class_of

if TYPE_CHECKING:
    from tasksolve.simulate.probe.kinds import Kinds

MACHINE = "machine"
SMT_RATIO = 0.75
POPULATION_SHARE = 0.1

Pair = tuple[int, int]


@dataclass(frozen=True)
class PairSample:
    """One measurement of one pair: latency (ns, one way), each CPU's loop rate ratio (None:
    interference not measured) and each CPU's loop rate alone, measured right before, in
    iterations per second the loop ran (None: not kept -- a public matrix, an older file)."""

    latency_ns: float
    ratio_i: float | None = None
    ratio_j: float | None = None
    alone_i: float | None = None
    alone_j: float | None = None

    @property
    def ratio(self) -> float | None:
        if self.ratio_i is None or self.ratio_j is None:
            return None
        return min(self.ratio_i, self.ratio_j)


Repetition = dict[Pair, PairSample]


@dataclass
class Population:
    """Pairs of one latency class: their median, range, number and CPUs."""

    latency_ns: float
    low_ns: float
    high_ns: float
    pairs: int
    cpus: list[int]

    def to_dict(self) -> dict:
        from tasksolve.specs.importers.cpusets import cpu_list

        return {**self.__dict__, "cpus": cpu_list(self.cpus)}


def population(pairs: Iterable[Pair], medians: dict[Pair, float]) -> Population:
    values = [medians[p] for p in pairs]
    return Population(
        latency_ns=round(statistics.median(values), 2),
        low_ns=round(min(values), 2),
        high_ns=round(max(values), 2),
        pairs=len(values),
        cpus=sorted({c for p in pairs for c in p}),
    )


@dataclass
class Split:
    """A level's pairs judged by class (module docstring): its populations (fastest first), the
    main one's class, and the pairs in no population, faster or slower than the main one."""

    populations: dict[int, list[Pair]]
    main: int
    faster: list[Pair]
    slower: list[Pair]


def split_level(pairs: list[Pair], klass: dict[Pair, int]) -> Split:
    """Populations, main population and odd pairs of one level (module docstring)."""
    by_class: dict[int, list[Pair]] = {}
    for p in pairs:
        by_class.setdefault(klass[p], []).append(p)
    biggest = max(by_class, key=lambda c: (len(by_class[c]), c))
    kept = {c: ps for c, ps in sorted(by_class.items()) if len(ps) >= POPULATION_SHARE * len(pairs) or c == biggest}
    odd = [p for c, ps in by_class.items() if c not in kept for p in ps]
    return Split(
        populations=kept,
        main=biggest,
        faster=sorted(p for p in odd if klass[p] < biggest),
        slower=sorted(p for p in odd if klass[p] > biggest),
    )


@dataclass
class LevelCost:
    """The measured cost of a message between two CPUs whose innermost shared level is `level`:
    its main population's figure, every population of its pairs, and what was left out."""

    level: str
    pairs: int
    latency_ns: float
    low_ns: float
    high_ns: float
    cycles: float | None
    left_out: int = 0
    populations: list[Population] = field(default_factory=list)
    faster: int = 0
    slower: int = 0
    unstable: int = 0

    def to_dict(self) -> dict:
        return {**self.__dict__, "populations": [p.to_dict() for p in self.populations]}


@dataclass
class PairReport:
    """A pair the tree cannot express: its level, per-repetition latencies, classes, ratios."""

    pair: Pair
    level: str
    latencies: list[float]
    classes: list[int]
    ratios: list[float | None]
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
    worst_ratio: float | None
    slower: list[PairReport] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    medians: dict[Pair, float] = field(default_factory=dict, repr=False)
    classes: dict[Pair, int] = field(default_factory=dict, repr=False)
    kinds: Kinds | None = None

    def to_dict(self) -> dict:
        return {
            "cpus": self.cpus,
            "repetitions": self.repetitions,
            "class_boundaries_ns": [round(b, 2) for b in self.boundaries],
            "level_class": self.level_class,
            "costs": [c.to_dict() for c in self.costs],
            "hidden_sharing": [p.to_dict() for p in self.hidden],
            "slower_than_level": [p.to_dict() for p in self.slower],
            "unstable": [p.to_dict() for p in self.unstable],
            "stable_share": self.stable_share,
            "latency_spread": self.latency_spread,
            "interference_measured": self.worst_ratio is not None,
            "worst_ratio": self.worst_ratio,
            "kinds": None if self.kinds is None else self.kinds.to_dict(),
            "findings": self.findings,
        }


def pair_levels(cpus: list[int], topology=None) -> dict[Pair, str]:
    """The innermost level each pair of OS CPUs shares in `topology` (``machine`` without one)."""
    pairs = [(a, b) for i, a in enumerate(cpus) for b in cpus[i + 1 :]]
    if topology is None:
        return dict.fromkeys(pairs, MACHINE)
    context = {cpu: c for c, cpu in enumerate(topology.os_cpu_list)}
    missing = [cpu for cpu in cpus if cpu not in context]
    if missing:
        from tasksolve.specs.importers.cpusets import cpu_list

        raise ValueError(f"CPU(s) {cpu_list(missing)} not in the topology `{topology.name}`")
    found = {}
    for a, b in pairs:
        k = topology.shared_level(context[a], context[b])
        found[(a, b)] = MACHINE if k < 0 else topology.level_names[k]
    return found


def analyse(repetitions: list[Repetition], topology=None, clock_hz: float | None = None) -> Analysis:
    """Classes, populations, odd and unstable pairs and per-level costs (module docstring).
    Without `topology` every pair is of one level, ``machine`` (a flat set of CPUs: never this
    host's tree), and the costs have cycles only at an explicit `clock_hz`."""
    from tasksolve.simulate.probe.findings import findings
    from tasksolve.simulate.probe.kinds import tell_kinds

    pairs = _pairs(repetitions)
    cpus = sorted({c for p in pairs for c in p})
    level_of = pair_levels(cpus, topology)
    if clock_hz is None and topology is not None:
        clock_hz = float(topology.clock)
    boundaries = class_boundaries([rep[p].latency_ns for rep in repetitions for p in pairs])
    classes = {p: [class_of(rep[p].latency_ns, boundaries) for rep in repetitions] for p in pairs}
    medians = {p: statistics.median(rep[p].latency_ns for rep in repetitions) for p in pairs}
    klass = {p: class_of(medians[p], boundaries) for p in pairs}
    moved = {p for p in pairs if len(set(classes[p])) > 1}
    bursts = _bursts(repetitions, pairs)
    levels = sorted(set(level_of.values()), key=lambda n: _level_rank(n, topology))
    members = {name: [p for p in pairs if level_of[p] == name] for name in levels}
    verdicts = [_judge(name, members[name], klass, moved, bursts, medians, clock_hz) for name in levels]

    def reports(chosen: Iterable[Pair], smt: set[Pair] = frozenset()) -> list[PairReport]:
        return [
            PairReport(
                p,
                level_of[p],
                [rep[p].latency_ns for rep in repetitions],
                classes[p],
                [None if rep[p].ratio is None else round(rep[p].ratio, 4) for rep in repetitions],
                p in smt,
            )
            for p in sorted(chosen)
        ]

    smt = {p for v in verdicts for p in v.smt}
    odd = {p for v in verdicts for p in (*v.hidden, *v.slower)} | moved
    analysis = Analysis(
        cpus=cpus,
        repetitions=len(repetitions),
        boundaries=boundaries,
        level_of=level_of,
        level_class={v.cost.level: v.main for v in verdicts},
        costs=[v.cost for v in verdicts],
        hidden=reports((p for v in verdicts for p in v.hidden), smt),
        unstable=reports(moved),
        slower=reports(p for v in verdicts for p in v.slower),
        stable_share=None if len(repetitions) < 2 else 1 - len(moved) / len(pairs),
        latency_spread=_spread(repetitions, pairs, medians, odd),
        worst_ratio=None if bursts is None else min(rep[p].ratio for rep in repetitions for p in pairs),
        medians=medians,
        classes=klass,
        kinds=tell_kinds(repetitions),
    )
    analysis.findings = findings(analysis, topology, SMT_RATIO)
    return analysis


def _pairs(repetitions: list[Repetition]) -> list[Pair]:
    if not repetitions or not repetitions[0]:
        raise ValueError("no measurement to analyse")
    pairs = sorted(repetitions[0])
    for r, rep in enumerate(repetitions[1:], start=2):
        if sorted(rep) != pairs:
            raise ValueError(f"repetition {r} measured other pairs than repetition 1")
    return pairs


def _bursts(repetitions: list[Repetition], pairs: list[Pair]) -> dict[Pair, bool] | None:
    """Whether each pair's median ratio interferes; None where interference was not measured."""
    if any(rep[p].ratio is None for rep in repetitions for p in pairs):
        return None
    return {p: statistics.median(rep[p].ratio for rep in repetitions) <= SMT_RATIO for p in pairs}


def _spread(repetitions, pairs, medians, odd) -> float | None:
    """Median over the regular pairs of (max - min) / median across repetitions."""
    if len(repetitions) < 2 or len(odd) >= len(pairs):
        return None
    return statistics.median(
        (max(rep[p].latency_ns for rep in repetitions) - min(rep[p].latency_ns for rep in repetitions)) / medians[p]
        for p in pairs
        if p not in odd
    )


def _level_rank(name: str, topology) -> int:
    """Innermost shared level first, ``machine`` last."""
    if topology is None or name == MACHINE:
        return 1_000
    return -topology.level_names.index(name)


@dataclass
class _Verdict:
    cost: LevelCost
    main: int
    hidden: list[Pair]
    smt: set[Pair]
    slower: list[Pair]


def _judge(name, members, klass, moved, bursts, medians, clock_hz) -> _Verdict:
    """One level: its populations, odd pairs and cost (module docstring)."""
    stable = [p for p in members if p not in moved]
    level_bursts = bursts is not None and sum(bursts[p] for p in members) * 2 > len(members)
    smt = {p for p in stable if bursts is not None and bursts[p] and not level_bursts}
    split = split_level(stable or members, klass)
    hidden = sorted(set(split.faster) | smt)
    slower = [p for p in split.slower if p not in smt]
    regular = [p for p in split.populations[split.main] if p not in smt and p not in moved] or members
    per_pair = [medians[p] for p in regular]
    median = statistics.median(per_pair)
    cost = LevelCost(
        level=name,
        pairs=len(regular),
        latency_ns=round(median, 2),
        low_ns=round(min(per_pair), 2),
        high_ns=round(max(per_pair), 2),
        cycles=None if not clock_hz else round(median * clock_hz / 1e9, 1),
        left_out=len(members) - len(regular),
        populations=[population(ps, medians) for ps in split.populations.values()],
        faster=len(hidden),
        slower=len(slower),
        unstable=len(members) - len(stable),
    )
    return _Verdict(cost, split.main, hidden, smt, slower)
