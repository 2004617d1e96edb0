"""Makespan scheduling: bounds, list schedules and CP-SAT against an exact enumeration.

The reference optimum comes from `exact_makespan`, a depth-first enumeration written here,
independent of the solver: every semi-active schedule (each task as early as its processor and
predecessors allow) arises from appending tasks in order of (start, index) to the end of their
processor, and some optimal schedule is semi-active, so enumerating those appends -- keeping only
orders whose starts do not decrease, trying one empty processor only -- gives the optimum.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasksolve.solver.makespan import (
    Status,
    best_list_schedule,
    list_schedule,
    lower_bounds,
    schedule_violations,
    solve_makespan,
)
from tasksolve.solver.makespan.taskgraph import TaskGraph


def exact_makespan(graph: TaskGraph, processors: int, comm_delays: bool) -> int:
    """Optimal makespan by enumeration (durations >= 1, a handful of tasks)."""
    n = len(graph)
    dur = graph.durations
    preds = [[(i, c if comm_delays else 0) for i, c in graph.predecessors(j)] for j in range(n)]
    best = [math.inf]
    proc = [-1] * n
    end = [0] * n
    free = [0] * processors
    count = [0] * processors

    def dfs(done: int, last: tuple[int, int], span: int, work_left: int) -> None:
        if done == n:
            best[0] = min(best[0], span)
            return
        # each processor ends after its current end plus what is still appended to it
        if max(span, math.ceil((sum(free) + work_left) / processors)) >= best[0]:
            return
        for j in range(n):
            if proc[j] != -1 or any(proc[i] == -1 for i, _ in preds[j]):
                continue
            tried_empty = False
            for p in range(processors):
                if count[p] == 0:  # empty processors are interchangeable: try one
                    if tried_empty:
                        continue
                    tried_empty = True
                at = max([free[p]] + [end[i] + (c if proc[i] != p else 0) for i, c in preds[j]])
                if (at, j) <= last:  # appends in (start, index) order only
                    continue
                saved = free[p]
                proc[j], end[j], free[p] = p, at + dur[j], at + dur[j]
                count[p] += 1
                dfs(done + 1, (at, j), max(span, at + dur[j]), work_left - dur[j])
                count[p] -= 1
                proc[j], free[p] = -1, saved

    dfs(0, (-1, -1), 0, sum(dur))
    return int(best[0])


@st.composite
def small_graphs(draw, max_tasks: int = 8, delays: bool = False):
    n = draw(st.integers(1, max_tasks))
    durations = {f"t{i}": draw(st.integers(1, 6)) for i in range(n)}
    edges = []
    for j in range(n):
        for i in range(j):
            if draw(st.integers(0, 99)) < 35:
                edges.append((f"t{i}", f"t{j}", draw(st.integers(0, 5)) if delays else 0))
    return TaskGraph(durations, edges)


def check(graph: TaskGraph, processors: int, comm_delays: bool, model: str = "auto") -> None:
    expected = exact_makespan(graph, processors, comm_delays)
    for shortcut in (True, False):  # False: CP-SAT runs even when the bounds meet
        result = solve_makespan(
            graph, processors, comm_delays=comm_delays, time_limit=20, seed=1, model=model, shortcut=shortcut
        )
        assert schedule_violations(graph, result.schedule, comm_delays=comm_delays) == []
        assert result.status is Status.OPTIMAL
        assert result.makespan == result.lower_bound == expected
        assert result.schedule.makespan == expected
    bounds = lower_bounds(graph, processors)
    assert bounds.best <= expected
    heuristic = best_list_schedule(graph, processors, comm_delays=comm_delays)
    assert schedule_violations(graph, heuristic, comm_delays=comm_delays) == []
    assert heuristic.makespan >= expected


FAST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(small_graphs(), st.integers(1, 3))
def test_matches_enumeration_without_delays(graph: TaskGraph, processors: int) -> None:
    check(graph, processors, comm_delays=False)


@FAST
@given(small_graphs(delays=True), st.integers(1, 3))
def test_matches_enumeration_with_delays(graph: TaskGraph, processors: int) -> None:
    check(graph, processors, comm_delays=True)


@settings(max_examples=25, deadline=None)
@given(small_graphs(), st.integers(2, 3))
def test_assignment_model_matches_without_delays(graph: TaskGraph, processors: int) -> None:
    check(graph, processors, comm_delays=False, model="assignment")


def test_exact_reference_on_known_cases() -> None:
    # two independent tasks and a join: 2 processors run both, the join follows
    g = TaskGraph({"a": 3, "b": 3, "c": 1}, [("a", "c", 4), ("b", "c", 4)])
    assert exact_makespan(g, 2, comm_delays=False) == 4
    assert exact_makespan(g, 2, comm_delays=True) == 7  # a|b, c beside one of them, +4 delay
    assert exact_makespan(g, 1, comm_delays=True) == 7
    # with a large delay, everything on one processor is best
    g = TaskGraph({"a": 2, "b": 2, "c": 2}, [("a", "b", 9), ("a", "c", 9)])
    assert exact_makespan(g, 3, comm_delays=True) == 6
    assert exact_makespan(g, 3, comm_delays=False) == 4


def test_delay_is_paid_only_across_processors() -> None:
    g = TaskGraph({"a": 2, "b": 2, "c": 2}, [("a", "b", 9), ("a", "c", 9)])
    result = solve_makespan(g, 3, comm_delays=True, time_limit=10)
    assert result.makespan == 6 and result.status is Status.OPTIMAL
    assert len({t.processor for t in result.schedule.tasks}) == 1
    ignored = solve_makespan(g, 3, comm_delays=False, time_limit=10)
    assert ignored.makespan == 4


def test_zero_duration_tasks_and_empty_graph() -> None:
    g = TaskGraph({"s": 0, "a": 3, "b": 4, "e": 0}, [("s", "a"), ("s", "b"), ("a", "e"), ("b", "e")])
    for comm in (False, True):
        r = solve_makespan(g.with_uniform_delay(1), 2, comm_delays=comm, time_limit=10)
        assert schedule_violations(g.with_uniform_delay(1), r.schedule, comm_delays=comm) == []
        assert r.status is Status.OPTIMAL
    assert solve_makespan(g, 2).makespan == 4
    empty = solve_makespan(TaskGraph({}), 3)
    assert empty.makespan == 0 and empty.status is Status.OPTIMAL


def test_list_schedule_rules_are_valid_and_hlfet_is_greedy() -> None:
    g = TaskGraph({"a": 1, "b": 5, "c": 5, "d": 5}, [("a", "b")])
    s = list_schedule(g, 2)
    # HLFET: a (level 6) first, then b, c, d (level 5) each where it starts earliest
    assert [(t.processor, t.start) for t in s.tasks] == [(0, 0), (0, 1), (1, 0), (1, 5)]
    assert s.makespan == 10
    for rule in ("hlfet", "etf"):
        for insertion in (False, True):
            s = list_schedule(g.with_uniform_delay(2), 2, comm_delays=True, rule=rule, insertion=insertion)
            assert schedule_violations(g.with_uniform_delay(2), s, comm_delays=True) == []


def test_energetic_bound_beats_simple_bounds() -> None:
    g = TaskGraph(
        {"t0": 6, "t1": 6, "t2": 4, "t3": 6, "t4": 4, "t5": 3},
        [
            ("t0", "t2"),
            ("t0", "t3"),
            ("t1", "t3"),
            ("t2", "t3"),
            ("t0", "t4"),
            ("t2", "t4"),
            ("t0", "t5"),
            ("t1", "t5"),
            ("t2", "t5"),
        ],
    )
    b = lower_bounds(g, 2)
    assert (b.critical_path, b.work, b.energetic) == (16, 15, 17)
    assert exact_makespan(g, 2, comm_delays=False) == 17
    # with many processors the bound is the critical path (exact without delays)
    assert lower_bounds(g, 6).best == 16


def test_deterministic_for_a_seed() -> None:
    g = TaskGraph(
        {f"t{i}": 1 + (7 * i) % 5 for i in range(12)},
        [(f"t{i}", f"t{j}", (i + j) % 3) for i in range(12) for j in range(i + 1, 12) if (i * 5 + j * 3) % 7 == 0],
    )
    a = solve_makespan(g, 3, comm_delays=True, seed=3, time_limit=5, deterministic=True)
    b = solve_makespan(g, 3, comm_delays=True, seed=3, time_limit=5, deterministic=True)
    assert a.schedule == b.schedule and a.status == b.status


def test_bad_arguments() -> None:
    g = TaskGraph({"a": 1})
    with pytest.raises(ValueError, match="processors"):
        solve_makespan(g, 0)
    with pytest.raises(ValueError, match="cumulative"):
        solve_makespan(TaskGraph({"a": 1, "b": 1}, [("a", "b", 2)]), 2, comm_delays=True, model="cumulative")
