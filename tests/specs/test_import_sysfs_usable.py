"""`topology host` describes what this process may use (docs/design.md, "Real machines"):
the affinity mask, the cgroup's cpuset (v2 and v1), online/offline/isolated CPUs, on fake sysfs
and procfs trees (`Process` injected); every malformed file one located error; and, on this
host, ``taskset -c CPU tasksolve topology host`` one usable CPU that no plan leaves.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasksolve.solver.binding.samplers import balanced_plans, uniform_plans
from tasksolve.solver.cli import main
from tasksolve.specs import SpecError, load_spec, load_topology
from tasksolve.specs.importers import sysfs
from tasksolve.specs.importers.host import build_topology
from tasksolve.specs.importers.sysfs import read_sysfs
from tasksolve.specs.importers.sysfs_usable import Process

DATA = Path(__file__).parent.parent / "data" / "sysfs"
ALL = frozenset(range(32))  # server-2s: 2 sockets x 8 cores x 2 SMT, CPU i and i+16 siblings


def _tree(tmp_path: Path, files: dict[str, str | bytes] | None = None, machine: str = "server-2s") -> Path:
    """A copy of a captured sysfs tree, with `files` (paths relative to the root) written."""
    root = tmp_path / "sys"
    shutil.copytree(DATA / machine, root)
    for relative, text in (files or {}).items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return root


def _process(tmp_path: Path, affinity=ALL, cgroup: str | bytes | None = None) -> Process:
    """A process with `affinity`, and /proc/self/cgroup holding `cgroup` (None: no file)."""
    file = tmp_path / "proc" / "self" / "cgroup"
    if cgroup is not None:
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(cgroup if isinstance(cgroup, bytes) else cgroup.encode())
    return Process(frozenset(affinity) if affinity is not None else None, file, tmp_path / "sys" / "fs" / "cgroup")


def _import(root: Path, process: Process | None):
    result = build_topology(read_sysfs(root, process=process))
    topo = result.topology
    return result, topo, sorted(topo.os_cpu(c) for c in topo.usable_contexts), " | ".join(result.notes)


# ----------------------------------------------------------------- affinity and cgroups
def test_the_affinity_mask_leaves_cpus_out(tmp_path):
    root = _tree(tmp_path)
    result, topo, usable, notes = _import(root, _process(tmp_path, affinity={0, 16}))
    assert topo.counts == [2, 8, 2] and usable == [0, 16] and topo.usable == ["socket0.core0"]
    assert "CPUs 1-15,17-31 are not in this process's affinity mask (sched_getaffinity)" in notes
    assert result.summary["cpus"] == 2 and result.summary["cores"] == 1 and result.summary["sockets"] == 1


def test_no_process_read_for_a_captured_tree(tmp_path):
    """import_sysfs of another machine's tree: every online CPU, whatever this process's mask."""
    _, topo, usable, _ = _import(_tree(tmp_path), None)
    assert usable == list(range(32)) and topo.usable is None


def test_cgroup_v2_cpuset_of_the_nearest_ancestor(tmp_path):
    """The cgroup's own folder has no cpuset file (controller not enabled there): its parent's."""
    root = _tree(tmp_path, {"fs/cgroup/user.slice/cpuset.cpus.effective": "0-7,16-23\n"})
    (root / "fs/cgroup/user.slice/app.scope").mkdir()
    process = _process(tmp_path, cgroup="0::/user.slice/app.scope\n")
    _, topo, usable, notes = _import(root, process)
    assert usable == [*range(8), *range(16, 24)] and topo.usable == ["socket0"]
    effective = root / "fs/cgroup/user.slice/cpuset.cpus.effective"
    assert f"CPUs 8-15,24-31 are not in this process's cgroup cpuset (cgroup v2: {effective})" in notes
    assert "affinity mask" not in notes  # the mask holds every CPU: the cgroup is the reason


def test_cgroup_v1_cpuset_hierarchy(tmp_path):
    root = _tree(tmp_path, {"fs/cgroup/cpuset/docker/abc/cpuset.effective_cpus": "8-15,24-31\n"})
    cgroup = "12:cpuset:/docker/abc\n4:memory:/docker/abc\n0::/\n"
    _, topo, usable, notes = _import(
        root, _process(tmp_path, affinity={*range(8, 16), *range(24, 32), 0}, cgroup=cgroup)
    )
    assert usable == [*range(8, 16), *range(24, 32)] and topo.usable == ["socket1"]
    assert "not in this process's cgroup cpuset (cgroup v1:" in notes


def test_a_container_that_sees_its_cgroup_as_the_root(tmp_path):
    """No cgroup namespace: /proc/self/cgroup names a path the container's /sys/fs/cgroup lacks."""
    root = _tree(tmp_path, {"fs/cgroup/cpuset.cpus.effective": "0-3\n"})
    _, _, usable, _ = _import(root, _process(tmp_path, cgroup="0::/kubepods/pod1/c2\n"))
    assert usable == [0, 1, 2, 3]


