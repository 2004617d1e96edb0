"""The tree of an imported host (`specs.importers.host`): levels from the sharing groups, and
which CPUs the tree holds.

Every grouping is a partition of the CPUs (sockets, NUMA nodes, dies, L3 groups, L2 groups,
cores); a partition with one group is the machine itself, and partitions that are equal are one
level (named after the first of socket, numa, die, core, l3, l2, pu); the levels are the distinct
partitions, coarsest first, each refining the one above.

A level whose domains do not all have the same number of children (a hybrid processor's L2
clusters of one P-core and of four E-cores, a package with cores offline) gives its count per
domain of the level above (`Level.count` as a list, `shape`): the topology holds exactly the
host's CPUs, none made up. A process may use only some of them (`usable`: allowed and online).
The tree is, in this order of preference:

1. the whole machine: its ``usable`` domains say which contexts plans may use (a container's
   cpuset);
2. the usable CPUs alone, when the whole machine is no tree (CPUs the source cannot place, with
   sysfs an offline one: `HostDescription.absent`; groups known only on the usable CPUs).

A host whose groups do not nest is refused with the group at fault.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from tasksolve.specs.errors import SpecError
from tasksolve.specs.importers.cpusets import Partition, cpu_list, cpus_phrase, level_of, partition_of, restricted
from tasksolve.specs.importers.description import HostDescription
from tasksolve.specs.importers.memory import node_map
from tasksolve.specs.topology import MACHINE, MAX_CONTEXTS, Topology

# When two groupings are the same partition of the CPUs, the level takes the first name here.
NAME_PRIORITY = ("socket", "numa", "die", "core", "l3", "l2", "pu")


def _complete(host: HostDescription, groups: dict, what: str) -> bool:
    """Whether every CPU has a `what` (False: the source has none); an error when only some do."""
    if not groups:
        return False
    missing = set(host.cpus) - set(groups)
    if missing:
        raise host.error(f"the {what} of {cpus_phrase(missing)} is not known: the machine is not a complete tree")
    return True


def _cache_groups(host: HostDescription, level: int) -> dict[int, frozenset[int]]:
    """CPU -> the CPUs sharing its data or unified cache of `level` (of the sets holding it, the
    first in sorted order when caches overlap). One pass over the caches' CPUs: linear in them."""
    cpus = frozenset(host.cpus)
    best: dict[int, frozenset[int]] = {}
    for cache in host.caches:
        if cache.level != level or cache.kind == "instruction":
            continue
        shared = cache.cpus if cache.cpus <= cpus else cache.cpus & cpus
        for cpu in shared:
            known = best.setdefault(cpu, shared)
            if known is not shared and known != shared and sorted(shared) < sorted(known):
                best[cpu] = shared
    return best


def _owners(outer: Partition) -> dict[int, int]:
    """CPU -> index of its group in `outer`."""
    return {cpu: index for index, group in enumerate(outer) for cpu in group}


def _children(outer: Partition, partition: Partition) -> list[list[frozenset[int]]]:
    """The groups of `partition` inside each group of `outer`, by their lowest CPU: a group-by on
    the owner of each group's lowest CPU (the levels nest: `levels_of` checked), O(n log n)."""
    owner = _owners(outer)
    children: list[list[frozenset[int]]] = [[] for _ in outer]
    for group in sorted(partition, key=min):
        children[owner[min(group)]].append(group)
    return children


def _groupings(host: HostDescription) -> list[tuple[str, Partition]]:
    """Every candidate grouping of the CPUs, by name."""
    cpus = host.cpus
    found = []
    if _complete(host, host.package, "package"):
        found.append(("socket", partition_of(host.package, cpus)))
    nodes = node_map(host.memory, frozenset(cpus))
    if nodes:
        found.append(("numa", partition_of(nodes, cpus)))
    if host.die and set(host.die) >= set(cpus):
        found.append(("die", partition_of({c: (host.package.get(c), host.die[c]) for c in cpus}, cpus)))
    if _complete(host, host.siblings, "core"):
        found.append(("core", partition_of({c: min(host.siblings[c]) for c in cpus}, cpus)))
    for name in ("l3", "l2"):
        group_of = _cache_groups(host, int(name[1]))
        if len(group_of) == len(cpus):  # a cache level some CPUs lack is no level of the tree
            found.append((name, partition_of(group_of, cpus)))
    found.append(("pu", [frozenset([c]) for c in cpus]))
    return found


