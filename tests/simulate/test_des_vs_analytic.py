"""Simulation against the closed form on random plans of every example (docs/design.md: the closed
form is exact for the simulation when idle threads spin with their full demand, a pessimistic
bound otherwise)."""

from __future__ import annotations

import numpy as np
import pytest

from tasksolve.simulate import AnalyticOracle, SimulationOracle
from tasksolve.solver.binding.samplers import to_plans, uniform_plans
from tasksolve.specs import builtin_names, load_spec
from tests.simulate import random_pipeline_plan, resting, spinning

FLOAT = 1e-9  # deterministic runs can report a half-width of exactly 0


def plans_for(spec, n: int, seed: int):
    rng = np.random.default_rng(seed)
    out = []
    if len(spec.threads) <= len(spec.usable_contexts):
        out += to_plans(spec, uniform_plans(spec, n, rng))
    if spec.problem == "pipeline":
        out += [random_pipeline_plan(spec, rng) for _ in range(n)]
    return out


@pytest.mark.parametrize("name", builtin_names(""))
def test_spinning_threads_make_the_closed_form_exact(name):
    spec = spinning(load_spec(name))
    des, closed = SimulationOracle(spec), AnalyticOracle(spec)
    for plan in plans_for(spec, 3, seed=5):
        m, a = des.evaluate(plan), closed.evaluate(plan)
        assert abs(m.throughput - a.throughput) <= m.half_width + FLOAT * a.throughput
        for inst, x in a.per_instance.items():
            assert abs(m.per_instance[inst] - x) <= m.per_instance_half_width[inst] + FLOAT * x
        for sim_t, an_t in zip(m.threads, a.threads):
            assert sim_t["rate"] == pytest.approx(an_t["rate"], rel=1e-9)


@pytest.mark.parametrize("name", builtin_names(""))
def test_resting_threads_never_do_worse_than_the_closed_form(name):
    spec = resting(load_spec(name))
    des, closed = SimulationOracle(spec), AnalyticOracle(spec)
    for plan in plans_for(spec, 3, seed=6):
        m, a = des.evaluate(plan), closed.evaluate(plan)
        assert m.throughput >= a.throughput - m.half_width - FLOAT * a.throughput
        for sim_t, an_t in zip(m.threads, a.threads):
            assert sim_t["rate"] >= an_t["rate"] * (1 - 1e-9)


def test_the_examples_as_given_sit_between_the_bound_and_the_uncontended_rate():
    spec = load_spec("t2-ipfwd-mix-x8")
    des, closed = SimulationOracle(spec), AnalyticOracle(spec)
    for plan in plans_for(spec, 3, seed=7):
        m, a = des.evaluate(plan), closed.evaluate(plan)
        assert m.throughput >= a.throughput - m.half_width - FLOAT * a.throughput
        assert m.converged and m.half_width <= spec.oracle.precision * m.throughput
        assert all(0 < t["rate"] <= 1 + 1e-12 for t in m.threads)
