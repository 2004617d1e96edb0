"""Sharing domains proposed from latencies alone: which CPUs form SMT pairs, cache groups,
sockets -- what a measured matrix says about a machine whose tree is not known.

Method (a pure function of the pairs' median latencies and the latency classes of
`simulate.probe.analysis`, cut at gaps of ``GAP`` = 1.3x):

1. **Hierarchical clustering, complete linkage** (`scipy.cluster.hierarchy.linkage`, method
   ``complete``, on the condensed matrix of median latencies): two clusters merge at the
   largest latency between their CPUs, so a cluster cut at height t is a set of CPUs *every*
   pair of which is at most t -- a domain, not a chain of near neighbours (single linkage).
2. **Cut between populations** (`fcluster`, criterion ``distance``): at each boundary between
   latency classes, fastest first; the cuts nest.  A cut whose largest group is no larger
   than the previous level's only completes that level (stragglers: an SMT pair measured slow
   joins the others at the next cut; `analysis.split_level` reports it as slower than its
   level); a cut whose largest group grows is a new level.  When the classes above the last
   cut hold under ``POPULATION_SHARE`` of the pairs, the cut is a few slow pairs, not a level.
3. **Uniform levels.**  A level's domain size is its largest group.  Where the CPUs in smaller
   groups (domains of an inner level, not lone CPUs) are exactly one domain's worth, they are
   proposed as one domain and marked
   *inferred*: they share nothing faster among themselves than with the rest (one socket of
   a dual EPYC 7742, CPUs 0-63,128-191, whose CCXs talk at cross-socket latency); any other mix of
   sizes is reported as it is (a hybrid Apple M1 Pro: groups of 3, 3 and 2) and the tree is
   not uniform.
4. Each pair belongs to its innermost proposed level (``machine`` for the rest); each level's
   pairs are split into populations and odd pairs as the analysis splits a topology's levels,
   its figure is its main population's median.

Never proposed: a level the latencies do not show, a clock, interference.  The kinds of core
the rates alone show (`simulate.probe.kinds`) travel with the proposal into its topology.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tasksolve.simulate.probe.analysis import (
    MACHINE,
    POPULATION_SHARE,
    Analysis,
    Pair,
    Population,
    population,
    split_level,
)

if TYPE_CHECKING:
    from tasksolve.simulate.probe.kinds import Kinds

Group = list[int]


@dataclass
class ProposedLevel:
    """One proposed level: its groups of CPUs, their size and figure, and what it could not say."""

    groups: list[Group]
    size: int
    latency_ns: float = 0.0
    populations: list[Population] = field(default_factory=list)
    group_ns: list[float | None] = field(default_factory=list)
    inferred: Group | None = None
    uniform: bool = True
    slower: list[Pair] = field(default_factory=list)
    faster: list[Pair] = field(default_factory=list)

    def to_dict(self) -> dict:
        from tasksolve.specs.importers.cpusets import cpu_list

        return {
            "groups": [cpu_list(g) for g in self.groups],
            "size": self.size,
            "latency_ns": self.latency_ns,
            "populations": [p.to_dict() for p in self.populations],
            "group_latency_ns": self.group_ns,
            "inferred": None if self.inferred is None else cpu_list(self.inferred),
            "uniform": self.uniform,
            "slower_pairs": [list(p) for p in self.slower],
            "faster_pairs": [list(p) for p in self.faster],
        }


@dataclass
class Proposal:
    """The proposed levels (innermost first), the machine's pairs, and whether they form a tree."""

    cpus: list[int]
    levels: list[ProposedLevel]
    machine: ProposedLevel
    why_not_tree: str | None = None
    kinds: Kinds | None = None

    @property
    def tree(self) -> bool:
        return self.why_not_tree is None

    def to_dict(self) -> dict:
        return {
            "method": "complete-linkage clusters cut between latency populations (docs/design.md)",
            "levels": [level.to_dict() for level in self.levels],
            "machine": self.machine.to_dict(),
            "uniform_tree": self.tree,
            "why_not_uniform": self.why_not_tree,
        }


def propose(analysis: Analysis) -> Proposal:
    """The proposed sharing domains of the analysed CPUs (module docstring)."""
    cpus, medians = analysis.cpus, analysis.medians
    levels = [_completed(groups) for groups in _cuts(cpus, medians, _cut_heights(analysis))]
    why = _why_not_tree(levels)
    innermost = _innermost(cpus, levels)
    for k, level in enumerate(levels):
        _judge(level, [p for p, at in innermost.items() if at == k], analysis)
    machine = ProposedLevel(groups=[cpus], size=len(cpus))
    _judge(machine, [p for p, at in innermost.items() if at == len(levels)], analysis)
    return Proposal(cpus, levels, machine, why, analysis.kinds)


