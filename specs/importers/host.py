"""A real machine as a tasksolve topology: levels from the hardware's sharing groups.

Both importers (`specs.importers.sysfs`, `specs.importers.hwloc`) first describe the host the
same way -- for every online CPU its package, die, NUMA node and SMT siblings, and the CPU sets
that share each cache (`HostDescription`) -- and `build_topology` turns that description into a
`Topology` (docs/design.md, "Real machines"):

* every grouping is a partition of the CPUs (sockets, NUMA nodes, dies, L3 groups, L2 groups,
  cores); a partition with one group is the machine itself, and partitions that are equal are
  one level (named after the first of socket, numa, die, core, l3, l2, pu);
* the levels are the distinct partitions, coarsest first, each refining the one above; the
  innermost level is the single CPU (``pu``, hwloc's processing unit, or ``core`` without SMT);
* the tree must be uniform (tasksolve's topologies are), so a machine with, say, some CPUs
  offline gets one clear error naming the group that differs;
* children are ordered by their lowest OS CPU number, contexts depth-first, and every context
  keeps its OS CPU number (``os_cpus``);
* resources default from the caches (``l1``, ``l1i``, ``l2``, ``l3`` at the level of their
  sharing group) and memory (``mem`` per NUMA node), each with capacity 1.0 -- the share of the
  resource a task's ``demand`` refers to -- unless overridden; the notes say which values are
  defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tasksolve.specs.errors import SpecError, did_you_mean
from tasksolve.specs.topology import MACHINE, Topology
from tasksolve.specs.units import format_size

DEFAULT_CLOCK_HZ = 1e9
# When two groupings are the same partition of the CPUs, the level takes the first name here.
NAME_PRIORITY = ("socket", "numa", "die", "core", "l3", "l2", "pu")


@dataclass(frozen=True)
class Cache:
    """One cache instance: its level, kind (data, instruction, unified), size and the CPUs sharing it."""

    level: int
    kind: str
    size: int | None
    cpus: frozenset[int]

    @property
    def resource(self) -> str:
        return f"l{self.level}{'i' if self.kind == 'instruction' else ''}"


@dataclass
class HostDescription:
    """What an importer read: per online CPU (OS number) its groups, and the caches."""

    source: str
    package: dict[int, int]
    siblings: dict[int, frozenset[int]]
    die: dict[int, int] = field(default_factory=dict)
    node: dict[int, int] = field(default_factory=dict)
    caches: set[Cache] = field(default_factory=set)
    clock_hz: float | None = None
    name: str = "host"

    @property
    def cpus(self) -> list[int]:
        return sorted(self.package)


@dataclass
class HostTopology:
    """The imported topology and the notes saying which values are defaults."""

    topology: Topology
    notes: list[str]
    summary: dict[str, int] = field(default_factory=dict)


Partition = list[frozenset[int]]


def _partition(groups: dict[int, object], cpus: list[int]) -> Partition:
    members: dict[object, set[int]] = {}
    for cpu in cpus:
        members.setdefault(groups[cpu], set()).add(cpu)
    return sorted((frozenset(m) for m in members.values()), key=min)


def _groupings(host: HostDescription) -> list[tuple[str, Partition]]:
    """Every candidate grouping of the CPUs, by name."""
    cpus = host.cpus
    found = [("socket", _partition(host.package, cpus))]
    if host.node:
        found.append(("numa", _partition(host.node, cpus)))
    if host.die:
        found.append(("die", _partition({c: (host.package[c], host.die[c]) for c in cpus}, cpus)))
    found.append(("core", _partition({c: min(host.siblings[c]) for c in cpus}, cpus)))
    for name in ("l3", "l2"):
        level = int(name[1])
        sets = {cache.cpus & set(cpus) for cache in host.caches if cache.level == level and cache.kind != "instruction"}
        group_of = {c: min((s for s in sets if c in s), key=sorted) for c in cpus if any(c in s for s in sets)}
        if len(group_of) == len(cpus):  # a cache level some CPUs lack is no level of the tree
            found.append((name, _partition(group_of, cpus)))
    found.append(("pu", [frozenset([c]) for c in cpus]))
    return found


def _levels(host: HostDescription) -> list[tuple[str, Partition]]:
    """The distinct partitions, coarsest first (named by NAME_PRIORITY), each refining the last."""
    distinct: dict[tuple, tuple[str, Partition]] = {}
    for name, partition in _groupings(host):
        key = tuple(sorted(tuple(sorted(g)) for g in partition))
        if len(partition) == 1:
            continue
        known = distinct.get(key)
        if known is None or NAME_PRIORITY.index(name) < NAME_PRIORITY.index(known[0]):
            distinct[key] = (name, partition)
    levels = sorted(distinct.values(), key=lambda item: (len(item[1]), NAME_PRIORITY.index(item[0])))
    for (outer, outer_part), (inner, inner_part) in zip(levels, levels[1:]):
        owner = {cpu: index for index, group in enumerate(outer_part) for cpu in group}
        for group in inner_part:
            if len({owner[cpu] for cpu in group}) > 1:
                raise SpecError.at(
                    host.source,
                    f"the {inner} group of CPUs {_cpu_list(group)} spans several {outer} "
                    "groups: the sharing groups do not nest, so they are not a tree",
                )
    return levels


def _uniform_counts(host: HostDescription, levels: list[tuple[str, Partition]]) -> list[int]:
    """Children per domain at each level; an error names the first domain that differs."""
    counts = []
    outer: Partition = [frozenset(host.cpus)]
    outer_name = MACHINE
    for name, partition in levels:
        per_outer = [sum(1 for g in partition if g <= o) for o in outer]
        if len(set(per_outer)) > 1:
            odd = next(i for i, n in enumerate(per_outer) if n != per_outer[0])
            raise SpecError.at(
                host.source,
                f"not a uniform tree: the {outer_name} of CPUs {_cpu_list(outer[0])} has "
                f"{per_outer[0]} {name}(s) but the one of CPUs {_cpu_list(outer[odd])} has "
                f"{per_outer[odd]} (CPUs offline, or a hybrid processor?); tasksolve "
                "topologies need the same count in every domain of a level",
            )
        counts.append(per_outer[0])
        outer, outer_name = partition, name
    return counts


def _cpu_list(cpus) -> str:
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


def _context_order(levels: list[tuple[str, Partition]], cpus: list[int]) -> list[int]:
    """OS CPUs in depth-first order, children sorted by their lowest CPU number."""

    def walk(group: frozenset[int], depth: int) -> list[int]:
        if depth == len(levels):
            return sorted(group)
        children = sorted((g for g in levels[depth][1] if g <= group), key=min)
        return [cpu for child in children for cpu in walk(child, depth + 1)]

    return walk(frozenset(cpus), 0)


def _level_of(partition_sets: set[frozenset[int]], levels: list[tuple[str, Partition]], cpus: list[int]) -> str | None:
    if partition_sets == {frozenset(cpus)}:
        return MACHINE
    for name, partition in levels:
        if set(partition) == partition_sets:
            return name
    return None


def _resources(host: HostDescription, levels, capacities: dict[str, float], notes: list[str]) -> list[dict]:
    cpus = host.cpus
    found: dict[str, list[Cache]] = {}
    for cache in sorted(host.caches, key=lambda c: (c.level, c.kind != "data", min(c.cpus))):
        found.setdefault(cache.resource, []).append(cache)
    resources = []
    for name, caches in sorted(found.items(), key=lambda kv: (kv[1][0].level, kv[0])):
        sets = {c.cpus & set(cpus) for c in caches} - {frozenset()}
        level = _level_of(sets, levels, cpus)
        if level is None:
            notes.append(f"{name}: its sharing groups are not a level of the tree; left out")
            continue
        size = min((c.size for c in caches if c.size), default=None)
        kind = "instruction cache" if name.endswith("i") else "cache"
        what = f"L{caches[0].level} {kind}" + (f", {format_size(size)}" if size else "") + f" per {level}"
        resources.append({"name": name, "level": level, "capacity": 1.0, "description": what})
    level = _level_of(set(_partition(host.node, cpus)), levels, cpus) if host.node else None
    if level is not None:
        resources.append(
            {"name": "mem", "level": level, "capacity": 1.0, "description": f"memory of a NUMA node (per {level})"}
        )
    known = [r["name"] for r in resources]
    for name, value in capacities.items():
        if name not in known:
            raise SpecError.at(
                host.source,
                f"capacity given for `{name}`, which this host has no resource of "
                f"(resources: {', '.join(known)}){did_you_mean(name, known)}",
            )
        if not 0 < value <= 1e6:
            raise SpecError.at(host.source, f"capacity of `{name}` must be in (0, 1e6], got {value!r}")
    defaults = [r["name"] for r in resources if r["name"] not in capacities]
    for resource in resources:
        resource["capacity"] = float(capacities.get(resource["name"], 1.0))
    if defaults:
        notes.append(
            f"capacity 1.0 is a default for {', '.join(defaults)}: measure and override "
            "(--capacity NAME=VALUE) where it matters"
        )
    return resources


def build_topology(
    host: HostDescription,
    *,
    name: str | None = None,
    clock_hz: float | None = None,
    capacities: dict[str, float] | None = None,
) -> HostTopology:
    """The `Topology` of `host` (module docstring), with notes on every default value used."""
    if not host.package:
        raise SpecError.at(host.source, "no online CPU found")
    notes: list[str] = []
    levels = _levels(host)
    if not levels:  # a single CPU: one context
        levels = [("pu", [frozenset(host.cpus)])]
    counts = _uniform_counts(host, levels)
    order = _context_order(levels, host.cpus)
    clock = clock_hz or host.clock_hz
    if clock is None:
        clock = DEFAULT_CLOCK_HZ
        notes.append("clock 1GHz is a default (the source gives no frequency): override with --clock")
    resources = _resources(host, levels, dict(capacities or {}), notes)
    notes.append("no communication section: messages between threads cost nothing until one is added")
    shape = " > ".join(f"{level}: {n}" for (level, _), n in zip(levels, counts))
    data = {
        "name": name or host.name,
        "description": f"imported from {host.source}: {shape}",
        "clock": clock,
        "levels": [{"name": level, "count": n} for (level, _), n in zip(levels, counts)],
        "resources": resources,
    }
    names = Topology.model_validate(data).context_names
    topology = Topology.model_validate({**data, "os_cpus": dict(zip(names, order))})
    summary = {
        "cpus": len(host.cpus),
        "cores": len({host.siblings[c] for c in host.cpus}),
        "sockets": len(set(host.package.values())),
        "numa_nodes": len(set(host.node.values())) or 1,
    }
    return HostTopology(topology, notes, summary)
