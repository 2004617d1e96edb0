"""The kinds of CPU an importer read (`HostKind`) as a topology's ``kinds`` (`specs.cpu_kinds`).

* each kind holding a CPU of the tree is a kind of the topology, the most powerful first, named
  as the source names it (hwloc's ``CoreType``, ``P``/``E`` for Linux's ``cpu_core``/``cpu_atom``
  -- and for hwloc's ``IntelCore``/``IntelAtom``, the same cores, so that a spec's cycles per kind
  carry from one import to the other) or by its rank (``kind0`` the least powerful, as hwloc ranks kinds); its ``domains`` are the
  fewest domain names holding exactly its contexts (`tree.cover_domains`: a whole L2 cluster of
  E-cores is one name);
* its speed: its own ``clock`` where the source gives its highest frequency (the topology's clock
  is the fastest kind's, unless overridden), else ``speed`` from its capacity (Linux's
  ``cpu_capacity`` / 1024: the work per second relative to the most capable CPU, clock and IPC
  together); where both are known the capacity left over by the clock is the kind's relative
  ``ipc`` (capacity 600/1024 at 3.9 vs 5.1 GHz: IPC 0.77);
* CPUs in no kind the source reports form one more kind, ``other``, without ``domains``.

The notes say what the model does not get from the source: a kind whose speed is unknown (taken
at the topology's clock), kinds the source ranks apart at the same speed, IPC left at 1 where no
capacity tells it.
"""

from __future__ import annotations

import re

from tasksolve.specs.fields import NAME_PATTERN
from tasksolve.specs.importers.cpusets import cpus_phrase
from tasksolve.specs.importers.description import HostKind
from tasksolve.specs.importers.tree import cover_domains
from tasksolve.specs.topology import Topology
from tasksolve.specs.units import format_frequency

REST = "other"
# hwloc's CoreType of Intel's hybrid cores, named as Linux's PMUs are (`specs.importers.sysfs_kinds`)
SAME_AS_LINUX = {"IntelCore": "P", "IntelAtom": "E"}


def _round(value: float) -> float:
    """Four significant digits, within what a kind's `speed` and `ipc` take (a corrupt source's
    extreme ratio is held at the bound; its description keeps the figures read)."""
    return min(max(float(f"{value:.4g}"), 1e-3), 1000.0)


def kinds_clock(kinds: list[HostKind], clock_hz: float | None, what: str) -> tuple[float | None, list[str]]:
    """The topology's clock: with two kinds or more, the fastest kind's highest frequency (so that
    its speed is 1); else the clock given, else the kinds' frequency. `what` names the source."""
    fastest = max((kind.max_hz for kind in kinds if kind.max_hz is not None), default=None)
    if fastest is None or (len(kinds) < 2 and clock_hz is not None):
        return clock_hz, []
    which = "the fastest CPU kind's" if len(kinds) > 1 else "the CPUs'"
    note = f"clock {format_frequency(fastest)}: {which} highest frequency ({what}); override with --clock"
    if clock_hz is not None and clock_hz != fastest:
        note += f" (the source also says {format_frequency(clock_hz)}: a base clock)"
    return fastest, [note]


def kind_names(kinds: list[HostKind]) -> list[str]:
    """A valid, distinct name per kind: the source's (cleaned to letters, digits, ``_`` and
    ``-``), else ``kind<rank>``; a repeated name gets ``_2``, ``_3`` ..."""
    names: list[str] = []
    for kind in kinds:
        source = SAME_AS_LINUX.get(kind.name or "", kind.name or "")
        base = re.sub(r"[^A-Za-z0-9_-]", "_", source)[:60] or f"kind{kind.rank}"
        if not re.match(NAME_PATTERN, base):
            base = f"k{base}"
        name, n = base, 1
        while name in names or name == REST:
            n += 1
            name = f"{base}_{n}"
        names.append(name)
    return names


