"""The simulation against closed forms and queueing theory (the issue's acceptance criteria).

Tolerances come from the method: a figure must lie within the run's own 95% confidence
half-width of the truth, plus a float allowance of 1e-9 relative for deterministic runs (whose
half-width can be exactly 0), unless stated otherwise.
"""

from __future__ import annotations

import pytest

from tasksolve.simulate import simulate
from tasksolve.specs import Plan
from tests.simulate import spec_from

FLOAT = 1e-9


def within(value, truth, half_width):
    return abs(value - truth) <= half_width + FLOAT * abs(truth)


CHAIN = """
applications:
  app:
    tasks:
      a: {cycles: %(a)d}
      b: {cycles: %(b)d}
      c: {cycles: %(c)d}
    edges: [{from: a, to: b, bytes: 64B}, {from: b, to: c, bytes: 64B}]
workload: [{app: app}]
"""


def test_deterministic_chain_throughput_is_clock_over_the_slowest_stage():
    spec = spec_from(CHAIN % {"a": 300, "b": 500, "c": 200})
    # a on socket0 (0); b on socket1 (4): pays 40 (machine); c on 6: same socket as b, pays 10
    plan = Plan.from_contexts(spec, [0, 4, 6])
    m = simulate(spec, plan)
    assert m.converged
    assert within(m.throughput, 1e9 / 540, m.half_width)
    assert m.bottleneck == "app#0.b"
    rates = {t["thread"]: t for t in m.threads}
    assert rates["app#0.b"]["utilization"] == pytest.approx(1.0)
    assert rates["app#0.b"]["work"] == pytest.approx(540)


def test_deterministic_chain_unloaded_latency_is_the_sum_of_the_stages():
    spec = spec_from(CHAIN % {"a": 300, "b": 500, "c": 200})
    plan = Plan.from_contexts(spec, [0, 4, 6])
    unloaded = (300 + 540 + 210) / 1e9
    # arrivals well below capacity: every packet crosses an empty pipeline
    m = simulate(spec, plan, arrival="deterministic", rate=1e9 / 2000)
    assert m.latency_mean == pytest.approx(unloaded, rel=FLOAT)
    assert m.latency_p99 == pytest.approx(unloaded, rel=FLOAT)
    assert within(m.throughput, 1e9 / 2000, m.half_width)
    # saturated source with the first stage the slowest: queues stay empty, same latency
    spec = spec_from(CHAIN % {"a": 700, "b": 500, "c": 200})
    m = simulate(spec, plan)
    assert m.latency_p50 == pytest.approx((700 + 540 + 210) / 1e9, rel=FLOAT)
    assert within(m.throughput, 1e9 / 700, m.half_width)


def test_saturated_latency_includes_the_full_queue_before_the_bottleneck():
    # a fast producer fills the bounded queue before b: each packet then waits for the
    # `queue_capacity` packets ahead of it (Little: L = X W with L = capacity)
    spec = spec_from(CHAIN % {"a": 100, "b": 500, "c": 100} + "oracle: {queue_capacity: 8}\n")
    m = simulate(spec, Plan.from_contexts(spec, [0, 1, 2]))  # same core: 4 cycles per message
    b = next(t for t in m.threads if t["thread"] == "app#0.b")
    assert b["queue_length"] == pytest.approx(8, abs=0.05)
    assert b["queue_wait"] == pytest.approx(8 * 504 / 1e9, rel=0.01)
    assert next(t for t in m.threads if t["thread"] == "app#0.a")["blocked"] > 0.7


FREE = """
  name: free-messages
  clock: 1GHz
  levels: [{name: core, count: 2}, {name: strand, count: 2}]
  resources: [{name: port, level: core, capacity: 1.0}]
"""

TANDEM = """
applications:
  app:
    tasks:
      a: {cycles: 500}
      b: {cycles: 800}
    edges: [{from: a, to: b}]
workload: [{app: app}]
oracle:
  arrival: {process: poisson, rate: 1Mpps}
  service: {distribution: exponential}
  queue_capacity: 1000000
  packets: 3000000
  time_cap: 1h           # a statistics test: it stops on packets and precision, not the clock
  seed: 11
"""


