"""Sets of OS CPU numbers, as both importers and `specs.importers.host` use them.

A *partition* is a list of disjoint CPU sets covering the CPUs of the tree (the sockets, the
cores, the CPUs sharing each L2 ...), ordered by their lowest CPU. `level_of` tells which level of
an imported tree a set of sharing groups is, judged on the CPUs plans may use: a cache or a memory
shared by the CPUs of each domain of a level is a resource of that level.
"""

from __future__ import annotations

from collections.abc import Iterable

from tasksolve.specs.topology import MACHINE

Partition = list[frozenset[int]]


def cpu_list(cpus: Iterable[int]) -> str:
    """``0-3,8`` (the kernel's list syntax)."""
    ordered = sorted(cpus)
    parts, start = [], None
    for i, cpu in enumerate(ordered):
        if start is None:
            start = cpu
        if i + 1 == len(ordered) or ordered[i + 1] != cpu + 1:
            parts.append(str(start) if start == cpu else f"{start}-{cpu}")
            start = None
    return ",".join(parts)


def cpus_phrase(cpus: Iterable[int], noun: str = "CPU") -> str:
    """``CPU 3`` or ``CPUs 16-63``."""
    cpus = sorted(cpus)
    return f"{noun}{'s' if len(cpus) > 1 else ''} {cpu_list(cpus)}"


def partition_of(groups: dict[int, object], cpus: Iterable[int]) -> Partition:
    """The CPUs grouped by their value in `groups` (every CPU of `cpus` must have one)."""
    members: dict[object, set[int]] = {}
    for cpu in cpus:
        members.setdefault(groups[cpu], set()).add(cpu)
    return sorted((frozenset(m) for m in members.values()), key=min)


def restricted(groups: Iterable[frozenset[int]], usable: frozenset[int]) -> set[frozenset[int]]:
    """The groups seen from the usable CPUs (empty intersections dropped). A group inside them is
    kept as it is, so its hash (computed once per frozenset) is not recomputed."""
    return {group if group <= usable else group & usable for group in groups} - {frozenset()}


def level_of(
    groups: Iterable[frozenset[int]], levels: list[tuple[str, Partition]], cpus: frozenset[int], usable: frozenset[int]
) -> str | None:
    """The level (or ``machine``) whose domains are `groups`: exactly, over all the tree's `cpus`,
    else as seen from the `usable` CPUs (a memory of the CPUs a process may not use is not
    known); None when no level is (the groups do not follow the tree)."""
    for within in (cpus, usable) if usable != cpus else (cpus,):
        seen = restricted(groups, within)
        if seen == {within}:
            return MACHINE
        for name, partition in levels:
            if restricted(partition, within) == seen:
                return name
    return None
