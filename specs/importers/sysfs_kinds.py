"""Kinds of CPU from Linux sysfs (`specs.importers.sysfs`): hybrid processors, big.LITTLE.

Read as the kernel documents them:

* ``devices/cpu_core/cpus`` and ``devices/cpu_atom/cpus``: on an Intel hybrid processor the
  perf subsystem registers one PMU per kind of core, each listing the CPUs it covers
  (Documentation/ABI/testing/sysfs-bus-event_source-devices-hybrid): the kinds ``P``
  (cpu_core) and ``E`` (cpu_atom);
* ``devices/system/cpu/cpuN/cpu_capacity`` (Documentation/ABI/testing/sysfs-devices-system-cpu:
  "capacity of cpuX", Documentation/scheduler/sched-capacity.rst: the work a CPU does per second
  relative to the most capable one, which has 1024): CPUs of different capacities are kinds of
  their own where no PMU says more (Arm big.LITTLE, DynamIQ), ranked by capacity;
* ``devices/system/cpu/cpuN/cpufreq/cpuinfo_max_freq`` (kHz, Documentation/admin-guide/pm/
  cpufreq.rst): a kind's highest clock is its CPUs' highest.

CPUs whose highest clocks differ while Linux reports no kinds (a few "favoured" cores that turbo
higher) are treated alike, and a note says so.
"""

from __future__ import annotations

from pathlib import Path

from tasksolve.specs.errors import SpecError
from tasksolve.specs.importers.cpusets import cpus_phrase
from tasksolve.specs.importers.description import HostKind
from tasksolve.specs.importers.sysfs_usable import cpu_set, integer
from tasksolve.specs.units import CLOCK_RANGE, format_frequency

CAPACITY_SCALE = 1024  # SCHED_CAPACITY_SCALE: the most capable CPU's capacity
HYBRID_PMUS = (("P", "cpu_core", 1), ("E", "cpu_atom", 0))  # name, PMU folder, rank


def max_clock(path: Path) -> float | None:
    """``cpuinfo_max_freq``: kHz (Documentation/admin-guide/pm/cpufreq.rst), within a clock's range."""
    khz = integer(path)
    low, high = CLOCK_RANGE
    if khz is not None and not low <= khz * 1e3 <= high:
        raise SpecError.at(str(path), f"{khz} kHz is not a processor clock (1MHz to 100GHz)", 1, 1)
    return khz * 1e3 if khz is not None else None


def _capacity(path: Path) -> int | None:
    value = integer(path)
    if value is not None and not 0 < value <= CAPACITY_SCALE:
        raise SpecError.at(str(path), f"a CPU capacity is 1-{CAPACITY_SCALE} (SCHED_CAPACITY_SCALE), got {value}", 1, 1)
    return value


def _groups(root: Path, capacities: dict[int, int | None], machine: frozenset[int]) -> list[tuple]:
    """(name, CPUs, origin, rank) of each kind: the hybrid PMUs', else one per capacity."""
    found = []
    for name, pmu, rank in HYBRID_PMUS:
        cpus = (cpu_set(root / "devices" / pmu / "cpus") or frozenset()) & machine
        if cpus:
            found.append((name, cpus, f"Linux {pmu} PMU", rank))
    if found:
        return found
    levels = sorted({value for value in capacities.values() if value is not None})
    if len(levels) < 2:
        return []
    return [
        (None, frozenset(c for c, v in capacities.items() if v == value), "Linux cpu_capacity", rank)
        for rank, value in enumerate(levels)
    ]


def _kind(group: tuple, clocks: dict[int, float | None], capacities: dict[int, int | None]) -> HostKind:
    name, cpus, origin, rank = group
    known = sorted({clocks[c] for c in cpus if clocks[c] is not None})
    detail = []
    if len(known) > 1:
        detail.append(
            f"highest clocks {format_frequency(known[0])} to {format_frequency(known[-1])}: the highest taken"
        )
    values = [capacities[c] for c in cpus]
    capacity = max(values) / CAPACITY_SCALE if None not in values else None
    if capacity is not None and len(set(values)) > 1:
        detail.append(f"capacities {min(values)} to {max(values)}: the highest taken")
    return HostKind(cpus, rank, name, known[-1] if known else None, capacity, origin, "; ".join(detail))


def read_kinds(root: Path, folders: dict[int, Path], machine: frozenset[int]) -> tuple[list[HostKind], list[str]]:
    """The kinds of CPU Linux reports under a sysfs `root` (module docstring), and notes."""
    clocks = {cpu: max_clock(folders[cpu] / "cpufreq" / "cpuinfo_max_freq") for cpu in sorted(machine)}
    capacities = {cpu: _capacity(folders[cpu] / "cpu_capacity") for cpu in sorted(machine)}
    kinds = [_kind(group, clocks, capacities) for group in _groups(root, capacities, machine)]
    notes = []
    differ = sorted({hz for hz in clocks.values() if hz is not None})
    if not kinds and len(differ) > 1:
        fastest = [cpu for cpu, hz in clocks.items() if hz == differ[-1]]
        notes.append(
            f"the CPUs' highest clocks differ ({format_frequency(differ[0])} to {format_frequency(differ[-1])}, "
            f"the highest on {cpus_phrase(fastest)}) but Linux reports no kinds of CPU (no hybrid PMU, a single "
            "cpu_capacity): the topology treats them alike"
        )
    return kinds, notes