def test_poisson_tandem_matches_burke_and_littles_law():
    """M/M/1 -> M/M/1 with lambda = 1e6/s, mu1 = 2e6/s (rho 0.5), mu2 = 1.25e6/s (rho 0.8): by
    Burke's theorem the mean sojourn is 1/(mu1-lambda) + 1/(mu2-lambda) = 5 us.  The run stops
    when the latency's 95% half-width is below 2%, so the acceptance bound of 3% is about three
    standard errors."""
    spec = spec_from(TANDEM, topology=FREE)  # no communication cost, no demand
    m = simulate(spec, Plan.from_contexts(spec, [0, 2]), stop_on=("throughput", "latency"), precision=0.02)
    lam, mu1, mu2 = 1e6, 2e6, 1.25e6
    theory = 1 / (mu1 - lam) + 1 / (mu2 - lam)
    assert m.converged and m.latency_half_width <= 0.02 * m.latency_mean
    assert abs(m.latency_mean - theory) <= 0.03 * theory
    assert abs(m.throughput - lam) <= 3 * m.half_width
    for t in m.threads:
        # Little's law on the measured queue: time-averaged length = throughput x mean wait
        # (both measured over the same interval; only packets straddling its ends differ)
        assert t["queue_length"] == pytest.approx(m.throughput * t["queue_wait"], rel=0.01)
    a, b = m.threads
    assert a["utilization"] == pytest.approx(lam / mu1, rel=0.03)
    assert b["utilization"] == pytest.approx(lam / mu2, rel=0.03)


def test_contention_two_threads_at_09_progress_at_1_over_18():
    spec = spec_from("""
applications:
  one: {tasks: {x: {cycles: 1000, demand: {port: 0.9}}}}
workload: [{app: one, instances: 2}]
""")
    m = simulate(spec, Plan.from_contexts(spec, [0, 1]))  # same core
    for t in m.threads:
        assert t["rate"] == pytest.approx(1 / 1.8, rel=FLOAT)
    for x in m.per_instance.values():
        assert within(x, 1e9 / 1800, m.half_width)


def test_rates_follow_the_set_of_busy_threads():
    """A saturated thread X (demand 0.9) shares its core with b, which works 100 cycles per
    1000-cycle packet period (its producer a is slower, elsewhere) and loads nothing while idle.
    While b works both run at 1/1.8, so b is busy 180 of every 1000 cycles and X progresses
    180/1.8 + 820 = 920 cycles per period: X's rate is 0.92, its throughput 0.92e9/2000."""
    spec = spec_from(
        """
applications:
  chain:
    tasks:
      a: {cycles: 1000}
      b: {cycles: 100, demand: {port: 0.9}}
    edges: [{from: a, to: b}]
  hog: {tasks: {x: {cycles: 2000, demand: {port: 0.9}}}}
workload: [{app: chain}, {app: hog}]
""",
        topology=FREE,
    )
    m = simulate(spec, Plan.from_contexts(spec, [2, 0, 1]))
    x = next(t for t in m.threads if t["thread"] == "hog#0.x")
    b = next(t for t in m.threads if t["thread"] == "chain#0.b")
    assert x["rate"] == pytest.approx(0.92, rel=1e-3)
    assert b["rate"] == pytest.approx(1 / 1.8, rel=FLOAT)
    # the measured span is not a whole number of 1000-cycle periods: up to one period's busy
    # time (180 cycles) can fall outside it
    span = m.simulated_seconds * 1e9
    assert abs(b["utilization"] - 0.18) <= 180 / span
    assert within(m.per_instance["hog#0"], 0.92e9 / 2000, m.per_instance_half_width["hog#0"] + 1e-3 * 0.92e9 / 2000)
    assert within(m.per_instance["chain#0"], 1e9 / 1000, m.per_instance_half_width["chain#0"])
