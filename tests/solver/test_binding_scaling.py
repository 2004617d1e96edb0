"""CP-SAT's integer scaling stays inside 64 bits for any real-valued capacities and demands, and
the bound it reports stays a bound of the exact closed form (brute force on small instances)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasksolve.simulate.analytic import BatchModel
from tasksolve.solver.binding.cpsat import solve_binding
from tasksolve.solver.binding.model import INT_LIMIT, BindingModel
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.specs import load_spec_text

SPEC = """
tasksolve: 1
name: real-capacities
topology:
  name: small
  clock: 1GHz
  levels: [{{name: core, count: 2}}, {{name: strand, count: 2}}]
  resources:
    - {{name: a, level: core, capacity: {a}}}
    - {{name: b, level: machine, capacity: {b}}}
  communication: {{core: 3, machine: 40}}
applications:
  app:
    tasks:
      X: {{cycles: {x}, demand: {{a: {da}, b: {db}}}}}
      Y: {{cycles: {y}, demand: {{a: {db}}}}}
    edges: [{{from: X, to: Y, bytes: 64B}}]
workload: [{{app: app, instances: 2}}]
"""


capacity = st.floats(0.3, 3.0).map(lambda v: round(v, 3))
fraction = st.floats(0.05, 1.0).map(lambda v: round(v, 3))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(capacity, capacity, fraction, fraction, st.integers(10, 2000), st.integers(10, 2000))
def test_any_capacities_fit_64_bits_and_the_bound_holds(a, b, da, db, x, y):
    spec = load_spec_text(SPEC.format(a=a, b=b, da=da, db=db, x=x, y=y))
    problem = BindingProblem(spec)
    model = BindingModel(problem)
    assert all(high <= INT_LIMIT for _, high in model._bounds.values())
    result = solve_binding(problem, time_limit=10, workers=1, seed=0, deterministic_time=5)
    best = result.best
    # brute force over every placement of the 4 threads on the 4 contexts
    plans = np.array(list(itertools.permutations(range(4))))
    optimum = float(BatchModel(spec).evaluate(plans).values(spec.objective).max())
    exact = float(BatchModel(spec).evaluate(np.array([best.contexts])).values(spec.objective)[0])
    assert best.bound >= optimum * (1 - 1e-9)
    assert best.objective <= optimum * (1 + 1e-6)
    assert exact >= best.objective * (1 - 1e-6)


def test_the_odd_capacities_of_the_issue_solve():
    """1.05 / 1.27 / 1.64 made Q = lcm(1050, 1270, 1640) and a domain of 3.8e20: a traceback."""
    text = SPEC.format(a=1.27, b=1.64, da=0.5, db=0.4, x=300, y=200).replace("capacity: 1.27", "capacity: 1.05", 0)
    spec = load_spec_text(
        text.replace(
            "{name: a, level: core, capacity: 1.27}",
            "{name: a, level: core, capacity: 1.27}\n    - {name: c, level: core, capacity: 1.05}",
        )
    )
    result = solve_binding(BindingProblem(spec), time_limit=10, workers=1, seed=0, deterministic_time=5)
    assert result.best is not None and result.rounding.pessimism > 1 and result.rounding.optimism == 1
    assert any("rounds demands, capacities" in note for note in result.notes)


def _small_spec():
    return load_spec_text(SPEC.format(a=1.0, b=2.0, da=0.5, db=0.4, x=300, y=200))


def test_a_coarser_throughput_resolution_keeps_the_domains_in_64_bits(monkeypatch):
    """The 256-context server's model was MODEL_INVALID (the sum of all domains past 2^63): the
    resolution now shrinks until the sum fits, and the bound stays one of the exact optimum."""
    from tasksolve.solver.binding import model as model_module

    spec = _small_spec()
    problem = BindingProblem(spec)
    full = BindingModel(problem)
    limit = full.domain_sum() // 100  # far below what r = 1e6 needs, above what r = 1e3 needs
    monkeypatch.setattr(model_module, "DOMAIN_SUM_LIMIT", limit)
    model = BindingModel(problem)
    assert model_module.MIN_RESOLUTION <= model.resolution < model_module.THROUGHPUT_RESOLUTION
    assert model.domain_sum() <= limit and model.model.validate() == ""
    result = solve_binding(problem, time_limit=10, workers=1, seed=0, deterministic_time=5)
    plans = np.array(list(itertools.permutations(range(4))))
    optimum = float(BatchModel(spec).evaluate(plans).values(spec.objective).max())
    assert result.best.bound >= optimum * (1 - 1e-9)
    exact = float(BatchModel(spec).evaluate(np.array([result.best.contexts])).values(spec.objective)[0])
    assert result.best.objective == pytest.approx(exact, rel=1e-9)


def test_a_model_that_cannot_fit_is_refused_before_the_solve_with_a_plan_kept(monkeypatch):
    from tasksolve.solver.binding import model as model_module

    monkeypatch.setattr(model_module, "DOMAIN_SUM_LIMIT", 10)
    result = solve_binding(BindingProblem(_small_spec()), time_limit=5, workers=1, seed=0)
    cpsat_step = next(step for step in result.steps if step.step == "CP-SAT")
    assert cpsat_step.outcome == "skipped" and "64-bit" in cpsat_step.detail
    assert not result.failed_steps
    assert result.best is not None and result.best.found_by == "local search"
