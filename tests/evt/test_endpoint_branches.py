"""Every branch of the endpoint interval (evt.endpoint), on samples whose true endpoint is known.

`endpoint_interval` reads the profile log-likelihood ``l_p`` of the endpoint distance at three kinds
of points: the largest excess itself (``at_data``), the grid ``theta = max y * (1 + r)`` with the
MLE added, and the exponential limit ``theta = inf`` (``at_inf``); a point is inside the interval
when its deviance ``D = 2 (l_max - l_p)`` is at most the chi-square(1) quantile, i.e. when
``l_p >= l_max - crit / 2`` (the *cut*). The branches:

* the limits found by root-finding between grid points (the regular case);
* the lower limit at the largest excess: ``at_data`` inside (a boundary fit), or the first grid
  point, ``r = 1e-10``, inside while ``at_data`` is not;
* the upper limit infinite: ``at_inf`` inside, or still inside at the last grid point
  (``r = 1e12``); equal to the largest excess when only ``at_data`` is inside;
* no grid point inside: an unbounded tail (every finite endpoint rejected), only the exponential
  limit inside (the lower limit is infinite too), or a degenerate interval at the estimate.

Branches that real data reach only at a chosen confidence are reached by that confidence, computed
from the profile so that the cut falls between two named points (the window is asserted first, so a
change of the profile's numerics fails loudly rather than testing another branch). Boundaries that
need a deviance *exactly* at the cut use a fit whose log-likelihood is set so that ``l_max - crit / 2``
equals a profile value to the last bit (`_loglik_for_cut`); such a fit is not the data's MLE, which
`endpoint_interval` does not require (it reads ``fit.loglik`` and ``fit.theta`` as given).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from tasksolve.evt.endpoint import (
    _R_SEARCH,
    EndpointInterval,
    deviance,
    endpoint_estimate,
    endpoint_interval,
    profile_curve,
)
from tasksolve.evt.gpd import GPDFit, fit_gpd, gpd_rvs, profile_endpoint

#: chi-square(1) 95% quantile, 1.959964^2 (Coles 2001, Table; scipy's to the last digit)
CHI2_1_95 = 3.841458820694124


def lp(y: np.ndarray, theta: float) -> float:
    """The profile log-likelihood at one endpoint distance."""
    return float(profile_endpoint(y, np.array([theta]))[0])


def grid_profile(y: np.ndarray) -> np.ndarray:
    """The profile on the search grid (without the MLE the interval adds to it)."""
    return profile_endpoint(y, float(y.max()) * (1.0 + _R_SEARCH))


def confidence_for_cut(fit: GPDFit, cut: float) -> float:
    """The confidence whose cut ``l_max - chi2_1(conf) / 2`` is `cut`."""
    return float(stats.chi2.cdf(2.0 * (fit.loglik - cut), 1))


def _loglik_for_cut(value: float, confidence: float = 0.95) -> float:
    """A log-likelihood ``l`` with ``l - chi2_1(confidence) / 2 == value`` exactly in floating point.

    ``l`` steps through the floats next to ``value + half``; when ``value`` and ``value + half`` lie
    in one binade every float of ``value``'s spacing is some ``fl(l - half)``, so one of them hits."""
    half = float(stats.chi2.ppf(confidence, df=1)) / 2.0
    candidate = value + half
    for _ in range(64):
        if candidate - half == value:
            return candidate
        candidate = np.nextafter(candidate, math.inf if candidate - half < value else -math.inf)
    raise AssertionError("no log-likelihood puts the cut exactly on the value")


# --------------------------------------------------------------------------- the confidence
def test_confidence_is_strictly_between_0_and_1() -> None:
    """Pins ``0 < confidence < 1``: both ends and beyond them are refused, values just inside are not."""
    y = gpd_rvs(-0.3, 1.0, 100, np.random.default_rng(5))
    fit = fit_gpd(y)
    for bad in (0.0, 1.0, -0.1, 1.005):
        with pytest.raises(ValueError, match="strictly between 0 and 1"):
            endpoint_interval(y, fit, bad)
    for fine in (0.005, 0.995):
        assert endpoint_interval(y, fit, fine).confidence == fine


