"""Processor topologies: a tree of sharing domains, shared resources, communication costs.

A topology is a uniform tree given outermost level first (``core: 8 > pipe: 2 > strand: 4``);
the innermost level is the hardware context.  ``machine`` is the implicit root level.  Contexts
are numbered 0..n-1 in depth-first order, so the domain of context ``c`` at level ``k`` is
``c // stride[k]`` where ``stride[k]`` is the number of contexts in one domain of level ``k``.

Domain and context names are dotted paths of ``level+index`` (``core3``, ``core3.pipe1``,
``core3.pipe1.strand2``); ``machine`` names the root.

A topology imported from a real machine (`specs.importers`) also keeps each context's operating
system CPU number (``os_cpus``: context path -> OS CPU), so that plans can be pinned with
``taskset`` and friends (`specs.exporters.pinning`); `Topology.os_cpu` falls back to the flat
context index when the topology has none. Where the process may use only some of the host's CPUs
(a container's allowed cpuset, CPUs offline), ``usable`` names the domains it may use: a spec's
usable contexts (`Spec.usable_contexts`) never leave them.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import cached_property
from typing import Annotated, Literal

from pydantic import Field, model_validator

from tasksolve.specs.cpu_kinds import CpuKind
from tasksolve.specs.devices import Device
from tasksolve.specs.fields import (
    Capacity,
    Clock,
    Count,
    Label,
    Name,
    NonNegativeInt,
    Number,
    Share,
    Size,
    StrictModel,
    Text,
)

MACHINE = "machine"
MAX_CONTEXTS = 65_536


LevelCount = Annotated[Count, Field(le=MAX_CONTEXTS)]


class Level(StrictModel):
    """One level of the tree: `count` domains of this level inside each domain of the level above.

    A list gives each domain of the level above its own count, in order (a hybrid package:
    ``core: [1, 1, 1, 1, 1, 1, 1, 1, 4, 4]`` under ten L2 clusters)."""

    name: Name
    count: LevelCount | Annotated[list[LevelCount], Field(min_length=1, max_length=MAX_CONTEXTS)]

    @property
    def widest(self) -> int:
        """The most domains of this level under one domain of the level above."""
        return self.count if isinstance(self.count, int) else max(self.count)


class Resource(StrictModel):
    """A resource shared by all threads of one domain of `level` (or of the whole `machine`).

    Its `capacity` is a unitless number, or measured (``200GB/s``, ``100Gb/s``, ``32MiB``,
    ``20Mpps``): the model then holds it as 1 and converts the tasks' measured demands into
    shares of it (`specs.measured`)."""

    name: Name
    level: str
    capacity: Capacity = 1.0
    description: Text | None = None


class CacheCommunication(StrictModel):
    """Communication cost derived from the caches (LATA, DAC'10, Eq. 1-2).

    `latency[level]` is the access time (cycles) of the cache shared by one domain of `level`
    (``machine`` is main memory); `hit_rate[level]` the probability that a line is found there.
    A producer and a consumer whose innermost shared level is X pay, per cache line, the expected
    cost of looking the line up in the caches at X and outward:
    ``T_X*h_X + T_Y*(1-h_X)*h_Y + ... + T_mem*prod(1-h)``, which for a pair sharing L1 is LATA's
    Eq. 2 ``T_L1*h1 + T_L2*(1-h1)*h2 + T_mem*(1-h1)*(1-h2)``; Eq. 1 multiplies it by the message
    size in lines (rounded up; a message of 0 bytes costs nothing).
    """

    model: Literal["cache"]
    line: Size = 64
    latency: dict[str, Annotated[Number, Field(ge=0, le=1e9)]]
    hit_rate: dict[str, Share] = {}


class DirectCommunication(StrictModel):
    """Cycles per message, keyed by the innermost level producer and consumer share."""

    model: Literal["direct"] = "direct"
    cycles: dict[str, Annotated[Number, Field(ge=0, le=1e9)]]


def _communication_form(value: object) -> object:
    """``{pipe: 4, core: 4, machine: 40}`` is the direct form; ``{model: cache, ...}`` the cache one."""
    if isinstance(value, dict) and "model" not in value:
        return {"model": "direct", "cycles": value}
    return value


class Topology(StrictModel):
    """A processor: levels (outermost first), shared resources, communication costs, clock."""

    name: Label
    description: Text | None = None
    clock: Clock
    levels: Annotated[list[Level], Field(min_length=1, max_length=8)]
    resources: list[Resource] = []
    communication: Annotated[DirectCommunication | CacheCommunication, Field(discriminator="model")] | None = None
    icache: Count | None = Field(
        default=None,
        description="instructions one hardware context's instruction cache holds (LATA, DAC'10 §4: "
        "a thread's tasks' code_size must fit); none: no limit",
    )
    os_cpus: dict[str, NonNegativeInt] | None = Field(
        default=None,
        description="operating-system CPU number of each hardware context (context path -> "
        "CPU), as imported from the host; without it context i is CPU i",
    )
    usable: list[str] | None = Field(
        default=None,
        description="the domains (or contexts) plans may use -- on an imported host, the CPUs "
        "allowed to the process and online; none: every context",
    )
    devices: Annotated[dict[Name, Device], Field(max_length=256)] | None = Field(
        default=None,
        description="devices (NIC, GPU, NVMe) and the domain each is attached to (`specs.devices`)",
    )
    kinds: Annotated[dict[Name, CpuKind], Field(max_length=16)] | None = Field(
        default=None,
        description="kinds of core (a hybrid processor's P and E cores), each with its speed and "
        "the domains it covers; none: every context alike",
    )

    @model_validator(mode="before")
    @classmethod
    def _communication_shorthand(cls, data: object) -> object:
        if isinstance(data, dict) and "communication" in data:
            data = {**data, "communication": _communication_form(data["communication"])}
        return data

    # ----------------------------------------------------------------- structure
    @cached_property
    def level_names(self) -> list[str]:
        return [level.name for level in self.levels]

    @cached_property
    def counts(self) -> list[int]:
        """Domains of each level under one domain of the level above; where a level lists its
        counts (an irregular tree), the largest: the tree is held padded to a uniform one whose
        extra domains do not exist (`present_contexts`)."""
        return [level.widest for level in self.levels]

    @cached_property
    def regular(self) -> bool:
        return all(isinstance(level.count, int) for level in self.levels)

    @cached_property
    def present(self) -> list[frozenset[int]] | None:
        """Per level, the domains that exist in an irregular tree (None for a uniform one).

        A level's list gives one count per existing domain of the level above, in index order;
        a single count applies to each of them (`specs.checks` checks the list lengths)."""
        if self.regular:
            return None
        parents, out = [0], []
        for level in self.levels:
            width = level.widest
            counts = [level.count] * len(parents) if isinstance(level.count, int) else level.count
            parents = [p * width + j for p, n in zip(parents, counts) for j in range(n)]
            out.append(frozenset(parents))
        return out

    @cached_property
    def present_contexts(self) -> list[int]:
        """The contexts that exist (every one of a uniform tree), in index order."""
        if self.present is None:
            return list(range(self.n_contexts))
        return sorted(self.present[-1])

    def exists(self, level: int, domain: int) -> bool:
        return level < 0 or self.present is None or domain in self.present[level]

    # ----------------------------------------------------------------- kinds of core
    @cached_property
    def kind_names(self) -> list[str]:
        """The kinds of core, in the order given (one unnamed kind when the topology has none)."""
        return list(self.kinds) if self.kinds else [""]

    @cached_property
    def kind_speeds(self) -> list[float]:
        """Each kind's cycles per second relative to `clock` (`CpuKind.relative_speed`)."""
        if not self.kinds:
            return [1.0]
        return [kind.relative_speed(self.clock) for kind in self.kinds.values()]

    @cached_property
    def context_kinds(self) -> list[int]:
        """The kind (index into `kind_names`) of every context; the kind without `domains`
        takes the contexts no other kind names (`specs.checks` refuses overlaps and gaps)."""
        kinds = [0] * self.n_contexts
        if not self.kinds:
            return kinds
        for index, kind in enumerate(self.kinds.values()):
            if kind.domains is None:
                kinds = [index] * self.n_contexts
        for index, kind in enumerate(self.kinds.values()):
            for name in kind.domains or ():
                for context in self.contexts_of(*self.parse_domain(name)):
                    kinds[context] = index
        return kinds

    def kind_of(self, context: int) -> str:
        return self.kind_names[self.context_kinds[context]]

    @cached_property
    def n_contexts(self) -> int:
        return math.prod(self.counts)

    @cached_property
    def strides(self) -> list[int]:
        """Contexts in one domain of each level (the last is 1: a context)."""
        return [math.prod(self.counts[k + 1 :]) for k in range(len(self.counts))]

    @property
    def shared_level_names(self) -> list[str]:
        """Levels two distinct contexts can share, innermost first, ending with ``machine``."""
        return list(reversed(self.level_names[:-1])) + [MACHINE]

    def level_index(self, name: str) -> int:
        """Index of a level by name; ``machine`` is -1."""
        return -1 if name == MACHINE else self.level_names.index(name)

    def domain_count(self, level: int) -> int:
        """Number of domains of a level in the machine (level -1 is the machine itself)."""
        return 1 if level < 0 else math.prod(self.counts[: level + 1])

    def domain_of(self, context: int, level: int) -> int:
        return 0 if level < 0 else context // self.strides[level]

    def contexts_of(self, level: int, domain: int) -> range:
        if level < 0:
            return range(self.n_contexts)
        stride = self.strides[level]
        return range(domain * stride, (domain + 1) * stride)

    def shared_level(self, a: int, b: int) -> int:
        """Innermost level whose domain holds both contexts (-1: only the machine)."""
        for k in range(len(self.levels) - 1, -1, -1):
            if a // self.strides[k] == b // self.strides[k]:
                return k
        return -1

    # ----------------------------------------------------------------- names
    def context_name(self, context: int) -> str:
        return self.domain_name(len(self.levels) - 1, context)

    def domain_name(self, level: int, domain: int) -> str:
        if level < 0:
            return MACHINE
        parts = []
        for k in range(level, -1, -1):
            parts.append(f"{self.levels[k].name}{domain % self.counts[k]}")
            domain //= self.counts[k]
        return ".".join(reversed(parts))

    @cached_property
    def context_names(self) -> list[str]:
        return [self.context_name(c) for c in range(self.n_contexts)]

    def parse_domain(self, text: str) -> tuple[int, int]:
        """``core3.pipe1`` -> (level index, domain index); raises ValueError with a suggestion."""
        from tasksolve.specs.errors import did_you_mean

        if text == MACHINE:
            return -1, 0
        if not isinstance(text, str) or not text:
            raise ValueError(f"expected a domain name such as `{self.domain_name(0, 0)}`, got {text!r}")
        domain = 0
        parts = text.split(".")
        if len(parts) > len(self.levels):
            raise ValueError(f"`{text}` has more parts than the topology has levels ({' > '.join(self.level_names)})")
        for k, part in enumerate(parts):
            expected = self.levels[k].name
            digits = part[len(expected) :]
            if part.startswith(expected) and digits.isdigit():
                index = int(digits)
            else:
                name = part.rstrip("0123456789")
                if not name or name == part:
                    raise ValueError(f"`{part}` in `{text}` is not of the form `{expected}<index>`")
                if name in self.level_names:
                    raise ValueError(
                        f"`{text}`: levels go outermost first ({' > '.join(self.level_names)}); "
                        f"expected `{expected}` where `{name}` is"
                    )
                raise ValueError(f"unknown level `{name}` in `{text}`{did_you_mean(name, self.level_names)}")
            if index >= self.counts[k]:
                raise ValueError(
                    f"`{text}`: {expected} index {index} is out of range ({expected}0..{expected}{self.counts[k] - 1})"
                )
            domain = domain * self.counts[k] + index
            if not self.exists(k, domain):
                parent = ".".join(parts[:k]) or MACHINE
                have = sum(1 for j in range(self.counts[k]) if self.exists(k, domain - index + j))
                raise ValueError(
                    f"`{text}` does not exist: {parent} has {have} {expected}(s) ({expected}0..{have - 1})"
                )
        return len(parts) - 1, domain

    def parse_context(self, text: str) -> int:
        """A full context path (down to the innermost level) -> context index."""
        level, domain = self.parse_domain(text)
        if level != len(self.levels) - 1:
            raise ValueError(
                f"`{text}` is a domain, not a hardware context; name one down to the "
                f"`{self.levels[-1].name}` level, e.g. `{self.context_name(self.contexts_of(level, domain)[0])}`"
            )
        return domain

    # ----------------------------------------------------------------- OS CPU numbers
    @cached_property
    def os_cpu_list(self) -> list[int]:
        """The OS CPU number of every context in context order (the flat index where none is given)."""
        numbers = list(range(self.n_contexts))
        if self.present is not None:  # an irregular tree: the existing contexts numbered in order
            rank = {c: i for i, c in enumerate(self.present_contexts)}
            numbers = [rank.get(c, -1) for c in range(self.n_contexts)]
        for name, cpu in (self.os_cpus or {}).items():
            numbers[self.parse_context(name)] = cpu
        if self.present is not None:  # the missing contexts: numbers above every existing one's
            spare = max(numbers) + 1
            numbers = [n if c in rank else spare + c for c, n in enumerate(numbers)]
        return numbers

    def os_cpu(self, context: int) -> int:
        """The operating system's CPU number of context `context` (its flat index when the
        topology carries no ``os_cpus``)."""
        return self.os_cpu_list[context]

    @cached_property
    def usable_contexts(self) -> list[int]:
        """The existing contexts inside the `usable` domains (every one when it is absent)."""
        if self.usable is None:
            return self.present_contexts
        found: set[int] = set()
        for name in self.usable:
            found.update(self.contexts_of(*self.parse_domain(name)))
        if self.present is not None:
            found &= self.present[-1]
        return sorted(found)

    # ----------------------------------------------------------------- resources
    def resource(self, name: str) -> Resource:
        for resource in self.resources:
            if resource.name == name:
                return resource
        raise KeyError(name)

    @property
    def resource_names(self) -> list[str]:
        return [r.name for r in self.resources]

    # ----------------------------------------------------------------- communication
    def message_cycles(self, shared_level: int, size: int) -> float:
        """Cycles a consumer pays for one message of `size` bytes from a producer whose context
        shares `shared_level` (innermost common level; -1 machine) with its own.

        Direct form: the per-level cost.  Cache form: LATA Eq. 1-2 (see `CacheCommunication`).
        With no communication section, messages are free.
        """
        comm = self.communication
        if comm is None:
            return 0.0
        if isinstance(comm, DirectCommunication):
            name = MACHINE if shared_level < 0 else self.level_names[shared_level]
            return comm.cycles.get(name, 0.0)
        if size <= 0:
            return 0.0
        lines = math.ceil(size / comm.line)
        return lines * self._cache_line_cost(shared_level)

    def average_message_cycles(self, size: int) -> float:
        """Location-independent cost of one message of `size` bytes, for scheduling before the
        mapping is known (LATA, DAC'10 §2.2).  Cache form: Eq. 2 from the innermost cache outward,
        ``T_L1*h1 + T_L2*(1-h1)*h2 + T_mem*(1-h1)*(1-h2)`` per line, times the lines (Eq. 1).
        Direct form (the paper is silent; our choice): the mean over ordered pairs of distinct
        contexts of the cost at the level they share."""
        comm = self.communication
        if comm is None:
            return 0.0
        if isinstance(comm, CacheCommunication):
            return self.message_cycles(len(self.levels) - 1, size)
        present = self.present_contexts  # an irregular tree's padding holds no context
        n = len(present)
        if n < 2:
            return self.message_cycles(len(self.levels) - 1, size)

        def pairs_inside(k: int) -> int:  # ordered pairs of distinct contexts sharing level k or deeper
            sizes = Counter(c // self.strides[k] for c in present).values()
            return sum(m * (m - 1) for m in sizes)

        inside = [pairs_inside(k) for k in range(len(self.levels))] + [0]
        total = (n * (n - 1) - inside[0]) * self.message_cycles(-1, size)
        for k in range(len(self.levels)):
            total += (inside[k] - inside[k + 1]) * self.message_cycles(k, size)
        return total / (n * (n - 1))

    def _cache_line_cost(self, shared_level: int) -> float:
        comm = self.communication
        assert isinstance(comm, CacheCommunication)
        outward = [self.level_names[k] for k in range(shared_level, -1, -1)] if shared_level >= 0 else []
        outward.append(MACHINE)
        cost, miss = 0.0, 1.0
        for name in outward:
            if name not in comm.latency:
                continue
            hit = 1.0 if name == MACHINE else comm.hit_rate.get(name, 1.0)
            cost += comm.latency[name] * miss * hit
            miss *= 1.0 - hit
        return cost

    def describe(self) -> str:
        """``core: 8 > pipe: 2 > strand: 4 (64 contexts)``."""

        def count(level: Level) -> str:
            if isinstance(level.count, int):
                return str(level.count)
            low, high = min(level.count), max(level.count)
            return str(low) if low == high else f"{low}-{high}"

        shape = " > ".join(f"{level.name}: {count(level)}" for level in self.levels)
        usable = f", {len(self.usable_contexts)} usable" if self.usable is not None else ""
        kinds = ""
        if self.kinds:
            seen = [self.context_kinds[c] for c in self.present_contexts]
            kinds = "; " + ", ".join(f"{seen.count(k)} {name}" for k, name in enumerate(self.kind_names))
        return f"{shape} ({len(self.present_contexts)} contexts{usable}{kinds})"