# ----------------------------------------------------------------- online, offline, isolated
def test_an_offline_cpu_without_a_topology_folder_leaves_an_irregular_tree(tmp_path):
    """As the kernel does: an offline CPU loses its topology folder, so its place is unknown;
    the tree holds the 31 others, the core that lost its sibling with one context (counts per
    domain), no placeholder for the offline CPU."""
    root = _tree(tmp_path, {"devices/system/cpu/online": "0-30\n", "devices/system/cpu/offline": "31\n"})
    shutil.rmtree(root / "devices/system/cpu/cpu31/topology")
    _, topo, usable, notes = _import(root, _process(tmp_path))
    assert [level.count for level in topo.levels] == [2, 8, [2] * 15 + [1]] and usable == list(range(31))
    assert "CPU 31 is offline" in notes and "placeholders" not in notes and topo.usable is None
    assert sorted(topo.os_cpu(c) for c in topo.present_contexts) == list(range(31))
    missing = [topo.os_cpu(c) for c in range(topo.n_contexts) if c not in topo.present_contexts]
    assert len(missing) == 1 and missing[0] > 31  # numbered above every CPU: no number taken


def test_offline_file_alone_and_cpus_beyond_the_present_ones(tmp_path):
    """`offline` also lists CPUs beyond the kernel's limit: only present ones are said offline."""
    files = {"devices/system/cpu/online": "", "devices/system/cpu/offline": "3,32-143\n"}
    root = _tree(tmp_path, files)
    (root / "devices/system/cpu/online").unlink()
    _, _, usable, notes = _import(root, _process(tmp_path))
    assert usable == sorted(ALL - {3}) and "CPU 3 is offline" in notes and "143" not in notes


def test_isolated_cpus_outside_the_mask_are_left_out(tmp_path):
    root = _tree(tmp_path, {"devices/system/cpu/isolated": "2-3,18-19\n"})
    _, _, usable, notes = _import(root, _process(tmp_path, affinity=ALL - {2, 3, 18, 19}))
    assert usable == sorted(ALL - {2, 3, 18, 19})
    assert "CPUs 2-3,18-19 are isolated (isolcpus:" in notes and "taskset -c" in notes
    assert "not in this process's affinity mask (sched_getaffinity)" in notes


def test_isolated_cpus_in_the_mask_are_usable_with_a_note(tmp_path):
    root = _tree(tmp_path, {"devices/system/cpu/isolated": "2-3,18-19\n"})
    _, topo, usable, notes = _import(root, _process(tmp_path, affinity={2, 3, 18, 19}))
    assert usable == [2, 3, 18, 19] and topo.usable == ["socket0.core2", "socket0.core3"]
    assert "are isolated" in notes and "usable (being in this process's affinity mask)" in notes
    assert "pin every thread" in notes


