"""What an hwloc XML file says beside its tree of objects: CPU kinds, and memory-side caches
(not modelled: said in a note).

* CPU kinds (hwloc's ``<cpukind cpuset=...>`` elements: hybrid processors, P and E cores,
  big.LITTLE), each with ``<info name="FrequencyMaxMHz">`` (else ``FrequencyBaseMHz``),
  ``CoreType``, ``LinuxCapacity`` (Linux's cpu_capacity, of 1024) and an efficiency rank
  (``efficiency`` or ``forced_efficiency``: 0 is the least powerful kind; hwloc's cpukinds.h),
  read as `HostKind`s: the topology's ``kinds`` (`specs.importers.kinds`).
* memory-side caches (``MemCache`` objects in front of NUMA nodes): part of the way to the
  memory behind them, which is what the memory resources stand for.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from tasksolve.specs.errors import shorten
from tasksolve.specs.importers.cpusets import cpus_phrase
from tasksolve.specs.importers.description import HostKind
from tasksolve.specs.importers.hwloc_sets import XmlSource
from tasksolve.specs.units import CLOCK_RANGE, format_frequency, format_size


def _mhz(text: str | None) -> float | None:
    """A frequency in MHz as Hz, within a processor clock's range (None: absent or not one)."""
    try:
        value = float(text) * 1e6 if text is not None else None
    except ValueError:
        return None
    return value if value is not None and CLOCK_RANGE[0] <= value <= CLOCK_RANGE[1] else None


def _efficiency(element: ET.Element) -> int | None:
    text = element.get("efficiency") or element.get("forced_efficiency") or ""
    return int(text) if text.isdigit() and len(text) < 10 else None


def _kind(source: XmlSource, element: ET.Element, rank: int) -> HostKind:
    """One ``cpukind``: its CPUs, CoreType, FrequencyMaxMHz (else FrequencyBaseMHz), LinuxCapacity."""
    infos = {info.get("name"): info.get("value") for info in element.findall("info")}
    detail = []
    efficiency = _efficiency(element)
    if efficiency is not None:
        detail.append(f"hwloc efficiency {efficiency}")
    top, base = _mhz(infos.get("FrequencyMaxMHz")), _mhz(infos.get("FrequencyBaseMHz"))
    if base is not None:
        detail.append(f"base {format_frequency(base)}" + ("" if top else " (no FrequencyMaxMHz: the clock used)"))
    capacity = infos.get("LinuxCapacity") or ""
    relative = int(capacity) / 1024 if capacity.isdigit() and 0 < int(capacity) <= 1024 else None
    name = shorten(infos["CoreType"], 40) if infos.get("CoreType") else None
    return HostKind(source.cpus(element), rank, name, top or base, relative, "hwloc cpukind", ", ".join(detail))


def read_kinds(source: XmlSource, root: ET.Element) -> list[HostKind]:
    """The CPU kinds of the file, ranked as hwloc ranks them (by efficiency, 0 the least powerful;
    in file order, hwloc's, where an efficiency is not known)."""
    elements = root.findall("cpukind")
    ranks = [_efficiency(element) for element in elements]
    order = sorted(range(len(elements)), key=lambda i: (ranks[i], i) if None not in ranks else (0, i))
    return [_kind(source, elements[i], rank) for rank, i in enumerate(order)]


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
