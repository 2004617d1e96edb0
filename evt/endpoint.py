"""Upper endpoint (the optimum) of a GPD fit and its profile-likelihood confidence interval.

Point estimate (Coles 2001, section 4.2): ``x_F = u - sigma / xi`` when ``xi < 0``; for
``xi >= 0`` the tail has no finite endpoint and the estimate is ``inf``.

Interval (Coles 2001, section 2.6.6, Theorem 2.6 and its use in section 4.3.3): the profile
log-likelihood ``l_p(theta)`` of the endpoint distance ``theta = x_F - u`` (closed form, see
`evt.gpd.profile_endpoint`) defines the deviance ``D(theta) = 2 (l_max - l_p(theta))``; by
Wilks' theorem ``D`` is asymptotically chi-square with 1 degree of freedom, so the
``confidence`` interval is ``{theta : D(theta) <= chi2_1(confidence)}``. Its limits are found
by `scipy.optimize.brentq` between grid points that bracket the crossing; we report the
smallest and largest endpoint in the set. The upper limit is ``inf`` when the exponential
limit (xi -> 0-, theta -> inf) is itself inside the set: the data do not exclude an unbounded
tail at that confidence. The lower limit never goes below the largest observation (an endpoint
below an observed value has likelihood zero).

Wilks' theorem needs a regular likelihood: for ``xi <= -0.5`` (irregular, Smith 1985) the
interval is still computed but `evt.analyze` flags it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from tasksolve.evt.gpd import GPDFit, profile_endpoint

#: relative offsets r of the interval search grid, theta = max(y) * (1 + r)
_R_SEARCH = 10.0 ** np.linspace(-10.0, 12.0, 221)


@dataclass(frozen=True)
class EndpointInterval:
    """Endpoint distance from the threshold (excess units, maximisation orientation)."""

    estimate: float
    lower: float
    upper: float
    confidence: float
    #: chi-square(1) quantile used: the deviance limit
    critical: float
    #: the lower limit is the largest observed excess (the deviance stays below the limit there)
    lower_at_data: bool


def endpoint_estimate(fit: GPDFit) -> float:
    """``-sigma/xi`` for xi < 0 (distance from the threshold), ``inf`` otherwise."""
    return fit.theta


def deviance(y: np.ndarray, fit: GPDFit, theta: np.ndarray) -> np.ndarray:
    """``D(theta) = 2 (l_max - l_p(theta))``, clipped at 0 (rounding near the maximum)."""
    return np.maximum(2.0 * (fit.loglik - profile_endpoint(y, theta)), 0.0)


def endpoint_interval(y: np.ndarray, fit: GPDFit, confidence: float = 0.95) -> EndpointInterval:
    """Profile-likelihood interval of the endpoint distance ``theta`` at `confidence`.

    Raises ValueError when `confidence` is not strictly between 0 and 1.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be strictly between 0 and 1")
    y = np.asarray(y, dtype=float)
    ymax = float(y.max())
    crit = float(stats.chi2.ppf(confidence, df=1))
    half = crit / 2.0

    def f_r(logr: float) -> float:  # >= 0 inside the confidence set
        theta = ymax * (1.0 + math.exp(logr))
        return float(profile_endpoint(y, np.array([theta]))[0] - (fit.loglik - half))

    logr = np.log(_R_SEARCH)
    theta_hat = fit.theta
    if math.isfinite(theta_hat) and theta_hat > ymax:
        logr = np.sort(np.append(logr, math.log(theta_hat / ymax - 1.0)))
    values = profile_endpoint(y, ymax * (1.0 + np.exp(logr))) - (fit.loglik - half)
    at_data = float(profile_endpoint(y, np.array([ymax]))[0] - (fit.loglik - half))
    at_inf = float(profile_endpoint(y, np.array([math.inf]))[0] - (fit.loglik - half))
    inside = values >= 0.0
    theta_inf = not math.isfinite(theta_hat) and not fit.boundary
    if not inside.any() and not (at_data >= 0.0 or at_inf >= 0.0):
        if theta_inf:  # every finite endpoint is rejected: the tail is unbounded at this level
            return EndpointInterval(math.inf, math.inf, math.inf, confidence, crit, False)
        # the maximum sits between grid points so tightly that no point is inside: degenerate
        est = ymax if fit.boundary else theta_hat
        return EndpointInterval(est, est, est, confidence, crit, fit.boundary)

    # lower limit
    lower_at_data = at_data >= 0.0
    if lower_at_data:
        lower = ymax
    elif not inside.any():  # only the unbounded limit is inside
        lower = math.inf
    else:
        j = int(np.argmax(inside))
        if j == 0:  # inside within 1e-10 (relative) of the largest excess: that is the limit
            lower, lower_at_data = ymax, True
        else:
            root = optimize.brentq(f_r, logr[j - 1], logr[j], xtol=1e-12, rtol=1e-12)
            lower = ymax * (1.0 + math.exp(root))

    # upper limit
    if at_inf >= 0.0 or theta_inf:
        upper = math.inf
    else:
        j = int(np.flatnonzero(inside)[-1]) if inside.any() else -1
        if j < 0:  # only theta = max y itself is inside (boundary fit)
            upper = ymax
        elif j == logr.size - 1:
            upper = math.inf  # still inside at 1e12 times the largest excess: unbounded in practice
        else:
            root = optimize.brentq(f_r, logr[j], logr[j + 1], xtol=1e-12, rtol=1e-12)
            upper = ymax * (1.0 + math.exp(root))
    estimate = theta_hat
    if fit.boundary:
        estimate = ymax
    return EndpointInterval(estimate, lower, upper, confidence, crit, lower_at_data)


def profile_curve(
    y: np.ndarray, fit: GPDFit, interval: EndpointInterval, points: int = 200
) -> tuple[np.ndarray, np.ndarray]:
    """Endpoint distances and their profile log-likelihood, for plotting around the interval.

    The range runs from the largest excess to a little beyond the upper limit (or, when it is
    infinite, to ten times the estimate, the lower limit or the largest excess, the first of
    them that is finite).
    """
    y = np.asarray(y, dtype=float)
    ymax = float(y.max())
    far = interval.upper
    if not math.isfinite(far):
        finite = [v for v in (interval.estimate, interval.lower) if math.isfinite(v)]
        far = max(finite[0] if finite else ymax, ymax) * 10.0
    far = ymax + 1.25 * (far - ymax)
    if far <= ymax:
        far = ymax * 1.5
    theta = ymax + (far - ymax) * np.linspace(0.0, 1.0, points) ** 2
    return theta, profile_endpoint(y, theta)
