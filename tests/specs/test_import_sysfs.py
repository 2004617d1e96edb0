"""Host topology import from sysfs trees: the captured VM, a 2-socket SMT server, a T2-like box.

Truth comes from the raw files (package ids, sibling lists, cache sharing lists), read here with
a few lines independent of the importer, and from the shapes `tests/data/sysfs/make_trees.py`
wrote.
"""

from __future__ import annotations

import itertools
import random
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tasksolve.specs import SpecError, load_spec_text
from tasksolve.specs.importers.host import Cache, HostDescription, build_topology
from tasksolve.specs.importers.sysfs import import_sysfs, parse_cpu_list

DATA = Path(__file__).parent.parent / "data" / "sysfs"


def _raw(machine: str, cpu: int, name: str) -> str:
    return (DATA / machine / "devices/system/cpu" / f"cpu{cpu}" / "topology" / name).read_text().strip()


def _check_against_files(machine: str, topo) -> None:
    """Same socket and same core per the files <=> per the imported tree, for every pair of CPUs."""
    cpu_of = {topo.os_cpu(c): c for c in range(topo.n_contexts)}
    levels = topo.level_names
    for a, b in itertools.combinations(sorted(cpu_of), 2):
        shared = topo.shared_level(cpu_of[a], cpu_of[b])
        same_socket = _raw(machine, a, "physical_package_id") == _raw(machine, b, "physical_package_id")
        same_core = b in parse_cpu_list(_raw(machine, a, "thread_siblings_list"))
        if "socket" in levels:
            assert (shared >= levels.index("socket")) == same_socket
        if "pu" in levels:
            assert (shared >= levels.index("core")) == same_core


def test_vm_capture():
    result = import_sysfs(DATA / "vm-2core")
    topo = result.topology
    assert topo.level_names == ["core"] and topo.counts == [2]
    assert [topo.os_cpu(c) for c in range(2)] == [0, 1]
    resources = {r.name: r.level for r in topo.resources}
    assert resources == {"l1": "core", "l1i": "core", "l2": "core", "l3": "machine", "mem": "machine"}
    assert any("clock 1GHz is a default" in note for note in result.notes)


def test_server_two_sockets_smt():
    topo = import_sysfs(DATA / "server-2s").topology
    assert topo.level_names == ["socket", "core", "pu"] and topo.counts == [2, 8, 2]
    assert topo.clock == pytest.approx(3.1e9)
    # Linux numbers the second SMT thread of core i as i+16: depth-first order interleaves them
    assert topo.os_cpu_list[:4] == [0, 16, 1, 17]
    assert topo.os_cpus["socket1.core7.pu1"] == 31
    assert sorted(topo.os_cpu_list) == list(range(32))
    assert {r.name: r.level for r in topo.resources} == {
        "l1": "core",
        "l1i": "core",
        "l2": "core",
        "l3": "socket",
        "mem": "socket",
    }
    assert "30MiB" in topo.resource("l3").description
    _check_against_files("server-2s", topo)


def test_t2_like_many_strands():
    topo = import_sysfs(DATA / "t2-like").topology
    assert topo.level_names == ["core", "pu"] and topo.counts == [8, 8]
    assert topo.resource("l2").level == "machine"
    assert topo.os_cpu_list == list(range(64))
    _check_against_files("t2-like", topo)


def test_capacity_override_and_unknown_name():
    result = import_sysfs(DATA / "t2-like", capacities={"l2": 4.0})
    assert result.topology.resource("l2").capacity == 4.0
    defaults = next(note for note in result.notes if "is a default for" in note)
    assert "l2" not in defaults.split(":")[0].split("for ")[1].split(", ")
    with pytest.raises(SpecError, match="no resource of.*did you mean `l2`"):
        import_sysfs(DATA / "t2-like", capacities={"l22": 4.0})


def test_an_offline_cpu_is_left_out_of_the_usable_ones(tmp_path):
    """CPU 31 offline (its topology folder kept, as in a capture): the whole machine, usable
    without it, and a note (tests/specs/test_import_sysfs_usable.py: the folder removed)."""
    root = tmp_path / "sys"
    shutil.copytree(DATA / "server-2s", root)
    (root / "devices/system/cpu/online").write_text("0-30\n")
    result = import_sysfs(root)
    topo = result.topology
    assert topo.counts == [2, 8, 2] and sorted(topo.os_cpu(c) for c in topo.usable_contexts) == list(range(31))
    assert "CPU 31 is offline" in " ".join(result.notes)


def test_not_a_sysfs_tree(tmp_path):
    with pytest.raises(SpecError, match="no CPU with a topology folder"):
        import_sysfs(tmp_path)


