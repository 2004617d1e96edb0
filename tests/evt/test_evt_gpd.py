"""GPD likelihood and maximum-likelihood fit (evt.gpd)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from tasksolve.evt.gpd import (
    fit_gpd,
    fit_gpd_batch,
    gpd_cdf,
    gpd_loglik,
    gpd_loglik_endpoint,
    gpd_ppf,
    gpd_rvs,
    profile_endpoint,
    standard_errors,
)


@pytest.mark.parametrize("xi", [-0.8, -0.3, 0.0, 0.4])
def test_loglik_matches_scipy_logpdf(xi: float) -> None:
    rng = np.random.default_rng(1)
    y = gpd_rvs(xi, 2.0, 50, rng)
    ours = gpd_loglik(y, xi, 2.0)
    ref = stats.genpareto.logpdf(y, xi, loc=0, scale=2.0).sum()
    assert ours == pytest.approx(ref, rel=1e-10)
    if xi < 0:
        assert gpd_loglik_endpoint(y, xi, -2.0 / xi) == pytest.approx(ours, rel=1e-12)


def test_loglik_outside_support_is_minus_infinity() -> None:
    assert gpd_loglik(np.array([0.5, 3.0]), -0.5, 1.0) == -math.inf  # endpoint is 2
    assert gpd_loglik(np.array([0.5]), 0.1, -1.0) == -math.inf


def test_cdf_ppf_are_inverse_and_match_scipy() -> None:
    q = np.linspace(0.01, 0.99, 9)
    for xi in (-0.4, 0.0, 0.3):
        y = gpd_ppf(q, xi, 1.5)
        np.testing.assert_allclose(gpd_cdf(y, xi, 1.5), q, rtol=1e-10)
        np.testing.assert_allclose(y, stats.genpareto.ppf(q, xi, scale=1.5), rtol=1e-10)


@pytest.mark.parametrize("xi", [-0.4, -0.2, 0.0, 0.2])
@pytest.mark.parametrize("seed", [3, 4, 5])
def test_fit_agrees_with_scipy_mle(xi: float, seed: int) -> None:
    """Acceptance: our log-likelihood at our optimum is at least scipy's, parameters agree."""
    y = gpd_rvs(xi, 1.0, 200, np.random.default_rng(seed))
    ours = fit_gpd(y)
    c, _, scale = stats.genpareto.fit(y, floc=0)
    ll_scipy = stats.genpareto.logpdf(y, c, 0, scale).sum()
    assert ours.loglik == pytest.approx(gpd_loglik(y, ours.xi, ours.sigma), rel=1e-10)
    assert ours.loglik >= ll_scipy - 1e-7
    assert ours.xi == pytest.approx(c, abs=2e-3)
    assert ours.sigma == pytest.approx(scale, rel=2e-3)


def test_fit_is_global_not_local() -> None:
    """The fit maximises the likelihood: no point of a dense (xi, sigma) grid beats it."""
    y = gpd_rvs(-0.3, 1.0, 150, np.random.default_rng(8))
    fit = fit_gpd(y)
    best_grid = max(gpd_loglik(y, a, b) for a in np.linspace(-0.99, 0.6, 80) for b in np.linspace(0.2, 3.0, 80))
    assert fit.loglik >= best_grid - 1e-9


def test_uniform_excesses_reach_the_boundary() -> None:
    y = np.random.default_rng(2).random(300)
    fits = [fit_gpd(np.random.default_rng(s).random(300)) for s in range(10)]
    assert all(f.xi >= -1.0 for f in fits)
    assert any(f.boundary for f in fits)  # the MLE runs to xi = -1 for some uniform samples
    for f in fits:
        if f.boundary:
            assert f.xi == -1.0 and math.isfinite(f.theta)
    assert fit_gpd(y).theta <= 1.0 + 0.05


def test_heavy_tail_has_infinite_endpoint() -> None:
    y = gpd_rvs(0.5, 1.0, 500, np.random.default_rng(3))
    fit = fit_gpd(y)
    assert fit.xi > 0.2 and fit.theta == math.inf


@settings(max_examples=25, deadline=None)
@given(scale=st.floats(1e-6, 1e6), seed=st.integers(0, 10_000), xi=st.sampled_from([-0.7, -0.3, -0.05, 0.1]))
def test_fit_is_scale_equivariant_and_at_least_true_likelihood(scale: float, seed: int, xi: float) -> None:
    y = gpd_rvs(xi, 1.0, 60, np.random.default_rng(seed))
    base = fit_gpd(y)
    scaled = fit_gpd(y * scale)
    assert scaled.xi == pytest.approx(base.xi, abs=1e-6)
    assert scaled.sigma == pytest.approx(base.sigma * scale, rel=1e-5)
    assert base.loglik >= gpd_loglik(y, xi, 1.0) - 1e-9


def test_batch_fit_equals_single_fit() -> None:
    rng = np.random.default_rng(4)
    for xi in (-0.9, -0.3, 0.0, 0.3):
        samples = gpd_rvs(xi, 1.0, (40, 120), rng)
        xis, sigmas = fit_gpd_batch(samples)
        single = [fit_gpd(s) for s in samples]
        np.testing.assert_allclose(xis, [f.xi for f in single], atol=1e-6)
        np.testing.assert_allclose(sigmas, [f.sigma for f in single], rtol=1e-6)


def test_profile_endpoint_is_maximal_at_the_estimate() -> None:
    y = gpd_rvs(-0.3, 1.0, 300, np.random.default_rng(5))
    fit = fit_gpd(y)
    thetas = fit.theta * np.array([0.9, 0.97, 1.0, 1.03, 1.2])
    thetas = thetas[thetas > y.max()]
    prof = profile_endpoint(y, thetas)
    assert prof.max() <= fit.loglik + 1e-9
    assert profile_endpoint(y, np.array([fit.theta]))[0] == pytest.approx(fit.loglik, abs=1e-6)
    assert profile_endpoint(y, np.array([y.max() * 0.99]))[0] == -math.inf


def test_standard_errors_regular_only() -> None:
    y = gpd_rvs(-0.2, 1.0, 400, np.random.default_rng(6))
    fit = fit_gpd(y)
    se = standard_errors(y, fit.xi, fit.sigma)
    assert se is not None
    # asymptotic variance of xi-hat: (1 + xi)^2 / k (Coles 2001, section 4.3.2)
    assert se["xi"] == pytest.approx((1 + fit.xi) / math.sqrt(400), rel=0.25)
    assert standard_errors(y, -0.6, 1.0) is None
