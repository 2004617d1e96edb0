"""The closed form against hand-computed values, and the batch engine against the one-plan one."""

from __future__ import annotations

import numpy as np
import pytest

from tasksolve.simulate import AnalyticOracle, BatchModel, InvalidPlanError, compile_plan, evaluate
from tasksolve.simulate.analytic import solve
from tasksolve.solver.binding.samplers import uniform_plans
from tasksolve.specs import Plan, PlanThread, builtin_names, load_spec
from tests.simulate import spec_from

CHAIN = """
applications:
  app:
    tasks:
      a: {cycles: 300, demand: {port: 0.5}}
      b: {cycles: 500, demand: {port: 0.9, bus: 0.3}}
      c: {cycles: 200, demand: {port: 0.2}}
    edges: [{from: a, to: b, bytes: 64B}, {from: b, to: c, bytes: 64B}]
workload: [{app: app, instances: 2}]
"""


def test_hand_computed_rates_work_period_latency():
    spec = spec_from(CHAIN)
    # instance 0: a on socket0.core0.strand0 (0), b on socket0.core0.strand1 (1), c on socket1 (4)
    # instance 1: a, b, c on contexts 2, 6, 7
    m = evaluate(spec, Plan.from_contexts(spec, [0, 1, 4, 2, 6, 7]))
    graph = compile_plan(spec, Plan.from_contexts(spec, [0, 1, 4, 2, 6, 7]))
    r = solve(graph)
    # port of core (0,0): a0 0.5 + b0 0.9 = 1.4 -> both at 1/1.4; bus socket0: b0 0.3 (+ a1 0) -> fine
    # core (1,0) holds c0 alone (0.2); core (1,1) holds b1 0.9 + c1 0.2 = 1.1 -> 1/1.1
    assert r.rate == pytest.approx([1 / 1.4, 1 / 1.4, 1.0, 1.0, 1 / 1.1, 1 / 1.1])
    # communication: b0 from a0 same core: 4; c0 from b0 other socket: 40; b1 from a1 (2 -> 6): 40;
    # c1 from b1 same core: 4
    assert r.work == pytest.approx([300, 504, 240, 300, 540, 204])
    times = np.array([300 * 1.4, 504 * 1.4, 240, 300, 540 * 1.1, 204 * 1.1])
    assert r.time == pytest.approx(times)
    assert r.period == pytest.approx([504 * 1.4, 540 * 1.1])
    assert r.latency == pytest.approx([times[:3].sum(), times[3:].sum()])
    clock = 1e9
    assert m.per_instance["app#0"] == pytest.approx(clock / (504 * 1.4))
    assert m.throughput == pytest.approx(clock / (504 * 1.4) + clock / (540 * 1.1))
    assert m.min_throughput == pytest.approx(clock / (504 * 1.4))
    assert m.bottleneck == "app#0.b" and m.bottlenecks["app#1"] == "app#1.b"
    x = np.array([clock / (504 * 1.4), clock / (540 * 1.1)])
    lat = np.array([times[:3].sum(), times[3:].sum()]) / clock
    assert m.latency_mean == pytest.approx((x * lat).sum() / x.sum())
    assert m.value("latency") == pytest.approx(-lat.max())
    assert m.half_width == 0 and m.oracle == "analytic"


def test_two_threads_at_demand_09_share_a_unit_at_1_over_18():
    spec = spec_from("""
applications:
  one: {tasks: {x: {cycles: 1000, demand: {port: 0.9}}}}
workload: [{app: one, instances: 2}]
""")
    together = evaluate(spec, Plan.from_contexts(spec, [0, 1]))
    apart = evaluate(spec, Plan.from_contexts(spec, [0, 2]))
    assert [t["rate"] for t in together.threads] == pytest.approx([1 / 1.8, 1 / 1.8])
    assert together.throughput == pytest.approx(2 * 1e9 / 1800)
    assert apart.throughput == pytest.approx(2 * 1e9 / 1000)


def test_replicas_divide_the_period_and_tasks_in_one_thread_do_not_communicate():
    spec = spec_from("""
applications:
  app:
    tasks:
      a: {cycles: 100}
      b: {cycles: 900}
      c: {cycles: 100}
    edges: [{from: a, to: b}, {from: b, to: c}]
workload: [{app: app}]
problem: pipeline
""")
    threads = {
        "s0": PlanThread(app="app", tasks=["a"], stage=0),
        "s1r0": PlanThread(app="app", tasks=["b", "c"], stage=1, replica=0),
        "s1r1": PlanThread(app="app", tasks=["b", "c"], stage=1, replica=1),
        "s1r2": PlanThread(app="app", tasks=["b", "c"], stage=1, replica=2),
    }
    # s0 on context 0; replicas on 1 (same core: 4), 2 (same socket: 10), 4 (machine: 40)
    names = spec.topology.context_names
    plan = Plan(bindings={"s0": names[0], "s1r0": names[1], "s1r1": names[2], "s1r2": names[4]}, threads=threads)
    r = solve(compile_plan(spec, plan))
    assert r.work == pytest.approx([100, 1004, 1010, 1040])
    assert r.period == pytest.approx([1040 / 3])  # slowest replica / 3 replicas
    assert r.latency == pytest.approx([100 + 1040])  # entry + slowest replica
    m = evaluate(spec, plan)
    assert m.throughput == pytest.approx(3e9 / 1040)


