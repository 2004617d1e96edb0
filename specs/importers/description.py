"""What an importer read of a host (`specs.importers.host`): per CPU its groups, the caches, the
NUMA nodes, the kinds of CPU, and which CPUs a plan may use."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from tasksolve.specs.errors import SpecError
from tasksolve.specs.importers.memory import Memory, memories_from_nodes

Position = tuple[int, int]


@dataclass(frozen=True)
class Cache:
    """One cache instance: its level, kind (data, instruction, unified), size, the CPUs sharing
    it, and hwloc's subtype when it has one (``MemorySideCache``)."""

    level: int
    kind: str
    size: int | None
    cpus: frozenset[int]
    subtype: str | None = None

    @property
    def resource(self) -> str:
        return f"l{self.level}{'i' if self.kind == 'instruction' else ''}"


@dataclass(frozen=True)
class HostKind:
    """A kind of CPU the source reports (hwloc's ``cpukind``, Linux's hybrid PMUs ``cpu_core`` and
    ``cpu_atom`` or its ``cpu_capacity``): its CPUs, its rank (0 the least powerful, as hwloc
    ranks kinds), its name where the source gives one, its highest clock (Hz) and its capacity
    relative to the most capable CPU (Linux's capacity over 1024), where known; `origin` says
    where it was read, `detail` what else the source says of it."""

    cpus: frozenset[int]
    rank: int
    name: str | None = None
    max_hz: float | None = None
    capacity: float | None = None
    origin: str = ""
    detail: str = ""


@dataclass
class HostDescription:
    """What an importer read: per CPU (OS number) its groups, the caches and the NUMA nodes.

    `machine` holds every CPU whose place in the machine is known (default: the keys of
    `package`), `usable` those a plan may use -- allowed to the process and online (None: all);
    `left_out` says why the others are not usable, `notes` what else the reader could not
    represent. `absent` holds the CPUs the source knows of but cannot place (offline CPUs, which
    sysfs has no topology folder for): the tree may be padded for them, and no placeholder
    context takes their numbers. `package` and `siblings` may be empty when the source has no packages or cores.
    `positions` locates a group of CPUs (a package, a core ...) in the source, for messages.
    `kinds` are the kinds of CPU the source reports (none: every CPU alike); `devices` the
    devices with the CPUs local to each.
    """

    source: str
    package: dict[int, int]
    siblings: dict[int, frozenset[int]]
    die: dict[int, int] = field(default_factory=dict)
    node: dict[int, int] = field(default_factory=dict)
    caches: set[Cache] = field(default_factory=set)
    clock_hz: float | None = None
    name: str = "host"
    machine: frozenset[int] = frozenset()
    usable: frozenset[int] | None = None
    absent: frozenset[int] = frozenset()
    left_out: list[str] = field(default_factory=list)
    memories: list[Memory] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    positions: dict[frozenset[int], Position] = field(default_factory=dict)
    kinds: list[HostKind] = field(default_factory=list)
    devices: list = field(default_factory=list)  # `hwloc_devices.HostDevice`: NICs, GPUs, drives

    @property
    def cpus(self) -> list[int]:
        return sorted(self.machine or self.package)

    @property
    def memory(self) -> list[Memory]:
        """The NUMA nodes: those read, else the plain ones of `node`."""
        return self.memories or memories_from_nodes(self.node)

    def restricted(self, cpus: frozenset[int]) -> HostDescription:
        """This host seen on `cpus` alone (the usable CPUs, when the whole machine is no tree)."""

        def keep(groups: dict[int, int]) -> dict[int, int]:
            return {cpu: value for cpu, value in groups.items() if cpu in cpus}

        positions: dict[frozenset[int], Position] = {}
        for group, where in self.positions.items():
            positions.setdefault(group & cpus, where)
        return replace(
            self,
            package=keep(self.package),
            siblings={cpu: group & cpus for cpu, group in self.siblings.items() if cpu in cpus},
            die=keep(self.die),
            node=keep(self.node),
            caches={replace(c, cpus=c.cpus & cpus) for c in self.caches if c.cpus & cpus},
            memories=self.memory,
            machine=frozenset(cpus),
            positions=positions,
        )

    def error(self, message: str, group: frozenset[int] | None = None) -> SpecError:
        """A `SpecError` in the source, at the object of `group` where the reader located it."""
        line, column = self.positions.get(group, (None, None)) if group is not None else (None, None)
        return SpecError.at(self.source, message, line, column)
