"""Optimistic sections whose failures depend on the other threads (``critical.conflict``; NPIRE
§2.7, first committer wins; `simulate.des.phases`): the simulated failure rate against
``1 - (1 - speculate) * (1 - conflict)^k`` where the number ``k`` of commits inside an execution
is known by construction, and the closed form's least-conflict charge as an upper bound."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasksolve.simulate import AnalyticOracle, simulate
from tasksolve.simulate.des import DesSettings, Simulation
from tasksolve.simulate.model import compile_plan
from tasksolve.specs import Plan, SpecError
from tests.simulate import spec_from

# no communication cost and no resource, so that the schedule below holds exactly
BARE = """
  name: bare
  clock: 1GHz
  levels:
    - {name: core, count: 4}
    - {name: strand, count: 2}
  communication: {core: 0, machine: 0}
"""

# x (100 cycles, wholly optimistic) feeds `readers` exit tasks of 10 cycles, each wholly inside
# an optimistic section of the same lock that never fails (conflict 0), one thread each.  The
# readers run a packet as soon as x sends it, 10 cycles into x's next execution, so each of them
# commits once inside every first execution of a packet by x: k = readers.  A retry of x sees no
# commit (the readers wait for x's next packet): k = 0, and with speculate 0 it never fails.
FAN_OUT = """
applications:
  a:
    tasks:
      x: {cycles: 100, critical: {lock: heap, speculate: %(speculate)s, conflict: %(conflict)s, rollback: 40}}
%(readers)s
    edges: [%(edges)s]
workload: [{app: a}]
"""


def fan_out(readers: int, conflict: float, speculate: float = 0.0):
    names = [f"r{i}" for i in range(readers)]
    return spec_from(
        FAN_OUT
        % {
            "speculate": speculate,
            "conflict": conflict,
            "readers": "\n".join(
                f"      {n}: {{cycles: 10, critical: {{lock: heap, speculate: 0, conflict: 0}}}}" for n in names
            ),
            "edges": ", ".join(f"{{from: x, to: {n}}}" for n in names),
        },
        topology=BARE,
    )


def run(spec, **overrides):
    """The measurement and the simulation (its optimistic-section counters)."""
    plan = Plan.from_contexts(spec, list(range(len(spec.applications["a"].tasks))))
    graph = compile_plan(spec, plan)
    sim = Simulation(graph, DesSettings.from_spec(spec, **overrides), spec.topology.context_names)
    return sim.run(), sim, graph.names.index("a#0.x")


@pytest.mark.parametrize("readers, conflict", [(1, 0.3), (2, 0.3), (3, 0.15)])
def test_a_first_execution_fails_with_one_minus_the_chance_that_no_commit_conflicts(readers, conflict):
    spec = fan_out(readers, conflict)
    m, sim, x = run(spec, seed=1, packets=25_000, precision=1e-6, time_cap=None)
    tries, fails = sim.spec_tries[x][0], sim.spec_fails[x][0]
    packets = tries - fails  # one success a packet; every failure is a first execution's
    assert packets >= 15_000
    truth = 1 - (1 - conflict) ** readers
    se = math.sqrt(truth * (1 - truth) / packets)
    assert abs(fails / packets - truth) <= 4 * se
    # the readers never fail (conflict 0, speculate 0), yet their commits counted
    assert all(sim.spec_fails[t][0] == 0 for t in range(len(sim.spec_fails)) if t != x)
    # each failure costs the rollback and the section again: x's period is 100 + truth * 140
    slope = 1e9 * 140 / (100 + truth * 140) ** 2  # d throughput / d failure rate
    assert abs(m.throughput - 1e9 / (100 + truth * 140)) <= m.half_width + slope * 4 * se


def test_base_failures_and_conflicts_combine():
    # speculate 10%, one reader at conflict 30%: a first execution fails with 1 - 0.9 * 0.7 = 0.37;
    # a retry (k = 0) with 0.1, so the failures per packet are 0.37 / (1 - 0.1) (geometric tail)
    spec = fan_out(1, 0.3, speculate=0.1)
    _m, sim, x = run(spec, seed=2, packets=25_000, precision=1e-6, time_cap=None)
    tries, fails = sim.spec_tries[x][0], sim.spec_fails[x][0]
    packets = tries - fails
    per_packet = 0.37 / 0.9
    # the failures per packet: a first failure (Bernoulli 0.37), then geometric retries at 0.1
    var = 0.37 * (1 + 0.1) / 0.81 - per_packet**2 + 0.37 * 0.1 / 0.81
    assert abs(fails / packets - per_packet) <= 4 * math.sqrt(var / packets)


def test_without_conflict_the_run_is_as_before():
    # conflict 0 on every section: the geometric failures of `speculate`, the same random numbers
    spec = fan_out(2, 0.0, speculate=0.2)
    plain = spec_from(
        FAN_OUT.replace(", conflict: %(conflict)s", "")
        % {
            "speculate": 0.2,
            "readers": "      r0: {cycles: 10, critical: {lock: heap, speculate: 0}}\n"
            "      r1: {cycles: 10, critical: {lock: heap, speculate: 0}}",
            "edges": "{from: x, to: r0}, {from: x, to: r1}",
        },
        topology=BARE,
    )
    plan = Plan.from_contexts(spec, [0, 1, 2])
    a, b = simulate(spec, plan, seed=3), simulate(plain, plan, seed=3)
    assert a.throughput == b.throughput and a.latency_mean == b.latency_mean


def test_conflict_needs_an_optimistic_section():
    body = FAN_OUT.replace("speculate: %(speculate)s, ", "") % {
        "conflict": 0.2,
        "readers": "      r0: {cycles: 10}",
        "edges": "{from: x, to: r0}",
    }
    with pytest.raises(SpecError) as info:
        spec_from(body, topology=BARE)
    assert "critical.conflict" in str(info.value) and "give `speculate` too" in str(info.value)


@settings(max_examples=8, deadline=None)
@given(
    readers=st.integers(1, 3),
    conflict=st.sampled_from([0.1, 0.5, 1.0]),
    speculate=st.sampled_from([0.0, 0.2]),
    seed=st.integers(0, 3),
)
def test_the_closed_form_charges_the_least_conflict_and_stays_an_upper_bound(readers, conflict, speculate, seed):
    # the closed form charges only `speculate`'s failures (k = 0): never below the simulation
    spec = fan_out(readers, conflict, speculate)
    plan = Plan.from_contexts(spec, list(range(readers + 1)))
    closed = AnalyticOracle(spec).evaluate(plan)
    assert closed.throughput == pytest.approx(1e9 / (100 + speculate / (1 - speculate) * 140), rel=1e-12)
    m = simulate(spec, plan, seed=seed, precision=0.01)
    assert m.throughput - m.half_width <= closed.throughput * (1 + 1e-9)


def test_an_optimistic_section_that_never_fails_on_its_own_takes_no_lock_in_the_pipeline_closed_form():
    # `speculate: 0` (failures only from conflicts) is optimistic in every oracle: the pipeline
    # closed form charges it no lock bound, as the binding closed form and the simulation
    from tasksolve.solver.pipeline.sync import task_sync

    for conflict in (0.5, 0.0):
        sync = task_sync(fan_out(2, conflict).applications["a"].tasks["x"], 1)
        assert sync.lock is None and sync.critical == 0 and sync.retry == 0
