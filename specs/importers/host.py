"""A real machine as a tasksolve topology: levels from the hardware's sharing groups.

Both importers (`specs.importers.sysfs`, `specs.importers.hwloc`) first describe the host the
same way -- for every CPU its package, die and SMT siblings, the CPU sets that share each cache,
the NUMA nodes, and which CPUs the process may use (`HostDescription`) -- and `build_topology`
turns that description into a `Topology` (docs/design.md, "Real machines"):

* the levels are the distinct partitions of the CPUs by their sharing groups, coarsest first,
  each refining the one above; the innermost level is the single CPU (``pu``, hwloc's processing
  unit, or ``core`` without SMT) -- `specs.importers.tree`;
* the tree is the whole machine with its ``usable`` domains, else the usable CPUs, else one
  clear error naming the group that does not nest; a level whose domains have different numbers
  of children (a hybrid processor) gives its count per domain (`Level.count` as a list);
* children are ordered by their lowest OS CPU number, contexts depth-first, and every context
  keeps its OS CPU number (``os_cpus``);
* resources default from the caches (``l1``, ``l1i``, ``l2``, ``l3`` at the level of their
  sharing group) and memory (``mem`` per NUMA node, one resource per kind of memory:
  `specs.importers.memory`), each with capacity 1.0 -- the share of the resource a task's
  ``demand`` refers to -- unless overridden; the notes say which values are defaults, and what
  was left out;
* the kinds of CPU the source reports (`HostKind`) become the topology's ``kinds``, each with
  its clock, speed or IPC where known (`specs.importers.kinds`);
* the devices it reports (an hwloc file's NICs, GPUs and drives) become the topology's
  ``devices``, each at the innermost domain holding every CPU local to it (`specs.devices`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tasksolve.specs.errors import SpecError, did_you_mean
from tasksolve.specs.importers.cpusets import level_of, restricted
from tasksolve.specs.importers.description import Cache, HostDescription, HostKind
from tasksolve.specs.importers.kinds import topology_kinds
from tasksolve.specs.importers.memory import MemoryResource, memory_notes, memory_resources
from tasksolve.specs.importers.tree import Tree, choose_tree, claimed_count, cover_domains, kinds
from tasksolve.specs.topology import MAX_CONTEXTS, Topology
from tasksolve.specs.units import format_size

__all__ = ["Cache", "HostDescription", "HostKind", "HostTopology", "build_topology"]

DEFAULT_CLOCK_HZ = 1e9
MAX_DEVICES = 256  # a topology's `devices` hold at most this many


@dataclass
class HostTopology:
    """The imported topology, the notes saying which values are defaults and what was left out,
    the counts it claims (`summary`), and for each hwloc kind of object (``package``, ``core``,
    ``pu``) the level of the tree it is (`kinds`; absent: the source has none) and the names of
    the memory resources (`memory`, one instance per NUMA node)."""

    topology: Topology
    notes: list[str]
    summary: dict[str, int] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)
    memory: list[str] = field(default_factory=list)


def _cache_resources(tree: Tree, notes: list[str]) -> tuple[list[dict], dict[str, int]]:
    """A resource per cache level and kind at the level of its sharing groups, and the count of
    caches each claims (those of a usable CPU)."""
    cpus = frozenset(tree.host.cpus)
    found: dict[str, list[Cache]] = {}
    for cache in sorted(tree.host.caches, key=lambda c: (c.level, c.kind != "data", min(c.cpus))):
        found.setdefault(cache.resource, []).append(cache)
    resources, claimed = [], {}
    for name, caches in sorted(found.items(), key=lambda kv: (kv[1][0].level, kv[0])):
        groups = [c.cpus if c.cpus <= cpus else c.cpus & cpus for c in caches]
        level = level_of(groups, tree.levels, cpus, tree.usable)
        if level is None:
            notes.append(f"{name}: its sharing groups are not a level of the tree; left out")
            continue
        size = min((c.size for c in caches if c.size), default=None)
        kind = "instruction cache" if name.endswith("i") else "cache"
        subtypes = sorted({c.subtype for c in caches if c.subtype})
        what = f"L{caches[0].level} {kind}" + (f", {format_size(size)}" if size else "") + f" per {level}"
        what += f" (hwloc subtype {', '.join(subtypes)})" if subtypes else ""
        resources.append({"name": name, "level": level, "capacity": 1.0, "description": what})
        claimed[name] = len(restricted(groups, tree.usable))
    return resources, claimed


def _resources(
    tree: Tree, capacities: dict[str, float], notes: list[str]
) -> tuple[list[dict], list[MemoryResource], dict[str, int]]:
    """Caches and memories as resources, capacities checked and applied, defaults noted."""
    resources, claimed = _cache_resources(tree, notes)
    memory = memory_resources(tree.host.source, tree.host.memory, tree.levels, frozenset(tree.host.cpus), tree.usable)
    resources += [kind.resource() for kind in memory]
    notes += memory_notes(memory)
    known = [r["name"] for r in resources]
    for name, value in capacities.items():
        if name not in known:
            raise SpecError.at(
                tree.host.source,
                f"capacity given for `{name}`, which this host has no resource of "
                f"(resources: {', '.join(known)}){did_you_mean(name, known)}",
            )
        if not 0 < value <= 1e6:
            raise SpecError.at(tree.host.source, f"capacity of `{name}` must be in (0, 1e6], got {value!r}")
    defaults = [r["name"] for r in resources if r["name"] not in capacities]
    for resource in resources:
        resource["capacity"] = float(capacities.get(resource["name"], 1.0))
    if defaults:
        notes.append(
            f"capacity 1.0 is a default for {', '.join(defaults)}: measure and override "
            "(--capacity NAME=VALUE) where it matters"
        )
    return resources, memory, claimed


def _os_cpus(tree: Tree, topology: Topology) -> dict[str, int]:
    """Context path -> OS CPU, for every CPU of the tree, in context order."""
    return {topology.context_name(index): cpu for cpu, index in sorted(tree.context.items(), key=lambda kv: kv[1])}


def _shape_text(tree: Tree) -> str:
    """``l2: 10 > core: 1-4 > pu: 1-2`` (a range where the counts differ per domain)."""

    def count(n: int | list[int]) -> str:
        return str(n) if isinstance(n, int) else f"{min(n)}-{max(n)}"

    return " > ".join(f"{level}: {count(n)}" for (level, _), n in zip(tree.levels, tree.shape))


def _devices(host: HostDescription, tree: Tree, skeleton: Topology, notes: list[str]) -> dict[str, dict]:
    """Each device at the innermost domain holding every context local to it (`specs.devices`)."""
    out: dict[str, dict] = {}
    for device in host.devices[:MAX_DEVICES]:
        contexts = sorted(tree.context[cpu] for cpu in device.cpus if cpu in tree.context)
        if not contexts:
            continue
        level = min(skeleton.shared_level(contexts[0], c) for c in contexts)
        whole = level < 0 or len(contexts) == len(tree.context)
        at = "machine" if whole else skeleton.domain_name(level, skeleton.domain_of(contexts[0], level))
        out[device.name] = {"at": at, "kind": device.kind}
    if len(host.devices) > MAX_DEVICES:
        notes.append(f"{len(host.devices)} devices: the first {MAX_DEVICES} kept")
    return out


def build_topology(
    host: HostDescription,
    *,
    name: str | None = None,
    clock_hz: float | None = None,
    capacities: dict[str, float] | None = None,
) -> HostTopology:
    """The `Topology` of `host` (module docstring), with notes on every default value used and
    everything left out."""
    if not host.cpus:
        raise SpecError.at(host.source, "no online CPU found")
    if len(host.cpus) > MAX_CONTEXTS:
        raise SpecError.at(host.source, f"{len(host.cpus)} CPUs: more than a topology holds ({MAX_CONTEXTS})")
    tree = choose_tree(host)
    notes = [*tree.notes, *host.notes]
    clock = clock_hz or host.clock_hz
    if clock is None:
        clock = DEFAULT_CLOCK_HZ
        notes.append("clock 1GHz is a default (the source gives no frequency): override with --clock")
    resources, memory, _ = _resources(tree, dict(capacities or {}), notes)
    notes.append("no communication section: messages between threads cost nothing until one is added")
    irregular = "" if tree.regular else " (counts per domain: an irregular tree)"
    data = {
        "name": name or host.name,
        "description": f"imported from {host.source}: {_shape_text(tree)}{irregular}",
        "clock": clock,
        "levels": [{"name": level, "count": n} for (level, _), n in zip(tree.levels, tree.shape)],
        "resources": resources,
    }
    skeleton = Topology.model_validate(data)
    data["os_cpus"] = _os_cpus(tree, skeleton)
    if len(tree.usable) < len(tree.context):
        data["usable"] = cover_domains(skeleton, tree.usable_contexts)
    found_kinds, kind_notes = topology_kinds(host.kinds, tree.context, skeleton)
    if found_kinds:
        data["kinds"] = found_kinds
    notes += kind_notes
    data["devices"] = _devices(host, tree, skeleton, notes) or None
    topology = Topology.model_validate(data)
    found = kinds(tree)
    summary = {
        "cpus": len(tree.usable),
        "cores": claimed_count(tree, found.get("core")),
        "sockets": claimed_count(tree, found.get("package")),
        "numa_nodes": sum(kind.count for kind in memory) or 1,
    }
    return HostTopology(topology, notes, summary, found, [kind.name for kind in memory])