def _cut_heights(analysis: Analysis) -> list[float]:
    """The class boundaries, less the last ones above which lie under a share of the pairs."""
    heights = list(analysis.boundaries)
    counts = [0] * (len(heights) + 1)
    for klass in analysis.classes.values():
        counts[klass] += 1
    total = sum(counts)
    while heights and sum(counts[len(heights) :]) < POPULATION_SHARE * total:
        heights.pop()
    return heights


def _cuts(cpus: list[int], medians: dict[Pair, float], heights: list[float]) -> list[list[Group]]:
    """The partitions of complete-linkage clustering cut at each height, one per level: a cut
    that does not grow the largest group completes the level before it (module docstring)."""
    if len(cpus) < 3 or not heights:
        return []
    import numpy as np
    from scipy.cluster.hierarchy import fcluster, linkage

    condensed = np.array([medians[(a, b)] for i, a in enumerate(cpus) for b in cpus[i + 1 :]])
    tree = linkage(condensed, method="complete")
    found: list[list[Group]] = []
    for height in heights:
        labels = fcluster(tree, t=height, criterion="distance")
        members: dict[int, Group] = {}
        for cpu, label in zip(cpus, labels):
            members.setdefault(int(label), []).append(cpu)
        groups = sorted(members.values())
        largest = max(len(g) for g in groups)
        if largest in (1, len(cpus)):
            continue
        if found and largest == max(len(g) for g in found[-1]):
            found[-1] = groups
        else:
            found.append(groups)
    return found


def _completed(groups: list[Group]) -> ProposedLevel:
    """A level of domains of its largest group's size; the CPUs of smaller groups (none a lone
    CPU) form one more domain when they are exactly one domain's worth (inferred), else the level
    is not uniform."""
    size = max(len(g) for g in groups)
    full = [g for g in groups if len(g) == size]
    smaller = [g for g in groups if len(g) < size]
    rest = sorted(c for g in smaller for c in g)
    if not rest:
        return ProposedLevel(groups=full, size=size)
    if len(rest) == size and all(len(g) > 1 for g in smaller):
        return ProposedLevel(groups=sorted([*full, rest]), size=size, inferred=rest)
    return ProposedLevel(groups=groups, size=size, uniform=False)


def _why_not_tree(levels: list[ProposedLevel]) -> str | None:
    """None when the levels form a uniform tree, else why not (in words)."""
    for k, level in enumerate(levels):
        if not level.uniform:
            return f"level {k + 1} has groups of different sizes ({sizes_phrase(level.groups)})"
        if k and not _nested(levels[k - 1].groups, level.groups):
            return f"the groups of level {k} are not inside those of level {k + 1}"
    if len(levels) > 7:
        return f"{len(levels)} levels: a topology holds at most 7 besides its CPUs"
    return None


def _nested(inner: list[Group], outer: list[Group]) -> bool:
    home = {cpu: k for k, group in enumerate(outer) for cpu in group}
    return all(len({home[cpu] for cpu in group}) == 1 for group in inner)


def _innermost(cpus: list[int], levels: list[ProposedLevel]) -> dict[Pair, int]:
    """The index of the innermost level whose one group holds both CPUs of each pair (the
    number of levels for a pair that shares only the machine)."""
    found = {}
    homes = [{cpu: k for k, group in enumerate(level.groups) for cpu in group} for level in levels]
    for i, a in enumerate(cpus):
        for b in cpus[i + 1 :]:
            found[(a, b)] = next((k for k, home in enumerate(homes) if home[a] == home[b]), len(levels))
    return found


def _judge(level: ProposedLevel, pairs: list[Pair], analysis: Analysis) -> None:
    """The level's populations, figure and odd pairs (`analysis.split_level`), and the median of
    the level's pairs within each of its groups."""
    home = {cpu: k for k, group in enumerate(level.groups) for cpu in group}
    within: list[list[float]] = [[] for _ in level.groups]
    for a, b in pairs:
        within[home[a]].append(analysis.medians[(a, b)])
    level.group_ns = [round(statistics.median(v), 2) if v else None for v in within]
    if not pairs:
        return
    split = split_level(pairs, analysis.classes)
    level.populations = [population(ps, analysis.medians) for ps in split.populations.values()]
    level.latency_ns = round(statistics.median(analysis.medians[p] for p in split.populations[split.main]), 2)
    level.faster, level.slower = split.faster, split.slower


def sizes_phrase(groups: list[Group]) -> str:
    """``2 groups of 3 CPUs, 1 group of 2 CPUs``."""
    counts: dict[int, int] = {}
    for group in groups:
        counts[len(group)] = counts.get(len(group), 0) + 1
    return ", ".join(
        f"{n} group{'s' if n > 1 else ''} of {size} CPU{'s' if size > 1 else ''}"
        for size, n in sorted(counts.items(), reverse=True)
    )


def level_name(k: int, levels: int) -> str:
    """The name of proposed level `k` (0: innermost) in a topology file: ``domain_a`` for the
    outermost, ``domain_b`` inside it ... -- neutral names: latencies do not say what is shared."""
    return f"domain_{chr(ord('a') + levels - 1 - k)}" if k < levels else MACHINE
