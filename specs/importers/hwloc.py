"""A topology from an hwloc XML file (``lstopo --of xml``), read with the standard library.

hwloc's object model, as its XML writes it (hwloc 1.x, 2.x and 3.0):

* nested ``<object type=...>`` elements: ``Machine > Package > (Die) > L3Cache > L2Cache >
  L1Cache > Core > PU``, a PU's ``os_index`` being the OS CPU number; ``Group`` and ``Misc``
  objects are containers only. Caches carry ``cache_size`` and ``cache_type`` (0 unified, 1 data,
  2 instruction) and may have a ``subtype`` (``MemorySideCache``); hwloc 1.x writes them as
  ``type="Cache"`` with a ``depth``. An object's ``cpuset`` holds the CPUs of the PUs below it,
  its ``complete_cpuset`` also those hwloc knows of but has no PU for (offline CPUs).
* the root object carries the topology's sets: ``allowed_cpuset`` and ``allowed_nodeset`` (what
  the process may use: a container's or cgroup's cpuset), ``complete_cpuset`` (every CPU, offline
  ones too) and, in hwloc 1.x, ``online_cpuset``. An XML exported with ``--disallowed`` keeps
  the PUs outside the allowed set as objects; otherwise they are only in ``complete_cpuset``.
* a ``NUMANode`` is, in hwloc 2 and 3, a *memory child* of the object whose CPUs it serves, its
  ``cpuset`` being those CPUs (empty: no local CPU), possibly behind memory-side caches
  (``MemCache``); in hwloc 1.x it is an ancestor of its CPUs. Several nodes may serve the same
  CPUs, told apart by ``subtype`` (``DRAM``, ``HBM``, ``MCDRAM``, ``NVM``, ``CXL-DRAM`` ...).
* ``<cpukind cpuset=...>`` elements under ``<topology>`` group CPUs of one kind (hybrid
  processors), with ``<info name="FrequencyMaxMHz">`` and ``CoreType``, and an efficiency rank:
  the topology's ``kinds`` (`hwloc_extras.read_kinds`).
* I/O objects (``Bridge > PCIDev > OSDev``) hang off the CPU-side object nearest to them: the
  topology's ``devices`` (`hwloc_devices.read_devices`).

What is read is the `HostDescription` the sysfs importer builds, so both make the same topology
(`specs.importers.host`): the tree is built over every CPU whose place is known, only the CPUs
that are allowed and online are usable, and the notes say which are not and why.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from xml.parsers import expat

from tasksolve.specs.errors import SpecError, shorten
from tasksolve.specs.files import read_input
from tasksolve.specs.importers.cpusets import cpus_phrase
from tasksolve.specs.importers.host import Cache, HostDescription, HostTopology, build_topology
from tasksolve.specs.importers.hwloc_devices import read_devices
from tasksolve.specs.importers.hwloc_extras import memory_side_caches, read_kinds
from tasksolve.specs.importers.hwloc_sets import MAX_DEPTH, Position, XmlSource
from tasksolve.specs.importers.kinds import kinds_clock
from tasksolve.specs.importers.memory import Memory

_CACHE_TYPES = {"0": "unified", "1": "data", "2": "instruction"}
_CACHE_TAG = re.compile(r"^L(\d)(i?)Cache$")
_CLOCK = re.compile(r"@\s*([0-9.]+)\s*GHz", re.IGNORECASE)
_MEMORY_SIDE = ("NUMANode", "MemCache")
#: the most bytes of XML read (lstopo writes about 1 kB a PU: a 65,536-PU host is some 64 MB)
XML_LIMIT = 256 << 20


def _parse(path: Path, file: str) -> tuple[ET.Element, dict[int, Position]]:
    """The document and the line and column of every element (expat, no entity declarations:
    hwloc writes none, and a declared entity could expand without bound)."""
    builder = ET.TreeBuilder()
    positions: dict[int, Position] = {}
    parser = expat.ParserCreate()
    depth = [0]  # elements open: refused past MAX_DEPTH while parsing, before a deep tree is built

    def start(tag: str, attributes: dict[str, str]) -> None:
        depth[0] += 1
        if depth[0] > MAX_DEPTH:
            raise SpecError.at(
                file,
                f"elements nested more than {MAX_DEPTH} deep: not an hwloc topology",
                parser.CurrentLineNumber,
                parser.CurrentColumnNumber + 1,
            )
        element = builder.start(tag, attributes)
        positions[id(element)] = (parser.CurrentLineNumber, parser.CurrentColumnNumber + 1)

    def end(tag: str) -> None:
        depth[0] -= 1
        builder.end(tag)

    def no_entities(*_: object) -> None:
        raise SpecError.at(
            file,
            "an entity declaration: hwloc XML declares none, so it is not read",
            parser.CurrentLineNumber,
            parser.CurrentColumnNumber + 1,
        )

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.EntityDeclHandler = no_entities
    data = read_input(path, XML_LIMIT)  # a FIFO without a writer, an endless pipe, a huge file: refused by name
    try:
        parser.Parse(data, True)
        return builder.close(), positions
    except expat.ExpatError as exc:
        message = f"not well-formed XML: {shorten(expat.ErrorString(exc.code), 80)}"
        raise SpecError.at(file, message, exc.lineno, exc.offset + 1) from None
    except OSError as exc:
        raise SpecError.at(file, f"cannot read: {exc.strerror}") from None
    except (LookupError, ValueError) as exc:  # an unknown encoding in the XML declaration
        raise SpecError.at(file, f"not readable XML: {shorten(str(exc), 80)}", 1, 1) from None


def _cache(source: XmlSource, element: ET.Element, kind_tag: str) -> tuple[int, str] | None:
    match = _CACHE_TAG.match(kind_tag)
    if match:
        level = int(match.group(1))
        kind = "instruction" if match.group(2) else _CACHE_TYPES.get(element.get("cache_type", "0"), "unified")
        return level, kind
    if kind_tag == "Cache":  # hwloc 1.x
        depth = element.get("depth", "")
        if not depth.isdigit() or not 0 < int(depth) < 10:
            raise source.error(element, f"a Cache object without a cache depth 1-9 (got {shorten(repr(depth), 30)})")
        return int(depth), _CACHE_TYPES.get(element.get("cache_type", "0"), "unified")
    return None


def _number(source: XmlSource, element: ET.Element, name: str, strict: bool = True) -> int | None:
    """A numeric attribute (None: absent; an informative one that is not a number is ignored)."""
    text = element.get(name)
    if text is None:
        return None
    if not text.isdigit() or len(text) > 18:
        if not strict:
            return None
        raise source.error(element, f"`{name}` must be a number (got {shorten(repr(text), 30)})")
    return int(text)


def _cpu_object(source: XmlSource, element: ET.Element, host: HostDescription, kind: str) -> None:
    """Record a Package, Die, Core or cache: the CPU sets of the tree's groupings."""
    cpus = source.cpus(element)
    if not cpus:
        return
    host.positions.setdefault(cpus, source.position(element))
    if kind in ("Package", "Socket"):  # Socket: hwloc 1.x
        index = len(set(host.package.values()))
        host.package.update(dict.fromkeys(cpus, index))
    elif kind == "Die":
        index = len(set(host.die.values()))
        host.die.update(dict.fromkeys(cpus, index))
    elif kind == "Core":
        host.siblings.update(dict.fromkeys(cpus, cpus))
    else:
        cache = _cache(source, element, kind)
        if cache is not None:
            size = _number(source, element, "cache_size", strict=False)
            host.caches.add(Cache(cache[0], cache[1], size or None, cpus, source.text(element, "subtype")))


