"""Goodness of fit (evt.gof) and mean excess (evt.meanexcess)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from tasksolve.evt.gof import gof_statistics, goodness_of_fit, qq_data
from tasksolve.evt.gpd import fit_gpd, gpd_ppf, gpd_rvs
from tasksolve.evt.meanexcess import linearity_deviation, mean_excess


def test_statistics_match_scipy() -> None:
    y = gpd_rvs(-0.2, 1.0, 80, np.random.default_rng(1))
    ad, ks = gof_statistics(y, -0.2, 1.0)
    dist = stats.genpareto(-0.2, 0, 1.0)
    assert ks == pytest.approx(stats.kstest(y, dist.cdf).statistic, rel=1e-10)
    ref = stats.goodness_of_fit(
        stats.genpareto, y, known_params={"c": -0.2, "loc": 0, "scale": 1.0}, statistic="ad", n_mc_samples=9, rng=0
    )
    assert ad == pytest.approx(ref.statistic, rel=1e-8)


def test_pvalues_are_calibrated_under_the_null() -> None:
    """Under the GPD the bootstrap p-value is ~uniform: the number of p < 0.1 over 60 samples is
    Binomial(60, 0.1); 99.9% of that distribution lies in [0, 15]."""
    rng = np.random.default_rng(2)
    small = 0
    for i in range(60):
        y = gpd_rvs(-0.3, 1.0, 80, rng)
        fit = fit_gpd(y)
        small += goodness_of_fit(y, fit.xi, fit.sigma, bootstrap=49, seed=i).ad_pvalue < 0.1
    assert small <= 15


def test_rejects_a_clearly_wrong_model() -> None:
    rng = np.random.default_rng(3)
    y = np.abs(rng.normal(3.0, 0.5, 120))  # a bump away from 0: no GPD density looks like it
    fit = fit_gpd(y)
    g = goodness_of_fit(y, fit.xi, fit.sigma, bootstrap=99, seed=0)
    assert g.ad_pvalue == pytest.approx(0.01) and g.ks_pvalue == pytest.approx(0.01)


def test_boundary_fit_statistics_are_finite() -> None:
    """Uniform excesses: the boundary fit's endpoint is the maximum; A^2 must stay moderate and
    the p-value must not be degenerate."""
    rng = np.random.default_rng(8)
    for seed in range(20):
        y = rng.random(200)
        fit = fit_gpd(y)
        if fit.boundary:
            g = goodness_of_fit(y, fit.xi, fit.sigma, bootstrap=49, seed=seed)
            assert g.ad_statistic < 5 and g.ad_pvalue > 0.02
            return
    pytest.fail("no boundary fit among 20 uniform samples")


def test_bootstrap_is_seeded_and_optional() -> None:
    y = gpd_rvs(-0.3, 1.0, 60, np.random.default_rng(4))
    a = goodness_of_fit(y, -0.3, 1.0, bootstrap=30, seed=1)
    b = goodness_of_fit(y, -0.3, 1.0, bootstrap=30, seed=1)
    assert a == b
    none = goodness_of_fit(y, -0.3, 1.0, bootstrap=0)
    assert none.ad_pvalue is None and none.to_dict()["bootstrap"] == 0


def test_qq_data() -> None:
    y = gpd_rvs(-0.3, 1.0, 50, np.random.default_rng(5))
    model, emp = qq_data(y, -0.3, 1.0)
    assert np.all(np.diff(emp) >= 0) and np.all(np.diff(model) > 0)
    np.testing.assert_allclose(model, gpd_ppf(np.arange(1, 51) / 51, -0.3, 1.0))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 20), min_size=3, max_size=60))
def test_mean_excess_matches_brute_force(values: list[int]) -> None:
    x = np.array(values, dtype=float)
    me = mean_excess(x, min_count=1)
    for level, value, count in zip(me.levels, me.values, me.counts):
        above = x[x > level]
        assert count == above.size
        assert value == pytest.approx(np.mean(above - level))


def test_mean_excess_is_linear_for_gpd() -> None:
    """Coles 2001 eq. 4.9: e(v) = (sigma + xi v) / (1 - xi); checked on a large sample."""
    y = gpd_rvs(-0.3, 1.0, 200_000, np.random.default_rng(6))
    levels = np.array([0.0, 0.5, 1.0, 1.5])
    me = mean_excess(y, levels)
    np.testing.assert_allclose(me.values, (1.0 - 0.3 * levels) / 1.3, rtol=0.02)


def test_linearity_deviation_separates_good_and_bad_fits() -> None:
    rng = np.random.default_rng(7)
    y = gpd_rvs(-0.2, 1.0, 300, rng)
    fit = fit_gpd(y)
    good = linearity_deviation(y, fit.xi, fit.sigma)
    bad = linearity_deviation(y, fit.xi + 0.4, fit.sigma * 0.5)
    assert good < 1.0 < bad
    assert np.isnan(linearity_deviation(y, 0.6, 1.0))
