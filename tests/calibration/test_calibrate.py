"""Calibration recovers known demands: measurements made by a model with known cycles and demands
(the closed form of the true spec) are fitted starting from a wrong spec."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tasksolve.solver.calibration import calibrated_spec, fit
from tasksolve.solver.calibration.experiments import calibration_plans, measure
from tasksolve.solver.cli import main
from tasksolve.specs import Spec, load_spec

TRUTH = "t2-ipfwd-intadd-x2"


def wrong_spec(truth: Spec, cycles: float = 1.3, demand: float = 0.6) -> Spec:
    data = truth.model_dump(by_alias=True, exclude_none=True)
    for task in data["applications"]["ipfwd"]["tasks"].values():
        task["cycles"] *= cycles
        task["demand"] = {r: v * demand for r, v in task["demand"].items()}
    return Spec.model_validate(data)


def true_value(truth: Spec, fitted) -> float:
    task = truth.applications[fitted.parameter.app].tasks[fitted.parameter.task]
    return task.cycles if fitted.parameter.resource is None else task.demand.get(fitted.parameter.resource, 0.0)


@pytest.fixture(scope="module")
def experiment():
    truth = load_spec(TRUTH)
    prior = wrong_spec(truth)
    plans = calibration_plans(prior, 20, seed=3)
    throughput, times = measure(truth, plans, "analytic", seed=0, workers=1)
    return truth, prior, plans, throughput, times


def test_identified_parameters_are_recovered_and_the_others_flagged(experiment):
    truth, prior, plans, throughput, times = experiment
    result = fit(prior, plans, throughput, times, starts=1, seed=0)
    assert result.rms < 1e-6 and np.sqrt(np.mean(result.prior_residuals**2)) > 0.05
    by_name = {p.parameter.name: p for p in result.parameters}
    for p in result.parameters:
        if p.identified:
            assert p.value == pytest.approx(true_value(truth, p), rel=1e-4), p.parameter.name
        else:
            assert p.value == p.prior, p.parameter.name
    # the T2's L1 (capacity 1 per core) and L2 (4 for the machine) are never saturated by six
    # IPFwd threads: nothing measured can tell their demands; the pipe's ifu is, and every cycles
    for name in ("ipfwd.R.demand.l1", "ipfwd.T.demand.l1", "ipfwd.R.demand.l2", "ipfwd.T.demand.l2"):
        assert not by_name[name].identified
    for name in ("ipfwd.R.cycles", "ipfwd.P.cycles", "ipfwd.T.cycles", "ipfwd.P.demand.ifu", "ipfwd.R.demand.ifu"):
        assert by_name[name].identified


def test_throughputs_alone_identify_less_but_what_they_identify_is_right(experiment):
    """From throughputs alone these plans admit exact fits with T's cycles at 170 and at 178.8
    (other demands compensating): only the starts that land on both reveal it, hence 8 starts."""
    truth, prior, plans, throughput, times = experiment
    alone = fit(prior, plans, throughput, None, starts=8, seed=0)
    both = fit(prior, plans, throughput, times, starts=1, seed=0)
    assert alone.rms < 1e-6
    identified_alone = {p.parameter.name for p in alone.parameters if p.identified}
    assert identified_alone <= {p.parameter.name for p in both.parameters if p.identified}
    for p in alone.parameters:
        if p.identified:
            assert p.value == pytest.approx(true_value(truth, p), rel=1e-3), p.parameter.name


def test_the_calibrated_spec_reproduces_the_measurements(experiment):
    from tasksolve.simulate.analytic import BatchModel

    truth, prior, plans, throughput, times = experiment
    result = fit(prior, plans, throughput, times, starts=1, seed=0)
    calibrated = calibrated_spec(prior, result.parameters)
    predicted = BatchModel(calibrated).evaluate(plans).per_instance
    assert np.allclose(predicted, throughput, rtol=1e-5)
    # idle demands keep the ratio to the busy demand that the starting spec gave them
    r_prior, r_cal = prior.applications["ipfwd"].tasks["R"], calibrated.applications["ipfwd"].tasks["R"]
    assert r_cal.idle_demand["ifu"] / r_cal.demand["ifu"] == pytest.approx(
        r_prior.idle_demand["ifu"] / r_prior.demand["ifu"], rel=1e-4
    )


def test_plans_are_distinct_and_valid():
    spec = load_spec("t2-constrained")
    plans = calibration_plans(spec, 30, seed=1)
    from tasksolve.specs import Plan
    from tasksolve.specs.plan import check_plan

    assert len({tuple(row) for row in plans}) == len(plans)
    assert all(not check_plan(spec, Plan.from_contexts(spec, list(map(int, row)))) for row in plans)


def test_cli_writes_a_spec_that_loads_and_refuses_to_overwrite(tmp_path, capsys):
    out = tmp_path / "calibrated.yaml"
    args = [
        "calibrate",
        TRUTH,
        "--oracle",
        "analytic",
        "--plans",
        "10",
        "--starts",
        "0",
        "--output",
        str(out),
        "--json",
    ]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["plans"] >= 10 and report["thread_times"] is True and report["residuals"]["rms"] < 1e-6
    assert load_spec(out).applications["ipfwd"].tasks["P"].cycles == pytest.approx(250)
    assert main(args) == 2
    assert "--force" in capsys.readouterr().err
    assert main(args + ["--force"]) == 0


def test_cli_refuses_a_pipeline_spec(tmp_path, capsys):
    assert main(["calibrate", "xeon-lata-dag", "--oracle", "analytic", "--output", str(tmp_path / "c.yaml")]) == 2
    assert "pipeline" in capsys.readouterr().err


def test_totals_alone_are_fitted_when_the_oracle_gives_no_instance_figures():
    """A user's program reports one figure per plan: the fit then matches the total throughput
    (it needs more plans than per-instance figures do: 60 here)."""
    truth = load_spec(TRUTH)
    prior = wrong_spec(truth)
    plans = calibration_plans(prior, 60, seed=3)
    throughput, _ = measure(truth, plans, "analytic", seed=0, workers=1)
    result = fit(prior, plans, throughput.sum(axis=1, keepdims=True), None, starts=8, seed=0)
    assert result.residuals.shape == (len(plans),) and result.rms < 1e-6
    assert np.sqrt(np.mean(result.prior_residuals**2)) > 0.05
    identified = [p for p in result.parameters if p.identified]
    assert len(identified) >= 4
    for p in identified:
        assert p.value == pytest.approx(true_value(truth, p), rel=1e-3), p.parameter.name


def test_a_fit_that_cannot_match_says_so(experiment):
    """Measurements no choice of cycles and demands reproduces (the instances' throughputs
    scrambled across plans) leave a large error, and the fit says so."""
    _, prior, plans, throughput, _ = experiment
    scrambled = np.random.default_rng(0).permutation(throughput.ravel()).reshape(
        throughput.shape
    ) * np.random.default_rng(1).uniform(0.5, 2.0, throughput.shape)
    result = fit(prior, plans, scrambled, None, starts=1, seed=0)
    assert result.rms > 0.02 and result.warning is not None and "off the measurements" in result.warning


def with_communication(spec: Spec, cycles: dict | None) -> Spec:
    data = spec.model_dump(by_alias=True, exclude_none=True)
    data["topology"].pop("communication", None)
    if cycles is not None:
        data["topology"]["communication"] = {"model": "direct", "cycles": cycles}
    return Spec.model_validate(data)


@pytest.mark.parametrize("start", [{"core": 5.0, "machine": 30.0}, None])
def test_communication_costs_per_level_are_fitted_and_written(start):
    """The test bed's spec (bench/testbed) measured by its closed form with 20/90 cycles per
    message; fitted from wrong costs or from no communication section at all."""
    from pathlib import Path

    truth = load_spec(Path(__file__).resolve().parents[2] / "bench" / "testbed" / "testbed.yaml")
    prior = with_communication(truth, start)
    plans = calibration_plans(prior, 30, seed=1)
    throughput, times = measure(truth, plans, "analytic", seed=0, workers=1)
    joint = fit(prior, plans, throughput, times, starts=2, seed=0, fit_communication=True)
    by_name = {p.parameter.name: p for p in joint.parameters}
    # a shift of both levels' costs taken off the consumers' cycles changes nothing: only the
    # difference between the levels is determined, and neither level is called identified
    assert joint.rms < 1e-6
    assert by_name["communication.machine"].value - by_name["communication.core"].value == pytest.approx(70.0, rel=1e-3)
    assert not by_name["communication.core"].identified and not by_name["communication.machine"].identified
    result = fit(prior, plans, throughput, times, starts=2, seed=0, fit_communication=True, fit_tasks=False)
    by_name = {p.parameter.name: p for p in result.parameters}
    assert set(by_name) == {"communication.core", "communication.machine"}
    assert by_name["communication.core"].identified and by_name["communication.machine"].identified
    assert by_name["communication.core"].value == pytest.approx(20.0, rel=1e-3)
    assert by_name["communication.machine"].value == pytest.approx(90.0, rel=1e-3)
    assert result.rms < 1e-6 and not result.worse_than_spec and "communication.core" in result.identified
    written = calibrated_spec(prior, result.parameters)
    assert written.topology.communication.cycles == pytest.approx({"core": 20.0, "machine": 90.0}, rel=1e-3)


def test_a_fit_worse_than_the_spec_is_flagged(experiment):
    truth, prior, plans, throughput, times = experiment
    result = fit(truth, plans, throughput, times, starts=0, seed=0)
    assert result.rms_before < 1e-9 and not result.worse_than_spec  # the truth fits itself
    result.residuals = result.prior_residuals + 0.1  # a fit that ended worse than where it started
    assert result.worse_than_spec


def test_cli_fits_communication_and_says_what_the_data_identified(tmp_path, capsys):
    from pathlib import Path

    testbed = Path(__file__).resolve().parents[2] / "bench" / "testbed" / "testbed.yaml"
    out = tmp_path / "c.yaml"
    args = ["calibrate", str(testbed), "--oracle", "analytic", "--plans", "15", "--starts", "1", "--output", str(out)]
    assert main([*args, "--fit-communication", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {"communication.core", "communication.machine"} <= {p["name"] for p in report["parameters"]}
    assert report["written"] is True and isinstance(report["identified"], list)
    assert "# identified by the measurements:" in out.read_text()
    assert main([*args, "--force"]) == 0
    assert "identified by the measurements:" in capsys.readouterr().out


def test_cli_does_not_write_a_fit_worse_than_the_spec_unless_forced(tmp_path, capsys, monkeypatch):
    from tasksolve.solver.calibration.fitting import Fit

    monkeypatch.setattr(Fit, "worse_than_spec", property(lambda self: True))
    out = tmp_path / "c.yaml"
    args = ["calibrate", TRUTH, "--oracle", "analytic", "--plans", "8", "--starts", "0", "--output", str(out)]
    assert main(args) == 1
    captured = capsys.readouterr()
    assert not out.exists() and "--force" in captured.err and "worse than" in captured.err
    assert "identified by the measurements:" in captured.out  # the comparison is shown
    assert main([*args, "--force"]) == 0 and out.exists()
