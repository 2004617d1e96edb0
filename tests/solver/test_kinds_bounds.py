"""Solver and bounds on kinds of core and irregular trees (`specs.cpu_kinds`), against brute force.

On small random hybrid specs (`specs.strategies` with ``kinds=True``, ``irregular=True``):

* CP-SAT's proven optimum is the best closed-form value over every feasible placement (brute
  force), to the model's documented resolution (1e-6 per instance; where cycles, demands or
  costs are not whole hundredths and thousandths, within the factor `Rounding` reports);
* the level LP and the configuration LP (which assume the fastest kind) are never below it;
* the fluid bound's maximum (`max_bound`, and each of `enumerated_max` and `relaxed_max`) is never
  below a simulated plan (the slowest-kind end of a thread's work range keeps it a bound);
* `tasksolve run` on a hybrid machine finds the brute-force best plan, and its bound and verdict
  agree with it.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from tasksolve.simulate.analytic import BatchModel
from tasksolve.solver.binding.configuration_lp import configuration_bound
from tasksolve.solver.binding.configurations import NotApplicable
from tasksolve.solver.binding.cpsat import MODEL_TOO_LARGE, solve_binding
from tasksolve.solver.binding.level_lp import level_bound
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.solver.certify.fluid_max import enumerated_max, max_bound, relaxed_max
from tasksolve.solver.cli import main
from tasksolve.specs import load_spec_text
from tasksolve.specs import strategies as st_specs
from tasksolve.specs.objective import Objective
from tests.solver.test_bounds_every_field import (
    FLOAT,
    _simulated_plans,
    assert_bounds,
    check_pipeline_relaxation,
    feasible_placements,
    pipeline_data,
)

RESOLUTION = 1e-5  # CP-SAT's throughput resolution (1e-6 per instance) with room for float sums
FEW = settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def hybrid_specs(every_field: bool, objectives=("total_throughput", "min_throughput", "latency"), least_capacity=0.0):
    """2-4 threads on at most 8 contexts of 2-3 kinds of core, a maybe irregular tree."""
    return (
        st_specs.spec_data(
            max_threads=4, max_contexts=8, max_tasks=3, every_field=every_field, kinds=True, irregular=True
        )
        .filter(lambda d: d.get("objective") in objectives)
        .filter(lambda d: all(r["capacity"] >= least_capacity for r in d["topology"]["resources"]))
        .map(st_specs.load_for_the_model)
        .filter(mixed)
    )


def mixed(spec) -> bool:
    """At least two threads, and contexts of at least two kinds to put them on."""
    kinds = {spec.topology.context_kinds[c] for c in spec.usable_contexts}
    return len(spec.threads) >= 2 and len(kinds) >= 2


def closed_form_optimum(spec) -> float | None:
    """The best closed-form figure (packets/s, or seconds for the latency) over every feasible
    placement within ``latency_max``; None when there is none."""
    rows = feasible_placements(spec)
    if len(rows) == 0:
        return None
    result = BatchModel(spec).evaluate(rows)
    figure = {"total_throughput": result.total, "min_throughput": result.min_instance, "latency": result.latency_max}
    values = figure[spec.objective]
    bound = spec.constraints.latency_max
    if bound is not None:
        values = values[result.latency_max <= bound.to_seconds(spec.topology.clock) * (1 + 1e-9)]
    if len(values) == 0:
        return None
    return float(values.min() if Objective.of(spec.objective).minimize else values.max())


# ------------------------------------------------------------------------------ CP-SAT
@settings(FEW, max_examples=40)  # a quarter have whole hundredths of cycles everywhere: an exact model
@given(hybrid_specs(every_field=False))
def test_cpsat_optimum_equals_the_brute_force_optimum(spec):
    optimum = closed_form_optimum(spec)
    result = solve_binding(
        BindingProblem(spec), time_limit=20, workers=1, seed=0, local_search=False, configuration=False
    )
    if optimum is None:  # no placement meets the constraints
        assert result.best is None, result.status
        return
    rounding = result.rounding
    # optimal for a rounded model is no proof on the closed form: FEASIBLE (solver.binding.cpsat)
    assert result.status == ("OPTIMAL" if rounding.exact else "FEASIBLE"), (result.status, rounding)
    best = result.best
    if best is None:  # a rounded model's plans may all break the exact latency_max
        assert not rounding.exact and spec.constraints.latency_max is not None
        return
    assert_bounds(spec, optimum, best.objective, "CP-SAT plan")  # a plan's value is the closed form's
    assert_bounds(spec, best.bound, optimum, "CP-SAT bound")
    # the plan is within the model's resolution of the optimum, widened by its rounding
    slack = (1 + RESOLUTION) * rounding.pessimism * rounding.optimism
    if Objective.of(spec.objective).minimize:
        assert best.objective <= optimum * slack, (best.objective, optimum, rounding)
    else:
        assert best.objective >= optimum / slack, (best.objective, optimum, rounding)
    if rounding.exact:
        assert best.objective == pytest.approx(optimum, rel=RESOLUTION)
        assert best.bound == pytest.approx(optimum, rel=RESOLUTION)


# ------------------------------------------------------------------------------ the LPs
@pytest.mark.parametrize("name, compute", [("configuration LP", configuration_bound), ("level LP", level_bound)])
@settings(FEW, max_examples=12)
@given(spec=hybrid_specs(every_field=True, objectives=("total_throughput",)))
def test_lp_bounds_are_never_below_the_brute_force_optimum(name, compute, spec):
    optimum = closed_form_optimum(spec)
    if optimum is None or optimum <= 0:
        return
    try:
        found = compute(BindingProblem(spec))
    except NotApplicable as exc:
        assert str(exc)
        return
    assert_bounds(spec, found.value, optimum, name)


@FEW
@given(hybrid_specs(every_field=True, objectives=("total_throughput", "min_throughput", "latency")))
def test_cpsat_bound_on_every_field_is_never_past_the_brute_force_optimum(spec):
    """Critical sections, signals, tiny capacities: CP-SAT's bound still bounds the optimum."""
    optimum = closed_form_optimum(spec)
    if optimum is None or optimum <= 0:
        return
    result = solve_binding(
        BindingProblem(spec), time_limit=10, workers=1, seed=0, deterministic_time=2, local_search=False
    )
    if result.status == MODEL_TOO_LARGE:
        assert any("no CP-SAT run" in note for note in result.notes)
        return
    assert result.best is not None, result.status
    assert_bounds(spec, result.best.bound, optimum, "CP-SAT")
    assert_bounds(spec, optimum, result.best.objective, "CP-SAT plan")


