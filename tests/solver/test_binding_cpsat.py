"""CP-SAT binding against brute force over every placement, with the closed form as the judge."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasksolve.simulate.analytic import BatchModel
from tasksolve.solver.binding.conflicts import explain_infeasible
from tasksolve.solver.binding.cpsat import solve_binding
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.specs import Plan, check_plan, load_spec, load_spec_text
from tasksolve.specs import strategies as spec_st


def feasible_placements(problem: BindingProblem) -> np.ndarray:
    """Every injective map of the threads into allowed contexts that respects the caps."""
    topo = problem.topology
    rows = []
    for perm in itertools.permutations(problem.usable, problem.n_threads):
        if any(c not in problem.allowed[t] for t, c in enumerate(perm)):
            continue
        ok = True
        for level, cap in problem.caps.items():
            counts: dict[int, int] = {}
            for c in perm:
                d = topo.domain_of(c, level)
                counts[d] = counts.get(d, 0) + 1
            ok = ok and max(counts.values()) <= cap
        if ok:
            rows.append(perm)
    return np.array(rows, dtype=np.int64).reshape(len(rows), problem.n_threads)


def feasible_within_latency(spec, problem: BindingProblem):
    """(plans, their closed-form batch) of every feasible placement that meets ``latency_max``;
    the batch is None when there is none."""
    plans = feasible_placements(problem)
    batch = BatchModel(spec).evaluate(plans) if len(plans) else None
    if batch is not None and spec.latency_bound_seconds() is not None:
        plans = plans[batch.latency_max <= spec.latency_bound_seconds() * (1 + 1e-9)]
        batch = BatchModel(spec).evaluate(plans) if len(plans) else None
    return plans, batch


def model_value(batch, objective: str) -> np.ndarray:
    if objective == "latency":
        return -batch.latency_max
    if objective == "min_throughput":
        return batch.min_instance
    return batch.total


@settings(
    max_examples=int(__import__("os").environ.get("BRUTE_EXAMPLES", 40)),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
@given(
    spec_st.spec_data(max_threads=6, max_contexts=8, max_tasks=3),
    st.sampled_from(["total_throughput", "min_throughput", "latency"]),
)
def test_cpsat_equals_brute_force(data, objective):
    spec = spec_st.load(data)
    problem = BindingProblem(spec)
    plans, batch = feasible_within_latency(spec, problem)
    result = solve_binding(problem, objective=objective, top_k=3, time_limit=20, workers=1, seed=1)
    if batch is None:
        assert result.status == "INFEASIBLE"
        return
    assert result.status == "OPTIMAL"
    best = model_value(batch, objective).max()
    found = [s.contexts for s in result.solutions]
    values = model_value(BatchModel(spec).evaluate(np.array(found)), objective)
    assert values[0] == pytest.approx(best, rel=1e-5)
    # the K best are ordered by model value and pairwise non-equivalent
    assert all(values[k] <= values[k - 1] + 1e-5 * abs(values[k - 1]) for k in range(1, len(values)))
    plans_found = [Plan.from_contexts(spec, c) for c in found]
    for a, b in itertools.combinations(plans_found, 2):
        assert not a.equivalent(b, spec)
    for plan in plans_found:
        assert check_plan(spec, plan) == []
    # the number of distinct classes bounds how many plans can be returned
    assert len(found) == min(3, len({Plan.from_contexts(spec, list(r)).canonical_form(spec) for r in plans}))
    # CP-SAT's own figure agrees with the closed form
    if objective == "latency":
        assert result.solutions[0].objective == pytest.approx(-values[0], rel=1e-5)
    else:
        assert result.solutions[0].objective == pytest.approx(values[0], rel=1e-5)


INFEASIBLE = """
tasksolve: 1
name: s
topology: ultrasparc-t2
applications:
  a:
    tasks: {R: {cycles: 180, demand: {ifu: 0.4}}, P: {cycles: 600, demand: {ifu: 0.9}}, T: {cycles: 170, demand: {ifu: 0.4}}}
    edges: [{from: R, to: P, bytes: 64B}, {from: P, to: T, bytes: 64B}]
workload: [{app: a, instances: 2}]
constraints:
"""


@pytest.mark.parametrize(
    "extra,expected",
    [
        (
            "  contexts: [core0.pipe0, core1.pipe0.strand0, core1.pipe0.strand1]\n  max_threads: {pipe: 2}\n"
            '  pin: {"a#0.R": "core0.pipe0.strand0"}\n',
            ["constraints.contexts", "constraints.max_threads"],
        ),
        ('  latency_max: 800\n  pin: {"a#0.R": "core0.pipe0.strand0"}\n', ["constraints.latency_max"]),
        (
            '  contexts: [core0]\n  pin: {"a#0.R": "core0.pipe0.strand0", "a#0.P": "core0.pipe0.strand1", '
            '"a#0.T": "core0.pipe0.strand2", "a#1.R": "core0.pipe0.strand3"}\n  max_threads: {pipe: 3}\n',
            [
                "constraints.max_threads",
                "constraints.pin.a#0.R",
                "constraints.pin.a#0.P",
                "constraints.pin.a#0.T",
                "constraints.pin.a#1.R",
            ],
        ),
    ],
)
def test_infeasible_constraints_are_named(extra, expected):
    spec = load_spec_text(INFEASIBLE + extra, feasibility=False)
    problem = BindingProblem(spec)
    assert solve_binding(problem, time_limit=10, workers=1).status == "INFEASIBLE"
    message = explain_infeasible(problem)
    for fragment in expected:
        assert fragment in message
    assert "forbid" not in message


def test_symmetry_representative_is_a_solution_hint():
    from tasksolve.solver.binding.model import BindingModel

    spec = load_spec("t2-ipfwd-intadd-x2")
    model = BindingModel(BindingProblem(spec))
    plan = [40, 41, 45, 9, 10, 60]
    representative = model.classes.representative(plan)
    assert Plan.from_contexts(spec, representative).equivalent(Plan.from_contexts(spec, plan), spec)
    for t, c in enumerate(representative):
        model.model.Add(model.x[t][c] == 1)
    status, found, _ = model.solve(time_limit=10, workers=1)
    assert status == "OPTIMAL" and found == representative


@pytest.mark.parametrize("name", ["t2-ipfwd-l1-x2", "t2-ipfwd-mem-x2"])
def test_the_plans_objective_is_its_closed_form_value(name):
    """CP-SAT's plan carries the closed form's value of that plan, not the model's integer one
    (which floors each instance's rate: 3966005.617 against the plan's 3966005.666 pps on
    t2-ipfwd-l1-x2), so a certificate never reads the plan itself as beating the proven optimum."""
    from tasksolve.simulate.oracle import make_oracle

    spec = load_spec(name)
    best = solve_binding(BindingProblem(spec), time_limit=5, workers=1, seed=0).best
    exact = make_oracle(spec, "analytic").evaluate(Plan.from_contexts(spec, best.contexts)).throughput
    assert best.objective == pytest.approx(exact, rel=1e-12) and best.bound >= best.objective
