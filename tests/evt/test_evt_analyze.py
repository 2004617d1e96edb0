"""`evt.analyze`: orientation, flags, validation, determinism, reports."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from tasksolve import evt
from tasksolve.evt.gpd import gpd_rvs
from tasksolve.solver.cli.common import to_json_text

KEYS = {"n", "best_observed", "threshold", "exceedances", "xi", "sigma", "optimum", "gap", "gof", "flags"}


@pytest.fixture(scope="module")
def beta_sample() -> np.ndarray:
    return stats.beta(2, 5).rvs(5000, random_state=np.random.default_rng(11))


def test_beta_sample_estimate(beta_sample: np.ndarray) -> None:
    res = evt.analyze(beta_sample, gof_bootstrap=50)
    assert res.best_observed == beta_sample.max()
    assert res.lower >= res.best_observed
    assert res.lower <= res.estimate <= res.upper
    assert res.exceedances <= 0.05 * 5000
    assert -0.6 < res.xi < 0.0  # the Beta(2,5) tail has xi = -1/5
    assert 0.0 <= res.gap_point <= res.gap_worst
    assert res.gap_point == pytest.approx((res.estimate - res.best_observed) / res.estimate)
    assert res.gap_worst == pytest.approx((res.upper - res.best_observed) / res.upper)


def test_minimisation_mirrors_maximisation(beta_sample: np.ndarray) -> None:
    up = evt.analyze(beta_sample, gof_bootstrap=20)
    down = evt.analyze(-beta_sample, minimize=True, gof_bootstrap=20)
    assert down.best_observed == -up.best_observed
    assert down.threshold == pytest.approx(-up.threshold)
    assert down.estimate == pytest.approx(-up.estimate)
    assert (down.lower, down.upper) == pytest.approx((-up.upper, -up.lower))
    assert down.far_limit == down.lower
    assert down.gap_worst == pytest.approx(up.gap_worst)
    assert down.xi == up.xi and down.flags == up.flags


def test_minimisation_of_latency_like_sample() -> None:
    rng = np.random.default_rng(3)
    lat = 10.0 + stats.weibull_min(2.0).rvs(4000, random_state=rng)  # lower endpoint 10
    res = evt.analyze(lat, minimize=True, gof_bootstrap=0)
    assert res.best_observed == lat.min()
    assert res.upper <= res.best_observed and res.lower <= res.estimate <= res.upper
    assert res.gap_worst == pytest.approx((res.best_observed - res.lower) / abs(res.lower))


def test_exact_gpd_with_given_threshold() -> None:
    x = 5.0 + gpd_rvs(-0.3, 1.0, 500, np.random.default_rng(2))
    res = evt.analyze(x, threshold=5.0, gof_bootstrap=0)
    assert res.threshold == 5.0 and res.exceedances == 500
    assert res.lower <= 5.0 + 1 / 0.3 <= res.upper
    assert "large_fraction" in res.flags  # everything is beyond a given threshold of 5
    assert not res.threshold_choice.auto


def test_deterministic_for_a_seed(beta_sample: np.ndarray) -> None:
    a = evt.analyze(beta_sample, gof_bootstrap=30, seed=4).to_dict()
    b = evt.analyze(beta_sample, gof_bootstrap=30, seed=4).to_dict()
    c = evt.analyze(beta_sample, gof_bootstrap=30, seed=5).to_dict()
    assert a == b
    assert a["optimum"] == c["optimum"]  # only the bootstrap p-values depend on the seed


def test_uniform_is_flagged_not_crashing() -> None:
    """Acceptance: uniform samples (xi = -1) are flagged and never crash."""
    seen = set()
    for seed in range(8):
        res = evt.analyze(np.random.default_rng(seed).random(2000), gof_bootstrap=0)
        assert "irregular" in res.flags
        assert res.standard_errors is None
        assert res.best_observed <= res.estimate <= 1.02
        seen.update(res.flags)
        if "boundary" in res.flags:
            assert res.estimate == res.best_observed == res.lower
    assert "boundary" in seen


def test_heavy_tail_flag_and_infinite_gap() -> None:
    x = stats.pareto(2.0).rvs(3000, random_state=np.random.default_rng(1))
    res = evt.analyze(x, gof_bootstrap=0)
    assert "heavy_tail" in res.flags
    assert res.estimate == math.inf and res.upper == math.inf
    assert res.gap_point == math.inf and res.gap_worst == math.inf
    assert json.loads(to_json_text(res.to_dict()))["optimum"]["upper"] is None


def test_few_exceedances_and_large_fraction_for_small_samples() -> None:
    x = np.random.default_rng(1).normal(size=40)
    res = evt.analyze(x, gof_bootstrap=0)
    assert res.exceedances == 10
    assert {"few_exceedances", "large_fraction"} <= set(res.flags)


def test_ties_flag() -> None:
    x = np.round(stats.beta(2, 5).rvs(5000, random_state=np.random.default_rng(2)), 2)
    res = evt.analyze(x, gof_bootstrap=0)
    assert "ties" in res.flags


def test_repeated_maximum_never_crashes() -> None:
    x = np.concatenate([np.random.default_rng(0).random(500), np.ones(300)])
    res = evt.analyze(x, gof_bootstrap=0)
    assert res.best_observed == 1.0 and res.lower >= 1.0
    assert "ties" in res.flags


def test_poor_fit_is_flagged() -> None:
    rng = np.random.default_rng(5)
    # beyond every candidate threshold the values sit in separated tight clusters of 16
    clusters = [level + 0.01 * rng.random(16) for level in range(2, 12)]
    x = np.concatenate([rng.random(3040), *clusters])
    res = evt.analyze(x, gof_bootstrap=99)
    assert not any(c.acceptable for c in res.threshold_choice.candidates)
    assert "poor_fit" in res.flags
    assert res.gof.ad_pvalue is not None and res.gof.ad_pvalue < 0.05


@pytest.mark.parametrize(
    "bad,message",
    [
        (np.ones(50), "constant"),
        (np.arange(19.0), "at least 20"),
        (np.r_[np.arange(30.0), np.nan], "NaN"),
        (np.r_[np.arange(30.0), np.inf], "infinite"),
        (["a"] * 30, "numbers"),
        ([], "empty"),
        (np.ones((5, 5)), "one-dimensional"),
    ],
)
def test_bad_samples(bad: object, message: str) -> None:
    with pytest.raises(evt.EVTError, match=message):
        evt.analyze(bad)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"confidence": 1.0}, "confidence"),
        ({"confidence": 0.0}, "confidence"),
        ({"max_fraction": 0.0}, "max_fraction"),
        ({"threshold": "high"}, "threshold"),
        ({"threshold": float("nan")}, "finite"),
        ({"threshold": 1e9}, "leaves 0 value"),
        ({"gof_bootstrap": -1}, "gof_bootstrap"),
    ],
)
def test_bad_parameters(kwargs: dict, message: str) -> None:
    x = np.random.default_rng(0).normal(size=500)
    with pytest.raises(evt.EVTError, match=message):
        evt.analyze(x, **kwargs)


def test_evt_error_is_value_error() -> None:
    assert issubclass(evt.EVTError, ValueError)


def test_no_output_and_no_warnings(capsys: pytest.CaptureFixture[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for x in (
            np.random.default_rng(0).random(300),
            stats.pareto(1.0).rvs(300, random_state=np.random.default_rng(1)),
            np.r_[np.zeros(100), np.arange(1.0, 30.0)],
        ):
            evt.analyze(x, gof_bootstrap=20).summary()
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


def test_report_contents(beta_sample: np.ndarray) -> None:
    res = evt.analyze(beta_sample, gof_bootstrap=20)
    d = res.to_dict()
    assert KEYS <= set(d)
    assert set(d["optimum"]) >= {"estimate", "lower", "upper", "confidence"}
    assert set(d["gap"]) >= {"point", "worst"}
    cands = d["threshold_choice"]["candidates"]
    assert len(cands) >= 2 and sum(c["selected"] for c in cands) == 1
    assert all(c["fraction"] <= 0.05 + 1e-12 for c in cands)
    chosen = next(c for c in cands if c["selected"])
    assert chosen["threshold"] == d["threshold"] and chosen["exceedances"] == d["exceedances"]
    json.loads(to_json_text(d))  # strict JSON
    text = res.summary()
    assert "optimum" in text and "95%" in text and f"{res.n}" in text


def test_threshold_rule_prefers_most_excesses_among_acceptable(beta_sample: np.ndarray) -> None:
    res = evt.analyze(beta_sample, gof_bootstrap=0)
    cands = res.threshold_choice.candidates
    ok = [c for c in cands if c.acceptable]
    if ok:
        assert res.exceedances == max(c.exceedances for c in ok)
    else:
        assert "poor_fit" in res.flags
