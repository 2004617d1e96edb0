"""Devices in an hwloc XML file: its I/O objects (``lstopo`` shows them under the package or the
machine whose PCIe root they hang off) become the topology's ``devices`` (`specs.devices`).

hwloc attaches a ``Bridge > PCIDev > OSDev`` chain as an I/O child of the CPU-side object nearest
to the device (a ``Package``, a ``Group``, a NUMA node's parent, or the ``Machine``); the I/O
objects have no cpuset, so a device's locality is the cpuset of that nearest ancestor which has
one.  An ``OSDev`` is what a program opens (``eth0``, ``mlx5_0``, ``nvme0n1``, ``cuda0``); its
``osdev_type`` says what it is -- a bit mask in hwloc 3.0's XML (storage 1, memory 2, GPU 4,
co-processor 8, network 16, OpenFabrics 32, DMA 64), an enumeration before (block 0, GPU 1,
network 2, OpenFabrics 3, DMA 4, co-processor 5).  Memory and DMA devices are not what a task
reads packets from, and are left out.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

_BITS = [(16 | 32, "nic"), (4, "gpu"), (8, "accelerator"), (1, "storage")]  # first match wins
_ENUM = {0: "storage", 1: "gpu", 2: "nic", 3: "nic", 5: "accelerator"}


@dataclass(frozen=True)
class HostDevice:
    """A device the source reports: its name, kind (`specs.devices.KINDS`) and local CPUs."""

    name: str
    kind: str
    cpus: frozenset[int]


def _kind(value: str | None, bitmask: bool) -> str | None:
    if value is None or not value.strip().isdigit():
        return None
    number = int(value)
    if not bitmask:
        return _ENUM.get(number)
    return next((kind for bits, kind in _BITS if number & bits), None)


def _name(raw: str, taken: set[str]) -> str:
    """A spec name (letters, digits, ``_``, ``-``, starting with a letter or ``_``), unique."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", raw)[:60] or "device"
    if not re.match(r"[A-Za-z_]", name):
        name = "_" + name
    base, n = name, 1
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    taken.add(name)
    return name


def read_devices(source, root: ET.Element) -> list[HostDevice]:
    """Every network, GPU, co-processor and storage ``OSDev`` with the CPUs local to it."""
    bitmask = not root.get("version", "").startswith(("1", "2"))
    found: list[HostDevice] = []
    taken: set[str] = set()

    def walk(element: ET.Element, local: frozenset[int]) -> None:
        if element.get("cpuset") is not None or element.get("complete_cpuset") is not None:
            local = source.cpus(element) or local
        if element.get("type") == "OSDev":
            kind = _kind(element.get("osdev_type"), bitmask)
            if kind is not None and local:
                found.append(HostDevice(_name(element.get("name", "device"), taken), kind, local))
        for child in element.findall("object"):
            walk(child, local)

    for top in root.findall("object"):
        walk(top, frozenset())
    return found
