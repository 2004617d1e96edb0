"""`tasksolve topology import` on hwloc's own XML test corpus (tests/data/hwloc-xml, README there):
every file is imported with the counts of PUs, cores, packages, NUMA nodes and caches (per level)
that hwloc's allowed view has, or refused with exit 2 and a message naming the file -- never
imported with a wrong count, never a traceback.

The truth is lstopo's expected console output (`NAME.console`) where hwloc's tests have one,
parsed here; else the XML's allowed view, counted here. What the import claims is counted on the
imported topology itself: the domains of each kind's level (`HostTopology.kinds`) and of each
resource's level that hold a usable context, the NUMA nodes being the instances of the memory
resources (`HostTopology.memory`).
"""

from __future__ import annotations

import gzip
import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasksolve.simulate.oracle import make_oracle
from tasksolve.solver.binding.cpsat import solve_binding
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.solver.binding.samplers import balanced_plans, uniform_plans
from tasksolve.solver.cli import main
from tasksolve.specs import Plan, SpecError, load_spec, load_topology
from tasksolve.specs.exporters.topology_text import topology_yaml
from tasksolve.specs.importers.hwloc import import_hwloc
from tasksolve.specs.plan import load_plan

DATA = Path(__file__).parent.parent / "data" / "hwloc-xml"
FILES = sorted(path.name.removesuffix(".xml.gz") for path in DATA.glob("*.xml.gz"))
# what the import refuses, and a word of the reason (every other file must import)
REFUSED = {"16amd64-8n2c-cpusets": "is not one node per domain of a level"}
_CACHE = re.compile(r"^L(\d)([diu]?)(?:Cache)?$")


def _unpack(name: str, folder: Path) -> Path:
    path = folder / f"{name}.xml"
    path.write_bytes(gzip.decompress((DATA / f"{name}.xml.gz").read_bytes()))
    return path


def _kind(type_name: str, cache_type: str | None = None) -> str | None:
    """hwloc's object type -> the key counted (caches: l1, l1i, l2 ...; None: not counted)."""
    if type_name in ("Package", "Socket"):
        return "package"
    if type_name in ("Core", "PU"):
        return type_name.lower()
    if type_name == "NUMANode":
        return "numa"
    match = _CACHE.match(type_name)
    if match:
        return f"l{match.group(1)}" + ("i" if match.group(2) == "i" or cache_type == "2" else "")
    return None


# ----------------------------------------------------------------- lstopo's console output
def _split_chain(text: str) -> list[str]:
    """``Package L#0 + L3 L#0 (4096KiB)`` -> its objects (not splitting inside () or quotes)."""
    parts, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "([":
            depth += 1
        elif not quoted and ch in ")]":
            depth -= 1
        elif not quoted and depth == 0 and text.startswith(" + ", i):
            parts.append(text[start:i])
            start = i + 3
    return [*parts, text[start:]]


def console_counts(text: str) -> Counter:
    """Objects of lstopo's console tree in hwloc's allowed view: a PU or NUMA node marked
    ``(disallowed)`` is not counted, nor an object all of whose PUs are."""
    nodes: list[dict] = []  # {kind, disallowed, children}
    stack: list[tuple[int, dict]] = []
    for line in text.splitlines():
        body = line.lstrip(" ")
        if "L#" not in body.split(" (")[0] and not body.startswith("Machine"):
            continue
        indent = len(line) - len(body)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else None
        for part in _split_chain(body):
            node = {"kind": _kind(re.split(r"[ (\[]", part, maxsplit=1)[0]), "off": part.endswith("(disallowed)")}
            node["children"] = []
            (parent["children"] if parent else nodes).append(node)
            parent = node
        stack.append((indent, parent))
    counts: Counter = Counter()

    def walk(node: dict) -> bool:
        """Count the subtree; whether it holds an allowed PU."""
        below = [walk(child) for child in node["children"]]  # every child counted: no short cut
        allowed = any(below) or (node["kind"] == "pu" and not node["off"])
        if node["kind"] == "numa" and not node["off"] or node["kind"] not in (None, "numa") and allowed:
            counts[node["kind"]] += 1
        return allowed

    for node in nodes:
        walk(node)
    return counts


# ----------------------------------------------------------------- the XML's allowed view
def _bits(text: str | None) -> set[int] | None:
    if text is None:
        return None
    words = text.split(",")
    if words[0] == "0xf...f":
        raise AssertionError("no corpus file has an infinite set")
    return {i * 32 + b for i, w in enumerate(reversed(words)) if w for b in range(32) if int(w, 16) >> b & 1}


