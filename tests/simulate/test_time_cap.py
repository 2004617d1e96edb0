"""The simulation's wall-clock cap (oracle.time_cap) and its non-finite-figure check."""

from __future__ import annotations

import math

import pytest

from tasksolve.simulate import SimulationOracle
from tasksolve.simulate.des import DesSettings, check_finite
from tasksolve.simulate.errors import NonFiniteResultError, OracleError, SimulateError, SimulationTimeout
from tasksolve.solver.binding.samplers import uniform_plans
from tasksolve.solver.certify.service import SamplingService, oracle_identity
from tasksolve.specs import load_spec
from tasksolve.specs.errors import SpecError
from tasksolve.specs.loader import load_spec_text

SPEC = load_spec("t2-ipfwd-intmul-x2")
TEXT = """tasksolve: 1
name: capped
topology: ultrasparc-t2
applications:
  a: {tasks: {R: {cycles: 100}, P: {cycles: 300}}, edges: [{from: R, to: P, bytes: 64B}]}
workload: [{app: a, instances: 2}]
oracle: {time_cap: %s, precision: 0.001, packets: 10000000, service: {distribution: exponential}}
"""


def test_the_cap_is_read_from_the_spec_with_units_and_defaults_to_a_minute():
    assert SPEC.oracle.time_cap == 60.0 and DesSettings.from_spec(SPEC).time_cap == 60.0
    assert load_spec_text(TEXT % "250ms", "c.yaml").oracle.time_cap == pytest.approx(0.25)
    assert load_spec_text(TEXT % "2min", "c.yaml").oracle.time_cap == 120.0
    with pytest.raises(SpecError, match="oracle.time_cap"):
        load_spec_text(TEXT % "-3s", "c.yaml")


def test_a_run_past_the_cap_raises_a_simulation_timeout_instead_of_running_on():
    spec = load_spec_text(TEXT % "50ms", "c.yaml")  # 0.1% precision over 1e7 packets: minutes
    oracle = SimulationOracle(spec)
    with pytest.raises(SimulationTimeout, match="wall-clock cap of 0.05 s") as caught:
        oracle.evaluate(uniform_plans(spec, 1, seed=0)[0])
    assert isinstance(caught.value, OracleError) and isinstance(caught.value, SimulateError)
    # the same plan with a cap it meets (coarse precision) is measured
    assert (
        SimulationOracle(spec, precision=0.05, time_cap=60.0).evaluate(uniform_plans(spec, 1, seed=0)[0]).throughput > 0
    )


def test_the_sampling_service_records_a_capped_plan_as_failed_and_goes_on(tmp_path):
    spec = load_spec_text(TEXT % "50ms", "c.yaml")
    service = SamplingService(spec, tmp_path / "samples.jsonl", seed=0, max_samples=2)
    service.open()
    service.ensure(2)
    failed = service.failures()
    assert len(failed) == 2 and all(r.attempts == 2 and "SimulationTimeout" in r.error for r in failed)


def test_the_cap_is_not_part_of_the_samples_identity():
    spec = load_spec_text(TEXT % "5s", "c.yaml")
    other = load_spec_text(TEXT % "50s", "c.yaml")
    assert oracle_identity(spec, "des") == oracle_identity(other, "des")


def test_non_finite_figures_are_an_error_naming_the_figure():
    check_finite({"throughput": 1.0, "latency mean": 2e-6})
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(NonFiniteResultError, match="non-finite latency mean"):
            check_finite({"throughput": 1.0, "latency mean": bad})