def test_the_critical_value_is_the_chi2_1_quantile() -> None:
    """Pins the deviance limit: chi-square with 1 degree of freedom (3.8415 at 95%, 6.6349 at 99%)."""
    y = gpd_rvs(-0.3, 1.0, 300, np.random.default_rng(1))
    fit = fit_gpd(y)
    assert endpoint_interval(y, fit, 0.95).critical == pytest.approx(CHI2_1_95, rel=1e-12)
    assert endpoint_interval(y, fit, 0.99).critical == pytest.approx(6.634896601021214, rel=1e-12)


def test_the_default_confidence_is_95_percent_and_a_list_is_a_sample() -> None:
    """Pins the default confidence (0.95) and that the excesses may be any sequence, as for
    `profile_curve`."""
    y = gpd_rvs(-0.3, 1.0, 300, np.random.default_rng(1))
    fit = fit_gpd(y)
    iv = endpoint_interval(list(y), fit)
    assert iv == endpoint_interval(y, fit, 0.95) and iv.confidence == 0.95
    theta, ll = profile_curve(list(y), fit, iv, 5)
    assert theta[0] == y.max() and ll.size == 5


def test_the_search_grid_is_the_documented_one() -> None:
    """Pins the grid the limits are bracketed on: ``r`` from 1e-10 (a lower limit inside there is the
    largest excess) to 1e12 (an upper limit still inside there is reported infinite), ten points a
    decade (221 in all)."""
    assert _R_SEARCH.size == 221
    assert _R_SEARCH[0] == pytest.approx(1e-10, rel=1e-12) and _R_SEARCH[-1] == pytest.approx(1e12, rel=1e-12)
    np.testing.assert_allclose(_R_SEARCH[1:] / _R_SEARCH[:-1], 10.0**0.1, rtol=1e-12)


# --------------------------------------------------------------------------- the regular case
def test_a_gpd_sample_brackets_its_true_endpoint_on_the_wilks_cut() -> None:
    """Regular case (xi = -0.3, true endpoint 1/0.3): both limits are roots of ``D = crit``, the MLE
    lies between them and the true endpoint lies inside.

    Tolerance: brentq stops within 1e-12 (relative) of the root in log r, which moves D by far less
    than 1e-6 relative; the coverage is that of a 95% interval (Wilks), checked on one fixed seed."""
    y = gpd_rvs(-0.3, 1.0, 2000, np.random.default_rng(7))
    fit = fit_gpd(y)
    iv = endpoint_interval(y, fit, 0.95)
    assert y.max() < iv.lower < fit.theta == iv.estimate < iv.upper < math.inf
    assert not iv.lower_at_data
    np.testing.assert_allclose(deviance(y, fit, np.array([iv.lower, iv.upper])), CHI2_1_95, rtol=1e-6)
    assert iv.lower <= 1 / 0.3 <= iv.upper


def test_a_beta_tail_brackets_the_distance_to_one() -> None:
    """Beta(1, 3) has endpoint 1 and a GPD tail with xi = -1/3 (1 - F(x) ~ (1 - x)^3); the excesses
    over the 95% quantile ``u`` have endpoint ``1 - u``: inside the interval (one fixed seed, 95%)."""
    x = np.random.default_rng(11).beta(1.0, 3.0, 20_000)
    u = float(np.quantile(x, 0.95))
    y = x[x > u] - u
    fit = fit_gpd(y)
    iv = endpoint_interval(y, fit, 0.95)
    assert iv.lower < 1.0 - u < iv.upper < math.inf
    np.testing.assert_allclose(deviance(y, fit, np.array([iv.lower, iv.upper])), CHI2_1_95, rtol=1e-6)


def test_an_interval_narrower_than_the_grid_is_found_from_the_mle() -> None:
    """At 0.1% confidence the interval is far narrower than the grid's spacing (26% of r): no grid
    point lies inside, only the MLE the search adds to the grid, and both limits are still found on
    the cut around it."""
    y = gpd_rvs(-0.3, 1.0, 300, np.random.default_rng(1))
    fit = fit_gpd(y)
    iv = endpoint_interval(y, fit, 0.001)
    grid = y.max() * (1.0 + _R_SEARCH)
    assert not np.any((grid >= iv.lower) & (grid <= iv.upper))  # the branch: no grid point inside
    assert iv.lower < fit.theta == iv.estimate < iv.upper
    np.testing.assert_allclose(deviance(y, fit, np.array([iv.lower, iv.upper])), iv.critical, rtol=1e-6)


