"""NUMA nodes as memory resources of an imported topology.

hwloc's object model (``NUMANode``; hwloc 2 and 3 attach a node as a *memory child* of the object
whose CPUs it is local to, possibly behind memory-side caches, ``MemCache``) allows several nodes
over the same CPUs: DRAM and HBM, MCDRAM, NVM or CXL memory, told apart by the node's ``subtype``.
A node whose CPU set is empty has no local CPU (CXL or a socket without cores).

Every node becomes a resource instance, none is merged into another: the nodes are grouped into
*memory kinds* -- at each CPU set, the first plain (no subtype, or ``DRAM``) node is ``mem``, a
node of subtype ``HBM`` is ``hbm``, a second one of the same subtype ``hbm2`` -- and each kind is a
resource at the level of the tree whose domains are its nodes' CPU sets. A node with no local
usable CPU is a machine-wide resource of its own (``mem_node4``: every CPU reaches it remotely).
A kind whose nodes are not the domains of one level cannot be represented, and the import is
refused with the nodes named, rather than claim a wrong count of NUMA nodes.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from tasksolve.specs.errors import SpecError
from tasksolve.specs.importers.cpusets import Partition, cpus_phrase, level_of, restricted
from tasksolve.specs.topology import MACHINE

PLAIN = "mem"
_NOT_NAMES = re.compile(r"[^a-z0-9]+")
_CACHE_NAME = re.compile(r"^l\d+i?$")


@dataclass(frozen=True)
class Memory:
    """One NUMA node: its OS number, hwloc subtype (None: plain memory), the CPUs it is local
    to (empty: none), its size in bytes when known, where the source has it, and whether the
    process may use it."""

    node: int | None
    subtype: str | None
    cpus: frozenset[int]
    size: int | None = None
    position: tuple[int, int] | None = field(default=None, compare=False)
    allowed: bool = True  # False: outside the process's allowed nodes (it still shapes the tree)

    @property
    def label(self) -> str:
        """The resource name of this kind of memory: ``mem`` for plain memory and DRAM, else
        the subtype in lower case (``hbm``, ``mcdram``, ``cxl_dram``)."""
        if self.subtype is None or self.subtype.strip().upper() in ("", "DRAM"):
            return PLAIN
        name = _NOT_NAMES.sub("_", self.subtype.lower()).strip("_")[:40]
        if not name or not name[0].isalpha() or _CACHE_NAME.match(name):
            name = f"mem_{name}".rstrip("_")
        return name

    def describe(self) -> str:
        return f"NUMA node {self.node if self.node is not None else '?'}" + (
            f" ({self.subtype})" if self.subtype else ""
        )


@dataclass
class MemoryResource:
    """One memory kind: its resource name, nodes, level, and how many domains it claims."""

    name: str
    nodes: list[Memory]
    level: str
    count: int

    def resource(self) -> dict:
        first = self.nodes[0]
        if self.name.startswith(f"{first.label}_node"):
            what = f"memory of {first.describe()}, which has no local usable CPU (per machine: every CPU is remote)"
        else:
            kind = f"{first.subtype} " if first.label != PLAIN else ""
            what = f"{kind}memory of a NUMA node (per {self.level})"
        return {"name": self.name, "level": self.level, "capacity": 1.0, "description": what}


def memories_from_nodes(node: dict[int, int]) -> list[Memory]:
    """Plain nodes from a CPU -> node map (the sysfs reader's)."""
    members: dict[int, set[int]] = {}
    for cpu, index in node.items():
        members.setdefault(index, set()).add(cpu)
    return [Memory(index, None, frozenset(cpus)) for index, cpus in sorted(members.items())]


def memory_kinds(memories: list[Memory], usable: frozenset[int]) -> dict[str, list[Memory]]:
    """Resource name -> its nodes (module docstring): plain memory first at each CPU set, then by
    subtype and node number."""
    by_cpus: dict[frozenset[int], list[Memory]] = {}
    kinds: dict[str, list[Memory]] = {}
    for memory in memories:
        if memory.cpus & usable:
            by_cpus.setdefault(memory.cpus, []).append(memory)
        else:
            kinds[_unique(f"{memory.label}_node{memory.node if memory.node is not None else ''}", kinds)] = [memory]
    for nodes in by_cpus.values():
        ranks: Counter = Counter()
        for memory in sorted(nodes, key=lambda m: (m.label != PLAIN, m.label, m.node or 0)):
            ranks[memory.label] += 1
            rank = ranks[memory.label]
            kinds.setdefault(memory.label if rank == 1 else f"{memory.label}{rank}", []).append(memory)
    return dict(sorted(kinds.items(), key=lambda item: (item[0] != PLAIN, item[0])))


def _unique(name: str, taken: dict) -> str:
    """`name`, or `name` with a number after it when taken (CPU-less nodes without a number)."""
    found, number = name, 1
    while found in taken:
        number += 1
        found = f"{name}_{number}"
    return found


def node_map(memories: list[Memory], cpus: frozenset[int]) -> dict[int, int]:
    """CPU -> node of the plain memory (the ``numa`` grouping of the tree, allowed nodes or not:
    the hardware's shape), when those nodes partition all the tree's CPUs; else empty."""
    found: dict[int, int] = {}
    plain = memory_kinds(memories, cpus).get(PLAIN, [])
    for number, memory in enumerate(plain):
        for cpu in memory.cpus & cpus:
            if cpu in found:
                return {}
            found[cpu] = memory.node if memory.node is not None else -1 - number
    return found if set(found) == cpus else {}


def memory_resources(
    source: str,
    memories: list[Memory],
    levels: list[tuple[str, Partition]],
    cpus: frozenset[int],
    usable: frozenset[int],
) -> list[MemoryResource]:
    """Every memory kind the process may use at its level; a `SpecError` names the nodes of a
    kind that is none."""
    found = []
    for name, nodes in memory_kinds([m for m in memories if m.allowed], usable).items():
        if not nodes[0].cpus & usable:
            found.append(MemoryResource(name, nodes, MACHINE, 1))
            continue
        groups = [memory.cpus & cpus for memory in nodes]
        level = level_of(groups, levels, cpus, usable)
        seen = restricted(groups, usable)
        if level is None or len(seen) != len(nodes):
            raise _unplaced(source, name, nodes, levels, usable)
        found.append(MemoryResource(name, nodes, level, len(seen)))
    return found


def _unplaced(
    source: str, name: str, nodes: list[Memory], levels: list[tuple[str, Partition]], usable: frozenset[int]
) -> SpecError:
    """The refusal of a memory kind that is no level's resource, at its first node."""
    listed = ", ".join(f"{m.describe()} ({cpus_phrase(m.cpus & usable)})" for m in nodes)
    without = usable - frozenset().union(*(m.cpus for m in nodes))
    lacking = f"; {cpus_phrase(without)} have none of it" if without else ""
    line, column = nodes[0].position or (None, None)
    return SpecError.at(
        source,
        f"the memory `{name}` -- {listed}{lacking} -- is not one node per domain of a level of the tree "
        f"({' > '.join(n for n, _ in levels)}): the topology could not say which contexts share each node, "
        "so the file is refused rather than imported with a wrong count of NUMA nodes",
        line,
        column,
    )


def memory_notes(kinds: list[MemoryResource]) -> list[str]:
    """Which memory each resource stands for, when there is more than plain memory per domain."""
    if [kind.name for kind in kinds] in ([], [PLAIN]):
        return []
    parts = []
    for kind in kinds:
        numbers = sorted(m.node for m in kind.nodes if m.node is not None)
        subtypes = sorted({m.subtype for m in kind.nodes if m.subtype})
        what = cpus_phrase(numbers, "NUMA node") + (f" ({', '.join(subtypes)})" if subtypes else "")
        parts.append(f"`{kind.name}` = {what}, per {kind.level}")
    return [
        "memory kinds, each its own resource (none merged into another): "
        + "; ".join(parts)
        + ". A task's demand on one of them says which memory it uses"
    ]
