"""A topology from an hwloc XML file (``lstopo --of xml``), read with the standard library.

hwloc describes a machine as nested ``<object type=...>`` elements: ``Machine > Package >
(Die) > L3Cache > L2Cache > L1Cache > Core > PU``, the PU's ``os_index`` being the OS CPU
number. Caches carry ``cache_size`` and ``cache_type`` (0 unified, 1 data, 2 instruction); hwloc
1.x writes them as ``type="Cache"`` with a ``depth``. A ``NUMANode`` is, in hwloc 2, a memory
child of the object whose CPUs it serves (in hwloc 1.x, an ancestor of them). What is read is
the same `HostDescription` the sysfs importer builds, so both make the same topology
(`specs.importers.host`).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from tasksolve.specs.errors import SpecError, shorten
from tasksolve.specs.importers.host import Cache, HostDescription, HostTopology, build_topology

_CACHE_TYPES = {"0": "unified", "1": "data", "2": "instruction"}
_CACHE_TAG = re.compile(r"^L(\d)(i?)Cache$")
_CLOCK = re.compile(r"@\s*([0-9.]+)\s*GHz", re.IGNORECASE)


def _pus(element: ET.Element, file: str) -> frozenset[int]:
    """OS numbers of the PUs under `element`."""
    found = set()
    for pu in element.iter("object"):
        if pu.get("type") == "PU":
            index = pu.get("os_index")
            if index is None or not index.isdigit():
                raise SpecError.at(file, f"a PU object without a numeric os_index (got {shorten(repr(index), 30)})")
            found.add(int(index))
    return frozenset(found)


def _cache(element: ET.Element, kind_tag: str, file: str) -> tuple[int, str] | None:
    match = _CACHE_TAG.match(kind_tag)
    if match:
        level = int(match.group(1))
        kind = "instruction" if match.group(2) else _CACHE_TYPES.get(element.get("cache_type", "0"), "unified")
        return level, kind
    if kind_tag == "Cache":  # hwloc 1.x
        depth = element.get("depth", "")
        if not depth.isdigit():
            raise SpecError.at(file, f"a Cache object without a numeric depth (got {shorten(repr(depth), 30)})")
        return int(depth), _CACHE_TYPES.get(element.get("cache_type", "0"), "unified")
    return None


def _walk(
    element: ET.Element, parent: ET.Element | None, host: HostDescription, file: str, packages: list[frozenset[int]]
) -> None:
    kind = element.get("type", "")
    if kind in ("Package", "Socket"):  # Socket: hwloc 1.x
        packages.append(_pus(element, file))
    elif kind == "Die":
        index = len(set(host.die.values()))
        for cpu in _pus(element, file):
            host.die[cpu] = index
    elif kind == "Core":
        cpus = _pus(element, file)
        for cpu in cpus:
            host.siblings[cpu] = cpus
    elif kind == "NUMANode":
        cpus = _pus(element, file) or (_pus(parent, file) if parent is not None else frozenset())
        node = int(element.get("os_index", len(set(host.node.values()))))
        for cpu in cpus:
            host.node[cpu] = node
    else:
        cache = _cache(element, kind, file)
        if cache is not None:
            size = element.get("cache_size")
            host.caches.add(
                Cache(cache[0], cache[1], int(size) if size and size.isdigit() else None, _pus(element, file))
            )
    for info in element.findall("info"):
        if info.get("name") == "CPUModel" and host.clock_hz is None:
            match = _CLOCK.search(info.get("value", ""))
            if match:
                host.clock_hz = float(match.group(1)) * 1e9
    for child in element.findall("object"):
        _walk(child, element, host, file, packages)


def read_hwloc(path: str | Path) -> HostDescription:
    """Describe the machine of an hwloc XML file; malformed XML is one located `SpecError`."""
    path = Path(path)
    file = str(path)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        line, column = exc.position
        raise SpecError.at(
            file, f"not well-formed XML: {shorten(str(exc).split(':')[0], 80)}", line, column + 1
        ) from None
    except OSError as exc:
        raise SpecError.at(file, f"cannot read: {exc.strerror}") from None
    if root.tag != "topology":
        raise SpecError.at(
            file,
            f"not an hwloc topology: the root element is <{shorten(root.tag, 40)}>, "
            "expected <topology> (write one with `lstopo --of xml FILE`)",
            1,
            1,
        )
    host = HostDescription(source=file, package={}, siblings={})
    packages: list[frozenset[int]] = []
    for machine in root.findall("object"):
        _walk(machine, None, host, file, packages)
    cpus = set(_pus(root, file))
    if not cpus:
        raise SpecError.at(file, "no PU (processing unit) object in the file")
    for cpu in cpus:
        host.package[cpu] = next((i for i, members in enumerate(packages) if cpu in members), 0)
        host.siblings.setdefault(cpu, frozenset([cpu]))
    if host.node and set(host.node) != cpus:
        host.node = {}
    if host.die and set(host.die) != cpus:
        host.die = {}
    return host


def import_hwloc(path: str | Path, **options) -> HostTopology:
    """The topology described by an hwloc XML file (`build_topology` options)."""
    return build_topology(read_hwloc(path), **options)