def levels_of(host: HostDescription) -> list[tuple[str, Partition]]:
    """The distinct partitions, coarsest first (named by NAME_PRIORITY), each refining the last."""
    distinct: dict[frozenset[frozenset[int]], tuple[str, Partition]] = {}
    for name, partition in _groupings(host):
        key = frozenset(partition)
        if len(partition) == 1:
            continue
        known = distinct.get(key)
        if known is None or NAME_PRIORITY.index(name) < NAME_PRIORITY.index(known[0]):
            distinct[key] = (name, partition)
    levels = sorted(distinct.values(), key=lambda item: (len(item[1]), NAME_PRIORITY.index(item[0])))
    for (outer, outer_part), (inner, inner_part) in zip(levels, levels[1:]):
        owner = _owners(outer_part)
        for group in inner_part:
            if len({owner[cpu] for cpu in group}) > 1:
                raise host.error(
                    f"the {inner} group of CPUs {cpu_list(group)} spans several {outer} "
                    "groups: the sharing groups do not nest, so they are not a tree",
                    group,
                )
    return levels or [("pu", [frozenset(host.cpus)])]  # a single CPU: one context


def uniform_counts(host: HostDescription, levels: list[tuple[str, Partition]]) -> list[int]:
    """Children per domain at each level where the tree is uniform; an error names the first
    domain that differs (an imported tree need not be uniform: `shape` gives counts per domain)."""
    counts = []
    outer: Partition = [frozenset(host.cpus)]
    outer_name = MACHINE
    for name, partition in levels:
        per_outer = [len(kids) for kids in _children(outer, partition)]
        if len(set(per_outer)) > 1:
            odd = next(i for i, n in enumerate(per_outer) if n != per_outer[0])
            raise host.error(
                f"not a uniform tree: the {outer_name} of CPUs {cpu_list(outer[0])} has "
                f"{per_outer[0]} {name}(s) but the one of CPUs {cpu_list(outer[odd])} has "
                f"{per_outer[odd]} (CPUs offline, or a hybrid processor?)",
                outer[odd],
            )
        counts.append(per_outer[0])
        outer, outer_name = partition, name
    return counts


def layout(levels: list[tuple[str, Partition]], cpus: list[int]) -> tuple[list[int], dict[int, int]]:
    """The counts of the smallest uniform tree holding the levels (each the largest number of
    children a domain of the level has) and each CPU's context index in it, children ordered by
    their lowest CPU number (depth-first: for a uniform tree, the CPUs in context order)."""
    counts, outer = [], [frozenset(cpus)]
    position: list[dict[int, int]] = []
    for _, partition in levels:
        children = _children(outer, partition)
        counts.append(max(len(c) for c in children))
        position.append({cpu: i for kids in children for i, group in enumerate(kids) for cpu in group})
        outer = partition
    strides = [math.prod(counts[k + 1 :]) for k in range(len(counts))]
    return counts, {cpu: sum(position[k][cpu] * strides[k] for k in range(len(counts))) for cpu in cpus}


def shape(levels: list[tuple[str, Partition]], cpus: list[int]) -> list[int | list[int]]:
    """Each level's count: one number where every domain of the level above has as many children,
    else the count of each existing domain of the level above, in tree order (children by their
    lowest CPU, depth-first), as `Level.count` takes them."""
    found: list[int | list[int]] = []
    outer: Partition = [frozenset(cpus)]
    for _, partition in levels:
        children = _children(outer, partition)
        counts = [len(kids) for kids in children]
        found.append(counts[0] if len(set(counts)) == 1 else counts)
        outer = [group for kids in children for group in kids]
    return found


