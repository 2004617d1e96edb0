"""Limits of the binding solve: a model too large is refused before it is built (with a plan kept
from the other steps), and the local search's chunked evaluation changes no value."""

from __future__ import annotations

import numpy as np
import pytest

from tasksolve.solver.binding import local_search as ls_module
from tasksolve.solver.binding import model as model_module
from tasksolve.solver.binding.cpsat import solve_binding
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.solver.binding.samplers import uniform_plans
from tasksolve.specs import load_spec


def test_a_model_over_the_literal_limit_is_refused_and_a_plan_kept(monkeypatch):
    spec = load_spec("t2-ipfwd-l1-x2")
    problem = BindingProblem(spec)
    literals = sum(len(row) for row in problem.allowed)
    monkeypatch.setattr(model_module, "MAX_LITERALS", literals - 1)
    result = solve_binding(problem, time_limit=5, workers=1, seed=0, configuration=False)
    step = next(s for s in result.steps if s.step == "CP-SAT")
    assert step.outcome == "skipped" and f"{literals:,} placement literals" in step.detail
    assert not result.failed_steps and result.best is not None


def test_a_model_whose_build_would_take_half_the_time_is_refused():
    problem = BindingProblem(load_spec("t2-ipfwd-l1-x2"))
    literals = sum(len(row) for row in problem.allowed)
    budget = 1.9 * literals * model_module.BUILD_SECONDS_PER_LITERAL  # build estimate > half of it
    try:
        model_module.check_size(problem, budget)
    except model_module.ModelTooLarge as exc:
        assert "to build" in str(exc)
    else:
        raise AssertionError("not refused")
    model_module.check_size(problem, 2.1 * literals * model_module.BUILD_SECONDS_PER_LITERAL)


def test_chunked_evaluation_gives_the_same_values(monkeypatch):
    spec = load_spec("t2-ipfwd-x20")
    plans = np.asarray(uniform_plans(spec, 50, 0), dtype=np.intp)
    whole = ls_module.LocalSearch(spec).values(plans)
    monkeypatch.setattr(ls_module, "MAX_ENTRIES", 7 * plans.shape[1])  # chunks of 7 plans
    chunked = ls_module.LocalSearch(spec).values(plans)
    np.testing.assert_array_equal(whole, chunked)


def test_past_the_deadline_only_the_first_chunk_is_evaluated(monkeypatch):
    spec = load_spec("t2-ipfwd-x20")
    plans = np.asarray(uniform_plans(spec, 50, 0), dtype=np.intp)
    monkeypatch.setattr(ls_module, "MAX_ENTRIES", 7 * plans.shape[1])
    search = ls_module.LocalSearch(spec)
    whole = search.values(plans)
    late = search.values(plans, deadline=0.0)  # long past
    np.testing.assert_array_equal(late[:7], whole[:7])
    assert np.all(late[7:] == -np.inf)


def test_a_large_neighbourhood_is_drawn_within_its_entry_cap(monkeypatch):
    spec = load_spec("t2-ipfwd-x20")
    search = ls_module.LocalSearch(spec, seed=1)
    monkeypatch.setattr(ls_module, "MAX_PAIRS", 10)  # draw the moves before checking them
    monkeypatch.setattr(ls_module, "MAX_NEIGHBOUR_ENTRIES", 30 * search.n_threads)
    plan = np.asarray(uniform_plans(spec, 1, 0)[0], dtype=np.intp)
    neighbours = search.neighbours(plan)
    assert 0 < len(neighbours) <= 30
    for row in neighbours:  # each one move away: one thread moved, or two swapped
        assert len(set(row.tolist())) == len(row) and 1 <= np.count_nonzero(row != plan) <= 2


def _comparison(spec, say):
    from tasksolve.solver.binding.compare import _Comparison

    return _Comparison(spec, "analytic", 0, 1, say, say)


def test_the_random_sample_is_cut_to_its_budget_and_says_so():
    spec = load_spec("t2-ipfwd-x20")
    said: list[str] = []
    run = _comparison(spec, said.append)
    assert run.sample(5000, ["cpsat"], budget=1e-9) == ["cpsat"]  # not even the pilot fits
    assert len(run.plans) == 0 and run.details.samples == 0
    assert "no random sample" in said[-1] and "CP-SAT runs without its hint" in said[-1]
    said.clear()
    run = _comparison(spec, said.append)
    assert run.sample(5000, ["random"], budget=1e-9) == ["random"]  # the answer needs a plan
    assert 1 <= len(run.plans) < 5000 and "of the 5000 asked for" in said[-1]
    run = _comparison(spec, said.append)
    run.sample(300, ["cpsat", "random"], budget=60.0)  # fits: the whole sample, as seeded
    np.testing.assert_array_equal(run.plans, uniform_plans(spec, 300, 0))