def xml_counts(path: Path) -> Counter:
    """Objects of an hwloc XML in the allowed view: PUs allowed and online, NUMA nodes allowed,
    packages, cores and caches holding such a PU."""
    root = ET.parse(path).getroot()
    top = root.find("object")
    sets = {name: _bits(top.get(name)) for name in ("allowed_cpuset", "online_cpuset", "allowed_nodeset")}

    def usable(pu: ET.Element) -> bool:
        cpu = int(pu.get("os_index"))
        return all(cpu in sets[name] for name in ("allowed_cpuset", "online_cpuset") if sets[name] is not None)

    counts: Counter = Counter()
    for element in root.iter("object"):
        kind = _kind(element.get("type", ""), element.get("cache_type"))
        if element.get("type") == "Cache":  # hwloc 1.x
            kind = f"l{element.get('depth')}" + ("i" if element.get("cache_type") == "2" else "")
        if kind == "numa":
            nodes = sets["allowed_nodeset"]
            counts[kind] += nodes is None or int(element.get("os_index", -1)) in nodes
        elif kind and any(usable(pu) for pu in element.iter("object") if pu.get("type") == "PU"):
            counts[kind] += 1
    return +counts


def truth(name: str, path: Path) -> Counter:
    console = DATA / f"{name}.console"
    return console_counts(console.read_text()) if console.exists() else xml_counts(path)


# ----------------------------------------------------------------- what the import claims
def claimed(result) -> Counter:
    """Counts on the imported topology: domains holding a usable context, per kind and resource."""
    topo = result.topology
    usable = topo.usable_contexts

    def domains(level: str) -> int:
        if level == "machine":
            return 1
        index = topo.level_index(level)
        return len({topo.domain_of(context, index) for context in usable})

    counts = Counter({kind: domains(level) for kind, level in result.kinds.items()})
    for resource in topo.resources:
        if resource.name in result.memory:
            counts["numa"] += domains(resource.level)
        elif re.fullmatch(r"l\d+i?", resource.name):
            counts[resource.name] += domains(resource.level)
    return +counts


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ----------------------------------------------------------------- the parsers themselves
def test_console_parser_counts_chains_and_the_allowed_view():
    text = (
        "Machine\n"
        "  NUMANode L#0 (P#0)\n"
        "  NUMANode L#1 (P#1) (disallowed)\n"
        '  Package L#0 (CPUModel="A + B") + L3 L#0 (4096KiB)\n'
        "    L2 L#0 (1024KiB) + L1d L#0 (16KiB) + L1i L#0 + Core L#0\n"
        "      PU L#0 (P#0)\n"
        "      PU L#1 (P#8) (disallowed)\n"
        "  Package L#1 + L3 L#1\n"
        "    L2 L#1 + L1d L#1 + Core L#1\n"
        "      PU L#2 (P#1) (disallowed)\n"
        "depth 0: 1 Machine (type #0)\n"
    )
    assert console_counts(text) == Counter(numa=1, package=1, l3=1, l2=1, l1=1, l1i=1, core=1, pu=1)


def test_corpus_is_complete():
    assert len(FILES) == 23 and (DATA / "COPYING").exists()


# ----------------------------------------------------------------- every file
@pytest.mark.parametrize("name", FILES)
def test_imported_with_the_true_counts_or_refused(name, tmp_path, capsys):
    path = _unpack(name, tmp_path)
    expected = truth(name, path)
    code, out, err = run(capsys, "topology", "import", str(path), "--output", str(tmp_path / "t.yaml"))
    if name in REFUSED:
        assert code == 2 and str(path) in err and REFUSED[name] in err and "Traceback" not in err, err
        with pytest.raises(SpecError) as caught:
            import_hwloc(path)
        assert caught.value.file == str(path) and caught.value.line is not None
        return
    assert code == 0, err
    result = import_hwloc(path)
    assert claimed(result) == expected, result.notes
    assert result.summary["cpus"] == expected["pu"] == len(result.topology.usable_contexts)
    # no context made up: the tree holds exactly the file's PU objects (an irregular one lists its counts)
    pus = sum(1 for element in ET.parse(path).getroot().iter("object") if element.get("type") == "PU")
    assert len(result.topology.present_contexts) == pus
    assert sorted(result.topology.os_cpu(c) for c in result.topology.present_contexts) == sorted(
        int(element.get("os_index"))
        for element in ET.parse(path).getroot().iter("object")
        if element.get("type") == "PU"
    )
    back = load_topology(tmp_path / "t.yaml")  # the file written loads back, `usable` and all
    assert back.usable_contexts == result.topology.usable_contexts
    assert back.os_cpu_list == result.topology.os_cpu_list