# --------------------------------------------------------------------------- the lower limit at the data
def test_a_uniform_sample_is_a_boundary_fit_from_its_largest_value() -> None:
    """Uniform(0, 1) (xi = -1, endpoint 1): the fit is the uniform boundary, the estimate and the lower
    limit are the largest value, and the upper limit is at least ``max y * exp(crit / 2k)``.

    Derivation: the profile is a maximum over xi in [-1, 0), so at least the uniform likelihood
    ``-k log theta``; every theta with ``k log(theta / max y) <= crit / 2`` is therefore inside. The
    true endpoint exceeds ``max y`` by more than 7/k with probability (1 - 7/k)^k < e^-7."""
    y = np.random.default_rng(2).random(1000)
    fit = fit_gpd(y)
    assert fit.boundary and fit.theta == y.max()
    iv = endpoint_interval(y, fit, 0.95)
    assert iv.estimate == iv.lower == y.max() and iv.lower_at_data
    assert iv.upper >= y.max() * math.exp(CHI2_1_95 / 2 / 1000)
    assert deviance(y, fit, np.array([iv.upper]))[0] == pytest.approx(CHI2_1_95, rel=1e-6)
    assert y.max() < 1.0 < y.max() + 7 / 1000 and iv.lower <= 1.0 <= iv.upper


def test_a_lower_limit_inside_at_the_first_grid_point_is_the_largest_excess() -> None:
    """xi = -0.9: the profile jumps from the uniform value at ``max y`` to a far higher one just above
    it. At 95% the largest excess itself is outside (D = 3.95 > 3.84) but ``r = 1e-10`` is inside
    (D = 1.49): the lower limit is the largest excess, within 1e-10 of it, and is said to be the data."""
    y = gpd_rvs(-0.9, 1.0, 1000, np.random.default_rng(0))
    fit = fit_gpd(y)
    ymax = float(y.max())
    assert deviance(y, fit, np.array([ymax]))[0] > CHI2_1_95 > deviance(y, fit, ymax * (1 + _R_SEARCH[:1]))[0]
    iv = endpoint_interval(y, fit, 0.95)
    assert iv.lower == ymax and iv.lower_at_data
    assert fit.theta == iv.estimate < iv.upper < math.inf


def test_a_lower_limit_between_the_first_two_grid_points_is_a_root_above_the_data() -> None:
    """The same sample at the confidence whose cut lies between the first two grid points: the lower
    limit is the root between them (D = crit there), not the largest excess, not the upper limit."""
    y = gpd_rvs(-0.9, 1.0, 1000, np.random.default_rng(0))
    fit = fit_gpd(y)
    ymax = float(y.max())
    first, second = profile_endpoint(y, ymax * (1.0 + _R_SEARCH[:2]))
    iv = endpoint_interval(y, fit, confidence_for_cut(fit, (first + second) / 2))
    assert ymax * (1 + _R_SEARCH[0]) < iv.lower < ymax * (1 + _R_SEARCH[1]) and not iv.lower_at_data
    assert iv.lower < iv.estimate < iv.upper < math.inf
    np.testing.assert_allclose(deviance(y, fit, np.array([iv.lower, iv.upper])), iv.critical, rtol=1e-6)


def test_only_the_largest_excess_inside_gives_a_point_interval() -> None:
    """A uniform sample at a confidence whose cut lies 1e-9 below the maximum: the largest excess is
    inside, the first grid point (about k * 1e-10 = 1e-7 lower) is not, so both limits are ``max y``."""
    y = np.random.default_rng(2).random(1000)
    fit = fit_gpd(y)
    ymax = float(y.max())
    confidence = confidence_for_cut(fit, fit.loglik - 1e-9)
    assert grid_profile(y)[0] < fit.loglik - 1e-9 < lp(y, ymax)
    iv = endpoint_interval(y, fit, confidence)
    assert iv.estimate == iv.lower == iv.upper == ymax and iv.lower_at_data


