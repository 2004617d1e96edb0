"""Schedules of a task graph on identical processors: rows, validity (P|prec,c_ij|Cmax rules)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from tasksolve.solver.makespan.taskgraph import TaskGraph


class Status(str, Enum):
    """How good a returned schedule is known to be."""

    OPTIMAL = "OPTIMAL"  #: makespan == lower bound (proven)
    FEASIBLE = "FEASIBLE"  #: a valid schedule, optimality not proven within the limits
    UNKNOWN = "UNKNOWN"  #: no schedule (never returned by `solve_makespan`: list scheduling
    #: always provides one; kept for callers that report a solver's raw outcome)


@dataclass(frozen=True)
class ScheduledTask:
    """One task of a schedule: it runs on ``processor`` during ``[start, end)``."""

    task: str
    processor: int
    start: int
    end: int


@dataclass(frozen=True)
class Schedule:
    """A schedule of every task of a graph, in task index order."""

    tasks: tuple[ScheduledTask, ...]
    processors: int

    @property
    def makespan(self) -> int:
        return max((t.end for t in self.tasks), default=0)

    def by_start(self) -> list[ScheduledTask]:
        """The tasks sorted by start time, then processor, then end."""
        return sorted(self.tasks, key=lambda t: (t.start, t.processor, t.end))

    def on_processor(self, processor: int) -> list[ScheduledTask]:
        """The tasks of one processor in start order."""
        return sorted((t for t in self.tasks if t.processor == processor), key=lambda t: (t.start, t.end))

    def rows(self) -> list[dict[str, int | str]]:
        """JSON-ready rows ``{task, processor, start, end}`` in start order."""
        return [{"task": t.task, "processor": t.processor, "start": t.start, "end": t.end} for t in self.by_start()]


def predecessor_delays(graph: TaskGraph, comm_delays: bool) -> list[list[tuple[int, int]]]:
    """Predecessor lists ``(pred, delay)`` with the delays zeroed when they are ignored."""
    return [[(i, c if comm_delays else 0) for i, c in graph.predecessors(j)] for j in range(len(graph))]


def schedule_violations(graph: TaskGraph, schedule: Schedule, *, comm_delays: bool) -> list[str]:
    """Every way ``schedule`` breaks the rules (an empty list when it is valid).

    Rules: each task appears once with ``end - start`` equal to its duration, ``start >= 0``,
    on a processor in ``0..P-1``; a successor starts after its predecessor ends, plus the edge
    delay when ``comm_delays`` and the two run on different processors; tasks of positive
    duration never overlap on one processor (zero-duration tasks occupy nothing), hence at most
    P run at once.
    """
    problems: list[str] = []
    if len(schedule.tasks) != len(graph):
        return [f"the schedule has {len(schedule.tasks)} tasks, the graph {len(graph)}"]
    for i, entry in enumerate(schedule.tasks):
        name = graph.names[i]
        if entry.task != name:
            problems.append(f"entry {i} is {entry.task!r}, expected {name!r}")
        if entry.end - entry.start != graph.durations[i]:
            problems.append(f"{name} lasts {entry.end - entry.start}, not {graph.durations[i]}")
        if entry.start < 0:
            problems.append(f"{name} starts at {entry.start} < 0")
        if not 0 <= entry.processor < schedule.processors:
            problems.append(f"{name} is on processor {entry.processor} of {schedule.processors}")
    for j, plist in enumerate(predecessor_delays(graph, comm_delays)):
        for i, c in plist:
            a, b = schedule.tasks[i], schedule.tasks[j]
            need = a.end + (c if a.processor != b.processor else 0)
            if b.start < need:
                problems.append(
                    f"{b.task} starts at {b.start}, before {need} "
                    f"(after {a.task}, delay {c if a.processor != b.processor else 0})"
                )
    for p in range(schedule.processors):
        busy = [t for t in schedule.on_processor(p) if t.end > t.start]
        for x, y in zip(busy, busy[1:]):
            if y.start < x.end:
                problems.append(f"{x.task} and {y.task} overlap on processor {p}")
    return problems
