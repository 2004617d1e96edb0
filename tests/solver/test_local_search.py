"""Iterated local search: constraints hold, values only improve, runs repeat, small optima are found."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasksolve.simulate.analytic import BatchModel
from tasksolve.solver.binding.cpsat import solve_binding
from tasksolve.solver.binding.local_search import LocalSearch, improve_plan
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.solver.binding.samplers import SamplerError, uniform_plans
from tasksolve.specs import Plan, check_plan, load_spec
from tasksolve.specs import strategies as spec_st

EXAMPLES = int(os.environ.get("BRUTE_EXAMPLES", 40))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    spec_st.spec_data(max_threads=7, max_contexts=16, max_tasks=4),
    st.integers(0, 1000),
    st.sampled_from(["total_throughput", "min_throughput", "latency"]),
)
def test_plans_stay_valid_and_only_improve(data, seed, objective):
    spec = spec_st.load(data)
    try:
        start = list(map(int, uniform_plans(spec, 1, seed)[0]))
    except SamplerError:
        return
    search = LocalSearch(spec, objective, seed)
    start_value = float(search.values(np.array([start]))[0])
    if not np.isfinite(start_value):  # the random plan breaks the latency bound
        with pytest.raises(ValueError):
            search.run(start, rounds=3)
        return
    result = search.run(start, rounds=5)
    assert check_plan(spec, Plan.from_contexts(spec, result.contexts)) == []
    batch = BatchModel(spec).evaluate(np.array([result.contexts]))
    assert result.value == pytest.approx(float(batch.values(objective)[0]), rel=1e-12)
    assert result.value >= start_value
    if spec.latency_bound_seconds() is not None:
        assert batch.latency_max[0] <= spec.latency_bound_seconds() * (1 + 1e-9)


def test_same_seed_same_plan():
    spec = load_spec("t2-ipfwd-mix-x8")
    start = list(map(int, uniform_plans(spec, 1, 3)[0]))
    a = improve_plan(spec, start, seed=7, rounds=5)
    b = improve_plan(spec, start, seed=7, rounds=5)
    assert a.contexts == b.contexts and a.value == b.value and a.evaluations == b.evaluations


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_finds_the_proven_optimum_of_a_small_spec(seed):
    spec = load_spec("t2-ipfwd-intadd-x2")
    optimum = solve_binding(
        BindingProblem(spec), time_limit=30, workers=1, seed=0, local_search=False, configuration=False
    )
    assert optimum.status == "OPTIMAL"
    start = list(map(int, uniform_plans(spec, 1, seed)[0]))
    found = improve_plan(spec, start, seed=seed, rounds=30)
    assert found.value == pytest.approx(optimum.best.objective, rel=1e-5)


def test_neighbours_are_one_move_away_and_respect_pins():
    spec = load_spec("t2-constrained")
    search = LocalSearch(spec, seed=0)
    start = np.array(uniform_plans(spec, 1, 0)[0])
    for plan in search.neighbours(start):
        changed = np.nonzero(plan != start)[0]
        assert 1 <= len(changed) <= 2
        assert len(set(plan.tolist())) == len(plan)
        assert search.allowed[np.arange(len(plan)), plan].all()


def test_a_step_builds_one_batch_at_a_time_and_returns_a_plan_of_its_own(monkeypatch):
    """The step of a neighbourhood several batches long takes the plan the whole permuted
    neighbourhood gave (the same draws), with a fraction of its memory, and keeps no batch alive."""
    import tracemalloc

    from tasksolve.solver.binding import local_search as ls_module

    monkeypatch.setattr(ls_module, "STEP_BATCH", 16)
    spec = load_spec("t2-ipfwd-x20")
    plan = np.asarray(uniform_plans(spec, 1, 4)[0], dtype=np.intp)
    reference, search = LocalSearch(spec, seed=9), LocalSearch(spec, seed=9)
    value = float(search.values(plan[None, :])[0])
    whole = reference.neighbours(plan)  # the neighbourhood at once, then the same permutation
    whole = whole[reference.rng.permutation(len(whole))]
    assert len(whole) > 4 * ls_module.STEP_BATCH
    expected = None
    for i in range(0, len(whole), ls_module.STEP_BATCH):
        values = reference.values(whole[i : i + ls_module.STEP_BATCH])
        if values.max() > value + 1e-12 * abs(value):
            expected = whole[i + int(np.argmax(values))]
            break
    assert expected is not None
    tracemalloc.start()
    found = search.step(plan, value)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert found is not None and np.array_equal(found[0], expected)
    assert found[0].base is None  # not a view of its batch
    assert peak < whole.nbytes / 2, (peak, whole.nbytes)
