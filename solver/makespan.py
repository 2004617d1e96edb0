"""Latency-optimal schedules of a task graph on P identical processors (P|prec|Cmax and
P|prec,c_ij|Cmax), exactly with OR-Tools CP-SAT.

The pipeline of `solve_makespan`:

1. **Lower bounds** (`lower_bounds`), all valid with or without communication delays (a delay
   is never forced: two tasks may share a processor):

   * the critical path (longest path of durations);
   * the work bound ``ceil(total work / P)``;
   * the energetic (load-density) bound of Fernandez & Bussell (1973) in the form of energetic
     reasoning (Lopez, Erschler & Esquirol 1992; Baptiste, Le Pape & Nuijten 1999): for a
     candidate makespan C every task i must run in its window ``[t-level_i, C - b-level_i +
     d_i]``, so within any interval ``[t1, t2]`` it uses at least ``max(0, min(t2 - t1, d_i,
     ect_i - t1, t2 - lst_i))`` time units; when the sum over the tasks exceeds
     ``P (t2 - t1)`` for some interval (taken from the window end points), no schedule of
     length C exists. C is raised from the better of the two simple bounds until no interval
     refutes it. This subsumes the critical-path, the work and the "max over levels"
     (head + ceil(work / P) + tail) bounds.

2. **List scheduling** (`list_schedule`, `best_list_schedule`): HLFET -- highest level first
   with estimated times (Adam, Chandy & Dickson 1974), a priority list after Graham (1966): the
   ready task with the largest b-level goes to the processor where it can start first, a
   predecessor on another processor delaying it by the edge's communication delay. ETF
   (earliest task first, Hwang et al. 1989), the insertion variant and priorities perturbed with
   a seeded random generator are also tried; the best schedule is the upper bound and the hint.

3. When the list schedule meets the lower bound it is optimal and CP-SAT is not called (many of
   the Tobita-Kasahara 50-task graphs end here).

4. Otherwise a **CP-SAT interval model** (`build_model`) over start times restricted to
   ``[t-level_i, UB - b-level_i]`` with the makespan in ``[LB, UB]``:

   * without delays, one fixed-size interval per task, precedence inequalities,
     ``makespan >= start_i + b-level_i`` for every task, and a single cumulative of capacity P
     (unit demands) propagated with timetable edge finding and the overload checker. This is exact: a set of intervals that never has
     more than P running at once is P-colourable (interval graphs are perfect), and the
     processors are then named by a greedy sweep (`assign_processors`);
   * with communication delays (or ``model="assignment"``), Boolean ``x[i][p]`` per task and
     processor, an optional interval per pair with a no-overlap per processor, the redundant
     cumulative, ``start_j >= end_i + c_ij`` enforced when ``x[j][p]`` and not ``x[i][p]``, and
     the symmetry of identical processors broken by value precedence: processor p + 1 may only
     receive a task after processor p has received an earlier one (in topological order).

   The list schedule is the solution hint, so with any time limit the answer is never worse
   than it. The lower bound returned is the maximum of ours and CP-SAT's best objective bound.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Literal

import numpy as np

from solver.taskgraph import TaskGraph


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
        return sorted((t for t in self.tasks if t.processor == processor),
                      key=lambda t: (t.start, t.end))

    def rows(self) -> list[dict[str, int | str]]:
        """JSON-ready rows ``{task, processor, start, end}`` in start order."""
        return [
            {"task": t.task, "processor": t.processor, "start": t.start, "end": t.end}
            for t in self.by_start()
        ]


def _delays(graph: TaskGraph, comm_delays: bool) -> list[list[tuple[int, int]]]:
    """Predecessor lists ``(pred, delay)`` with the delays zeroed when they are ignored."""
    return [[(i, c if comm_delays else 0) for i, c in graph.predecessors(j)]
            for j in range(len(graph))]


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
    for j, plist in enumerate(_delays(graph, comm_delays)):
        for i, c in plist:
            a, b = schedule.tasks[i], schedule.tasks[j]
            need = a.end + (c if a.processor != b.processor else 0)
            if b.start < need:
                problems.append(f"{b.task} starts at {b.start}, before {need} "
                                f"(after {a.task}, delay {c if a.processor != b.processor else 0})")
    for p in range(schedule.processors):
        busy = [t for t in schedule.on_processor(p) if t.end > t.start]
        for x, y in zip(busy, busy[1:]):
            if y.start < x.end:
                problems.append(f"{x.task} and {y.task} overlap on processor {p}")
    return problems


# --------------------------------------------------------------------------------------------
# Lower bounds
# --------------------------------------------------------------------------------------------


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
        return {"critical_path": self.critical_path, "work": self.work,
                "energetic": self.energetic}


_ENERGETIC_CHUNK = 2_000_000  # array elements per step of the energetic check
ENERGETIC_MAX_TASKS = 400  # above this the O(n^3) energetic check is skipped


def _energetic_refutes(durations: np.ndarray, est: np.ndarray, tail: np.ndarray,
                       processors: int, makespan: int) -> bool:
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
        a = t1[first:first + rows, None, None]
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


# --------------------------------------------------------------------------------------------
# List scheduling
# --------------------------------------------------------------------------------------------

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
    preds = _delays(graph, comm_delays)
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
            at, _, task, choice = min(
                (earliest(i, p), -priority[i], i, p) for i in ready for p in range(usable)
            )
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
            if consider(list_schedule(graph, processors, comm_delays=comm_delays,
                                      priority=level, rule=rule, insertion=insertion)):
                return best  # type: ignore[return-value]
    rng = random.Random(seed)
    base = levels[0]
    for k in range(restarts):
        noise = 0.1 + 0.4 * (k % 4) / 3  # relative perturbation between 10% and 50%
        perturbed = [b * (1 + noise * (2 * rng.random() - 1)) for b in base]
        if consider(list_schedule(graph, processors, comm_delays=comm_delays,
                                  priority=perturbed, insertion=bool(k % 2))):
            break
    assert best is not None
    return best


# --------------------------------------------------------------------------------------------
# CP-SAT
# --------------------------------------------------------------------------------------------

ModelKind = Literal["auto", "cumulative", "assignment"]
DETERMINISTIC_WALL_GUARD = 20.0  # wall-clock guard, in multiples of a deterministic limit


def assign_processors(graph: TaskGraph, starts: Sequence[int], processors: int) -> Schedule:
    """Name processors for start times that never run more than ``processors`` tasks at once
    (no delays): sweep the tasks by start time and give each the lowest-numbered free processor
    (exact for interval graphs). Zero-duration tasks go to processor 0."""
    durations = graph.durations
    free_at = [0] * processors
    proc = [0] * len(graph)
    for i in sorted(range(len(graph)), key=lambda i: (starts[i], durations[i] == 0, i)):
        if durations[i] == 0:
            continue
        for p in range(processors):
            if free_at[p] <= starts[i]:
                proc[i] = p
                free_at[p] = starts[i] + durations[i]
                break
        else:  # pragma: no cover - the cumulative constraint makes this impossible
            raise RuntimeError("more tasks at once than processors")
    return Schedule(
        tuple(ScheduledTask(graph.names[i], proc[i], starts[i], starts[i] + durations[i])
              for i in range(len(graph))),
        processors,
    )


def canonical_processors(graph: TaskGraph, schedule: Schedule) -> Schedule:
    """Relabel the processors of ``schedule`` in the order of their first task in topological
    order (the symmetry breaking of the assignment model accepts only such labellings)."""
    mapping: dict[int, int] = {}
    for i in graph.topological_order:
        p = schedule.tasks[i].processor
        if p not in mapping:
            mapping[p] = len(mapping)
    for p in range(schedule.processors):
        mapping.setdefault(p, len(mapping))
    return Schedule(
        tuple(ScheduledTask(t.task, mapping[t.processor], t.start, t.end) for t in schedule.tasks),
        schedule.processors,
    )


@dataclass
class MakespanModel:
    """A CP-SAT model and the handles needed to read a schedule back."""

    model: object  # cp_model.CpModel
    starts: list
    makespan: object
    assign: list[list] | None  # x[i][p] in the assignment model, None in the cumulative model
    kind: str


def build_model(
    graph: TaskGraph,
    processors: int,
    *,
    lower: int,
    upper: int,
    comm_delays: bool,
    kind: Literal["cumulative", "assignment"],
    hint: Schedule | None = None,
) -> MakespanModel:
    """The CP-SAT model of P|prec|Cmax (``kind="cumulative"``, no delays) or of
    P|prec,c_ij|Cmax (``kind="assignment"``) with the makespan in ``[lower, upper]``; see the
    module docstring. ``hint`` must be a feasible schedule of makespan <= ``upper``."""
    from ortools.sat.python import cp_model

    if kind == "cumulative" and comm_delays and graph.has_delays and processors > 1:
        raise ValueError("the cumulative model ignores communication delays")
    n = len(graph)
    durations = graph.durations
    est = graph.t_levels()
    bottom = graph.b_levels()
    model = cp_model.CpModel()
    starts = [model.new_int_var(est[i], upper - bottom[i], f"s{i}") for i in range(n)]
    intervals = [model.new_fixed_size_interval_var(starts[i], durations[i], f"I{i}")
                 for i in range(n)]
    makespan = model.new_int_var(lower, upper, "makespan")
    preds = _delays(graph, comm_delays)
    for j in range(n):
        for i, _ in preds[j]:
            model.add(starts[j] >= starts[i] + durations[i])
        # the path after j still needs its b-level (for a sink: its duration)
        model.add(makespan >= starts[j] + bottom[j])
    positive = [i for i in range(n) if durations[i] > 0]
    usable = min(processors, n)
    if usable < len(positive):
        model.add_cumulative([intervals[i] for i in positive], [1] * len(positive), usable)
    assign = None
    if kind == "assignment":
        assign = [[model.new_bool_var(f"x{i}_{p}") for p in range(usable)] for i in range(n)]
        for i in range(n):
            model.add_exactly_one(assign[i])
        for p in range(usable):
            optional = [
                model.new_optional_fixed_size_interval_var(
                    starts[i], durations[i], assign[i][p], f"I{i}_{p}")
                for i in positive
            ]
            model.add_no_overlap(optional)
        for j in range(n):
            for i, c in preds[j]:
                if c == 0:
                    continue
                for p in range(usable):
                    model.add(starts[j] >= starts[i] + durations[i] + c).only_enforce_if(
                        [assign[j][p], ~assign[i][p]])
        # value precedence on identical processors: used[k][p] <=> some task up to the k-th
        # (in topological order) is on p; the k-th may go to p only if p - 1 was used before.
        order = graph.topological_order
        used_prev = [None] * usable
        used_vars: list[tuple[int, int, object]] = []
        for k, i in enumerate(order):
            used_now = []
            for p in range(usable):
                if p > 0:
                    if used_prev[p - 1] is None:
                        model.add(assign[i][p] == 0)
                    else:
                        model.add_implication(assign[i][p], used_prev[p - 1])
                u = model.new_bool_var(f"u{k}_{p}")
                used_vars.append((k, p, u))
                terms = [assign[i][p]] + ([used_prev[p]] if used_prev[p] is not None else [])
                model.add_bool_or(terms).only_enforce_if(u)
                for t in terms:
                    model.add_implication(t, u)
                used_now.append(u)
            used_prev = used_now
    model.minimize(makespan)
    if hint is not None:
        for i, entry in enumerate(hint.tasks):
            model.add_hint(starts[i], entry.start)
        model.add_hint(makespan, max(hint.makespan, lower))
        if assign is not None:
            canonical = canonical_processors(graph, hint).tasks
            for i, entry in enumerate(canonical):
                for p in range(usable):
                    model.add_hint(assign[i][p], entry.processor == p)
            first_at = {}  # processor -> position in topological order of its first task
            for k, i in enumerate(graph.topological_order):
                first_at.setdefault(canonical[i].processor, k)
            for k, p, u in used_vars:
                model.add_hint(u, first_at.get(p, len(graph)) <= k)
    return MakespanModel(model, starts, makespan, assign, kind)


@dataclass(frozen=True)
class MakespanResult:
    """What `solve_makespan` found. ``source`` says which step produced the schedule:
    ``"bound"`` (the list schedule met the lower bound), ``"list"`` (CP-SAT did not improve
    the list schedule) or ``"cp-sat"``."""

    status: Status
    makespan: int
    lower_bound: int
    schedule: Schedule
    processors: int
    comm_delays: bool
    source: str
    list_makespan: int
    bounds: dict[str, int]
    cpsat_status: str | None = None
    wall_time: float = 0.0
    model: str | None = None

    @property
    def gap(self) -> float:
        """Relative gap ``(makespan - lower_bound) / makespan`` (0 when optimal)."""
        return (self.makespan - self.lower_bound) / self.makespan if self.makespan else 0.0

    def to_dict(self) -> dict:
        """JSON-ready summary (the CLI adds ``graph`` and ``time_limit``)."""
        return {
            "status": self.status.value,
            "makespan": self.makespan,
            "lower_bound": self.lower_bound,
            "processors": self.processors,
            "comm_delays": self.comm_delays,
            "source": self.source,
            "list_makespan": self.list_makespan,
            "bounds": dict(self.bounds),
            "cpsat_status": self.cpsat_status,
            "model": self.model,
            "wall_time": round(self.wall_time, 4),
            "schedule": self.schedule.rows(),
        }


def solve_makespan(
    graph: TaskGraph,
    processors: int,
    *,
    comm_delays: bool | None = None,
    time_limit: float | None = 10.0,
    seed: int = 0,
    workers: int = 1,
    deterministic: bool = False,
    model: ModelKind = "auto",
    log: bool = False,
    shortcut: bool = True,
) -> MakespanResult:
    """A shortest schedule of ``graph`` on ``processors`` identical processors.

    ``comm_delays``: honour the edge delays (P|prec,c_ij|Cmax); ``None`` means "when the graph
    has any". ``time_limit`` (seconds, ``None`` for none) bounds the CP-SAT search; with
    ``deterministic`` it is a CP-SAT deterministic-time limit instead of a wall-clock one, so a
    run is reproducible for a given ``seed`` (with ``workers=1``). Deterministic time is a work
    count, only roughly seconds (the assignment model can take 15 times longer in wall time), so
    a wall-clock guard of `DETERMINISTIC_WALL_GUARD` times the limit still applies; only a run
    stopped by that guard may differ between machines. ``model``: ``"cumulative"``
    (no delays only), ``"assignment"``, or ``"auto"`` (cumulative unless delays matter).
    The result is never worse than the best list schedule and is ``OPTIMAL`` exactly when its
    makespan equals its lower bound. ``shortcut=False`` runs CP-SAT even when the list schedule
    already meets the lower bound (for testing the model); ``log`` prints CP-SAT's search log.
    """
    from ortools.sat.python import cp_model

    begin = time.perf_counter()
    if processors < 1:
        raise ValueError(f"processors must be >= 1, got {processors}")
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if comm_delays is None:
        comm_delays = graph.has_delays
    delays_matter = comm_delays and graph.has_delays and processors > 1
    kind = model
    if kind == "auto":
        kind = "assignment" if delays_matter else "cumulative"
    if kind == "cumulative" and delays_matter:
        raise ValueError("the cumulative model cannot express communication delays")

    simple = max(graph.critical_path_length(), -(-graph.total_work // processors))
    hint = best_list_schedule(graph, processors, comm_delays=comm_delays, seed=seed,
                              target=simple)
    upper = hint.makespan
    bounds = lower_bounds(graph, processors, upper=upper)
    lower = bounds.best
    if upper > lower:
        # a few more perturbed restarts are cheap next to CP-SAT
        better = best_list_schedule(graph, processors, comm_delays=comm_delays, seed=seed + 1,
                                    restarts=48, target=lower)
        if better.makespan < upper:
            hint, upper = better, better.makespan
    common = dict(processors=processors, comm_delays=comm_delays, list_makespan=upper,
                  bounds=bounds.as_dict())
    if upper <= lower and shortcut:
        return MakespanResult(Status.OPTIMAL, upper, upper, hint, source="bound",
                              wall_time=time.perf_counter() - begin, **common)

    built = build_model(graph, processors, lower=lower, upper=upper, comm_delays=comm_delays,
                        kind=kind, hint=hint)
    solver = cp_model.CpSolver()
    params = solver.parameters
    params.random_seed = seed
    params.num_workers = workers
    params.log_search_progress = log
    # Timetable edge finding and the overload checker strengthen the cumulative's propagation:
    # on the 20 hardest rand50 cases they prove 13-14 optimal in 5 s, against 4 without
    # (bench/results-makespan.md). Interleaved search keeps several workers deterministic.
    params.use_timetable_edge_finding_in_cumulative = True
    params.use_overload_checker_in_cumulative = True
    if time_limit is not None:
        remaining = max(0.05, time_limit - (time.perf_counter() - begin))
        if deterministic:
            params.max_deterministic_time = remaining
            params.max_time_in_seconds = DETERMINISTIC_WALL_GUARD * remaining
        else:
            params.max_time_in_seconds = remaining
    if deterministic and workers > 1:
        params.interleave_search = True
    code = solver.solve(built.model)
    status_name = solver.status_name(code)
    schedule, best_bound = hint, lower
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        starts = [int(solver.value(s)) for s in built.starts]
        if built.assign is None:
            found = assign_processors(graph, starts, processors)
        else:
            procs = [next(p for p, x in enumerate(row) if solver.boolean_value(x))
                     for row in built.assign]
            found = Schedule(tuple(
                ScheduledTask(graph.names[i], procs[i], starts[i], starts[i] + graph.durations[i])
                for i in range(len(graph))), processors)
        problems = schedule_violations(graph, found, comm_delays=comm_delays)
        if problems:  # pragma: no cover - would be a modelling bug
            raise RuntimeError("CP-SAT returned an invalid schedule: " + "; ".join(problems[:3]))
        if found.makespan < hint.makespan:
            schedule = found
        best_bound = max(lower, math.ceil(solver.best_objective_bound - 1e-6))
        if code == cp_model.OPTIMAL:
            best_bound = max(best_bound, schedule.makespan)
    elif code in (cp_model.INFEASIBLE, cp_model.MODEL_INVALID):  # pragma: no cover
        raise RuntimeError(f"CP-SAT answered {status_name} for a feasible model")
    best_bound = min(best_bound, schedule.makespan)
    status = Status.OPTIMAL if best_bound >= schedule.makespan else Status.FEASIBLE
    return MakespanResult(
        status, schedule.makespan, best_bound, schedule,
        source="cp-sat" if schedule is not hint else "list",
        cpsat_status=status_name, wall_time=time.perf_counter() - begin, model=kind, **common,
    )