def test_no_usable_cpu_is_one_error(tmp_path):
    root = _tree(tmp_path, {"fs/cgroup/cpuset.cpus.effective": "0-3\n"})
    with pytest.raises(SpecError, match="no CPU a plan may use: .*not in this process's affinity mask"):
        _import(root, _process(tmp_path, affinity={8, 9}, cgroup="0::/\n"))


# ----------------------------------------------------------------- malformed files
CPU0 = "devices/system/cpu/cpu0"
MALFORMED = [
    ("devices/system/cpu/online", "0-3,2\n", "not after the CPUs before it", 1, 5),
    ("devices/system/cpu/online", "0-31\n7\n", "more than one line", 2, 1),
    ("devices/system/cpu/online", "0-31 \n", "not a CPU number or range", 1, 3),
    ("devices/system/cpu/offline", "4-2\n", "goes down", 1, 1),
    ("devices/system/cpu/present", "0-200000\n", "above the largest CPU number", 1, 3),
    ("devices/system/cpu/isolated", "\u0663\n".encode(), "not ASCII", 1, 1),
    ("devices/system/cpu/isolated", "1,,2\n", "an empty item", 1, 3),
    (f"{CPU0}/topology/physical_package_id", "zero\n", "expected an integer", 1, 1),
    (f"{CPU0}/topology/thread_siblings_list", "0,16-x\n", "not a CPU number or range", 1, 6),
    (f"{CPU0}/cache/index0/size", "32 K\n", "expected a size such as 32K", 1, 1),
    (f"{CPU0}/cache/index0/type", "Victim\n", "Data, Instruction or Unified", 1, 1),
    (f"{CPU0}/cache/index0/level", "0\n", "a cache level is 1-9", 1, 1),
    (f"{CPU0}/cache/index3/shared_cpu_list", "0-7,16-23,20\n", "not after the CPUs before it", 1, 11),
    (f"{CPU0}/cache/index3/shared_cpu_list", "\n", "an empty list", 1, 1),
    (f"{CPU0}/cpufreq/cpuinfo_max_freq", "-5\n", "not a processor clock", 1, 1),
    (f"{CPU0}/cpufreq/cpuinfo_max_freq", "272\n", "not a processor clock", 1, 1),
    ("devices/system/node/node0/cpulist", b"0-7\xff\n", "not ASCII", 1, 4),
    ("fs/cgroup/cpuset.cpus.effective", "0-3,x\n", "not a CPU number or range", 1, 5),
    ("proc/self/cgroup", "0::/\nnot a line\n", "is not a cgroup line", 2, 1),
    ("proc/self/cgroup", "0::/a/../../etc\n", "not a plain path", 1, 4),
]


@pytest.mark.parametrize(("relative", "text", "message", "line", "column"), MALFORMED)
def test_a_malformed_file_is_one_located_error(tmp_path, relative, text, message, line, column):
    root = _tree(tmp_path, {} if relative.startswith("proc/") else {relative: text})
    if relative.startswith("fs/cgroup"):
        process = _process(tmp_path, cgroup="0::/\n")
    else:
        process = _process(tmp_path, cgroup=text if relative.startswith("proc/") else None)
    path = tmp_path / relative if relative.startswith("proc/") else root / relative
    with pytest.raises(SpecError, match=message) as caught:
        _import(root, process)
    assert str(caught.value).startswith(f"{path}:{line}:{column}:"), str(caught.value)


def test_the_command_exits_2_with_the_file_and_line(tmp_path, monkeypatch, capsys):
    """``tasksolve topology host`` on a malformed /sys: exit 2, the file and line, no traceback."""
    root = _tree(tmp_path, {"devices/system/cpu/online": "0-31,\n"})
    monkeypatch.setattr(sysfs, "HOST_ROOT", root)
    monkeypatch.setattr(sysfs, "PROC_ROOT", tmp_path / "proc")
    assert main(["topology", "host"]) == 2
    err = capsys.readouterr().err
    assert f"{root / 'devices/system/cpu/online'}:1:6:" in err.replace("\n", "") and "Traceback" not in err


