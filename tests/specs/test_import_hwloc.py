"""Topology import from hwloc XML: a 2-socket SMT server (hwloc 2 format, accepted by lstopo
itself), this VM's own ``lstopo --of xml`` output, hwloc 1.x caches, malformed files."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tasksolve.specs import SpecError
from tasksolve.specs.importers.hwloc import import_hwloc
from tasksolve.specs.importers.sysfs import import_sysfs

DATA = Path(__file__).parent.parent / "data"


def test_server_two_sockets_smt():
    topo = import_hwloc(DATA / "hwloc" / "server-2s.xml").topology
    assert list(zip(topo.level_names, topo.counts)) == [("socket", 2), ("core", 8), ("pu", 2)]
    assert topo.clock == pytest.approx(2.1e9)  # from the CPUModel string
    # PU i and i+16 are the two threads of one core; socket s holds cores 8s..8s+7
    for context in range(32):
        cpu = topo.os_cpu(context)
        assert topo.domain_of(context, 0) == (cpu % 16) // 8
        assert topo.domain_of(context, 1) == cpu % 16
    assert {r.name: r.level for r in topo.resources} == {
        "l1": "core",
        "l1i": "core",
        "l2": "core",
        "l3": "socket",
        "mem": "socket",
    }
    assert "22MiB" in topo.resource("l3").description


def test_vm_xml_agrees_with_vm_sysfs():
    """lstopo's XML of this VM and the sysfs capture of the same VM give the same tree."""
    xml = import_hwloc(DATA / "hwloc" / "vm-2core.xml").topology
    sysfs = import_sysfs(DATA / "sysfs" / "vm-2core").topology
    assert xml.level_names == sysfs.level_names and xml.counts == sysfs.counts
    assert xml.os_cpus == sysfs.os_cpus
    assert [(r.name, r.level, r.description) for r in xml.resources] == [
        (r.name, r.level, r.description) for r in sysfs.resources
    ]


def test_hwloc1_cache_objects(tmp_path):
    path = tmp_path / "old.xml"
    path.write_text("""<?xml version="1.0"?>
<topology>
  <object type="Machine" os_index="0">
    <object type="NUMANode" os_index="0">
      <object type="Socket" os_index="0">
        <object type="Cache" depth="2" cache_size="262144" cache_type="0">
          <object type="Core" os_index="0"><object type="PU" os_index="0"/><object type="PU" os_index="2"/></object>
          <object type="Core" os_index="1"><object type="PU" os_index="1"/><object type="PU" os_index="3"/></object>
        </object>
      </object>
    </object>
  </object>
</topology>
""")
    topo = import_hwloc(path).topology
    assert list(zip(topo.level_names, topo.counts)) == [("core", 2), ("pu", 2)]
    assert topo.os_cpu_list == [0, 2, 1, 3]
    assert topo.resource("l2").level == "machine"


@pytest.mark.parametrize(
    "text,match",
    [
        ("<topology><object type='Machine'>\n<object type='PU' os_index='0'>\n</topology>", r"not well-formed XML"),
        ("<lstopo/>", r"root element is <lstopo>, expected <topology>"),
        ("<topology><object type='Machine'/></topology>", r"no PU"),
        ("<topology><object type='PU' os_index='x'/></topology>", r"without a numeric os_index"),
    ],
)
def test_malformed(tmp_path, text, match):
    path = tmp_path / "bad.xml"
    path.write_text(text)
    with pytest.raises(SpecError, match=match) as caught:
        import_hwloc(path)
    assert caught.value.file == str(path)
    if "well-formed" in match:
        assert caught.value.line == 3  # the mismatched </topology>


@pytest.mark.skipif(
    shutil.which("lstopo-no-graphics") is None or not Path("/sys/devices/system/cpu").is_dir(),
    reason="needs hwloc's lstopo and Linux sysfs",
)
def test_live_lstopo_agrees_with_live_sysfs(tmp_path):
    """On this machine: lstopo's XML and /sys give the same levels, OS numbers and resources."""
    path = tmp_path / "host.xml"
    subprocess.run(["lstopo-no-graphics", "--no-io", "--of", "xml", str(path)], check=True, capture_output=True)
    xml = import_hwloc(path).topology
    sysfs = import_sysfs("/sys").topology
    assert (xml.level_names, xml.counts, xml.os_cpus) == (sysfs.level_names, sysfs.counts, sysfs.os_cpus)
    assert [(r.name, r.level) for r in xml.resources] == [(r.name, r.level) for r in sysfs.resources]