def _numa_node(source: XmlSource, element: ET.Element, parents: list[ET.Element], host: HostDescription) -> None:
    """A NUMA node wherever hwloc put it (under a MemCache too), with the CPUs it is local to."""
    cpus = source.cpus(element)
    if not cpus and element.get("cpuset") is None and element.get("complete_cpuset") is None:
        cpus = next((source.cpus(p) for p in reversed(parents) if p.get("type") not in _MEMORY_SIDE), frozenset())
    node = _number(source, element, "os_index")
    allowed = node is None or source.node_allowed(node)
    if not allowed:
        source.disallowed_nodes.add(node)
    size = _number(source, element, "local_memory", strict=False)
    subtype = source.text(element, "subtype")
    host.memories.append(Memory(node, subtype, cpus, size or None, source.position(element), allowed))


def _walk(source: XmlSource, element: ET.Element, host: HostDescription, parents: list[ET.Element]) -> None:
    if len(parents) > 200:
        raise source.error(element, "objects nested more than 200 deep: not an hwloc topology")
    kind = element.get("type", "")
    if kind == "NUMANode":
        _numa_node(source, element, parents, host)
    elif kind != "PU":
        _cpu_object(source, element, host, kind)
    for info in element.findall("info"):
        if info.get("name") == "CPUModel" and host.clock_hz is None:
            match = _CLOCK.search(info.get("value", ""))
            if match:
                host.clock_hz = float(match.group(1)) * 1e9
    parents.append(element)
    for child in element.findall("object"):
        _walk(source, child, host, parents)
    parents.pop()


