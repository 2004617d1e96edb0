"""Thread types of a binding problem: the (application, task) pairs -- (application, ``task.rK``)
for the replicas of a replicated task -- with how many threads of each the spec runs, their
demands, their cycles (on each kind of core) and their in-edges -- what the configuration and
level LPs (`solver.binding.configurations`, `solver.binding.level_lp`) count.  Every figure is per
packet of the thread's instance: a replica's cycles and messages are its share of them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.specs.kind_work import kind_work


@dataclass
class ThreadTypes:
    """Thread types (application, task) with counts, demands, cycles and in-edges."""

    names: list[tuple[str, str]]
    count: np.ndarray  # (K,) threads of each type in the spec
    cycles: np.ndarray  # (K,)
    demand: np.ndarray  # (K, R) demand per resource
    in_edges: list[list[tuple[int, int, float]]]  # per type: (producer type, bytes, messages per instance packet)
    apps: dict[str, list[int]]  # application -> its types, in task order
    anchor: dict[str, int]  # application -> anchor type
    kind_cycles: np.ndarray | None = None  # (K, kinds of core): cycles on each kind

    @classmethod
    def of(cls, problem: BindingProblem) -> ThreadTypes:
        spec = problem.spec
        resources = [r.name for r in problem.topology.resources]
        names: list[tuple[str, str]] = []
        count: dict[tuple[str, str], int] = {}
        for thread in spec.threads:
            key = thread.type_key
            if key not in count:
                names.append(key)
                count[key] = 0
            count[key] += 1
        index = {key: k for k, key in enumerate(names)}
        apps: dict[str, list[int]] = {}
        for k, (app, _) in enumerate(names):
            apps.setdefault(app, []).append(k)
        type_of = [index[t.type_key] for t in spec.threads]
        first: dict[int, int] = {}
        for t, k in enumerate(type_of):
            first.setdefault(k, t)
        in_edges: list[list[tuple[int, int, float]]] = [[] for _ in names]
        for q, t, size, weight in problem.edges:  # the first instance's: every instance has the same
            if first[type_of[t]] == t:  # per packet of the instance: the consumer replica's share of them
                in_edges[type_of[t]].append((type_of[q], size, weight / spec.threads[t].replicas))
        # cycles x frequency, as every model charges, on each kind of core (`specs.cpu_kinds`); where
        # the kind is not known, the fastest kind's (a bound may assume every thread runs on it);
        # a replica's per packet of its instance: 1/R of them (its messages are weighted in `in_edges`)
        topo = problem.topology
        threads = [spec.threads[first[k]] for k in range(len(names))]
        tasks = [spec.applications[t.app].tasks[t.task] for t in threads]
        share = np.array([1.0 / t.replicas for t in threads])
        kind_cycles = np.array([kind_work(t, topo.kind_names, topo) for t in tasks], dtype=float) * share[:, None]
        cycles = kind_cycles.min(axis=1)
        anchor = {app: max(ks, key=lambda k: (cycles[k], -k)) for app, ks in apps.items()}
        return cls(
            names=names,
            count=np.array([count[key] for key in names]),
            cycles=cycles,
            demand=np.array([[t.demand.get(r, 0.0) for r in resources] for t in tasks], dtype=float).reshape(
                len(tasks), len(resources)
            ),
            in_edges=in_edges,
            apps=apps,
            anchor=anchor,
            kind_cycles=kind_cycles,
        )
