"""List scheduling: HLFET, ETF, insertion and seeded perturbed priorities (see `solver.makespan`)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Literal

from tasksolve.solver.makespan.schedule import Schedule, ScheduledTask, predecessor_delays
from tasksolve.solver.makespan.taskgraph import TaskGraph

Rule = Literal["hlfet", "etf"]


def list_schedule(
    graph: TaskGraph,
    processors: int,
    *,
    comm_delays: bool = False,
    priority: Sequence[float] | None = None,
    rule: Rule = "hlfet",
    insertion: bool = False,
) -> Schedule:
    """A list schedule (Graham 1966) of ``graph`` on ``processors`` identical processors.

    ``rule="hlfet"`` (Adam, Chandy & Dickson 1974): repeatedly take the ready task of highest
    ``priority`` (default: its b-level, with the delays when ``comm_delays``; ties to the lower
    index) and put it on the processor where it starts earliest (ties to the lower processor).
    ``rule="etf"``: take the ready task and processor pair that starts earliest, ties to the
    higher priority. A task on another processor than a predecessor starts at least the edge's
    delay after the predecessor's end when ``comm_delays``. With ``insertion`` a task may fill an
    idle gap between two tasks already placed on a processor.
    """
    if processors < 1:
        raise ValueError(f"processors must be >= 1, got {processors}")
    n = len(graph)
    durations = graph.durations
    preds = predecessor_delays(graph, comm_delays)
    if priority is None:
        priority = graph.b_levels(with_delays=comm_delays)
    missing = [len(p) for p in preds]
    ready = [i for i in range(n) if missing[i] == 0]
    proc_of = [-1] * n
    start = [0] * n
    end = [0] * n
    free = [0] * processors  # end of the last task on each processor
    busy: list[list[tuple[int, int]]] = [[] for _ in range(processors)]  # sorted (start, end)
    usable = min(processors, n) if n else 1

    def earliest(i: int, p: int) -> int:
        t = 0
        for k, c in preds[i]:
            t = max(t, end[k] + (c if proc_of[k] != p else 0))
        if not insertion:
            return max(t, free[p]) if durations[i] else t
        if durations[i] == 0:
            return t
        for s, e in busy[p]:
            if t + durations[i] <= s:
                return t
            t = max(t, e)
        return t

    while ready:
        if rule == "hlfet":
            task = max(ready, key=lambda i: (priority[i], -i))
            choice = min(range(usable), key=lambda p: (earliest(task, p), p))
            at = earliest(task, choice)
        else:
            at, _, task, choice = min((earliest(i, p), -priority[i], i, p) for i in ready for p in range(usable))
        ready.remove(task)
        proc_of[task], start[task], end[task] = choice, at, at + durations[task]
        if durations[task]:
            free[choice] = max(free[choice], end[task])
            busy[choice].append((at, end[task]))
            busy[choice].sort()
        for j, _ in graph.successors(task):
            missing[j] -= 1
            if missing[j] == 0:
                ready.append(j)
    return Schedule(
        tuple(ScheduledTask(graph.names[i], proc_of[i], start[i], end[i]) for i in range(n)),
        processors,
    )


def best_list_schedule(
    graph: TaskGraph,
    processors: int,
    *,
    comm_delays: bool = False,
    seed: int = 0,
    restarts: int = 24,
    target: int | None = None,
) -> Schedule:
    """The shortest of several list schedules: HLFET and ETF (b-levels with and without the
    delays, with and without insertion), then ``restarts`` HLFET runs whose b-level priorities
    are perturbed by a `random.Random(seed)` (deterministic). Stops as soon as a schedule
    reaches ``target`` (a lower bound)."""
    levels = [graph.b_levels(with_delays=False)]
    if comm_delays and graph.has_delays:
        levels.insert(0, graph.b_levels(with_delays=True))
    best: Schedule | None = None

    def consider(s: Schedule) -> bool:
        nonlocal best
        if best is None or s.makespan < best.makespan:
            best = s
        return target is not None and best.makespan <= target

    for level in levels:
        for rule, insertion in (("hlfet", False), ("hlfet", True), ("etf", False)):
            if consider(
                list_schedule(
                    graph, processors, comm_delays=comm_delays, priority=level, rule=rule, insertion=insertion
                )
            ):
                return best  # type: ignore[return-value]
    rng = random.Random(seed)
    base = levels[0]
    for k in range(restarts):
        noise = 0.1 + 0.4 * (k % 4) / 3  # relative perturbation between 10% and 50%
        perturbed = [b * (1 + noise * (2 * rng.random() - 1)) for b in base]
        if consider(
            list_schedule(graph, processors, comm_delays=comm_delays, priority=perturbed, insertion=bool(k % 2))
        ):
            break
    assert best is not None
    return best