@pytest.mark.parametrize(
    "threads, message",
    [
        ({"x": PlanThread(app="app", tasks=["a", "b"])}, "run by no thread"),
        ({"x": PlanThread(app="app", tasks=["b", "a", "c"])}, "before its predecessor"),
        (
            {"x": PlanThread(app="app", tasks=["a", "c"], stage=0), "y": PlanThread(app="app", tasks=["b"], stage=1)},
            "cycle",
        ),
        (
            {
                "x": PlanThread(app="app", tasks=["a", "b"], stage=0),
                "y": PlanThread(app="app", tasks=["b", "c"], stage=1),
            },
            "two different",
        ),
    ],
)
def test_unrunnable_pipeline_plans_are_refused(threads, message):
    spec = spec_from(CHAIN.replace("instances: 2", "instances: 1") + "problem: pipeline\n")
    names = spec.topology.context_names
    plan = Plan(bindings={t: names[i] for i, t in enumerate(threads)}, threads=threads)
    with pytest.raises(InvalidPlanError, match=message):
        compile_plan(spec, plan)


@pytest.mark.parametrize("name", [n for n in builtin_names("") if n != "xeon-lata-dag"])
def test_batch_equals_one_plan_evaluation_on_every_example(name):
    spec = load_spec(name)
    plans = uniform_plans(spec, 40, seed=3)
    batch = BatchModel(spec, chunk=16).evaluate(plans)  # several chunks
    oracle = AnalyticOracle(spec)
    for p, row in enumerate(plans):
        m = oracle.evaluate(row)
        assert batch.total[p] == pytest.approx(m.throughput, rel=1e-12)
        assert batch.min_instance[p] == pytest.approx(m.min_throughput, rel=1e-12)
        assert list(batch.per_instance[p]) == pytest.approx(list(m.per_instance.values()), rel=1e-12)
        assert batch.latency_mean[p] == pytest.approx(m.latency_mean, rel=1e-12)
        assert batch.latency_max[p] == pytest.approx(max(m.per_instance_latency.values()), rel=1e-12)
        for objective in ("total_throughput", "min_throughput", "latency"):
            assert batch.values(objective)[p] == pytest.approx(m.value(objective), rel=1e-12)


def test_batch_accepts_one_plan_and_checks_the_shape():
    spec = load_spec("t2-ipfwd-l1-x2")
    row = uniform_plans(spec, 1, seed=0)[0]
    assert BatchModel(spec).throughput(row).shape == (1,)
    with pytest.raises(ValueError, match="shape"):
        BatchModel(spec).evaluate(np.zeros((2, 5), dtype=int))


def test_thread_groups_in_a_cycle_are_refused_with_their_threads():
    """Thread A runs rx and everything after parse, thread B parse: A feeds B, B feeds A."""
    from tasksolve.simulate.model import pipeline_structure
    from tasksolve.specs import Plan

    spec = load_spec("xeon-lata-dag")
    app = spec.workload[0].app
    first, second, *rest = spec.applications[app].topological_order
    threads = {
        "A": {"app": app, "instance": 0, "stage": 0, "tasks": [first, *rest]},
        "B": {"app": app, "instance": 0, "stage": 1, "tasks": [second]},
    }
    names = spec.topology.context_names
    plan = Plan.model_validate({"threads": threads, "bindings": {"A": names[0], "B": names[1]}})
    with pytest.raises(InvalidPlanError, match="depend on each other in a cycle: A, B"):
        pipeline_structure(spec, plan)


def test_the_demand_weights_are_cached_for_the_last_batch_size_only():
    """A search alternates batch sizes; each cached entry is threads x plans floats, so the entries
    of other sizes are dropped, and the values stay those of a fresh model."""
    spec = load_spec("t2-ipfwd-x20")
    plans = np.asarray(uniform_plans(spec, 40, 0), dtype=np.intp)
    model = BatchModel(spec)
    for size in (40, 1, 7, 40):
        got = model.evaluate(plans[:size]).total
        assert {p for _, p in model._weight_cache} == {size}
        np.testing.assert_array_equal(got, BatchModel(spec).evaluate(plans[:size]).total)