def test_a_deviance_exactly_at_the_cut_is_inside() -> None:
    """The interval is ``{D <= crit}``, a closed set: with the cut exactly on the largest excess's
    profile value (Beta(1, 0.5) data, xi = -2, whose profile falls from there), the largest excess is
    both limits and the interval says so; the MLE handed in (1.5 max y) is kept as the estimate."""
    y = 3.0 * np.random.default_rng(0).beta(1.0, 0.5, 200)  # profile near -220: one binade with the cut
    ymax = float(y.max())
    fit = GPDFit(xi=-0.5, sigma=0.75 * ymax, loglik=_loglik_for_cut(lp(y, ymax)), k=y.size)
    assert np.all(grid_profile(y) < lp(y, ymax)) and lp(y, 1.5 * ymax) < lp(y, ymax) and lp(y, math.inf) < lp(y, ymax)
    iv = endpoint_interval(y, fit, 0.95)
    assert (iv.estimate, iv.lower, iv.upper, iv.lower_at_data) == (1.5 * ymax, ymax, ymax, True)


def test_an_upper_limit_between_the_first_two_grid_points() -> None:
    """A uniform sample at the confidence whose cut lies between the first two grid points: only the
    first is inside besides the largest excess, so the upper limit is the root between them (not the
    largest excess itself)."""
    y = np.random.default_rng(2).random(1000)
    fit = fit_gpd(y)
    ymax = float(y.max())
    first, second = grid_profile(y)[:2]
    iv = endpoint_interval(y, fit, confidence_for_cut(fit, (first + second) / 2))
    assert iv.lower == ymax and ymax * (1 + _R_SEARCH[0]) < iv.upper < ymax * (1 + _R_SEARCH[1])


def test_a_grid_point_exactly_on_the_cut_is_inside() -> None:
    """The closed set on the grid: xi = -0.9 data (the profile jumps up just above the largest excess)
    with the cut exactly on the first grid point's profile value: that point is inside, so the lower
    limit is the largest excess (within 1e-10 of it), while the largest excess itself is outside."""
    y = gpd_rvs(-0.9, 1.0, 1000, np.random.default_rng(0))
    best = fit_gpd(y)
    ymax = float(y.max())
    first = float(profile_endpoint(y, ymax * (1.0 + np.exp(np.log(_R_SEARCH))))[0])  # the interval's own grid
    fit = GPDFit(xi=best.xi, sigma=best.sigma, loglik=_loglik_for_cut(first), k=best.k)
    assert lp(y, ymax) < first < grid_profile(y)[1]
    iv = endpoint_interval(y, fit, 0.95)
    assert iv.lower == ymax and iv.lower_at_data and iv.upper > best.theta


# --------------------------------------------------------------------------- the upper limit unbounded
def test_an_interval_still_inside_at_the_grid_end_is_unbounded() -> None:
    """Exponential data (xi = 0) fitted with xi = -0.10: the profile falls towards the exponential
    limit. At the confidence whose cut lies between the last grid point (r = 1e12) and the limit, the
    exponential limit is outside yet the interval is reported unbounded above; the lower limit is a
    root on the cut."""
    y = np.random.default_rng(0).exponential(size=200)
    fit = fit_gpd(y)
    last, limit = grid_profile(y)[-1], lp(y, math.inf)
    assert last > limit and math.isfinite(fit.theta)
    iv = endpoint_interval(y, fit, confidence_for_cut(fit, (last + limit) / 2))
    assert iv.upper == math.inf and y.max() < iv.lower < iv.estimate == fit.theta
    assert deviance(y, fit, np.array([iv.lower]))[0] == pytest.approx(iv.critical, rel=1e-6)


def test_an_exponential_limit_on_the_cut_is_inside() -> None:
    """The closed set at the other end: with the cut exactly on the exponential limit's profile value
    (GPD xi = 0.3 data, whose profile rises towards it) and a finite MLE handed in, no finite endpoint
    is inside but the limit is: both limits are infinite, the estimate is the MLE handed in."""
    y = gpd_rvs(0.3, 1.0, 200, np.random.default_rng(1))
    ymax = float(y.max())
    limit = lp(y, math.inf)
    fit = GPDFit(xi=-0.5, sigma=ymax, loglik=_loglik_for_cut(limit), k=y.size)  # theta = 2 max y
    assert np.all(grid_profile(y) < limit) and lp(y, 2 * ymax) < limit and lp(y, ymax) < limit
    iv = endpoint_interval(y, fit, 0.95)
    assert (iv.estimate, iv.lower, iv.upper, iv.lower_at_data) == (2 * ymax, math.inf, math.inf, False)


