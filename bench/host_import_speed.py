"""How long building a host's topology takes (`specs.importers.host.build_topology`), by size.

Synthetic uniform hosts of 1k to 60k PUs (a topology holds 65,536 contexts): 2 sockets x N
cores x 2 SMT threads, Linux's numbering (the second thread of core i is CPU i + cores), an L1
data, an L1 instruction and an L2 cache per core, an L3 and a NUMA node per socket -- the
description both importers (sysfs, hwloc) hand to `build_topology`. Each size is built
`--repeats` times in this process, sizes interleaved in rounds; the wall time (median, range) and
the processor time (median: far less sensitive to the shared machine's other jobs) are recorded
with the load average before and after. Every build is checked: levels ``socket > core > pu``,
the counts, the caches' levels, each context's OS CPU.

The construction is a group-by per level (each CPU's group, each group's parent by its lowest
CPU), O(n log n) in the PUs; the code before did nested scans of the groups (quadratic: 16k PUs
took 17 s, 60k did not finish in 120 s in an audit).

    python bench/host_import_speed.py --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from results import markdown_table, write_results

from tasksolve.specs.importers.host import Cache, HostDescription, build_topology

MODULES = [
    "specs/importers/host.py",
    "specs/importers/tree.py",
    "specs/importers/cpusets.py",
    "specs/importers/memory.py",
    "specs/importers/description.py",
    "specs/topology.py",
]
NOISY = ["rows.*.wall_median_s", "rows.*.cpu_median_s", "rows.*.us_per_pu"]
IGNORE = ["rows.*.wall_min_s", "rows.*.wall_max_s", "load_before", "load_after"]
SIZES = [1024, 4096, 16384, 61440]
SOCKETS, SMT = 2, 2


def synthetic_host(pus: int) -> HostDescription:
    """2 sockets x `pus / 4` cores x 2 SMT, caches and NUMA nodes as the module docstring says."""
    cores = pus // (SOCKETS * SMT)
    package, siblings, node, caches = {}, {}, {}, set()
    for socket in range(SOCKETS):
        in_socket: list[int] = []
        for core in range(socket * cores, (socket + 1) * cores):
            threads = frozenset(core + thread * SOCKETS * cores for thread in range(SMT))
            for cpu in threads:
                package[cpu], siblings[cpu], node[cpu] = socket, threads, socket
            in_socket += threads
            caches |= {
                Cache(1, "data", 48 << 10, threads),
                Cache(1, "instruction", 32 << 10, threads),
                Cache(2, "unified", 2 << 20, threads),
            }
        caches.add(Cache(3, "unified", 64 << 20, frozenset(in_socket)))
    return HostDescription(
        source=f"<synthetic {pus} PUs>", package=package, siblings=siblings, node=node, caches=caches
    )


def check(pus: int, result) -> None:
    """The built topology is the host's: shape, cache levels, OS CPUs."""
    topo = result.topology
    cores = pus // (SOCKETS * SMT)
    assert topo.level_names == ["socket", "core", "pu"] and topo.counts == [SOCKETS, cores, SMT], topo.counts
    assert {r.name: r.level for r in topo.resources} == {
        "l1": "core",
        "l1i": "core",
        "l2": "core",
        "l3": "socket",
        "mem": "socket",
    }
    assert topo.os_cpus["socket0.core0.pu1"] == SOCKETS * cores and sorted(topo.os_cpu_list) == list(range(pus))
    assert result.summary == {"cpus": pus, "cores": SOCKETS * cores, "sockets": SOCKETS, "numa_nodes": SOCKETS}


def build_once(host: HostDescription) -> tuple[float, float, object]:
    """Wall and processor seconds of one `build_topology`, and its result."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = build_topology(host)
    return time.perf_counter() - wall, time.process_time() - cpu, result


def measure(sizes: list[int], repeats: int) -> dict:
    hosts = {pus: synthetic_host(pus) for pus in sizes}
    load_before = list(os.getloadavg())
    walls: dict[int, list[float]] = {pus: [] for pus in sizes}
    cpus: dict[int, list[float]] = {pus: [] for pus in sizes}
    for _ in range(repeats):
        for pus in sizes:
            wall, cpu, result = build_once(hosts[pus])
            check(pus, result)
            walls[pus].append(wall)
            cpus[pus].append(cpu)
    rows = [
        {
            "pus": pus,
            "shape": f"{SOCKETS} x {pus // (SOCKETS * SMT)} x {SMT}",
            "wall_median_s": statistics.median(walls[pus]),
            "wall_min_s": min(walls[pus]),
            "wall_max_s": max(walls[pus]),
            "cpu_median_s": statistics.median(cpus[pus]),
            "us_per_pu": 1e6 * statistics.median(cpus[pus]) / pus,
        }
        for pus in sizes
    ]
    return {
        "repeats": repeats,
        "load_before": load_before,
        "load_after": list(os.getloadavg()),
        "cpus": os.cpu_count(),
        "rows": rows,
    }


def render_markdown(data: dict) -> str:
    """The BENCHMARKS.md section for `data`."""
    load = "/".join(f"{v:.2f}" for v in data["load_before"]), "/".join(f"{v:.2f}" for v in data["load_after"])
    rows = [
        [
            f"{row['pus']:,}",
            row["shape"],
            f"{row['wall_median_s']:.3f} s",
            f"{row['wall_min_s']:.3f} - {row['wall_max_s']:.3f} s",
            f"{row['cpu_median_s']:.3f} s",
            f"{row['us_per_pu']:.1f} us",
        ]
        for row in data["rows"]
    ]
    return (
        f"`python bench/host_import_speed.py --repeats {data['repeats']}`: `build_topology` on synthetic "
        "uniform hosts (sockets x cores x SMT threads; L1d, L1i, L2 per core, L3 and a NUMA node per socket), "
        f"in process, median of {data['repeats']} builds per size (sizes interleaved), each build checked "
        f"(shape, cache levels, OS CPUs). Load average (1, 5, 15 min) {load[0]} before and {load[1]} after, "
        f"on {data['cpus']} cores. {_growth(data['rows'])}\n\n"
        + markdown_table(
            ["PUs", "sockets x cores x SMT", "wall, median", "wall, range", "processor, median", "processor per PU"],
            rows,
        )
        + "\n"
    )


def _growth(rows: list[dict]) -> str:
    """How the processor time per PU grows from the smallest host to the largest."""
    first, last = min(rows, key=lambda r: r["pus"]), max(rows, key=lambda r: r["pus"])
    if first is last:
        return ""
    size = last["pus"] / first["pus"]
    return (
        f"From {first['pus']:,} to {last['pus']:,} PUs ({size:.0f}x), the processor time per PU grows "
        f"{last['us_per_pu'] / first['us_per_pu']:.1f}x (a quadratic construction: {size:.0f}x)."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=SIZES, help="PUs per host (multiples of 4)")
    args = parser.parse_args()
    if any(pus % (SOCKETS * SMT) or pus <= 0 for pus in args.sizes):
        parser.error("--sizes: each a positive multiple of 4 (2 sockets x 2 SMT threads)")
    data = measure(args.sizes, args.repeats)
    print(json.dumps(data, indent=1))
    write_results("host-import-speed", data, modules=MODULES)


if __name__ == "__main__":
    main()
