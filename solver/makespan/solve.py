"""`solve_makespan`: bounds, list schedules, then CP-SAT (the pipeline of `solver.makespan`)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from tasksolve.solver import cpsat
from tasksolve.solver.errors import SolverFailed
from tasksolve.solver.makespan.bounds import lower_bounds
from tasksolve.solver.makespan.lists import best_list_schedule
from tasksolve.solver.makespan.model import (
    ModelKind,
    assign_processors,
    build_model,
)
from tasksolve.solver.makespan.schedule import (
    Schedule,
    ScheduledTask,
    Status,
    schedule_violations,
)
from tasksolve.solver.makespan.taskgraph import TaskGraph


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
    begin = time.perf_counter()
    comm_delays, kind = _settings(graph, processors, workers, comm_delays, model)
    hint, bounds = _list_hint(graph, processors, comm_delays, seed)
    upper, lower = hint.makespan, bounds.best
    common = dict(processors=processors, comm_delays=comm_delays, list_makespan=upper, bounds=bounds.as_dict())
    if upper <= lower and shortcut:
        return MakespanResult(
            Status.OPTIMAL, upper, upper, hint, source="bound", wall_time=time.perf_counter() - begin, **common
        )

    built = build_model(graph, processors, lower=lower, upper=upper, comm_delays=comm_delays, kind=kind, hint=hint)
    remaining = None if time_limit is None else max(0.05, time_limit - (time.perf_counter() - begin))
    found, cp_bound, status_name = _run_cpsat(
        graph,
        built,
        processors,
        comm_delays=comm_delays,
        seed=seed,
        workers=workers,
        log=log,
        time_limit=remaining,
        deterministic=deterministic,
    )
    schedule, best_bound = hint, lower
    if found is not None:
        if found.makespan < hint.makespan:
            schedule = found
        best_bound = max(lower, cp_bound)
        if status_name == "OPTIMAL":
            best_bound = max(best_bound, schedule.makespan)
    best_bound = min(best_bound, schedule.makespan)
    status = Status.OPTIMAL if best_bound >= schedule.makespan else Status.FEASIBLE
    return MakespanResult(
        status,
        schedule.makespan,
        best_bound,
        schedule,
        source="cp-sat" if schedule is not hint else "list",
        cpsat_status=status_name,
        wall_time=time.perf_counter() - begin,
        model=kind,
        **common,
    )


def _settings(
    graph: TaskGraph, processors: int, workers: int, comm_delays: bool | None, model: ModelKind
) -> tuple[bool, str]:
    """Whether delays are honoured and which CP-SAT model is built (``model="auto"`` resolved);
    ValueError on impossible settings."""
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
    return comm_delays, kind


def _list_hint(graph: TaskGraph, processors: int, comm_delays: bool, seed: int):
    """The best list schedule (CP-SAT's hint and the upper bound) and the lower bounds: one run
    of restarts aimed at the trivial bound, more when it does not meet the lower bounds."""
    simple = max(graph.critical_path_length(), -(-graph.total_work // processors))
    hint = best_list_schedule(graph, processors, comm_delays=comm_delays, seed=seed, target=simple)
    bounds = lower_bounds(graph, processors, upper=hint.makespan)
    if hint.makespan > bounds.best:
        # a few more perturbed restarts are cheap next to CP-SAT
        better = best_list_schedule(
            graph, processors, comm_delays=comm_delays, seed=seed + 1, restarts=48, target=bounds.best
        )
        if better.makespan < hint.makespan:
            hint = better
    return hint, bounds


def _run_cpsat(
    graph: TaskGraph,
    built,
    processors: int,
    *,
    comm_delays: bool,
    seed: int,
    workers: int,
    log: bool,
    time_limit: float | None,
    deterministic: bool,
) -> tuple[Schedule | None, int, str]:
    """Solve the model: (the schedule found or None, CP-SAT's lower bound, CP-SAT's status name)."""
    from ortools.sat.python import cp_model

    solver = cpsat.make_solver(
        time_limit=time_limit,
        workers=workers,
        seed=seed,
        log=log,
        deterministic_time=time_limit if deterministic else None,
    )
    params = solver.parameters
    # Timetable edge finding and the overload checker strengthen the cumulative's propagation:
    # on the 20 hardest rand50 cases they prove 13-14 optimal in 5 s, against 4 without
    # (bench/results-makespan.md). Interleaved search keeps several workers deterministic.
    params.use_timetable_edge_finding_in_cumulative = True
    params.use_overload_checker_in_cumulative = True
    code = cpsat.solve(solver, built.model)
    status_name = solver.status_name(code)
    if code in (cp_model.INFEASIBLE, cp_model.MODEL_INVALID):  # pragma: no cover
        raise SolverFailed(f"CP-SAT answered {status_name} for a feasible makespan model")
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None, 0, status_name
    starts = [int(solver.value(s)) for s in built.starts]
    if built.assign is None:
        found = assign_processors(graph, starts, processors)
    else:
        procs = [next(p for p, x in enumerate(row) if solver.boolean_value(x)) for row in built.assign]
        found = Schedule(
            tuple(
                ScheduledTask(graph.names[i], procs[i], starts[i], starts[i] + graph.durations[i])
                for i in range(len(graph))
            ),
            processors,
        )
    problems = schedule_violations(graph, found, comm_delays=comm_delays)
    if problems:  # pragma: no cover - would be a modelling bug
        raise RuntimeError("CP-SAT returned an invalid schedule: " + "; ".join(problems[:3]))
    return found, math.ceil(solver.best_objective_bound - 1e-6), status_name
