"""What an hwloc XML file says that a tasksolve topology does not model, said in notes.

* CPU kinds (hwloc's ``<cpukind cpuset=...>`` elements: hybrid processors, P and E cores,
  big.LITTLE), each with ``<info name="FrequencyMaxMHz">``, ``CoreType`` and an efficiency rank
  (``efficiency`` or ``forced_efficiency``: 0 is the least powerful kind). A topology's contexts
  are identical, so the import names each kind, its CPUs and relative speed, and says that plans
  treat them alike. The frequency is also the clock when nothing else gives one.
* memory-side caches (``MemCache`` objects in front of NUMA nodes): part of the way to the
  memory behind them, which is what the memory resources stand for.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

from tasksolve.specs.importers.cpusets import cpus_phrase
from tasksolve.specs.importers.hwloc_sets import XmlSource
from tasksolve.specs.units import format_frequency, format_size


@dataclass
class CpuKind:
    name: str
    cpus: frozenset[int]
    mhz: float | None
    efficiency: str | None


def _mhz(text: str | None) -> float | None:
    try:
        value = float(text) if text is not None else None
    except ValueError:
        return None
    return value if value is not None and 0 < value < 1e6 else None


def read_kinds(source: XmlSource, root: ET.Element, usable: frozenset[int]) -> list[CpuKind]:
    """The CPU kinds of the file that hold a usable CPU, in file order."""
    kinds = []
    for index, element in enumerate(root.findall("cpukind")):
        bitmap = source.bitmap(element, "cpuset")
        cpus = frozenset(bitmap[0] if bitmap else ()) & usable
        infos = {info.get("name"): info for info in element.findall("info")}
        name = source.text(infos["CoreType"], "value") if "CoreType" in infos else None
        efficiency = source.text(element, "efficiency") or source.text(element, "forced_efficiency")
        frequency = infos["FrequencyMaxMHz"].get("value") if "FrequencyMaxMHz" in infos else None
        if cpus:
            kinds.append(CpuKind(name or f"kind {index}", cpus, _mhz(frequency), efficiency))
    return kinds


def _kind_phrase(kind: CpuKind, fastest: float | None) -> str:
    if kind.mhz is not None and fastest:
        speed = f"{kind.mhz:g} MHz at most, {kind.mhz / fastest:.2g}x the fastest"
    else:
        speed = "no frequency given" + (f"; hwloc efficiency rank {kind.efficiency}" if kind.efficiency else "")
    return f"{kind.name} on {cpus_phrase(kind.cpus)} ({speed})"


def kinds_note(kinds: list[CpuKind], usable: frozenset[int]) -> str:
    """What the import says of a hybrid processor."""
    fastest = max((kind.mhz for kind in kinds if kind.mhz is not None), default=None)
    parts = [_kind_phrase(kind, fastest) for kind in kinds]
    unkinded = usable - frozenset().union(*(kind.cpus for kind in kinds))
    if unkinded:
        parts.append(f"{cpus_phrase(unkinded)} in no kind")
    return (
        f"{len(kinds)} CPU kinds (hwloc cpukind): {'; '.join(parts)}. This topology treats every context "
        "as identical, at one clock: plans and predictions do not see the difference -- a thread runs "
        "slower than predicted on a CPU slower than the clock and faster on a faster one, and a plan may "
        "put the busiest thread on a slow CPU. Keep heavy threads off the slow CPUs with constraints.forbid "
        "or constraints.pin, or keep to one kind with constraints.contexts"
    )


def cpu_kinds(
    source: XmlSource, root: ET.Element, usable: frozenset[int], clock_hz: float | None
) -> tuple[float | None, list[str]]:
    """The clock (the one given, else the slowest kind's FrequencyMaxMHz) and the notes on kinds."""
    kinds = read_kinds(source, root, usable)
    notes = []
    known = [kind.mhz for kind in kinds if kind.mhz is not None]
    if clock_hz is None and known:
        clock_hz = min(known) * 1e6
        which = "the slowest CPU kind's" if len(kinds) > 1 else "the CPUs'"
        notes.append(
            f"clock {format_frequency(clock_hz)}: {which} FrequencyMaxMHz (hwloc cpukind); override with --clock"
        )
    if len(kinds) > 1:
        notes.append(kinds_note(kinds, usable))
    return clock_hz, notes


def memory_side_caches(source: XmlSource, root: ET.Element) -> list[str]:
    """A note on hwloc's MemCache objects, which the topology does not represent."""
    caches = [element for element in root.iter("object") if element.get("type") == "MemCache"]
    if not caches:
        return []
    nodes = {
        int(node.get("os_index", ""))
        for cache in caches
        for node in cache.iter("object")
        if node.get("type") == "NUMANode" and node.get("os_index", "").isdigit()
    }
    sizes = sorted({int(c.get("cache_size", "")) for c in caches if c.get("cache_size", "").isdigit()})
    size = f", {' / '.join(format_size(s) for s in sizes)} each" if sizes else ""
    behind = f" in front of {cpus_phrase(nodes, 'NUMA node')}" if nodes else ""
    return [
        f"{len(caches)} memory-side cache(s) (hwloc MemCache{size}){behind} are not represented: the "
        "memory resources stand for the memory behind them"
    ]
