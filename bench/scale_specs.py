"""Specs of today's servers for the scaling bench (issue 26): 2 sockets x N cores x 2 SMT threads.

Per-core ``fpu`` and ``l1`` of capacity 1, a per-socket ``l3`` of capacity N/4, and 3-task
pipelines (rx -> work -> tx, 64-byte messages) of four kinds -- fp-heavy, cache-heavy,
memory-heavy, light -- in equal numbers, filling 75% of the 4N contexts (so N must be a
multiple of 4).  Demands are per thread, in units of the resource's capacity; the memory-heavy
pipelines load the L3, which the socket's pipelines oversubscribe by about 5%.

    python bench/scale_specs.py 128 > server-128.yaml
    python bench/scale_specs.py huge > huge.yaml   # 4 x 500 tasks on 256 x 8 contexts

`huge_data` is the limits check of issue 26: four instances of a 500-task chain (2000 threads) on a machine of
256 cores x 8 hardware threads (2048 contexts), one per-core ``alu`` and a machine-wide ``mem``:
it passes ``validate`` but no exact model or configuration enumeration fits it.
"""

from __future__ import annotations

import sys

import yaml

KINDS = {
    "fp": {
        "rx": {"cycles": 200, "demand": {"l1": 0.2, "l3": 0.1}},
        "work": {"cycles": 900, "demand": {"fpu": 0.7, "l1": 0.2}},
        "tx": {"cycles": 180, "demand": {"l1": 0.2, "l3": 0.1}},
    },
    "cache": {
        "rx": {"cycles": 200, "demand": {"l1": 0.2, "l3": 0.1}},
        "work": {"cycles": 800, "demand": {"l1": 0.7, "l3": 0.3}},
        "tx": {"cycles": 180, "demand": {"l1": 0.2, "l3": 0.1}},
    },
    "memory": {
        "rx": {"cycles": 200, "demand": {"l1": 0.2, "l3": 0.1}},
        "work": {"cycles": 1000, "demand": {"l1": 0.3, "l3": 1.0}},
        "tx": {"cycles": 180, "demand": {"l1": 0.2, "l3": 0.1}},
    },
    "light": {
        "rx": {"cycles": 150, "demand": {"l1": 0.1, "l3": 0.1}},
        "work": {"cycles": 400, "demand": {"fpu": 0.2, "l1": 0.2}},
        "tx": {"cycles": 150, "demand": {"l1": 0.1, "l3": 0.1}},
    },
}


def server_data(contexts: int, name: str | None = None) -> dict:
    """The spec (as YAML data) of a 2 x N x 2 server with `contexts` = 4N hardware contexts."""
    if contexts % 16 or contexts < 16:
        raise ValueError("contexts must be a positive multiple of 16 (2 sockets x N cores x 2, N % 4 == 0)")
    cores = contexts // 4
    per_kind = contexts // 16  # pipelines of each kind: 3 threads each, 75% of the contexts in all
    topology = {
        "name": f"server 2x{cores}x2",
        "clock": "2.5GHz",
        "levels": [{"name": "socket", "count": 2}, {"name": "core", "count": cores}, {"name": "smt", "count": 2}],
        "resources": [
            {"name": "fpu", "level": "core", "capacity": 1.0},
            {"name": "l1", "level": "core", "capacity": 1.0},
            {"name": "l3", "level": "socket", "capacity": cores / 4},
        ],
        "communication": {"core": 20, "socket": 60, "machine": 200},
    }
    applications = {
        kind: {
            "tasks": tasks,
            "edges": [{"from": "rx", "to": "work", "bytes": "64B"}, {"from": "work", "to": "tx", "bytes": "64B"}],
        }
        for kind, tasks in KINDS.items()
    }
    return {
        "tasksolve": 1,
        "name": name or f"server-{contexts}",
        "topology": topology,
        "applications": applications,
        "workload": [{"app": kind, "instances": per_kind} for kind in KINDS],
    }


def huge_data(instances: int = 4, tasks: int = 500, cores: int = 256, threads: int = 8) -> dict:
    """The spec (as YAML data) of `instances` of a `tasks`-task chain on `cores` x `threads` contexts."""

    def task(i: int) -> dict:
        return {"cycles": 100 + 7 * ((i * 31) % 50), "demand": {"alu": 0.1 + 0.05 * (i % 5), "mem": 0.01}}

    chain = {
        "tasks": {f"t{i}": task(i) for i in range(tasks)},
        "edges": [{"from": f"t{i}", "to": f"t{i + 1}", "bytes": "64B"} for i in range(tasks - 1)],
    }
    return {
        "tasksolve": 1,
        "name": f"huge-{instances}x{tasks}",
        "topology": {
            "name": f"{cores}x{threads}",
            "clock": "2GHz",
            "levels": [{"name": "core", "count": cores}, {"name": "thread", "count": threads}],
            "resources": [
                {"name": "alu", "level": "core", "capacity": 1.0},
                {"name": "mem", "level": "machine", "capacity": 8.0},
            ],
            "communication": {"core": 20, "machine": 200},
        },
        "applications": {"chain": chain},
        "workload": [{"app": "chain", "instances": instances}],
    }


def server_spec(contexts: int):
    """The loaded `Spec` of `server_data(contexts)`."""
    from tasksolve.specs import load_spec_text

    return load_spec_text(yaml.safe_dump(server_data(contexts), sort_keys=False), f"server-{contexts}.yaml")


if __name__ == "__main__":
    data = huge_data() if sys.argv[1] == "huge" else server_data(int(sys.argv[1]))
    sys.stdout.write(yaml.safe_dump(data, sort_keys=False))