# ------------------------------------------------------------------------------ the fluid bound
@settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(hybrid_specs(every_field=True, objectives=("total_throughput", "min_throughput"), least_capacity=1e-3))
# app0 on the E-core runs 240x slower than app1: its plans cannot be measured at the test's
# packet cap (they are skipped, not errors)
@example(
    spec=st_specs.load_for_the_model(
        {
            "tasksolve": 1,
            "name": "generated",
            "topology": {
                "name": "box",
                "clock": "100MHz",
                "levels": [{"name": "socket", "count": 2}, {"name": "core", "count": 1}],
                "resources": [],
                "kinds": {"P": {"domains": ["socket0"]}, "E": {"domains": ["socket1"]}},
            },
            "applications": {
                "app0": {
                    "tasks": {"t0": {"cycles": {"P": 50, "E": 1200}, "frequency": 2.5, "critical": {"lock": "heap"}}}
                },
                "app1": {"tasks": {"t0": {"cycles": 50, "frequency": 0.25}}},
            },
            "workload": [{"app": "app0", "instances": 1}, {"app": "app1", "instances": 1}],
            "objective": "total_throughput",
        }
    )
)
def test_fluid_maximum_is_never_below_a_simulated_plan(spec):
    plans = list(_simulated_plans(spec, limit=6))
    assume(plans)
    sim_settings = plans[0][3]
    found = [
        (name, bound)
        for name, bound in (
            ("max_bound", max_bound(spec, settings=sim_settings)),
            ("enumerated_max", enumerated_max(spec, sim_settings, spec.objective)),
            ("relaxed_max", relaxed_max(spec, sim_settings, spec.objective)),
        )
        if bound is not None
    ]
    assert any(name == "relaxed_max" for name, _ in found)  # a binding spec always has the relaxation
    for _, value, half, _ in plans:
        for name, bound in found:
            assert bound.value >= value - half - FLOAT * value, (name, bound.value, value, half)


