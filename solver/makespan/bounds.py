"""Lower bounds on the makespan: critical path, work, energetic reasoning (see `solver.makespan`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tasksolve.solver.makespan.taskgraph import TaskGraph


@dataclass(frozen=True)
class LowerBounds:
    """The lower bounds on the makespan (see the module docstring)."""

    critical_path: int
    work: int
    energetic: int

    @property
    def best(self) -> int:
        return max(self.critical_path, self.work, self.energetic)

    def as_dict(self) -> dict[str, int]:
        return {"critical_path": self.critical_path, "work": self.work, "energetic": self.energetic}


_ENERGETIC_CHUNK = 2_000_000  # array elements per step of the energetic check
ENERGETIC_MAX_TASKS = 400  # above this the O(n^3) energetic check is skipped


def _energetic_refutes(
    durations: np.ndarray, est: np.ndarray, tail: np.ndarray, processors: int, makespan: int
) -> bool:
    """Whether energetic reasoning proves that no schedule of length ``makespan`` exists."""
    lst = makespan - tail - durations  # latest start
    if np.any(lst < est):
        return True
    ect = est + durations
    lct = lst + durations
    t1 = np.unique(np.concatenate([est, ect, lst]))
    t2 = np.unique(np.concatenate([lct, ect, lst]))
    b = t2[None, :, None]
    rows = max(1, _ENERGETIC_CHUNK // max(1, len(t2) * len(durations)))
    for first in range(0, len(t1), rows):  # chunks of t1 keep the arrays small
        a = t1[first : first + rows, None, None]
        # minimal overlap of each task with [a, b] over its window (left- or right-shifted)
        need = np.minimum(np.minimum(b - a, durations), np.minimum(ect - a, b - lst))
        energy = np.clip(need, 0, None).sum(axis=2)
        length = t2[None, :] - a[:, :, 0]
        if np.any((length > 0) & (energy > processors * length)):
            return True
    return False


def lower_bounds(graph: TaskGraph, processors: int, *, upper: int | None = None) -> LowerBounds:
    """The critical-path, work and energetic lower bounds on the makespan on ``processors``.

    ``upper`` (a known feasible makespan) stops the energetic search early: it never returns
    more than ``upper``. The energetic check costs O(n^3) per candidate makespan; it is skipped
    (reported equal to the simple bounds) above `ENERGETIC_MAX_TASKS` tasks.
    """
    if processors < 1:
        raise ValueError(f"processors must be >= 1, got {processors}")
    cp = graph.critical_path_length()
    work = -(-graph.total_work // processors)
    best = max(cp, work)
    if len(graph) == 0 or processors >= len(graph) or len(graph) > ENERGETIC_MAX_TASKS:
        return LowerBounds(cp, work, best)
    durations = np.array(graph.durations, dtype=np.int64)
    est = np.array(graph.t_levels(), dtype=np.int64)
    tail = np.array(graph.b_levels(), dtype=np.int64) - durations
    energetic = best
    limit = upper if upper is not None else graph.total_work
    while energetic < limit and _energetic_refutes(durations, est, tail, processors, energetic):
        energetic += 1
    return LowerBounds(cp, work, energetic)