READ = [
    "devices/system/cpu/online",
    "devices/system/cpu/offline",
    "devices/system/cpu/isolated",
    f"{CPU0}/topology/die_id",
    f"{CPU0}/topology/thread_siblings_list",
    f"{CPU0}/cache/index1/type",
    f"{CPU0}/cache/index2/size",
    "devices/system/node/node0/cpulist",
    "fs/cgroup/cpuset.cpus.effective",
    "proc/self/cgroup",
]


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(READ), st.binary(max_size=40) | st.text("0123456789-,: /\n", max_size=30))
def test_any_content_gives_a_topology_or_one_located_error(tmp_path, relative, content):
    """Whatever a file read holds (the 2-CPU capture): a topology, or a SpecError naming that file --
    never another exception."""
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    data = content if isinstance(content, bytes) else content.encode()
    root = _tree(folder, {} if relative.startswith("proc/") else {relative: data}, machine="vm-2core")
    process = _process(folder, affinity={0, 1}, cgroup=data if relative.startswith("proc/") else "0::/\n")
    try:
        _, topo, usable, _ = _import(root, process)
    except SpecError as error:
        assert str(error).startswith(str(folder / relative if relative.startswith("proc/") else root / relative)) or (
            "no CPU a plan may use" in str(error) or "not a uniform tree" in str(error) or "do not nest" in str(error)
        ), str(error)
        return
    assert usable and set(usable) <= {0, 1} and len(set(topo.os_cpu_list)) == topo.n_contexts


# ----------------------------------------------------------------- this host, under taskset
def _restricted(cpu: int, *args: str) -> subprocess.CompletedProcess:
    """``tasksolve ARGS`` run with the affinity mask {cpu}: under taskset when there is one,
    else a child that calls sched_setaffinity itself."""
    taskset = shutil.which("taskset")
    if taskset:
        command = [taskset, "-c", str(cpu), sys.executable, "-m", "tasksolve", *args]
    else:
        code = (
            f"import os, sys; os.sched_setaffinity(0, {{{cpu}}}); "
            "from tasksolve.solver.cli import main; sys.exit(main(sys.argv[1:]))"
        )
        command = [sys.executable, "-c", code, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or not Path("/sys/devices/system/cpu").is_dir(),
    reason="needs Linux sysfs and sched_setaffinity",
)
def test_taskset_one_cpu_gives_one_usable_cpu_and_plans_stay_on_it(tmp_path):
    cpu = min(os.sched_getaffinity(0))
    done = _restricted(cpu, "topology", "host", "--json", "--output", str(tmp_path / "host.yaml"))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["summary"]["cpus"] == 1
    topo = load_topology(tmp_path / "host.yaml")
    assert [topo.os_cpu(c) for c in topo.usable_contexts] == [cpu]
    if topo.n_contexts > 1:
        assert "not in this process's affinity mask (sched_getaffinity)" in " ".join(out["notes"])
    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(
        "tasksolve: 1\nname: one-thread\ntopology: host.yaml\n"
        "applications:\n  a: {tasks: {A: {cycles: 100, demand: {mem: 0.1}}}}\n"
        "workload: [{app: a, instances: 1}]\n"
    )
    spec = load_spec(spec_path)
    assert [topo.os_cpu(c) for c in spec.usable_contexts] == [cpu]
    for plans in (uniform_plans(spec, 50, seed=1), balanced_plans(spec, 20, seed=2)):
        assert set(np.vectorize(topo.os_cpu)(plans).ravel()) == {cpu}
    solved = tmp_path / "solved"
    done = _restricted(cpu, "solve", str(spec_path), "-m", "random", "--oracle", "analytic", "--random-plans", "5",
                       "--seed", "3", "--out", str(solved))  # fmt: skip
    assert done.returncode == 0, done.stderr
    done = _restricted(cpu, "pin", str(solved / "plan.yaml"), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert {row["cpu"] for row in json.loads(done.stdout)["threads"]} == {cpu}
