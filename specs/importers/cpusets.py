"""Sets of OS CPU numbers, as both importers and `specs.importers.host` use them.

A *partition* is a list of disjoint CPU sets covering the CPUs of the tree (the sockets, the
cores, the CPUs sharing each L2 ...), ordered by their lowest CPU. `level_of` tells which level of
an imported tree a set of sharing groups is, judged on the CPUs plans may use: a cache or a memory
shared by the CPUs of each domain of a level is a resource of that level.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tasksolve.specs.errors import shorten
from tasksolve.specs.topology import MACHINE

Partition = list[frozenset[int]]
MAX_CPU = 131_071  # the largest CPU number read: hwloc_sets' bound (4096 words of 32 bits)
_NUMBER = re.compile(r"[0-9]{1,7}", re.ASCII)


class CpuListError(ValueError):
    """A CPU list that is not in the kernel's list format; `column` (1-based) is where."""

    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.message, self.column = message, column


def _number(text: str, column: int, item: str) -> int:
    if not item:
        raise CpuListError("an empty item (two commas in a row, or a comma at an end)", column)
    if not _NUMBER.fullmatch(text):
        raise CpuListError(f"`{shorten(item, 40)}` is not a CPU number or range (expected e.g. 0-3,8,10-11)", column)
    value = int(text)
    if value > MAX_CPU:
        raise CpuListError(f"CPU {shorten(text, 40)} is above the largest CPU number read ({MAX_CPU})", column)
    return value


def parse_cpu_list(text: str, *, strict: bool = True) -> list[int]:
    """The CPUs of a list in the kernel's *list format* -- comma-separated CPU numbers and
    ranges, ``0-3,8,10-11`` (cpuset(7), "List format"; the format of ``cpulist_parse()`` that
    Documentation/admin-guide/cputopology.rst gives for /sys/devices/system/cpu/{online,offline,
    possible,present} and Documentation/admin-guide/cgroup-v2.rst for ``cpuset.cpus.effective``)
    -- sorted. An empty list (an empty ``offline`` or ``isolated`` file) is no CPU.

    Numbers are ASCII digits, at most `MAX_CPU`; a range never goes down. `strict` (the kernel's
    own files, which it writes in order): items ascending and disjoint, no blank anywhere (a
    final newline aside); else
    (a person's ``--cpus``) any order, overlaps and blanks around items allowed. A
    `CpuListError` says what is wrong and at which column.
    """
    body = text.removesuffix("\n") if strict else text.strip()
    if not body:
        return []
    cpus: list[int] = []
    column = 1 if strict else len(text) - len(text.lstrip()) + 1
    last = -1
    for item in body.split(","):
        where, word = column, item.strip() if not strict else item
        where += len(item) - len(item.lstrip()) if not strict else 0
        first_text, dash, last_text = word.partition("-")
        first = _number(first_text, where, word)
        final = _number(last_text, where + len(first_text) + 1, word) if dash else first
        if final < first:
            raise CpuListError(f"the range `{shorten(word, 40)}` goes down", where)
        if strict and first <= last:
            raise CpuListError(
                f"`{shorten(word, 40)}` is not after the CPUs before it (the kernel writes lists ascending, without overlaps)",
                where,
            )
        cpus.extend(range(first, final + 1))
        last = final
        column += len(item) + 1
    return cpus if strict else sorted(set(cpus))


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
