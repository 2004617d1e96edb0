"""hwloc XML's CPU and node sets (`specs.importers.hwloc`).

hwloc writes a set as its bitmap: comma-separated words of 32 bits, most significant first
(``0x0000ffff,0xffffffff`` is CPUs 0-47), an empty word being zero (``0x3,,0x1``) and a leading
``0xf...f`` meaning every bit above the words given (an infinite set). The topology's own sets are
attributes of the root object (``allowed_cpuset``, ``allowed_nodeset``, ``complete_cpuset``;
hwloc 1.x also ``online_cpuset``), or of ``<topology>`` itself in files that put them there.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import lru_cache

from tasksolve.specs.errors import SpecError, shorten
from tasksolve.specs.topology import MAX_CONTEXTS

Position = tuple[int, int]
Bitmap = tuple[frozenset[int], int | None]  # the bits, and where the infinite rest starts
MAX_WORDS = 4096  # 131072 CPUs: far beyond what a topology holds (65536 contexts)
MAX_DEPTH = 200
_WORD = re.compile(r"0x([0-9a-fA-F]{1,8})")
_BLANK = re.compile(r"\s")
_INFINITE = "0xf...f"


@lru_cache(maxsize=4096)
def parse_bitmap(text: str) -> Bitmap | None:
    """hwloc's bitmap text -> (bits, start of the infinite rest or None); None when malformed.

    Linear in the text, and only the non-empty words are visited (a core's set on a 60k-CPU host
    is a word or two among 1,900 empty ones, and there are 30k cores): each is found by a pattern,
    must stand between commas, and the words and commas must cover the whole text."""
    if _BLANK.search(text):  # blanks around the words are allowed
        text = ",".join(word.strip() for word in text.strip().split(","))
    infinite = text == _INFINITE or text.startswith(_INFINITE + ",")
    body = text[len(_INFINITE) + 1 :] if infinite else text
    count = 0 if text == _INFINITE else body.count(",") + 1  # words after the infinite mark
    if count > MAX_WORDS:
        return None
    bits: set[int] = set()
    commas = seen = covered = 0
    for word in _WORD.finditer(body):
        start, end = word.span()
        if (start and body[start - 1] != ",") or (end < len(body) and body[end] != ","):
            return None
        commas += body.count(",", seen, start)
        seen, covered = start, covered + end - start
        value, index = int(word.group(1), 16), count - 1 - commas
        while value:
            low = value & -value
            bits.add(index * 32 + low.bit_length() - 1)
            value ^= low
    if count and covered + count - 1 != len(body):  # something else than words and commas
        return None
    return frozenset(bits), (32 * count if infinite else None)


def holds(bitmap: Bitmap | None, number: int) -> bool:
    """Whether the set holds `number` (an absent set holds everything)."""
    if bitmap is None:
        return True
    bits, rest = bitmap
    return number in bits or (rest is not None and number >= rest)


@dataclass
class XmlSource:
    """An hwloc XML document: where its elements are, the PUs below each object, and the
    topology's sets (`machine`: every CPU hwloc knows of; `present`: those with a PU object)."""

    file: str
    positions: dict[int, Position]
    pus_under: dict[int, frozenset[int]] = field(default_factory=dict)
    pu_elements: dict[int, ET.Element] = field(default_factory=dict)  # os_index -> its PU object
    machine: frozenset[int] = frozenset()
    present: frozenset[int] = frozenset()
    allowed_cpus: Bitmap | None = None
    online_cpus: Bitmap | None = None
    allowed_nodes: Bitmap | None = None
    disallowed_nodes: set[int] = field(default_factory=set)

    @classmethod
    def of(cls, file: str, root: ET.Element, positions: dict[int, Position]) -> XmlSource:
        source = cls(file, positions)
        source._collect(root, 0)
        source.present = source.pus_under[id(root)]
        top = root.find("object")
        sets = top if top is not None else root
        complete = source.bitmap(sets, "complete_cpuset") or source.bitmap(root, "complete_cpuset")
        source.machine = source.present | (complete[0] if complete else frozenset())
        if len(source.machine) > MAX_CONTEXTS:
            raise source.error(sets, f"{len(source.machine)} CPUs: more than a topology holds ({MAX_CONTEXTS})")
        source.allowed_cpus = source.root_bitmap(root, sets, "allowed_cpuset")
        source.online_cpus = source.root_bitmap(root, sets, "online_cpuset")
        source.allowed_nodes = source.root_bitmap(root, sets, "allowed_nodeset")
        return source

    def _collect(self, element: ET.Element, depth: int) -> frozenset[int]:
        """The OS numbers of the PUs below every object (each PU's os_index checked: a number,
        and one PU object per number -- two PUs of one CPU would be one context placed twice)."""
        if depth > MAX_DEPTH:
            raise self.error(element, f"objects nested more than {MAX_DEPTH} deep: not an hwloc topology")
        found: set[int] = set()
        if element.get("type") == "PU":
            index = element.get("os_index")
            if index is None or not index.isdigit() or len(index) > 9:
                raise self.error(element, f"a PU object without a numeric os_index (got {shorten(repr(index), 30)})")
            first = self.pu_elements.setdefault(int(index), element)
            if first is not element:
                line = self.position(first)[0]
                raise self.error(
                    element, f"a second PU object with os_index {int(index)} (the first is on line {line})"
                )
            found.add(int(index))
        for child in element.findall("object"):
            found |= self._collect(child, depth + 1)
        self.pus_under[id(element)] = frozenset(found)
        return self.pus_under[id(element)]

    def position(self, element: ET.Element) -> Position:
        return self.positions.get(id(element), (None, None))

    def error(self, element: ET.Element, message: str) -> SpecError:
        line, column = self.position(element)
        return SpecError.at(self.file, message, line, column)

    def bitmap(self, element: ET.Element, name: str) -> Bitmap | None:
        """The set in attribute `name` of `element` (None: absent); a located error when malformed."""
        text = element.get(name)
        if text is None:
            return None
        found = parse_bitmap(text)
        if found is None:
            raise self.error(
                element,
                f"`{name}` is not an hwloc bitmap (comma-separated words such as 0x0000ffff, at most "
                f"{MAX_WORDS}): {shorten(repr(text), 60)}",
            )
        return found

    def root_bitmap(self, root: ET.Element, top: ET.Element, name: str) -> Bitmap | None:
        return self.bitmap(top, name) or self.bitmap(root, name)

    def cpus(self, element: ET.Element) -> frozenset[int]:
        """The CPUs of an object: its PUs, and those of its complete_cpuset (offline ones) that
        hwloc knows of."""
        found = set(self.pus_under.get(id(element), frozenset()))
        for name in ("complete_cpuset", "cpuset"):
            bitmap = self.bitmap(element, name)
            if bitmap is not None:
                bits, rest = bitmap
                found.update(bits)
                if rest is not None:  # an infinite set: every CPU from `rest` on (a scan per object else)
                    found.update(cpu for cpu in self.machine if cpu >= rest)
        return frozenset(found & self.machine)

    def text(self, element: ET.Element, name: str) -> str | None:
        """An informative attribute (a subtype, a name), escaped and cut short for messages and
        notes; None when absent or blank."""
        value = (element.get(name) or "").strip()
        return shorten(value, 40) if value else None

    def allowed(self, cpu: int) -> bool:
        return holds(self.allowed_cpus, cpu)

    def online(self, cpu: int) -> bool:
        return holds(self.online_cpus, cpu)

    def node_allowed(self, node: int) -> bool:
        return holds(self.allowed_nodes, node)
