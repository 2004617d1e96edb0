"""Limits of the binding solve: a model too large is refused before it is built (with a plan kept
from the other steps), and the local search's chunked evaluation changes no value."""

from __future__ import annotations

import numpy as np

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
