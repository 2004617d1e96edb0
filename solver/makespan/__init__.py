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

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:  # for type checkers and editors; never executed
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

# submodule -> the names it exports, each imported on first access (lazy_loader: PEP 562)
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "bounds": ["ENERGETIC_MAX_TASKS", "LowerBounds", "lower_bounds"],
        "lists": ["best_list_schedule", "list_schedule"],
        "model": ["MakespanModel", "ModelKind", "assign_processors", "build_model", "canonical_processors"],
        "schedule": ["Schedule", "ScheduledTask", "Status", "schedule_violations"],
        "solve": ["MakespanResult", "solve_makespan"],
    },
)