def _left_out(source: XmlSource, host: HostDescription) -> None:
    """The usable CPUs (allowed and online), and a note for every CPU and node that is not."""
    present = source.present
    offline = (source.machine - present) | {cpu for cpu in present if not source.online(cpu)}
    not_allowed = {cpu for cpu in present - offline if not source.allowed(cpu)}
    host.usable = frozenset(present - offline - not_allowed)
    if source.machine - present:
        where = "in hwloc's complete_cpuset, with no PU object"
        host.left_out.append(f"{_are(source.machine - present)} offline ({where})")
    if offline - (source.machine - present):
        host.left_out.append(f"{_are(offline - (source.machine - present))} offline (hwloc online_cpuset)")
    if not_allowed:
        host.left_out.append(f"{_are(not_allowed)} not allowed to this process (hwloc allowed_cpuset)")
    if source.disallowed_nodes:
        nodes = cpus_phrase(source.disallowed_nodes, "NUMA node")
        verb = "are" if len(source.disallowed_nodes) > 1 else "is"
        host.left_out.append(f"{nodes} {verb} not allowed to this process (hwloc allowed_nodeset)")


def _are(cpus: set[int]) -> str:
    return f"{cpus_phrase(cpus)} {'are' if len(cpus) > 1 else 'is'}"


def read_hwloc(path: str | Path) -> HostDescription:
    """Describe the machine of an hwloc XML file; malformed input is one located `SpecError`."""
    path = Path(path)
    file = str(path)
    root, positions = _parse(path, file)
    if root.tag != "topology":
        raise SpecError.at(
            file,
            f"not an hwloc topology: the root element is <{shorten(root.tag, 40)}>, "
            "expected <topology> (write one with `lstopo --of xml FILE`)",
            1,
            1,
        )
    source = XmlSource.of(file, root, positions)
    if not source.present:
        raise SpecError.at(file, "no PU (processing unit) object in the file")
    host = HostDescription(source=file, package={}, siblings={}, machine=frozenset(source.machine))
    for machine in root.findall("object"):
        _walk(source, machine, host, [])
    _left_out(source, host)
    host.notes += memory_side_caches(source, root)
    host.kinds = read_kinds(source, root)
    host.devices = read_devices(source, root)
    host.clock_hz, notes = kinds_clock(host.kinds, host.clock_hz, "hwloc cpukind FrequencyMaxMHz")
    host.notes += notes
    return host


def import_hwloc(path: str | Path, **options) -> HostTopology:
    """The topology described by an hwloc XML file (`build_topology` options)."""
    return build_topology(read_hwloc(path), **options)