# ----------------------------------------------------------------- what was wrong before
def _notes(name: str, tmp_path: Path) -> tuple[object, str]:
    result = import_hwloc(_unpack(name, tmp_path))
    return result, "\n".join(result.notes)


def test_memory_under_memory_side_caches_and_dram_with_hbm(tmp_path):
    result, notes = _notes("memorysidecaches", tmp_path)
    assert claimed(result)["numa"] == 4 and "MemCache" in notes
    result, notes = _notes("64intel64-heteromem", tmp_path)
    assert result.memory == ["mem", "hbm"]
    assert {r.name: r.level for r in result.topology.resources if r.name in result.memory} == {
        "mem": "numa",
        "hbm": "numa",
    }
    assert "`mem` = NUMA nodes 0-3 (DRAM)" in notes and "`hbm` = NUMA nodes 4-7 (HBM)" in notes


def test_cpu_kinds_are_the_topology_kinds(tmp_path):
    """fakecpukinds: MySmallCore on CPUs 0-1 at 1 GHz, YouBigcore on CPU 2 and IntelCore on CPU 3
    at 2 GHz (each core holds a small and a big PU): three kinds, the clock the fastest's; hwloc's
    IntelCore is named P, as Linux names those cores."""
    result, notes = _notes("fakecpukinds", tmp_path)
    topo = result.topology
    assert topo.clock == 2e9 and "fastest CPU kind's highest frequency" in notes
    assert list(topo.kinds) == ["P", "YouBigcore", "MySmallCore"]  # the most powerful first
    speeds = dict(zip(topo.kind_names, topo.kind_speeds))
    assert speeds == {"P": 1.0, "YouBigcore": 1.0, "MySmallCore": 0.5}
    assert {topo.os_cpu(c): topo.kind_of(c) for c in topo.present_contexts} == {
        0: "MySmallCore",
        1: "MySmallCore",
        2: "YouBigcore",
        3: "P",
    }
    # what the model does not get from the file is said: IPC unknown, two kinds at one speed
    assert "`ipc` is 1" in notes and "P, YouBigcore are ranked apart by the source" in notes
    back = load_topology(_written(result, tmp_path))
    assert back.kinds == topo.kinds and back.context_kinds == topo.context_kinds


def _written(result, tmp_path: Path) -> Path:
    path = tmp_path / "host.yaml"
    path.write_text(topology_yaml(result.topology, result.notes))
    return path


def test_two_compute_threads_go_to_the_two_fast_cpus(tmp_path):
    """Acceptance: two pure-compute threads (no resources, no edges) on fakecpukinds, solved by
    CP-SAT, run on CPUs 2 and 3 (2 GHz), not on the 1 GHz ones."""
    result = import_hwloc(_unpack("fakecpukinds", tmp_path))
    _written(result, tmp_path)
    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(
        "tasksolve: 1\nname: two-compute\ntopology: host.yaml\n"
        "applications:\n  a: {tasks: {A: {cycles: 1000}}}\nworkload: [{app: a, instances: 2}]\n"
    )
    spec = load_spec(spec_path)
    best = solve_binding(BindingProblem(spec), time_limit=20, workers=1, seed=0).best
    assert sorted(spec.topology.os_cpu(c) for c in best.contexts) == [2, 3]
    slow = Plan.from_contexts(
        spec, [spec.topology.parse_context("core0.pu0"), spec.topology.parse_context("core1.pu0")]
    )
    oracle = make_oracle(spec, "analytic")
    fast = oracle.evaluate(Plan.from_contexts(spec, best.contexts)).throughput
    assert fast == pytest.approx(2 * oracle.evaluate(slow).throughput)


def test_offline_cpus_leave_an_irregular_tree_of_the_online_ones(tmp_path):
    """16em64t-4s2c2t-offlines: 7 of 16 CPUs online, whole cores offline: the tree is the 7 CPUs,
    its counts per domain (no placeholder contexts)."""
    result, notes = _notes("16em64t-4s2c2t-offlines", tmp_path)
    topo = result.topology
    assert "CPUs 2,5,7-11,13-14 are offline" in notes and "placeholders" not in notes
    assert topo.usable is None and not topo.regular
    assert [level.count for level in topo.levels] == [4, [2, 1, 2, 1], [1, 2, 1, 1, 1, 1]]
    assert sorted(topo.os_cpu(c) for c in topo.usable_contexts) == [0, 1, 3, 4, 6, 12, 15]
    assert topo.os_cpus == {
        "socket0.core0.pu0": 0,
        "socket0.core1.pu0": 4,
        "socket0.core1.pu1": 12,
        "socket1.core0.pu0": 1,
        "socket2.core0.pu0": 3,
        "socket2.core1.pu0": 15,
        "socket3.core0.pu0": 6,
    }
    back = load_topology(_written(result, tmp_path))
    assert back.present_contexts == topo.present_contexts and back.os_cpu_list == topo.os_cpu_list