def test_an_upper_limit_between_the_last_two_grid_points_is_a_root() -> None:
    """The same exponential data at the confidence whose cut lies between the last two grid points
    (r = 10^11.9 and 10^12): the upper limit is the finite root between them."""
    y = np.random.default_rng(0).exponential(size=200)
    fit = fit_gpd(y)
    ymax = float(y.max())
    before_last, last = grid_profile(y)[-2:]
    assert before_last > last > lp(y, math.inf)
    iv = endpoint_interval(y, fit, confidence_for_cut(fit, (before_last + last) / 2))
    assert ymax * (1 + _R_SEARCH[-2]) < iv.upper < ymax * (1 + _R_SEARCH[-1])


def test_only_the_exponential_limit_inside_of_a_heavy_tail() -> None:
    """Exponential data fitted with xi = +0.03 (no finite endpoint), at the confidence whose cut lies
    between the last grid point and the exponential limit: the limit is inside, no finite endpoint
    is, so the lower limit is infinite as well (not the largest excess)."""
    y = np.random.default_rng(1).exponential(size=200)
    fit = fit_gpd(y)
    top, limit = grid_profile(y).max(), lp(y, math.inf)
    assert fit.xi > 0 and top < limit
    iv = endpoint_interval(y, fit, confidence_for_cut(fit, (top + limit) / 2))
    assert (iv.estimate, iv.lower, iv.upper, iv.lower_at_data) == (math.inf, math.inf, math.inf, False)


def test_a_fit_without_a_finite_endpoint_has_no_finite_upper_limit() -> None:
    """A fit with xi >= 0 (no finite endpoint) says the tail is unbounded: the upper limit is infinite
    even where the profile over finite endpoints falls below the cut again (GPD xi = -0.3 data, whose
    profile peaks near 1/0.3 and falls towards the exponential limit); the lower limit is still the
    root on the cut."""
    y = gpd_rvs(-0.3, 1.0, 300, np.random.default_rng(1))
    best = fit_gpd(y)
    unbounded = GPDFit(xi=0.1, sigma=best.sigma, loglik=best.loglik, k=best.k)  # the same likelihood, xi >= 0
    cut = best.loglik - CHI2_1_95 / 2
    assert lp(y, math.inf) < cut < grid_profile(y).max()
    iv = endpoint_interval(y, unbounded, 0.95)
    regular = endpoint_interval(y, best, 0.95)
    assert (iv.estimate, iv.upper, iv.lower_at_data) == (math.inf, math.inf, False) and regular.upper < math.inf
    assert iv.lower == pytest.approx(regular.lower, rel=1e-12)


def test_every_finite_endpoint_rejected_is_an_unbounded_tail() -> None:
    """GPD xi = 0.5 (no finite endpoint): neither a grid point nor the exponential limit is inside at
    95%, and the interval is infinite at both ends, its estimate too."""
    y = gpd_rvs(0.5, 1.0, 1000, np.random.default_rng(4))
    fit = fit_gpd(y)
    cut = fit.loglik - CHI2_1_95 / 2
    assert grid_profile(y).max() < cut and lp(y, math.inf) < cut and lp(y, y.max()) < cut
    iv = endpoint_interval(y, fit, 0.95)
    assert (iv.estimate, iv.lower, iv.upper, iv.lower_at_data) == (math.inf, math.inf, math.inf, False)


# --------------------------------------------------------------------------- degenerate fits handed in
def test_no_point_inside_for_a_finite_fit_is_a_point_interval_at_its_estimate() -> None:
    """A fit whose log-likelihood no endpoint of these data reaches within the cut (10 above the
    data's maximum) and a finite endpoint: no point is inside, the interval is the estimate alone."""
    y = gpd_rvs(-0.3, 1.0, 300, np.random.default_rng(1))
    best = fit_gpd(y)
    fit = GPDFit(xi=best.xi, sigma=best.sigma, loglik=best.loglik + 10.0, k=best.k)
    iv = endpoint_interval(y, fit, 0.95)
    assert (iv.estimate, iv.lower, iv.upper, iv.lower_at_data) == (best.theta, best.theta, best.theta, False)