@dataclass
class Tree:
    """The host the tree is built on (the whole machine or its usable CPUs), its levels, counts
    (`counts` the widest, the tree held padded as `Topology` holds it; `shape` per domain), each
    CPU's context index, the CPUs plans may use, and the notes saying which."""

    host: HostDescription
    levels: list[tuple[str, Partition]]
    counts: list[int]
    shape: list[int | list[int]]
    context: dict[int, int]
    usable: frozenset[int]
    notes: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, host: HostDescription) -> Tree:
        levels = levels_of(host)
        counts, context = layout(levels, host.cpus)
        if math.prod(counts) > MAX_CONTEXTS:
            raise host.error(f"{math.prod(counts)} contexts: more than a topology holds ({MAX_CONTEXTS})")
        return cls(host, levels, counts, shape(levels, host.cpus), context, frozenset(host.cpus))

    @property
    def n_contexts(self) -> int:
        return math.prod(self.counts)

    @property
    def regular(self) -> bool:
        return all(isinstance(n, int) for n in self.shape)

    @property
    def usable_contexts(self) -> set[int]:
        return {self.context[cpu] for cpu in self.usable}


def _message(error: SpecError) -> str:
    return error.problems[0][4] if error.problems else str(error)


def _subset(host: HostDescription, usable: frozenset[int], whole: SpecError) -> Tree:
    """The tree of the usable CPUs alone (module docstring)."""
    try:
        tree = Tree.of(host.restricted(usable))
    except SpecError as error:
        why = f"{_message(error)}; {'; '.join(host.left_out)}; the whole machine is no tree either: {_message(whole)}"
        raise SpecError(host.source, [(*error.problems[0][:4], why)]) from None
    tree.notes = [*host.left_out, f"the tree holds the {len(usable)} usable CPUs alone ({_message(whole)})"]
    return tree


def choose_tree(host: HostDescription) -> Tree:
    """The tree of `host` (module docstring: the whole machine, else its usable CPUs)."""
    cpus = frozenset(host.cpus)
    usable = cpus if host.usable is None else host.usable & cpus
    if not usable:
        raise host.error(f"no CPU a plan may use: {'; '.join(host.left_out) or 'none is online'}")
    try:
        tree = Tree.of(host)
    except SpecError as whole:
        if usable == cpus:
            raise
        return _subset(host, usable, whole)
    tree.usable = usable
    tree.notes = list(host.left_out)
    if usable != cpus:
        tree.notes.append(
            f"the tree is the whole machine ({len(cpus)} CPUs); plans may use only its {len(usable)} usable "
            f"context{'s' if len(usable) > 1 else ''} ({cpus_phrase(usable)}: the topology's `usable` list)"
        )
    return tree


def cover_domains(topology: Topology, chosen: set[int]) -> list[str]:
    """The fewest domain names whose existing contexts are exactly the `chosen` context indices
    (a domain all of whose contexts are chosen is named whole)."""
    present = topology.present[-1] if topology.present is not None else range(topology.n_contexts)

    def cover(level: int, domain: int) -> list[str]:
        contexts = [c for c in topology.contexts_of(level, domain) if c in present]
        inside = sum(1 for c in contexts if c in chosen)
        if inside == 0:
            return []
        if inside == len(contexts):
            return [topology.domain_name(level, domain)]
        width = topology.counts[level + 1]
        return [name for child in range(domain * width, (domain + 1) * width) for name in cover(level + 1, child)]

    return [name for domain in range(topology.counts[0]) for name in cover(0, domain)]


def kinds(tree: Tree) -> dict[str, str]:
    """The level of each kind of hwloc object the source has: package, core, PU."""
    cpus = frozenset(tree.host.cpus)
    found = {"pu": tree.levels[-1][0]}
    if tree.host.package:
        found["package"] = level_of(partition_of(tree.host.package, cpus), tree.levels, cpus, tree.usable) or "?"
    if tree.host.siblings:
        groups = {frozenset(tree.host.siblings[c] & cpus) for c in cpus}
        found["core"] = level_of(groups, tree.levels, cpus, tree.usable) or "?"
    return found


def claimed_count(tree: Tree, level: str | None) -> int:
    """Domains of `level` holding a usable CPU (1 for the machine, 0 for no level)."""
    if level is None:
        return 0
    if level == MACHINE:
        return 1
    partition = dict(tree.levels).get(level)
    return len(restricted(partition, tree.usable)) if partition else 0
