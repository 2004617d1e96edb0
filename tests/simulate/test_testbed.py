"""The test bed with known truth (bench/testbed): its noise has the size it claims, its truth is
not the closed form, and the program runs through the real command oracle end to end."""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path

import pytest

from tasksolve.simulate.oracle import make_oracle
from tasksolve.specs import Plan
from tasksolve.specs.loader import load_spec

ROOT = Path(__file__).resolve().parents[2]
TESTBED = ROOT / "bench" / "testbed"
sys.path.insert(0, str(TESTBED))
import truth  # noqa: E402


@pytest.mark.parametrize("cv", [0.02, 0.05, 0.10])
def test_the_noise_has_mean_one_and_the_stated_coefficient_of_variation(cv):
    noise = truth.Noise(cv=cv, outlier_p=0.02, drift=0.0, seed=1)
    draws = [noise.factor() for _ in range(40_000)]
    mean, sd = statistics.fmean(draws), statistics.stdev(draws)
    assert abs(mean - 1) < 4 * noise.total_cv() / math.sqrt(len(draws))
    assert sd == pytest.approx(noise.total_cv(), rel=0.05)
    assert sum(d < 0.85 * (1 - 3 * cv) for d in draws) > 0  # outliers happen


def test_the_drift_is_slow_and_shared():
    noise = truth.Noise(cv=0.0, outlier_p=0.0, drift=0.01, period=200, seed=2)
    path = [noise.factor() for _ in range(400)]
    assert max(path) == pytest.approx(1.01, abs=1e-3) and min(path) == pytest.approx(0.99, abs=1e-3)
    assert max(abs(a - b) for a, b in zip(path, path[1:])) < 0.01 * 2 * math.pi / 200 * 1.01


def test_the_closed_form_only_approximates_the_truth():
    spec = load_spec(TESTBED / "testbed.yaml")
    analytic = make_oracle(spec, "analytic")
    plans = [(0, 2, 1, 4, 6, 5), (2, 0, 3, 4, 6, 5), (0, 1, 2, 3, 4, 5), (0, 2, 4, 6, 1, 3)]
    true = [truth.true_rate(p) for p in plans]
    model = [analytic.evaluate(Plan.from_contexts(spec, list(p))).throughput for p in plans]
    ratios = [m / t for m, t in zip(model, true)]
    assert max(ratios) / min(ratios) > 1.02  # not one constant factor off: the ranking can differ
    assert true[1] > true[0]  # the cores' speeds, which the spec does not know, break the tie


def test_the_program_runs_through_the_command_oracle(tmp_path):
    spec = load_spec(TESTBED / "testbed.yaml")
    program = str(TESTBED / "program.py")
    plan = (2, 0, 3, 4, 6, 5)
    exact = make_oracle(
        spec,
        "command",
        command=[sys.executable, program, "--plan", "{plan_file}", "--cv", "0", "--outliers", "0", "--drift", "0"],
        repeats=1,
    )
    m = exact.evaluate(Plan.from_contexts(spec, list(plan)), seed=1)
    assert m.throughput == pytest.approx(truth.true_rate(plan), rel=1e-9)
    assert sum(m.per_instance.values()) == pytest.approx(m.throughput, rel=1e-9)
    noisy = make_oracle(spec, "command", command=[sys.executable, program, "--plan", "{plan_file}"], repeats=3)
    m = noisy.evaluate(Plan.from_contexts(spec, list(plan)), seed=1)
    assert 0.5 < m.throughput / truth.true_rate(plan) < 1.5 and m.half_width > 0


def test_the_program_refuses_a_bad_plan(tmp_path, capsys):
    import program

    bad = tmp_path / "plan.json"
    bad.write_text(json.dumps({"cpus": [0, 1, 99, 2, 3, 4]}))
    assert program.main(["--plan", str(bad)]) == 2
    assert "contexts 0..7" in capsys.readouterr().err
