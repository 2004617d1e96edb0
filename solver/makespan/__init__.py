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

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and editors; never executed
    from tasksolve.solver.cpsat import DETERMINISTIC_WALL_GUARD
    from tasksolve.solver.makespan.bounds import ENERGETIC_MAX_TASKS, LowerBounds, lower_bounds
    from tasksolve.solver.makespan.lists import best_list_schedule, list_schedule
    from tasksolve.solver.makespan.model import (
        MakespanModel,
        ModelKind,
        assign_processors,
        build_model,
        canonical_processors,
    )
    from tasksolve.solver.makespan.schedule import (
        Schedule,
        ScheduledTask,
        Status,
        schedule_violations,
    )
    from tasksolve.solver.makespan.solve import MakespanResult, solve_makespan

# name -> module that defines it; each is imported on first access only
_EXPORTS: dict[str, str] = {
    "DETERMINISTIC_WALL_GUARD": "tasksolve.solver.cpsat",
    "ENERGETIC_MAX_TASKS": "tasksolve.solver.makespan.bounds",
    "LowerBounds": "tasksolve.solver.makespan.bounds",
    "lower_bounds": "tasksolve.solver.makespan.bounds",
    "best_list_schedule": "tasksolve.solver.makespan.lists",
    "list_schedule": "tasksolve.solver.makespan.lists",
    "MakespanModel": "tasksolve.solver.makespan.model",
    "ModelKind": "tasksolve.solver.makespan.model",
    "assign_processors": "tasksolve.solver.makespan.model",
    "build_model": "tasksolve.solver.makespan.model",
    "canonical_processors": "tasksolve.solver.makespan.model",
    "Schedule": "tasksolve.solver.makespan.schedule",
    "ScheduledTask": "tasksolve.solver.makespan.schedule",
    "Status": "tasksolve.solver.makespan.schedule",
    "schedule_violations": "tasksolve.solver.makespan.schedule",
    "MakespanResult": "tasksolve.solver.makespan.solve",
    "solve_makespan": "tasksolve.solver.makespan.solve",
}

__all__ = [
    "DETERMINISTIC_WALL_GUARD",
    "ENERGETIC_MAX_TASKS",
    "LowerBounds",
    "MakespanModel",
    "MakespanResult",
    "ModelKind",
    "Schedule",
    "ScheduledTask",
    "Status",
    "assign_processors",
    "best_list_schedule",
    "build_model",
    "canonical_processors",
    "list_schedule",
    "lower_bounds",
    "schedule_violations",
    "solve_makespan",
]


def __getattr__(name: str) -> Any:
    """Import an exported name on first access (PEP 562); later lookups find it in globals()."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