# ----------------------------------------------------------------- a container's cpuset
def _spec_on(topology_file: Path, threads: int, tmp_path: Path) -> Path:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        f"""tasksolve: 1
name: on-the-allowed-cpus
topology: {topology_file.name}
applications:
  a: {{tasks: {{A: {{cycles: 100, demand: {{l2: 0.2, mem: 0.1}}}}}}}}
workload: [{{app: a, instances: {threads}}}]
"""
    )
    return spec


def test_disallowed_cpus_are_never_in_a_plan(tmp_path, capsys):
    result, notes = _notes("irregulargroups-disallowed", tmp_path)
    topo = result.topology
    assert "CPUs 16-63 are not allowed to this process (hwloc allowed_cpuset)" in notes
    assert topo.n_contexts == 64 and sorted(topo.os_cpu(c) for c in topo.usable_contexts) == list(range(16))
    (tmp_path / "host.yaml").write_text(topology_yaml(topo, result.notes))
    spec = load_spec(_spec_on(tmp_path / "host.yaml", 16, tmp_path))
    assert sorted(topo.os_cpu(c) for c in spec.usable_contexts) == list(range(16))
    for plans in (uniform_plans(spec, 200, seed=1), balanced_plans(spec, 50, seed=2)):
        assert set(np.vectorize(topo.os_cpu)(plans).ravel()) <= set(range(16))
    out = tmp_path / "solved"
    args = ("solve", str(tmp_path / "spec.yaml"), "-m", "random", "--oracle", "analytic", "--random-plans", "20")
    code, _, err = run(capsys, *args, "--seed", "3", "--out", str(out))
    assert code == 0, err
    code, text, err = run(capsys, "pin", str(out / "plan.yaml"), "--format", "json")
    assert code == 0, err
    assert {row["cpu"] for row in json.loads(text)["threads"]} <= set(range(16))


def test_a_plan_or_a_pin_on_a_disallowed_cpu_is_refused(tmp_path):
    result = import_hwloc(_unpack("irregulargroups-disallowed", tmp_path))
    (tmp_path / "host.yaml").write_text(topology_yaml(result.topology, result.notes))
    spec_path = _spec_on(tmp_path / "host.yaml", 2, tmp_path)
    plan = tmp_path / "plan.yaml"
    plan.write_text("bindings: {a#0.A: socket0.core0, a#1.A: socket5.core0}\n")
    with pytest.raises(SpecError, match=r"socket5.core0.*outside the topology's `usable` list"):
        load_plan(plan, load_spec(spec_path))
    spec_path.write_text(spec_path.read_text() + "constraints: {pin: {a#1.A: socket7.core3}}\n")
    with pytest.raises(SpecError, match=r"pinned to `socket7.core3`, which is outside the topology's `usable`"):
        load_spec(spec_path)


# ----------------------------------------------------------------- malformed input: one located message
_MACHINE = (
    '<topology version="3.0">\n'
    '<object type="Machine" os_index="0" cpuset="0x3" complete_cpuset="0x3" allowed_cpuset="{allowed}">\n'
    '<object type="NUMANode" os_index="{node}" cpuset="0x3"/>\n'
    '<object type="Package" os_index="0" cpuset="0x3">\n'
    '<object type="Cache" depth="{depth}" cpuset="0x3" cache_size="1024">\n'
    '<object type="Core" os_index="0" cpuset="0x3">\n'
    '<object type="PU" os_index="0"/><object type="PU" os_index="1"/>\n'
    "</object></object></object></object>\n"
    "</topology>\n"
)


@pytest.mark.parametrize(
    "fields,message,line",
    [
        ({"allowed": "0xZZ"}, r"`allowed_cpuset` is not an hwloc bitmap", 2),
        ({"allowed": "0x0"}, r"no CPU a plan may use: CPUs 0-1 are not allowed to this process", None),
        ({"node": "first"}, r"`os_index` must be a number", 3),
        ({"depth": "deep"}, r"a Cache object without a cache depth 1-9", 5),
    ],
)
def test_malformed_sets_and_numbers_are_located(tmp_path, fields, message, line):
    path = tmp_path / "bad.xml"
    path.write_text(_MACHINE.format(**{"allowed": "0x3", "node": "0", "depth": "2", **fields}))
    with pytest.raises(SpecError, match=message) as caught:
        import_hwloc(path)
    assert caught.value.file == str(path) and caught.value.line == line


