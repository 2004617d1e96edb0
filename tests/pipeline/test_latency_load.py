"""Latency at an offered load (`simulate.experiments.latency_at_load`) against queueing theory, and
the pipeline job checking `latency_max` on it rather than on the saturated latency."""

from __future__ import annotations

import math

import pytest

from tasksolve.simulate.errors import OracleError
from tasksolve.simulate.experiments import latency_at_load
from tasksolve.solver.pipeline.compare import Measurer
from tasksolve.solver.pipeline.job import build_problem
from tasksolve.solver.pipeline.plans import to_plan
from tests.pipeline.helpers import make_spec

CYCLES = 1000  # one task of 1000 cycles at 1 GHz: service time 1 us, capacity 1 Mpps


def one_thread():
    spec = make_spec({"a": CYCLES}, [])
    problem = build_problem(spec)
    from tasksolve.solver.pipeline.candidates import Candidate, Group

    plan = to_plan(problem, Candidate((Group((0,), 1, (problem.contexts[0],)),)), "one")
    return spec, plan


def test_deterministic_arrivals_at_90_percent_wait_for_nothing():
    """D/D/1 at load 0.9: a packet never waits, its latency is the service time."""
    spec, plan = one_thread()
    found = latency_at_load(spec, plan, 0.9, arrival="deterministic")
    service = CYCLES / 1e9
    assert found.max_rate.rate == pytest.approx(1e6, rel=found.max_rate.tolerance)
    assert found.rate == pytest.approx(0.9 * found.max_rate.rate)
    assert found.measurement.latency_mean == pytest.approx(service, rel=1e-6)


def test_poisson_arrivals_give_the_md1_mean_sojourn():
    """M/D/1 (Poisson arrivals, deterministic service S, unbounded queue): mean sojourn
    ``S * (1 + rho / (2 (1 - rho)))`` (Pollaczek-Khinchine), at the load actually offered."""
    spec, plan = one_thread()
    found = latency_at_load(
        spec,
        plan,
        0.9,
        arrival="poisson",
        queue_capacity=None,
        packets=400_000,
        precision=0.005,
        seed=3,
        time_cap=None,  # a statistics test: it stops on packets and precision, never on the clock
    )
    service = CYCLES / 1e9
    rho = found.rate * service
    tol = found.max_rate.tolerance  # the bisection accepts rates up to tol / 10 above the capacity
    assert 0.9 * (1 - tol) - 1e-9 <= rho <= 0.9 * (1 + tol / 10) + 1e-9
    theory = service * (1 + rho / (2 * (1 - rho)))
    m = found.measurement
    tolerance = max(3 * m.latency_half_width, 0.08 * theory)
    assert abs(m.latency_mean - theory) <= tolerance, (m.latency_mean, theory, m.latency_half_width)


@pytest.mark.parametrize("load", [0.0, -0.5, 1.5, math.nan])
def test_a_load_outside_0_1_is_refused(load):
    spec, plan = one_thread()
    with pytest.raises(OracleError, match="oracle.load"):
        latency_at_load(spec, plan, load)


def test_measurer_carries_both_latencies_and_the_load():
    spec, plan = one_thread()
    problem = build_problem(spec)
    m = Measurer(spec, problem, "des", seed=3, load=0.5).measure(plan)
    from tasksolve.simulate.oracle import make_oracle

    alone = make_oracle(spec, "des").evaluate(plan, seed=3)  # the saturated figures are the oracle's own
    assert (m.throughput, m.latency_mean, m.half_width) == (alone.throughput, alone.latency_mean, alone.half_width)
    assert m.load == 0.5 and m.rate == pytest.approx(0.5 * m.max_rate)
    assert m.loaded_latency_mean == pytest.approx(CYCLES / 1e9, rel=1e-6)
    assert m.latency == m.loaded_latency_mean
    analytic = Measurer(spec, problem, "analytic").measure(plan)
    assert analytic.loaded_latency_mean == analytic.latency_mean and analytic.load is None


def test_the_bound_is_checked_on_the_loaded_latency():
    """A two-stage chain a (500 cycles) -> b (1000), bound 2.5 us: at 90% load a packet takes
    1.5 us; with a saturated source b's queue stays full and a packet waits for the 16 ahead of
    it -- the plan must not miss the bound for that."""
    from tasksolve.solver.pipeline.candidates import Candidate, Group
    from tasksolve.solver.pipeline.job import measured_meets_bound

    spec = make_spec({"a": 500, "b": 1000}, [("a", "b", 0)], latency_max="2.5us")
    problem = build_problem(spec)
    c0, c1 = problem.contexts[:2]
    plan = to_plan(problem, Candidate((Group((0,), 1, (c0,)), Group((1,), 1, (c1,)))), "two")
    m = Measurer(spec, problem, "des").measure(plan)
    assert m.latency_mean > 10e-6
    assert m.loaded_latency_mean == pytest.approx(1.5e-6, rel=1e-3)
    assert measured_meets_bound(problem, m) is True
    assert measured_meets_bound(problem.with_bound(problem.ticks(1400)), m) is False
