"""Simulation features: forks and joins, replicas, shared queues, blocking, sources, settings,
the stopping rule, failures."""

from __future__ import annotations

import pytest

from tasksolve.simulate import DesSettings, OracleError, ideal_runs, max_rate, simulate
from tasksolve.simulate.des import Simulation
from tasksolve.simulate.model import compile_plan
from tasksolve.specs import Plan, PlanThread
from tests.simulate import spec_from

FLOAT = 1e-9

DIAMOND = """
applications:
  app:
    tasks:
      a: {cycles: 200}
      b: {cycles: 600}
      c: {cycles: 300}
      d: {cycles: 100}
    edges: [{from: a, to: b}, {from: a, to: c}, {from: b, to: d}, {from: c, to: d}]
workload: [{app: app}]
problem: pipeline
"""

NO_COMM = """
  name: flat
  clock: 1GHz
  levels: [{name: core, count: 4}, {name: strand, count: 2}]
  resources: [{name: port, level: core, capacity: 1.0}]
"""


def pipeline(spec, groups, contexts):
    """groups: [(tasks, stage, replicas)] -> Plan with the replicas on the given contexts."""
    threads, bindings = {}, {}
    names = iter(spec.topology.context_names[c] for c in contexts)
    for tasks, stage, replicas in groups:
        for r in range(replicas):
            name = f"{'-'.join(tasks)}.r{r}"
            threads[name] = PlanThread(app="app", tasks=tasks, stage=stage, replica=r)
            bindings[name] = next(names)
    return Plan(bindings=bindings, threads=threads)


def test_fork_join_diamond_runs_at_the_slowest_branch():
    spec = spec_from(DIAMOND, topology=NO_COMM)
    plan = Plan.from_contexts(spec, [0, 2, 4, 6])
    m = simulate(spec, plan)
    assert abs(m.throughput - 1e9 / 600) <= m.half_width + FLOAT * 1e9 / 600
    # unloaded latency: a, then the longer branch b, then d
    m = simulate(spec, plan, arrival="deterministic", rate=1e9 / 5000)
    assert m.latency_mean == pytest.approx((200 + 600 + 100) / 1e9, rel=FLOAT)


def test_round_robin_replicas_multiply_the_throughput():
    spec = spec_from(DIAMOND, topology=NO_COMM)
    plan = pipeline(spec, [(["a"], 0, 1), (["b"], 1, 3), (["c"], 1, 1), (["d"], 2, 1)], [0, 2, 3, 4, 6, 7])
    m = simulate(spec, plan)
    # b now handles 3 packets per 600 cycles; c (300) is the bottleneck
    assert abs(m.throughput - 1e9 / 300) <= m.half_width + FLOAT * 1e9 / 300
    b_threads = [t for t in m.threads if t["thread"].startswith("b.")]
    assert [t["utilization"] for t in b_threads] == pytest.approx([2 / 3] * 3, rel=0.02)


def test_shared_queue_replicas_adapt_to_unequal_speeds():
    """Two replicas of b, one slowed to 1/2 by a co-runner: in turn, the pair runs at the slow
    one's pace (2 packets per 1200 cycles); from a shared queue each takes what it can
    (1/600 + 1/1200 packets per cycle)."""
    spec = spec_from(
        """
applications:
  app:
    tasks:
      a: {cycles: 100}
      b: {cycles: 600, demand: {port: 1.0}}
    edges: [{from: a, to: b}]
  hog: {tasks: {x: {cycles: 1000, demand: {port: 1.0}}}}
workload: [{app: app}, {app: hog}]
problem: pipeline
""",
        topology=NO_COMM,
    )
    names = spec.topology.context_names
    threads = {
        "a": PlanThread(app="app", tasks=["a"], stage=0),
        "b0": PlanThread(app="app", tasks=["b"], stage=1, replica=0),
        "b1": PlanThread(app="app", tasks=["b"], stage=1, replica=1),
        "x": PlanThread(app="hog", tasks=["x"], stage=0),
    }
    plan = Plan(bindings={"a": names[0], "b0": names[2], "b1": names[4], "x": names[5]}, threads=threads)
    turn = simulate(spec, plan)
    shared = simulate(spec, plan, shared_queue=True)
    assert abs(turn.per_instance["app#0"] - 2e9 / 1200) <= turn.per_instance_half_width["app#0"] + 1e-3 * 2e9 / 1200
    expected = 1e9 / 600 + 1e9 / 1200
    assert abs(shared.per_instance["app#0"] - expected) <= shared.per_instance_half_width["app#0"] + 1e-3 * expected


def test_a_full_queue_blocks_the_producer_and_an_unbounded_one_does_not():
    spec = spec_from(DIAMOND, topology=NO_COMM)
    plan = Plan.from_contexts(spec, [0, 2, 4, 6])
    bounded = {t["thread"]: t for t in simulate(spec, plan, queue_capacity=2).threads}
    assert bounded["app#0.a"]["blocked"] > 0.5
    assert bounded["app#0.b"]["queue_length"] == pytest.approx(2, abs=0.1)
    free = {t["thread"]: t for t in simulate(spec, plan, queue_capacity=None, packets=2000).threads}
    assert free["app#0.a"]["blocked"] == 0 and free["app#0.a"]["utilization"] == pytest.approx(1.0)