def test_a_boundary_fit_reports_the_largest_excess_whatever_its_scale() -> None:
    """A boundary fit (xi = -1) estimates the endpoint by the largest excess, even when its sigma says
    otherwise (1.2 max y): in the regular case and in the degenerate one (no point inside), where the
    lower limit is then the data."""
    y = np.random.default_rng(2).random(1000)
    ymax = float(y.max())
    best = fit_gpd(y)
    wide = GPDFit(xi=-1.0, sigma=1.2 * ymax, loglik=best.loglik, k=y.size, boundary=True)
    iv = endpoint_interval(y, wide, 0.95)
    assert iv.estimate == iv.lower == ymax and iv.lower_at_data and iv.upper > ymax
    unreachable = GPDFit(xi=-1.0, sigma=1.2 * ymax, loglik=best.loglik + 10.0, k=y.size, boundary=True)
    iv = endpoint_interval(y, unreachable, 0.95)
    assert (iv.estimate, iv.lower, iv.upper, iv.lower_at_data) == (ymax, ymax, ymax, True)


# --------------------------------------------------------------------------- estimate, deviance, curve
def test_the_estimate_is_minus_sigma_over_xi_or_infinite() -> None:
    """Pins ``x_F - u = -sigma / xi`` for xi < 0 and ``inf`` for xi >= 0 (Coles 2001, section 4.2)."""
    assert endpoint_estimate(GPDFit(xi=-0.25, sigma=2.0, loglik=0.0, k=10)) == 8.0
    assert endpoint_estimate(GPDFit(xi=0.0, sigma=2.0, loglik=0.0, k=10)) == math.inf


def test_the_deviance_is_twice_the_drop_and_never_negative() -> None:
    """Pins ``D = 2 (l_max - l_p)`` and its clip at 0 (a fit below the profile reads 0, not < 0)."""
    y = gpd_rvs(-0.3, 1.0, 300, np.random.default_rng(1))
    fit = fit_gpd(y)
    theta = np.array([fit.theta, 2 * fit.theta])
    drop = fit.loglik - profile_endpoint(y, theta)
    np.testing.assert_allclose(deviance(y, fit, theta), 2.0 * np.maximum(drop, 0.0), rtol=1e-12, atol=1e-12)
    assert deviance(y, fit, theta)[1] > 1.0
    low = GPDFit(xi=fit.xi, sigma=fit.sigma, loglik=fit.loglik - 1.0, k=fit.k)
    assert deviance(y, low, theta[:1])[0] == 0.0


def _curve_end(ymax: float, interval: EndpointInterval, points: int = 5) -> np.ndarray:
    y = np.array([0.5, 1.0, ymax])
    theta, ll = profile_curve(y, fit_gpd(y), interval, points)
    np.testing.assert_array_equal(ll, profile_endpoint(y, theta))
    return theta


def test_the_profile_curve_spans_a_quarter_beyond_the_upper_limit() -> None:
    """From the largest excess (2) to ``2 + 1.25 (upper - 2)``, squared spacing: upper 3 -> 3.25 and
    the points 2 + 1.25 (i/4)^2."""
    iv = EndpointInterval(2.5, 2.2, 3.0, 0.95, CHI2_1_95, False)
    np.testing.assert_allclose(_curve_end(2.0, iv), 2.0 + 1.25 * np.array([0, 1, 4, 9, 16]) / 16, rtol=1e-15)
    y = np.array([0.5, 1.0, 2.0])
    assert profile_curve(y, fit_gpd(y), iv)[0].size == 200  # the default number of points


@pytest.mark.parametrize(
    ("estimate", "lower", "upper", "end"),
    [
        (3.0, 2.5, math.inf, 2.0 + 1.25 * (30.0 - 2.0)),  # ten times the estimate
        (1.0, 2.5, math.inf, 2.0 + 1.25 * (20.0 - 2.0)),  # never below ten times the largest excess
        (math.inf, 2.5, math.inf, 2.0 + 1.25 * (25.0 - 2.0)),  # the lower limit when no estimate
        (math.inf, math.inf, math.inf, 2.0 + 1.25 * (20.0 - 2.0)),  # the largest excess when neither
        (2.0, 2.0, 2.0, 3.0),  # a point interval: half as far again as the largest excess
    ],
)
def test_the_profile_curve_of_an_unbounded_or_point_interval(
    estimate: float, lower: float, upper: float, end: float
) -> None:
    """Where the curve ends when the upper limit says nothing: the rules of `profile_curve`'s docstring."""
    theta = _curve_end(2.0, EndpointInterval(estimate, lower, upper, 0.95, CHI2_1_95, False))
    assert theta[0] == 2.0 and theta[-1] == pytest.approx(end, rel=1e-15)
