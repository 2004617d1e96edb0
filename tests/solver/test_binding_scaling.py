"""CP-SAT's integer scaling stays inside 64 bits for any real-valued capacities and demands, and
the bound it reports stays a bound of the exact closed form (brute force on small instances)."""

from __future__ import annotations

import itertools

import numpy as np
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
    edges: [{{from: X, to: Y, bytes: 64}}]
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
    assert result.best is not None and result.slowdown_error > 0
    assert any("rounded up" in note for note in result.notes)
