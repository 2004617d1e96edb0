"""Write the sysfs trees the importer tests read (run once; the trees are committed).

* ``vm-2core``: captured from the 2-core VM the tests were written on (``capture``);
* ``server-2s``: a 2-socket server, 8 cores x 2 SMT threads per socket, L3 per socket, one NUMA
  node per socket, Linux's usual numbering (cpu i and i+16 are siblings) and core ids with gaps;
* ``t2-like``: one socket, 8 cores x 8 strands (cpu 8c..8c+7 on core c), L2 shared by all.

Usage: python tests/data/sysfs/make_trees.py [--capture-host]
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

HERE = Path(__file__).parent
TOPOLOGY_FILES = ("physical_package_id", "die_id", "core_id", "thread_siblings_list")
CACHE_FILES = ("level", "type", "shared_cpu_list", "size")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def capture(source: Path, dest: Path) -> None:
    """Copy the files the importer reads from a live sysfs."""
    if dest.exists():
        shutil.rmtree(dest)
    cpu = source / "devices/system/cpu"
    for name in ("online",):
        _write(dest / "devices/system/cpu" / name, (cpu / name).read_text().strip())
    for cpu_path in sorted(cpu.glob("cpu[0-9]*")):
        out = dest / "devices/system/cpu" / cpu_path.name
        for name in TOPOLOGY_FILES:
            if (cpu_path / "topology" / name).exists():
                _write(out / "topology" / name, (cpu_path / "topology" / name).read_text().strip())
        for index in sorted((cpu_path / "cache").glob("index[0-9]*")):
            for name in CACHE_FILES:
                _write(out / "cache" / index.name / name, (index / name).read_text().strip())
    for node in sorted((source / "devices/system/node").glob("node[0-9]*")):
        _write(dest / "devices/system/node" / node.name / "cpulist", (node / "cpulist").read_text().strip())


def _ranges(cpus: list[int]) -> str:
    cpus = sorted(cpus)
    out, start = [], cpus[0]
    for a, b in zip(cpus, cpus[1:] + [None]):
        if b != a + 1:
            out.append(f"{start}" if start == a else f"{start}-{a}")
            start = b
    return ",".join(out)


def synthesise(
    dest: Path,
    cpus: dict[int, dict],
    caches: list[tuple[int, str, str, list[list[int]]]],
    nodes: list[list[int]],
    max_khz: int | None = None,
) -> None:
    """cpus: cpu -> {package, core_id, siblings}; caches: (level, type, size, groups)."""
    if dest.exists():
        shutil.rmtree(dest)
    base = dest / "devices/system/cpu"
    _write(base / "online", _ranges(list(cpus)))
    for cpu, info in cpus.items():
        top = base / f"cpu{cpu}/topology"
        _write(top / "physical_package_id", str(info["package"]))
        _write(top / "die_id", "0")
        _write(top / "core_id", str(info["core_id"]))
        _write(top / "thread_siblings_list", _ranges(info["siblings"]))
        for index, (level, kind, size, groups) in enumerate(caches):
            group = next(g for g in groups if cpu in g)
            folder = base / f"cpu{cpu}/cache/index{index}"
            for name, text in (
                ("level", str(level)),
                ("type", kind),
                ("size", size),
                ("shared_cpu_list", _ranges(group)),
            ):
                _write(folder / name, text)
        if max_khz:
            _write(base / f"cpu{cpu}/cpufreq/cpuinfo_max_freq", str(max_khz))
    for index, node in enumerate(nodes):
        _write(dest / f"devices/system/node/node{index}/cpulist", _ranges(node))


def server_2s() -> None:
    core_ids = [0, 1, 2, 3, 8, 9, 10, 11]
    cpus, cores = {}, []
    for socket in range(2):
        for core in range(8):
            first = socket * 8 + core
            pair = [first, first + 16]
            cores.append(pair)
            for cpu in pair:
                cpus[cpu] = {"package": socket, "core_id": core_ids[core], "siblings": pair}
    sockets = [[c for c in cpus if cpus[c]["package"] == s] for s in range(2)]
    caches = [
        (1, "Data", "48K", cores),
        (1, "Instruction", "32K", cores),
        (2, "Unified", "2048K", cores),
        (3, "Unified", "30720K", sockets),
    ]
    synthesise(HERE / "server-2s", dict(sorted(cpus.items())), caches, sockets, max_khz=3_100_000)


def t2_like() -> None:
    cores = [list(range(8 * c, 8 * c + 8)) for c in range(8)]
    cpus = {cpu: {"package": 0, "core_id": c, "siblings": cores[c]} for c in range(8) for cpu in cores[c]}
    caches = [(1, "Data", "8K", cores), (1, "Instruction", "16K", cores), (2, "Unified", "4096K", [list(range(64))])]
    synthesise(HERE / "t2-like", cpus, caches, [list(range(64))], max_khz=1_400_000)


if __name__ == "__main__":
    if "--capture-host" in sys.argv:
        capture(Path("/sys"), HERE / "vm-2core")
    server_2s()
    t2_like()