def test_poisson_source_below_capacity_delivers_its_rate():
    spec = spec_from(DIAMOND, topology=NO_COMM)
    m = simulate(spec, Plan.from_contexts(spec, [0, 2, 4, 6]), arrival="poisson", rate=1e6, precision=0.02)
    assert abs(m.throughput - 1e6) <= 3 * m.half_width


def test_service_variability_settings():
    spec = spec_from(DIAMOND, topology=NO_COMM)
    plan = Plan.from_contexts(spec, [0, 2, 4, 6])
    det = simulate(spec, plan, arrival="poisson", rate=1e6, precision=0.05)
    cv = simulate(spec, plan, arrival="poisson", rate=1e6, service="cv", cv=1.5, precision=0.05)
    assert cv.latency_mean > det.latency_mean  # more variability, longer queues
    with pytest.raises(OracleError, match="cv"):
        simulate(spec, plan, service="cv")
    with pytest.raises(OracleError, match="rate"):
        simulate(spec, plan, arrival="poisson")


def test_the_packet_cap_stops_the_run_and_says_so():
    spec = spec_from(DIAMOND, topology=NO_COMM)
    m = simulate(spec, Plan.from_contexts(spec, [0, 2, 4, 6]), service="exponential", precision=1e-4, packets=3000)
    assert not m.converged and "packet cap" in m.notes[0]
    assert m.half_width > 1e-4 * m.throughput


def test_precision_is_met_when_reported():
    spec = spec_from(DIAMOND, topology=NO_COMM)
    m = simulate(spec, Plan.from_contexts(spec, [0, 2, 4, 6]), service="exponential", precision=0.01, seed=2)
    assert m.converged and m.half_width <= 0.01 * m.throughput


def test_unknown_settings_are_refused():
    spec = spec_from(DIAMOND, topology=NO_COMM)
    with pytest.raises(TypeError, match="bogus"):
        DesSettings.from_spec(spec, bogus=1)


def test_a_run_that_cannot_measure_anything_fails_clearly():
    spec = spec_from(DIAMOND, topology=NO_COMM)
    graph = compile_plan(spec, Plan.from_contexts(spec, [0, 2, 4, 6]))
    settings = DesSettings.from_spec(spec, packets=5)
    with pytest.raises(OracleError, match="packets"):
        Simulation(graph, settings).run()


def test_idealised_runs_find_the_binding_limit():
    spec = spec_from("""
applications:
  app:
    tasks:
      a: {cycles: 300, demand: {port: 0.8}, idle_demand: {port: 0.8}}
      b: {cycles: 300, demand: {port: 0.8}, idle_demand: {port: 0.8}}
    edges: [{from: a, to: b}]
workload: [{app: app}]
""")
    # both on one core, spinning when idle (load 1.6 all the time, messages cost 4 cycles):
    # contention is what binds
    runs = ideal_runs(spec, Plan.from_contexts(spec, [0, 1]))
    base = runs["actual"].throughput
    assert runs["contention"].throughput == pytest.approx(1e9 / 304, rel=1e-6)
    assert runs["communication"].throughput == pytest.approx(1e9 / (300 * 1.6), rel=1e-6)
    assert runs["queues"].throughput == pytest.approx(base, rel=1e-6)
    assert base == pytest.approx(1e9 / (304 * 1.6), rel=1e-6)
    assert max(runs, key=lambda k: runs[k].throughput) == "contention"


def test_max_rate_finds_the_capacity():
    spec = spec_from(DIAMOND, topology=NO_COMM)
    found = max_rate(spec, Plan.from_contexts(spec, [0, 2, 4, 6]), tolerance=0.01)
    assert 1e9 / 600 * 0.98 <= found.rate <= 1e9 / 600 * (1 + 1e-3)
    assert found.runs[-1]["rate"] > 0 and any(not r["kept_up"] for r in found.runs)


def test_shared_queue_charges_the_replica_that_really_made_the_packet():
    """b is replicated from one shared queue; its replicas sit at different distances from c
    (same core: 4 cycles per message, other socket: 40), so c pays 4 or 40 per packet depending
    on which replica made it -- on average strictly between the two."""
    spec = spec_from("""
applications:
  app:
    tasks:
      a: {cycles: 100}
      b: {cycles: 400}
      c: {cycles: 100}
    edges: [{from: a, to: b}, {from: b, to: c}]
workload: [{app: app}]
problem: pipeline
""")
    names = spec.topology.context_names
    threads = {
        "a": PlanThread(app="app", tasks=["a"], stage=0),
        "b0": PlanThread(app="app", tasks=["b"], stage=1, replica=0),
        "b1": PlanThread(app="app", tasks=["b"], stage=1, replica=1),
        "c": PlanThread(app="app", tasks=["c"], stage=2),
    }
    # a on 2; b0 on 0 and c on 1 (same core); b1 on 4 (other socket than c)
    plan = Plan(bindings={"a": names[2], "b0": names[0], "b1": names[4], "c": names[1]}, threads=threads)
    m = simulate(spec, plan, shared_queue=True)
    c = next(t for t in m.threads if t["thread"] == "c")
    assert 100 + 4 < c["work"] < 100 + 40
    b0, b1 = (next(t for t in m.threads if t["thread"] == n) for n in ("b0", "b1"))
    assert b0["work"] == pytest.approx(410) and b1["work"] == pytest.approx(440)  # a is on socket 0
    # the pair takes 1/410 + 1/440 packets per cycle (a supplies 1/110)
    expected = 1e9 / 410 + 1e9 / 440
    assert abs(m.throughput - expected) <= m.half_width + 2e-3 * expected