def test_a_sound_small_file_imports(tmp_path):
    path = tmp_path / "good.xml"
    path.write_text(_MACHINE.format(allowed="0x3", node="0", depth="2"))
    topo = import_hwloc(path).topology
    assert list(zip(topo.level_names, topo.counts)) == [("pu", 2)] and topo.usable is None


def test_entities_and_deep_nesting_are_refused_where_they_are(tmp_path):
    path = tmp_path / "entity.xml"
    path.write_text('<?xml version="1.0"?>\n<!DOCTYPE topology [\n<!ENTITY a "aaaa">\n]>\n<topology/>\n')
    with pytest.raises(SpecError, match="entity declaration") as caught:
        import_hwloc(path)
    assert caught.value.line == 3
    path = tmp_path / "deep.xml"
    path.write_text("<topology>\n" + '<object type="Group">' * 300 + "</object>" * 300 + "\n</topology>\n")
    with pytest.raises(SpecError, match="nested more than 200 deep") as caught:
        import_hwloc(path)
    assert caught.value.line == 2


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_any_corrupted_attribute_gives_a_topology_or_one_spec_error(tmp_path, data):
    """Attribute values of a corpus file replaced at random (sets, numbers, types, subtypes):
    the import answers a topology or a SpecError naming the file, never another exception."""
    name = data.draw(st.sampled_from(["fakecpukinds", "64intel64-heteromem", "16em64t-4s2c2t-offlines"]))
    text = gzip.decompress((DATA / f"{name}.xml.gz").read_bytes()).decode()
    spans = [m.span(1) for m in re.finditer(r'="([^"]*)"', text)]
    for _ in range(data.draw(st.integers(1, 4))):
        start, end = data.draw(st.sampled_from(spans))
        value = data.draw(
            st.sampled_from(["", "0x0", "0xf...f", "0xffffffff,,0x1", "-1", "99999999", "NUMANode", "PU", "HBM"])
            | st.text(alphabet="0x1f,.\x01 \n", max_size=12)
        )
        text = text[:start] + value.replace('"', "") + text[end:]
        spans = [m.span(1) for m in re.finditer(r'="([^"]*)"', text)]
    path = tmp_path / f"{name}-corrupt.xml"
    path.write_text(text)
    try:
        result = import_hwloc(path)
    except SpecError as exc:
        assert exc.file == str(path)
        return
    topo = result.topology
    assert topo.usable_contexts and len(set(topo.os_cpu_list)) == topo.n_contexts
    assert "\n" not in "".join(result.notes)


def test_hwloc1_online_and_allowed_sets(tmp_path):
    """hwloc 1.x: the sets on the root object, online_cpuset too; NUMA nodes are ancestors."""
    path = tmp_path / "old.xml"
    path.write_text("""<?xml version="1.0"?>
<topology>
  <object type="Machine" os_index="0" cpuset="0x0000000f" complete_cpuset="0x0000000f"
          online_cpuset="0x00000007" allowed_cpuset="0x0000000f" allowed_nodeset="0x00000003">
    <object type="NUMANode" os_index="0" cpuset="0x00000003">
      <object type="Socket" os_index="0" cpuset="0x00000003">
        <object type="Core" os_index="0"><object type="PU" os_index="0"/></object>
        <object type="Core" os_index="1"><object type="PU" os_index="1"/></object>
      </object>
    </object>
    <object type="NUMANode" os_index="1" cpuset="0x0000000c">
      <object type="Socket" os_index="1" cpuset="0x0000000c">
        <object type="Core" os_index="0"><object type="PU" os_index="2"/></object>
        <object type="Core" os_index="1"><object type="PU" os_index="3"/></object>
      </object>
    </object>
  </object>
</topology>
""")
    result = import_hwloc(path)
    topo = result.topology
    assert "CPU 3 is offline (hwloc online_cpuset)" in result.notes
    assert list(zip(topo.level_names, topo.counts)) == [("socket", 2), ("core", 2)]
    assert sorted(topo.os_cpu(c) for c in topo.usable_contexts) == [0, 1, 2]
    assert claimed(result) == Counter(package=2, core=3, pu=3, numa=2)