def test_a_fifo_or_an_oversized_file_is_refused_not_read_forever(tmp_path, monkeypatch):
    """hwloc XML is read through the project's one reader: a named FIFO nobody writes to is given
    up (exit 2, never a hang), and a file over the byte cap is refused by name."""
    import os

    from tasksolve.specs import files
    from tasksolve.specs.importers import hwloc

    fifo = tmp_path / "topology.xml"
    os.mkfifo(fifo)
    monkeypatch.setattr(files, "FIFO_WAIT", 0.2)
    with pytest.raises(SpecError, match="FIFO"):
        import_hwloc(fifo)
    big = tmp_path / "big.xml"
    big.write_text('<?xml version="1.0"?>\n<topology>' + " " * 4096 + "</topology>\n")
    monkeypatch.setattr(hwloc, "XML_LIMIT", 1024)
    with pytest.raises(SpecError, match="big.xml") as caught:
        import_hwloc(big)
    assert "too large" in str(caught.value) and "not readable XML" not in str(caught.value)


def test_two_pu_objects_of_one_cpu_are_refused_at_the_second(tmp_path):
    """A CPU is one context: a second PU object with its os_index is refused where it stands
    (it had been merged silently into the first, in another core)."""
    path = tmp_path / "dup.xml"
    path.write_text(
        '<topology><object type="Machine" os_index="0">\n'
        '<object type="Core" os_index="0"><object type="PU" os_index="0"/><object type="PU" os_index="1"/></object>\n'
        '<object type="Core" os_index="1"><object type="PU" os_index="1"/><object type="PU" os_index="3"/></object>\n'
        "</object></topology>\n"
    )
    with pytest.raises(SpecError, match=r"a second PU object with os_index 1 \(the first is on line 2\)") as caught:
        import_hwloc(path)
    assert (caught.value.file, caught.value.line) == (str(path), 3)


def test_a_nesting_bomb_is_refused_while_parsing(tmp_path):
    """200,000 nested elements (6 MB) are refused at the 201st, before a tree of them is built
    (the check after parsing had held 1.5 GB for a 60 MB file)."""
    import tracemalloc

    depth = 200_000
    path = tmp_path / "deep.xml"
    path.write_text("<topology>" + '<object type="Group">' * depth + "</object>" * depth + "</topology>")
    tracemalloc.start()
    try:
        with pytest.raises(SpecError, match="nested more than 200 deep") as caught:
            import_hwloc(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert caught.value.line == 1 and peak < 40 << 20  # the file's bytes, not 200,000 elements


def _old_parse_bitmap(text):
    """The word-by-word reading `parse_bitmap` replaced (quadratic over a host's objects)."""
    import re

    words = [word.strip() for word in text.strip().split(",")]
    infinite = bool(words) and words[0] == "0xf...f"
    if infinite:
        words = words[1:]
    if len(words) > 4096 or (not words and not infinite):
        return None
    bits = set()
    for index, word in enumerate(reversed(words)):
        if word == "":
            continue
        if not re.match(r"^0x[0-9a-fA-F]{1,8}$", word):
            return None
        value = int(word, 16)
        bits |= {index * 32 + b for b in range(32) if value >> b & 1}
    return frozenset(bits), (32 * len(words) if infinite else None)


def test_bitmaps_read_as_word_by_word():
    """hwloc bitmaps, sound and broken, read as the word-by-word reference reads them."""
    import random

    from tasksolve.specs.importers.hwloc_sets import parse_bitmap

    pieces = ["0x00000001", "0xffffffff", "0x3", "", " 0x10 ", "0x", "0X1", "0x123456789", "0xg", "x1", "0xf...f", "1"]
    rng = random.Random(7)
    cases = ["", "0xf...f", "0xf...f,", "0xf...f,0x1", ",", "0x1,", ",0x1", "0x1,,0x2", " 0x1 , 0x2 ", "0x1\n"]
    cases += [",".join(rng.choice(pieces) for _ in range(rng.randint(1, 8))) for _ in range(3000)]
    cases += ["0x1" + "," * 5000, "0x00010000" + "," * 1919]
    for text in cases:
        assert parse_bitmap(text) == _old_parse_bitmap(text), repr(text)
