"""The CP-SAT interval models of P|prec|Cmax and P|prec,c_ij|Cmax (see `solver.makespan`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from tasksolve.solver.makespan.schedule import Schedule, ScheduledTask, predecessor_delays
from tasksolve.solver.makespan.taskgraph import TaskGraph

ModelKind = Literal["auto", "cumulative", "assignment"]


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
        tuple(ScheduledTask(graph.names[i], proc[i], starts[i], starts[i] + durations[i]) for i in range(len(graph))),
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
    intervals = [model.new_fixed_size_interval_var(starts[i], durations[i], f"I{i}") for i in range(n)]
    makespan = model.new_int_var(lower, upper, "makespan")
    preds = predecessor_delays(graph, comm_delays)
    for j in range(n):
        for i, _ in preds[j]:
            model.add(starts[j] >= starts[i] + durations[i])
        # the path after j still needs its b-level (for a sink: its duration)
        model.add(makespan >= starts[j] + bottom[j])
    positive = [i for i in range(n) if durations[i] > 0]
    usable = min(processors, n)
    if usable < len(positive):
        model.add_cumulative([intervals[i] for i in positive], [1] * len(positive), usable)
    assign, used_vars = None, []
    if kind == "assignment":
        assign, used_vars = _add_assignment(model, graph, starts, positive, usable, preds)
    model.minimize(makespan)
    if hint is not None:
        _add_hint(model, graph, hint, starts, makespan, lower, assign, used_vars, usable)
    return MakespanModel(model, starts, makespan, assign, kind)


def _add_assignment(model, graph: TaskGraph, starts, positive: list[int], usable: int, preds):
    """Processor choice ``x[i][p]``, a no-overlap per processor, the delays between processors,
    and value precedence on identical processors; returns ``(x, used)`` for the hint."""
    n = len(graph)
    durations = graph.durations
    assign = [[model.new_bool_var(f"x{i}_{p}") for p in range(usable)] for i in range(n)]
    for i in range(n):
        model.add_exactly_one(assign[i])
    for p in range(usable):
        optional = [
            model.new_optional_fixed_size_interval_var(starts[i], durations[i], assign[i][p], f"I{i}_{p}")
            for i in positive
        ]
        model.add_no_overlap(optional)
    for j in range(n):
        for i, c in preds[j]:
            if c == 0:
                continue
            for p in range(usable):
                model.add(starts[j] >= starts[i] + durations[i] + c).only_enforce_if([assign[j][p], ~assign[i][p]])
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
    return assign, used_vars


def _add_hint(model, graph: TaskGraph, hint: Schedule, starts, makespan, lower: int, assign, used_vars, usable: int):
    """The list schedule as CP-SAT's solution hint (processors relabelled to satisfy value precedence)."""
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