def test_malformed_cpu_list(tmp_path):
    root = tmp_path / "sys"
    shutil.copytree(DATA / "vm-2core", root)
    (root / "devices/system/cpu/cpu1/topology/thread_siblings_list").write_text("1-x\n")
    with pytest.raises(SpecError, match="thread_siblings_list.*not a CPU number or range"):
        import_sysfs(root)


@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 3), st.integers(0, 2**32 - 1))
def test_any_uniform_shape_with_any_numbering(sockets, cores, threads, seed):
    """A machine of sockets x cores x threads, OS numbers shuffled: the tree has that shape and
    every context's OS CPU sits in the right socket and core."""
    n = sockets * cores * threads
    numbers = list(range(n))
    random.Random(seed).shuffle(numbers)
    where = {}  # OS cpu -> (socket, core)
    for index, cpu in enumerate(numbers):
        where[cpu] = (index // (cores * threads), index // threads)
    cores_of = {key: frozenset(c for c in where if where[c] == key) for key in set(where.values())}
    host = HostDescription(
        source="<test>",
        package={c: where[c][0] for c in where},
        siblings={c: cores_of[where[c]] for c in where},
        caches={Cache(2, "unified", 1 << 20, cores_of[k]) for k in cores_of},
    )
    topo = build_topology(host).topology
    expected = [(name, count) for name, count in (("socket", sockets), ("core", cores), ("pu", threads)) if count > 1]
    if sockets == 1 and cores == 1 and threads == 1:
        expected = [("pu", 1)]
    assert list(zip(topo.level_names, topo.counts)) == expected
    assert sorted(topo.os_cpu_list) == sorted(where)
    for a, b in itertools.combinations(range(n), 2):
        ca, cb = topo.os_cpu(a), topo.os_cpu(b)
        shared = topo.shared_level(a, b)
        if "socket" in topo.level_names:
            assert (shared >= topo.level_index("socket")) == (where[ca][0] == where[cb][0])
        if "core" in topo.level_names:
            assert (shared >= topo.level_index("core")) == (where[ca] == where[cb])


def test_os_cpus_in_a_topology_file_are_checked():
    base = """
tasksolve: 1
name: t
topology:
  name: small
  clock: 1GHz
  levels: [{name: core, count: 2}]
  os_cpus: {OS_CPUS}
applications:
  a: {tasks: {A: {cycles: 10}}}
workload: [{app: a, instances: 1}]
"""
    spec = load_spec_text(base.replace("{OS_CPUS}", "{core0: 4, core1: 6}"))
    assert [spec.topology.os_cpu(c) for c in range(2)] == [4, 6]
    with pytest.raises(SpecError, match="CPU 4 is already the CPU of `core0`"):
        load_spec_text(base.replace("{OS_CPUS}", "{core0: 4, core1: 4}"))
    with pytest.raises(SpecError, match="1 context.*no CPU number, e.g. `core1`"):
        load_spec_text(base.replace("{OS_CPUS}", "{core0: 4}"))
    with pytest.raises(SpecError, match=r"os_cpus\.core9.*out of range"):
        load_spec_text(base.replace("{OS_CPUS}", "{core0: 4, core9: 5}"))
    without = load_spec_text(base.replace("  os_cpus: {OS_CPUS}\n", ""))
    assert [without.topology.os_cpu(c) for c in range(2)] == [0, 1]


@given(st.data())
def test_any_description_gives_a_topology_or_one_spec_error(data):
    """Whatever an importer read (inconsistent siblings, caches some CPUs lack, odd NUMA nodes),
    the builder answers a valid topology or a SpecError, never another exception."""
    n = data.draw(st.integers(1, 12))
    cpus = data.draw(st.lists(st.integers(0, 40), min_size=n, max_size=n, unique=True))
    pick = st.sampled_from(cpus)
    host = HostDescription(
        source="<random>",
        package={c: data.draw(st.integers(0, 2)) for c in cpus},
        siblings={c: frozenset(data.draw(st.lists(pick, max_size=3))) | {c} for c in cpus},
        node={c: data.draw(st.integers(0, 2)) for c in cpus} if data.draw(st.booleans()) else {},
        caches={
            Cache(
                data.draw(st.integers(1, 3)),
                data.draw(st.sampled_from(["data", "unified", "instruction"])),
                data.draw(st.none() | st.integers(1, 1 << 25)),
                frozenset(data.draw(st.lists(pick, min_size=1))),
            )
            for _ in range(data.draw(st.integers(0, 6)))
        },
    )
    try:
        topo = build_topology(host).topology
    except SpecError:
        return
    assert sorted(topo.os_cpu(c) for c in topo.present_contexts) == sorted(cpus)  # no context made up
    assert len(topo.present_contexts) == n and len(set(topo.os_cpu_list)) == topo.n_contexts
