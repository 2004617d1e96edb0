"""Every bound at least the best plan any method measured, on specs too large for brute force.

`tests/solver/test_bounds_every_field.py` checks each bound against the brute-force optimum on
specs of at most 4 threads.  Here the specs are larger (5 to 10 threads on up to 24 contexts,
every spec field drawn: `specs.strategies.spec_data(every_field=True)`), where no enumeration is
affordable; the truth each bound must respect is then the best plan that any method of the
comparison found and measured (`solver.binding.compare.solve` with CP-SAT, the balanced baseline
and the random baseline, on the closed form: a measurement without noise).  One test per bound,
so that a failure names it:

* CP-SAT's reported bound (the comparison's own), the configuration LP and the level LP, against
  the best closed-form value any method measured;
* the measured bound (`solver.certify.measured_bound`, a branch and bound over placement classes
  that simulates what the fluid LP cannot rule out) and the fluid LP's maximum, against the
  simulated plans of every method, each less its half-width widened to a simultaneous one-sided
  limit (Bonferroni over every comparison of the test: `measured_bound.widening`).  Both the
  measured bound and the plans' limits are statistical: each holds at `CONFIDENCE` (familywise),
  so a true bound fails a test's comparisons with a probability of at most 0.2%, whichever
  examples hypothesis draws (at 95% it was 1 in 20, and a single draw of 3000 packets did land
  two standard deviations high, above a fluid bound its plan meets exactly: 6.131 +- 0.016 Mpps
  at 100,000 packets against the bound's 6.130 Mpps).

A bound may refuse (`NotApplicable`, a model too large, classes too many to enumerate): it then
claims nothing, and the test checks that it said why.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, assume, event, given, settings

from tasksolve.simulate.errors import OracleError
from tasksolve.simulate.oracle import SimulationOracle
from tasksolve.solver.binding.compare import Infeasible, solve
from tasksolve.solver.binding.configuration_lp import configuration_bound
from tasksolve.solver.binding.configurations import NotApplicable
from tasksolve.solver.binding.level_lp import level_bound
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.solver.certify.bounds import simulation_bound
from tasksolve.solver.certify.measure import ClassOracle
from tasksolve.solver.certify.measured_bound import measured_bound, widening
from tasksolve.solver.errors import SolverFailed
from tasksolve.specs import Plan
from tasksolve.specs import strategies as st_specs
from tasksolve.specs.objective import Objective
from tests.solver.test_bounds_every_field import FLOAT, SIM, assert_bounds

LARGER = settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # no shrinking: minutes per failure on these specs
)
SIMULATED = settings(LARGER, max_examples=5)
METHODS = ["cpsat", "balanced", "random"]


def larger_spec(objectives=("total_throughput", "min_throughput", "latency"), least_capacity: float = 0.0):
    """Specs of 5 to 10 threads on up to 24 contexts drawing every field."""
    return (
        st_specs.spec_data(max_threads=10, max_contexts=24, max_tasks=4, every_field=True)
        .filter(lambda d: d.get("objective") in objectives)
        .filter(lambda d: sum(w["instances"] * len(d["applications"][w["app"]]["tasks"]) for w in d["workload"]) >= 5)
        .filter(lambda d: all(r["capacity"] >= least_capacity for r in d["topology"]["resources"]))
        .map(st_specs.load_for_the_model)
    )


def compared(spec):
    """The comparison of `METHODS` on the closed form (deterministic, so that examples repeat)."""
    try:
        report = solve(
            spec, METHODS, oracle_kind="analytic", time_limit=3.0, workers=1, seed=0, samples=300,
            baseline_plans=5, deterministic=True,
        )  # fmt: skip
    except Infeasible:
        assume(False)
    except SolverFailed as exc:  # nothing measured, nothing to hold a bound against; said so
        assert str(exc).startswith("no method found a plan")
        assume(False)
    best = report.best_measured()
    assume(best is not None and best > 0)
    return report, best


@LARGER
@given(larger_spec())
def test_cpsat_bound_is_never_past_the_best_plan_any_method_measured(spec):
    report, best = compared(spec)
    if report.bound is None:  # no bound claimed: the report says which step failed or why
        assert report.status != "OPTIMAL"
        event("CP-SAT: no bound")
        return
    event("CP-SAT: checked")
    assert_bounds(spec, report.bound, best, "CP-SAT")


@pytest.mark.parametrize("name, compute", [("configuration LP", configuration_bound), ("level LP", level_bound)])
@LARGER
@given(spec=larger_spec(objectives=("total_throughput",)))
def test_lp_bound_is_never_below_the_best_plan_any_method_measured(name, compute, spec):
    _, best = compared(spec)
    try:
        found = compute(BindingProblem(spec), time_limit=5.0)
    except NotApplicable as exc:
        assert str(exc)
        event(f"{name}: refused")
        return
    event(f"{name}: checked")
    assert_bounds(spec, found.value, best, name)


def _simulated_rows(spec, report, comparisons: int):
    """(value, widened half-width) of every plan of the comparison, simulated."""
    oracle = SimulationOracle(spec, **SIM)
    plans = {tuple(r.contexts) for r in report.comparison if r.contexts}
    for contexts in sorted(plans):
        try:
            m = oracle.evaluate(Plan.from_contexts(spec, list(contexts)))
        except OracleError as exc:  # too few packets for an interval: no figure, nothing to compare
            assert "raise oracle.packets" in str(exc)
            continue
        half = m.half_width if spec.objective == "total_throughput" else max(m.per_instance_half_width.values())
        yield m.value(spec.objective), widening(comparisons, CONFIDENCE) * half, oracle.settings


# 5 specs, at most 8 plans each (CP-SAT's top 5, the balanced and random baselines' best)
COMPARISONS = 5 * 8
#: each statistical statement of the simulated tests holds at this confidence, all at once
CONFIDENCE = 0.999
THROUGHPUTS = ("total_throughput", "min_throughput")


@SIMULATED
@given(larger_spec(objectives=THROUGHPUTS, least_capacity=1e-3))
def test_measured_bound_is_never_below_a_simulated_plan_of_any_method(spec):
    report, _ = compared(spec)
    rows = list(_simulated_rows(spec, report, COMPARISONS))
    assume(rows)
    # an oracle of its own seed: the bound's measurements are not the ones it is checked against
    try:
        oracle = ClassOracle(spec, SimulationOracle(spec, **SIM), seed=1)
        found = measured_bound(spec, oracle, settings=rows[0][2], confidence=CONFIDENCE)
    except OracleError as exc:  # a class the simulation cannot measure in `packets`: no bound claimed
        assert "raise oracle.packets" in str(exc)
        event("measured bound: a class not measurable")
        return
    if found is None:  # classes too many to enumerate: no bound claimed
        event("measured bound: classes not enumerable")
        return
    event("measured bound: checked")
    assert not Objective.of(spec.objective).minimize
    for value, half, _ in rows:
        assert found.value >= value - half - FLOAT * value, ("measured bound", found.value, value, half)


@SIMULATED
@given(larger_spec(objectives=THROUGHPUTS, least_capacity=1e-3))
def test_fluid_lp_maximum_is_never_below_a_simulated_plan_of_any_method(spec):
    report, _ = compared(spec)
    rows = list(_simulated_rows(spec, report, COMPARISONS))
    assume(rows)
    found = simulation_bound(spec, settings=rows[0][2])
    if found is None:
        event("fluid LP: no bound")
        return
    event("fluid LP: checked")
    for value, half, _ in rows:
        assert found.value >= value - half - FLOAT * value, ("fluid LP (maximum)", found.value, value, half)
