"""Kinds of CPU and irregular trees from the importers (docs/design.md, "Real machines"): a fake
i9-12900K-like sysfs tree (8 P-cores x 2 SMT at 5.1 GHz, capacity 1024; 8 E-cores at 3.9 GHz,
capacity 600, in two clusters of 4 sharing an L2), its variants (capacity alone, frequency alone,
no kinds), and hwloc cpukind elements beyond the corpus's (a hybrid cluster tree, LinuxCapacity,
FrequencyBaseMHz, names to clean, CPUs in no kind)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tasksolve.specs import SpecError, load_spec, load_topology
from tasksolve.specs.exporters.topology_text import topology_yaml
from tasksolve.specs.importers.host import build_topology
from tasksolve.specs.importers.hwloc import import_hwloc
from tasksolve.specs.importers.sysfs import read_sysfs
from tasksolve.specs.importers.sysfs_usable import Process

P_CPUS, E_CPUS = range(16), range(16, 24)
IPC_E = (600 / 1024) / (3.9 / 5.1)  # the capacity the E-cores' clock leaves over


def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def _hybrid(tmp_path: Path, *, capacity: bool = True, freq: bool = True, pmus: bool = True) -> Path:
    """The i9-12900K-like tree: CPUs 2i and 2i+1 the threads of P-core i, 16-23 the E-cores."""
    root = tmp_path / "sys"
    cpu_dir = "devices/system/cpu"
    _write(root, f"{cpu_dir}/online", "0-23")
    _write(root, "devices/system/node/node0/cpulist", "0-23")
    for cpu in range(24):
        core = [cpu - cpu % 2, cpu - cpu % 2 + 1] if cpu < 16 else [cpu]
        l2 = core if cpu < 16 else list(range(16, 20) if cpu < 20 else range(20, 24))
        base = f"{cpu_dir}/cpu{cpu}"
        for name, text in (("physical_package_id", "0"), ("die_id", "0"), ("core_id", str(min(core)))):
            _write(root, f"{base}/topology/{name}", text)
        _write(root, f"{base}/topology/thread_siblings_list", ",".join(map(str, core)))
        caches = [(1, "Data", "48K", core), (1, "Instruction", "32K", core), (2, "Unified", "1280K", l2)]
        for index, (level, kind, size, shared) in enumerate([*caches, (3, "Unified", "30720K", range(24))]):
            for name, text in (("level", str(level)), ("type", kind), ("size", size)):
                _write(root, f"{base}/cache/index{index}/{name}", text)
            _write(root, f"{base}/cache/index{index}/shared_cpu_list", f"{min(shared)}-{max(shared)}")
        if capacity:
            _write(root, f"{base}/cpu_capacity", "1024" if cpu < 16 else "600")
        if freq:
            _write(root, f"{base}/cpufreq/cpuinfo_max_freq", "5100000" if cpu < 16 else "3900000")
    if pmus:
        _write(root, "devices/cpu_core/cpus", "0-15")
        _write(root, "devices/cpu_atom/cpus", "16-23")
    return root


def _import(root: Path, process: Process | None = None):
    result = build_topology(read_sysfs(root, process=process))
    return result, result.topology, "\n".join(result.notes)


def _kind_cpus(topo) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for context in topo.present_contexts:
        found.setdefault(topo.kind_of(context), []).append(topo.os_cpu(context))
    return {name: sorted(cpus) for name, cpus in found.items()}


# ----------------------------------------------------------------- sysfs
def test_hybrid_sysfs_gives_p_and_e_kinds_over_an_irregular_tree(tmp_path):
    result, topo, notes = _import(_hybrid(tmp_path))
    assert [(level.name, level.count) for level in topo.levels] == [
        ("l2", 10),
        ("core", [1] * 8 + [4, 4]),
        ("pu", [2] * 8 + [1] * 8),
    ]
    assert len(topo.present_contexts) == 24 and topo.usable is None and "placeholder" not in notes
    assert sorted(topo.os_cpu_list[c] for c in topo.present_contexts) == list(range(24))
    assert topo.clock == pytest.approx(5.1e9)
    assert list(topo.kinds) == ["P", "E"]  # the most powerful first
    assert topo.kinds["P"].domains == [f"l2{i}" for i in range(8)]  # whole clusters: compact
    assert topo.kinds["E"].domains == ["l28", "l29"]
    assert _kind_cpus(topo) == {"P": list(P_CPUS), "E": list(E_CPUS)}
    speeds = dict(zip(topo.kind_names, topo.kind_speeds))
    assert speeds["P"] == 1.0 and speeds["E"] == pytest.approx(3.9 / 5.1)
    assert topo.kinds["P"].ipc == 1.0 and topo.kinds["E"].ipc == pytest.approx(IPC_E, rel=1e-3)
    # the work per second the kernel's capacity says: 600/1024 of a P-core's
    assert topo.kinds["E"].ipc * speeds["E"] == pytest.approx(600 / 1024, rel=1e-3)
    assert {r.name: r.level for r in topo.resources} == {
        "l1": "core",
        "l1i": "core",
        "l2": "l2",
        "l3": "machine",
        "mem": "machine",
    }
    assert "2 CPU kinds" in notes and "cpu_atom PMU" in topo.kinds["E"].description
    assert result.summary == {"cpus": 24, "cores": 16, "sockets": 1, "numa_nodes": 1}


def test_the_written_file_loads_back_and_a_spec_may_give_cycles_per_kind(tmp_path):
    result, topo, _ = _import(_hybrid(tmp_path))
    (tmp_path / "host.yaml").write_text(topology_yaml(topo, result.notes))
    back = load_topology(tmp_path / "host.yaml")  # the kinds and list counts pass the checks
    assert back.context_kinds == topo.context_kinds and back.present_contexts == topo.present_contexts
    assert back.kind_speeds == pytest.approx(topo.kind_speeds)
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "tasksolve: 1\nname: per-kind\ntopology: host.yaml\n"
        "applications:\n  a: {tasks: {A: {cycles: {P: 900, E: 1500}}}}\nworkload: [{app: a, instances: 2}]\n"
    )
    assert load_spec(spec).topology.kind_names == ["P", "E"]


def test_a_restricted_cpuset_gives_one_usable_cpu_and_keeps_the_kinds(tmp_path):
    result, topo, notes = _import(_hybrid(tmp_path), Process(frozenset({0})))
    assert [topo.os_cpu(c) for c in topo.usable_contexts] == [0]
    assert topo.usable == ["l20.core0.pu0"] and len(topo.present_contexts) == 24
    assert topo.kind_of(topo.usable_contexts[0]) == "P" and _kind_cpus(topo)["E"] == list(E_CPUS)
    assert result.summary["cpus"] == 1 and "CPUs 1-23 are not in this process's affinity mask" in notes
    (tmp_path / "host.yaml").write_text(topology_yaml(topo, result.notes))
    assert load_topology(tmp_path / "host.yaml").usable_contexts == topo.usable_contexts


def test_an_e_cluster_alone_is_one_usable_domain(tmp_path):
    _, topo, _ = _import(_hybrid(tmp_path), Process(frozenset(range(16, 20))))
    assert topo.usable == ["l28"] and sorted(topo.os_cpu(c) for c in topo.usable_contexts) == [16, 17, 18, 19]


def test_capacity_alone_gives_speeds_ranked_kinds(tmp_path):
    """No hybrid PMU, no cpufreq (an Arm big.LITTLE box): kinds by capacity, named by rank."""
    _, topo, notes = _import(_hybrid(tmp_path, freq=False, pmus=False))
    assert list(topo.kinds) == ["kind1", "kind0"] and _kind_cpus(topo) == {"kind1": list(P_CPUS), "kind0": list(E_CPUS)}
    assert dict(zip(topo.kind_names, topo.kind_speeds)) == {"kind1": 1.0, "kind0": pytest.approx(600 / 1024, rel=1e-3)}
    assert "clock 1GHz is a default" in notes and "Linux cpu_capacity" in topo.kinds["kind0"].description


def test_frequency_alone_says_the_ipc_is_not_known(tmp_path):
    _, topo, notes = _import(_hybrid(tmp_path, capacity=False))
    assert topo.kinds["E"].clock == pytest.approx(3.9e9) and topo.kinds["E"].ipc == 1.0
    assert "`ipc` is 1 for P, E" in notes


def test_clocks_and_capacities_differing_inside_a_kind_are_said(tmp_path):
    """Two favoured P-cores that turbo higher (5.3 GHz, capacity 1024; the others 5.1 GHz, 990)."""
    root = _hybrid(tmp_path)
    for cpu in range(4, 16):
        _write(root, f"devices/system/cpu/cpu{cpu}/cpufreq/cpuinfo_max_freq", "5100000")
        _write(root, f"devices/system/cpu/cpu{cpu}/cpu_capacity", "990")
    for cpu in range(4):
        _write(root, f"devices/system/cpu/cpu{cpu}/cpufreq/cpuinfo_max_freq", "5300000")
    _, topo, notes = _import(root)
    assert topo.clock == pytest.approx(5.3e9) and _kind_cpus(topo)["P"] == list(P_CPUS)
    assert "highest clocks 5.1GHz to 5.3GHz: the highest taken" in notes
    assert "capacities 990 to 1024: the highest taken" in notes


def test_no_kinds_but_different_clocks_is_said(tmp_path):
    _, topo, notes = _import(_hybrid(tmp_path, capacity=False, pmus=False))
    assert topo.kinds is None and topo.clock == pytest.approx(5.1e9)  # CPU 0's
    assert (
        "highest clocks differ (3.9GHz to 5.1GHz, the highest on CPUs 0-15)" in notes and "treats them alike" in notes
    )


@pytest.mark.parametrize(
    "relative,text,message",
    [
        ("devices/system/cpu/cpu3/cpu_capacity", "2048", "a CPU capacity is 1-1024"),
        ("devices/system/cpu/cpu3/cpu_capacity", "fast", "expected an integer"),
        ("devices/cpu_atom/cpus", "16-23,2", "not after the CPUs before it"),
        ("devices/system/cpu/cpu17/cpufreq/cpuinfo_max_freq", "9", "not a processor clock"),
    ],
)
def test_a_malformed_kind_file_is_one_located_error(tmp_path, relative, text, message):
    root = _hybrid(tmp_path)
    _write(root, relative, text)
    with pytest.raises(SpecError, match=message) as caught:
        read_sysfs(root)
    assert caught.value.file == str(root / relative) and caught.value.line == 1


def test_an_offline_p_thread_leaves_its_core_with_one_context(tmp_path):
    root = _hybrid(tmp_path)
    shutil.rmtree(root / "devices/system/cpu/cpu3/topology")
    _write(root, "devices/system/cpu/online", "0-2,4-23")
    _, topo, notes = _import(root)
    assert topo.levels[-1].count == [2, 1] + [2] * 6 + [1] * 8 and len(topo.present_contexts) == 23
    assert "CPU 3 is offline" in notes and _kind_cpus(topo)["P"] == [0, 1, 2, *range(4, 16)]


# ----------------------------------------------------------------- hwloc
def _pu(cpu: int) -> str:
    return f'<object type="PU" os_index="{cpu}" cpuset="0x{1 << cpu:08x}"/>'


def _hwloc_hybrid(tmp_path: Path, kinds: str) -> Path:
    """2 P-cores x 2 SMT (CPUs 0-3, an L2 each) and one cluster of 4 E-cores (CPUs 4-7, one L2)."""
    p_cores = "".join(
        f'<object type="L2Cache" cpuset="0x{3 << 2 * i:08x}" cache_size="1310720" depth="2" cache_type="0">'
        f'<object type="Core" os_index="{i}" cpuset="0x{3 << 2 * i:08x}">{_pu(2 * i)}{_pu(2 * i + 1)}</object></object>'
        for i in range(2)
    )
    e_cores = "".join(
        f'<object type="Core" os_index="{8 + c}" cpuset="0x{1 << c:08x}">{_pu(c)}</object>' for c in range(4, 8)
    )
    path = tmp_path / "hybrid.xml"
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<topology version="2.0">\n'
        '<object type="Machine" os_index="0" cpuset="0x000000ff" complete_cpuset="0x000000ff" allowed_cpuset="0x000000ff">\n'
        '<object type="Package" os_index="0" cpuset="0x000000ff">\n'
        f'{p_cores}\n<object type="L2Cache" cpuset="0x000000f0" cache_size="2097152" depth="2" cache_type="0">{e_cores}</object>\n'
        f"</object></object>\n{kinds}\n</topology>\n"
    )
    return path


HYBRID_KINDS = (
    '<cpukind cpuset="0x000000f0" efficiency="0"><info name="CoreType" value="IntelAtom"/>'
    '<info name="FrequencyMaxMHz" value="3900"/><info name="LinuxCapacity" value="600"/></cpukind>'
    '<cpukind cpuset="0x0000000f" efficiency="1"><info name="CoreType" value="IntelCore"/>'
    '<info name="FrequencyMaxMHz" value="5100"/><info name="LinuxCapacity" value="1024"/></cpukind>'
)


def test_hwloc_hybrid_clusters_are_an_irregular_tree_with_kinds(tmp_path):
    result = import_hwloc(_hwloc_hybrid(tmp_path, HYBRID_KINDS))
    topo = result.topology
    assert [(level.name, level.count) for level in topo.levels] == [
        ("l2", 3),
        ("core", [1, 1, 4]),
        ("pu", [2, 2, 1, 1, 1, 1]),
    ]
    # hwloc's IntelCore/IntelAtom are the cores Linux calls cpu_core/cpu_atom: named P and E by both
    assert list(topo.kinds) == ["P", "E"] and topo.clock == pytest.approx(5.1e9)
    assert topo.kinds["P"].domains == ["l20", "l21"] and topo.kinds["E"].domains == ["l22"]
    assert topo.kinds["E"].ipc == pytest.approx(IPC_E, rel=1e-3)
    assert result.summary["cores"] == 6 and len(topo.present_contexts) == 8


def test_hwloc_kind_details(tmp_path):
    """No CoreType: named by rank; FrequencyBaseMHz where no FrequencyMaxMHz; a CoreType that is
    no name is cleaned; CPUs in no kind are the kind `other`; a kind over no CPU is said."""
    kinds = (
        '<cpukind cpuset="0x000000c0" efficiency="0"><info name="FrequencyBaseMHz" value="1800"/></cpukind>'
        '<cpukind cpuset="0x00000030" efficiency="1"><info name="CoreType" value="big core!"/>'
        '<info name="FrequencyMaxMHz" value="3600"/></cpukind>'
        '<cpukind cpuset="0x00000f00" efficiency="2"><info name="CoreType" value="ghost"/></cpukind>'
    )
    result = import_hwloc(_hwloc_hybrid(tmp_path, kinds))
    topo, notes = result.topology, "\n".join(result.notes)
    assert list(topo.kinds) == ["big_core_", "kind0", "other"]
    assert _kind_cpus(topo) == {"other": [0, 1, 2, 3], "big_core_": [4, 5], "kind0": [6, 7]}
    assert dict(zip(topo.kind_names, topo.kind_speeds)) == {"big_core_": 1.0, "kind0": 0.5, "other": 1.0}
    assert topo.kinds["other"].domains is None and "CPUs 0-3 are in no kind the source reports" in notes
    assert "no FrequencyMaxMHz: the clock used" in topo.kinds["kind0"].description
    assert "CPU kind ghost (hwloc cpukind) holds no CPU of the tree" in notes
    (tmp_path / "t.yaml").write_text(topology_yaml(topo, result.notes))
    assert load_topology(tmp_path / "t.yaml").context_kinds == topo.context_kinds


def test_one_hwloc_kind_is_no_kinds(tmp_path):
    kinds = '<cpukind cpuset="0x000000ff"><info name="FrequencyMaxMHz" value="3000"/></cpukind>'
    topo = import_hwloc(_hwloc_hybrid(tmp_path, kinds)).topology
    assert topo.kinds is None and topo.clock == pytest.approx(3e9)