def _captured_limit(monkeypatch, *, late: float, deterministic: bool) -> float:
    """The time limit `compare.solve` hands CP-SAT's steps when the command started `late` s ago."""
    import time

    from tasksolve.solver.binding import compare

    seen: list[float] = []
    real = compare.solve_binding

    def spy(problem, **kwargs):
        seen.append(kwargs["time_limit"])
        return real(problem, **{**kwargs, "time_limit": 1.0, "deterministic_time": None})

    monkeypatch.setattr(compare, "solve_binding", spy)
    spec = load_spec("t2-ipfwd-intadd-x2")
    started = time.perf_counter() - late
    compare.solve(
        spec,
        ["cpsat"],
        oracle_kind="analytic",
        time_limit=10.0,
        workers=1,
        samples=50,
        deterministic=deterministic,
        started=started,
    )
    return seen[0]


def test_cpsat_gets_the_time_left_of_the_whole_limit(monkeypatch):
    from tasksolve.solver.binding import compare

    limit = _captured_limit(monkeypatch, late=6.0, deterministic=False)
    assert 1.0 <= limit <= 10.0 - 6.0 - compare_reserve()  # loading and the sample counted
    late = _captured_limit(monkeypatch, late=60.0, deterministic=False)
    assert late == pytest.approx(compare.MIN_CPSAT_SHARE * 10.0)  # past the limit already: the floor
    assert _captured_limit(monkeypatch, late=6.0, deterministic=True) == 10.0  # repeatable runs


def compare_reserve() -> float:
    from tasksolve.solver.binding.compare import RESERVE_SHARE

    return RESERVE_SHARE * 10.0


def test_where_cpsat_refuses_the_model_the_local_search_has_the_time_left(monkeypatch):
    spec = load_spec("t2-ipfwd-l1-x2")
    problem = BindingProblem(spec)
    monkeypatch.setattr(model_module, "MAX_LITERALS", 1)
    result = solve_binding(problem, time_limit=3, workers=1, seed=0, configuration=False)
    step = next(s for s in result.steps if s.step == "local search (continued)")
    assert step.outcome == "ok" and "CP-SAT refused the model" in step.detail
    assert result.best is not None and result.best.found_by == "local search"
    repeatable = solve_binding(problem, time_limit=3, workers=1, seed=0, configuration=False, deterministic_time=3)
    assert all(s.step != "local search (continued)" for s in repeatable.steps)  # no clock: no more search


def test_a_slowdown_row_past_64_bits_is_refused_not_a_type_error():
    """A machine-wide capacity of 1e-12 beside demands near 1: the slowdown row ``cap S >= Q load``
    holds a constant of 1.9e19, past 64 bits (before: OR-Tools' TypeError from inside the model).
    The model is refused with the reason and the other steps still answer."""
    from tasksolve.specs.loader import load_spec_text

    spec = load_spec_text(
        """
tasksolve: 1
name: wide
topology:
  name: t
  clock: 246MHz
  levels: [{name: smt, count: 3}, {name: core, count: 2}, {name: strand, count: 1}]
  resources:
    - {name: r0, level: machine, capacity: 1e-12}
    - {name: r1, level: core, capacity: 1.05}
    - {name: r2, level: core, capacity: 4.0}
  icache: 5000
  communication:
    model: cache
    line: 64B
    latency: {core: 268, smt: 94, machine: 220}
    hit_rate: {core: 0.5, smt: 0.5}
applications:
  app0:
    tasks:
      t0: {cycles: 1200}
      t1: {cycles: 180.5, demand: {r0: 0.9}, idle_demand: {r0: 0.0004}, signal: 0.5}
      t2: {cycles: 180.5, demand: {r0: 0.0, r2: 1.0, r1: 0.0}, idle_demand: {r2: 0.4}, code_size: 100}
    edges: [{from: t0, to: t1, bytes: 1KiB}, {from: t1, to: t2, bytes: 64B}]
  app1:
    tasks:
      t0: {cycles: 100, demand: {r2: 0.4, r0: 1.0}, frequency: 2.5, critical: {lock: heap}}
      t1: {cycles: 1200, code_size: 100}
    edges: [{from: t0, to: t1, bytes: 64B}]
workload: [{app: app0, instances: 1}, {app: app1, instances: 1}]
""",
        "<wide>",
    )
    problem = BindingProblem(spec)
    with pytest.raises(model_module.ModelTooLarge, match="does not fit 64-bit integers"):
        model_module.BindingModel(problem, "total_throughput")
    result = solve_binding(problem, time_limit=5, workers=1, seed=0, deterministic_time=2, configuration=False)
    step = next(s for s in result.steps if s.step == "CP-SAT")
    assert step.outcome == "skipped" and "64-bit integers" in step.detail
    assert result.best is not None and result.best.found_by == "local search"
