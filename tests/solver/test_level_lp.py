"""The level LP (`solver.binding.level_lp`) and its plan (`solver.binding.level_plan`): the bound is
never below the brute-force optimum of small servers, the column generation reaches the LP that
holds every column, and the rounded plan is a valid plan whose value the bound covers."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasksolve.simulate.analytic import BatchModel
from tasksolve.solver.binding import level_lp
from tasksolve.solver.binding.level_plan import solve_level
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.specs import load_spec_text

SPEC = """
tasksolve: 1
name: small-server
topology:
  name: 2x2x2
  clock: 1GHz
  levels: [{{name: socket, count: 2}}, {{name: core, count: 2}}, {{name: smt, count: 2}}]
  resources:
    - {{name: fpu, level: core, capacity: 1.0}}
    - {{name: l1, level: core, capacity: 1.0}}
    - {{name: l3, level: socket, capacity: {l3}}}
  communication: {{core: {c1}, socket: {c2}, machine: {c3}}}
applications:
  a:
    tasks:
      rx: {{cycles: {a0}, demand: {{l1: {d0}, l3: {e0}}}}}
      work: {{cycles: {a1}, demand: {{fpu: {d1}, l3: {e1}}}}}
      tx: {{cycles: {a2}, demand: {{l1: {d2}}}}}
    edges: [{{from: rx, to: work, bytes: 64B}}, {{from: work, to: tx, bytes: 64B}}]
  b:
    tasks:
      rx: {{cycles: {b0}, demand: {{l1: {f0}, l3: {g0}}}}}
      work: {{cycles: {b1}, demand: {{l1: {f1}, l3: {g1}}}}}
      tx: {{cycles: {b2}, demand: {{fpu: {f2}}}}}
    edges: [{{from: rx, to: work, bytes: 64B}}, {{from: work, to: tx, bytes: 64B}}]
workload: [{{app: a, instances: 1}}, {{app: b, instances: 1}}]
"""

demand = st.floats(0.0, 0.9).map(lambda v: round(v, 2))
cycles = st.integers(50, 1000)


def _brute_force(spec) -> float:
    """The closed form's optimum over every placement of the 6 threads on the 8 contexts."""
    plans = np.array(list(itertools.permutations(range(8), 6)))
    return float(BatchModel(spec).evaluate(plans).values("total_throughput").max())


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    l3=st.sampled_from([0.3, 0.5, 0.8, 1.0]),
    # the rx of `a` always loads the L3: the socket is then the level L and the cores its cells
    comm=st.tuples(st.integers(0, 30), st.integers(0, 100), st.integers(0, 300)),
    work=st.tuples(cycles, cycles, cycles, cycles, cycles, cycles),
    demands=st.tuples(*[demand] * 9),
)
def test_the_level_bound_is_never_below_the_brute_force_optimum(l3, comm, work, demands):
    c1, c2, c3 = sorted(comm)
    d0, e0, d1, e1, d2, f0, g0, f1, g1 = demands
    spec = load_spec_text(
        SPEC.format(
            l3=l3, c1=c1, c2=c2, c3=c3, a0=work[0], a1=work[1], a2=work[2], b0=work[3], b1=work[4], b2=work[5],
            d0=d0, e0=max(e0, 0.05), d1=d1, e1=e1, d2=d2, f0=f0, g0=g0, f1=f1, g1=g1, f2=round(1 - d1, 2),
        )
    )  # fmt: skip
    problem = BindingProblem(spec)
    optimum = _brute_force(spec)
    result = solve_level(problem)
    assert result.bound.value >= optimum * (1 - 1e-9)
    assert level_lp.level_bound(problem).value >= optimum * (1 - 1e-9)
    if result.plan is not None:
        assert sorted(set(result.plan)) == sorted(result.plan) and len(result.plan) == 6
        value = float(BatchModel(spec).evaluate(np.array([result.plan])).values("total_throughput")[0])
        assert value == pytest.approx(result.plan_value, rel=1e-12)
        assert value <= optimum * (1 + 1e-9)


def _server(contexts: int):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from scale_specs import server_spec

    return server_spec(contexts)


@pytest.mark.parametrize("contexts", [16, 64])
def test_column_generation_reaches_the_lp_with_every_column(contexts):
    lp = level_lp.build(BindingProblem(_server(contexts)), max_modes=40)
    bound, value, columns, _, converged = level_lp.solve_level_lp(lp)
    _, full_value, full_columns, _, full_converged = level_lp.solve_level_lp(lp, full=True)
    assert converged and full_converged
    assert columns < full_columns  # priced, not enumerated
    assert value == pytest.approx(full_value, rel=1e-7)
    assert bound >= value * (1 - 1e-9)  # the Lagrangian bound at the last iteration is the LP's


def test_the_integer_modes_tighten_the_lp_and_still_bound_the_brute_force_optimum():
    spec = load_spec_text(
        SPEC.format(
            l3=0.5, c1=5, c2=40, c3=150, a0=200, a1=900, a2=180, b0=200, b1=1000, b2=180,
            d0=0.2, e0=0.1, d1=0.7, e1=0.0, d2=0.2, f0=0.2, g0=0.1, f1=0.3, g1=0.6, f2=0.3,
        )
    )  # fmt: skip
    problem = BindingProblem(spec)
    lp_bound = level_lp.level_bound(problem).value
    result = solve_level(problem)
    optimum = _brute_force(spec)
    assert optimum * (1 - 1e-9) <= result.bound.value <= lp_bound