def _speeds(kinds: list[HostKind], clock: float) -> list[dict]:
    """Each kind's ``clock``, ``speed`` or ``ipc`` (module docstring)."""
    capable = max((k for k in kinds if k.capacity is not None), key=lambda k: k.capacity, default=None)
    reference = 1.0  # the most capable kind's speed relative to the topology's clock
    if capable is not None and capable.max_hz is not None:
        reference = capable.max_hz / clock
    out = []
    for kind in kinds:
        entry: dict = {}
        relative = kind.capacity / capable.capacity if capable is not None and kind.capacity is not None else None
        if kind.max_hz is not None:
            entry["clock"] = kind.max_hz
            ipc = _round(relative * capable.max_hz / kind.max_hz) if relative and capable.max_hz else 1.0
            if ipc != 1.0:
                entry["ipc"] = ipc
        elif relative is not None:
            entry["speed"] = _round(relative * reference)
        out.append(entry)
    return out


def _describe(kind: HostKind, cpus: frozenset[int]) -> str:
    parts = [kind.origin, cpus_phrase(cpus)]
    if kind.max_hz is not None:
        parts.append(f"{format_frequency(kind.max_hz)} at most")
    if kind.capacity is not None:
        parts.append(f"capacity {kind.capacity * 1024:.0f}/1024")
    return ", ".join(p for p in [*parts, kind.detail] if p)


def _unmodelled(names: list[str], kinds: list[HostKind], entries: list[dict]) -> list[str]:
    """What the kinds' speeds do not say (module docstring)."""
    found = []
    unknown = [name for name, entry in zip(names, entries) if not entry]
    if unknown:
        found.append(
            f"the speed of kind(s) {', '.join(unknown)} is unknown (no frequency or capacity in the source): "
            "taken as the topology's clock; set their `speed` or `clock`"
        )
    no_ipc = [name for name, kind, entry in zip(names, kinds, entries) if "clock" in entry and kind.capacity is None]
    if len(no_ipc) > 1:
        found.append(
            f"the kinds' instructions per cycle are not in the source (no capacity): `ipc` is 1 for "
            f"{', '.join(no_ipc)}; an E-core retires fewer per cycle -- set `ipc` or give tasks' cycles per kind"
        )
    by_speed: dict[tuple, list[str]] = {}
    for name, entry in zip(names, entries):
        if entry:
            by_speed.setdefault(tuple(sorted(entry.items())), []).append(name)
    for same in by_speed.values():
        if len(same) > 1:
            found.append(
                f"kinds {', '.join(same)} are ranked apart by the source but have the same speed here: set "
                "their `ipc` to tell them apart"
            )
    return found


def topology_kinds(
    kinds: list[HostKind], context: dict[int, int], topology: Topology
) -> tuple[dict[str, dict] | None, list[str]]:
    """The ``kinds`` of `topology` (None: fewer than two kinds hold its CPUs) from the kinds the
    source reports, `context` mapping each CPU of the tree to its context, and the notes."""
    held = [(kind, kind.cpus & context.keys()) for kind in kinds]
    notes = [
        f"CPU kind {kind.name or kind.rank} ({kind.origin}) holds no CPU of the tree: left out"
        for kind, cpus in held
        if not cpus
    ]
    held = sorted(((k, c) for k, c in held if c), key=lambda kc: -kc[0].rank)
    rest = frozenset(context) - frozenset().union(*(cpus for _, cpus in held))
    if len(held) + bool(rest) < 2 or not held:
        return None, notes
    ordered = [kind for kind, _ in held]
    names = kind_names(ordered)
    entries = _speeds(ordered, topology.clock)
    found: dict[str, dict] = {}
    for name, (kind, cpus), entry in zip(names, held, entries):
        domains = cover_domains(topology, {context[cpu] for cpu in cpus})
        described = _describe(kind, cpus)
        if "ipc" in entry:
            described += f"; IPC {entry['ipc']:g} relative: the capacity its clock leaves over"
        found[name] = {**entry, "domains": domains, "description": described}
    summary = "; ".join(f"{name}: {found[name]['description']}" for name in names)
    notes.append(f"{len(held)} CPU kinds ({summary}): the topology's `kinds` charge each thread its kind's speed")
    if rest:
        found[REST] = {"description": f"{cpus_phrase(rest)}, in no kind the source reports; speed unknown"}
        notes.append(
            f"{cpus_phrase(rest)} are in no kind the source reports: kind `{REST}`, taken at the topology's clock"
        )
    notes += _unmodelled(names, ordered, entries)
    return found, notes