# ------------------------------------------------------------------------------ pipelines
@settings(FEW, max_examples=10)
@given(
    st_specs.application_data(["port", "bus"], max_tasks=4, every_field=True),
    st.sampled_from([{"speed": 0.5}, {"ipc": 0.75}, {"clock": "1.6GHz", "ipc": 1.25}]),
)
def test_pipeline_relaxation_on_a_hybrid_machine_is_never_below_the_brute_force_best(app, slow):
    """A task graph drawing the task fields on a P pair of two cores and an E pair of one (an
    irregular tree): the relaxation, which charges every task its fastest kind, is at least the
    best plan's closed-form throughput over every grouping, replica count and mapping -- or it
    refuses, saying why.  NPIRE's synchronisation, which it refuses, is left out."""
    for task in app["tasks"].values():
        task.pop("critical", None)
        task.pop("signal", None)
    levels = [{"name": "pair", "count": 2}, {"name": "core", "count": [2, 1]}]
    check_pipeline_relaxation(pipeline_data(app, levels, {"P": {}, "E": {**slow, "domains": ["pair1"]}}))


# ------------------------------------------------------------------------------ tasksolve run
# A P cluster of one core with two SMT threads, two E clusters of two single-thread cores (E: 1.5
# of the 2 GHz clock, IPC 0.8); an L2 per cluster and a port per core, contended; messages dearer
# outside a cluster.  Which threads go to the P core is a real choice (brute force over 360 plans).
HYBRID = """
tasksolve: 1
name: hybrid-small
topology:
  name: hybrid-small
  clock: 2 GHz
  levels:
    - {name: cluster, count: 3}
    - {name: core, count: [1, 2, 2]}
    - {name: thread, count: [2, 1, 1, 1, 1]}
  kinds:
    P: {}
    E: {clock: 1.5 GHz, ipc: 0.8, domains: [cluster1, cluster2]}
  resources:
    - {name: l2, level: cluster}
    - {name: port, level: core}
  communication: {core: 5, cluster: 20, machine: 80}
applications:
  a:
    tasks:
      rx: {cycles: {P: 900, E: 1000}, demand: {l2: 0.5, port: 0.6}, idle_demand: {l2: 0.5, port: 0.6}}
      work: {cycles: 2400, demand: {l2: 0.4, port: 0.7}, idle_demand: {l2: 0.4, port: 0.7}}
    edges: [{from: rx, to: work, bytes: 64B}]
workload: [{app: a, instances: 2}]
oracle: {kind: analytic}
"""
FAST = ["--samples", "20", "--time-limit", "2", "--workers", "1", "--compare-samples", "0", "--methods", "cpsat"]


def test_run_finds_the_brute_force_best_on_a_hybrid_machine(tmp_path, capsys):
    spec = load_spec_text(HYBRID)
    rows = feasible_placements(spec)
    assert len(rows) == 6 * 5 * 4 * 3  # 6 contexts exist of the padded 3 x 2 x 2 = 12
    values = BatchModel(spec).evaluate(rows).total
    best = float(values.max())
    assert best > float(np.median(values)) * 1.05  # the placement matters
    path = tmp_path / "hybrid.yaml"
    path.write_text(HYBRID)
    out = tmp_path / "out"
    code = main(["run", str(path), "--out", str(out), *FAST, "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code in (0, 1), result.get("error")
    cert = json.loads((out / "certificate.json").read_text())
    bindings = yaml.safe_load((out / "plan.yaml").read_text())["bindings"]
    contexts = [spec.topology.parse_context(bindings[t]) for t in spec.thread_names]
    value = float(BatchModel(spec).evaluate(np.array([contexts])).total[0])
    assert value == pytest.approx(best, rel=1e-9)
    assert cert["plan_performance"]["value"] == pytest.approx(best, rel=1e-9)
    for bound in cert["bounds"]:
        if bound.get("applies") and bound.get("value") is not None:
            assert bound["value"] >= best * (1 - FLOAT), bound
    if cert["verdict"] == "proven":  # within the target of a proven bound: the best is within it too
        assert value >= best * (1 - cert["target_gap"]) and code == 0
    assert cert["verdict"] != "refuted"
