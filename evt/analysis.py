"""`analyze`: the peaks-over-threshold certificate of ASPLOS'12 (section 3.3.2) on one sample.

Steps (Coles 2001, chapter 4): validate the sample; orient it (negate for minimisation);
choose the threshold (`evt.threshold`); fit the GPD to the excesses by maximum likelihood
(`evt.gpd`); estimate the endpoint ``u - sigma/xi`` and its profile-likelihood interval
(`evt.endpoint`); test the fit (`evt.gof`); raise the honest flags (`evt.result.FLAG_NOTES`).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from tasksolve.evt.endpoint import endpoint_interval
from tasksolve.evt.errors import EVTError
from tasksolve.evt.gof import goodness_of_fit
from tasksolve.evt.gpd import standard_errors
from tasksolve.evt.result import EVTResult
from tasksolve.evt.sample import as_sample
from tasksolve.evt.threshold import MIN_EXCEEDANCES, choose_threshold

#: share of repeated values beyond the threshold above which the ``ties`` flag is raised
TIES_FRACTION = 0.10
#: goodness-of-fit level below which ``poor_fit`` is raised
GOF_LEVEL = 0.05


def _parse_threshold(threshold: Any) -> float | None:
    if threshold is None:
        return None
    if isinstance(threshold, str):
        text = threshold.strip().lower()
        if text == "auto":
            return None
        try:
            threshold = float(text)
        except ValueError:
            raise EVTError(f"threshold must be 'auto' or a number (got {threshold!r})") from None
    try:
        value = float(threshold)
    except (TypeError, ValueError):
        raise EVTError(f"threshold must be 'auto' or a number (got {threshold!r})") from None
    if not math.isfinite(value):
        raise EVTError("threshold must be finite")
    return value


def _check_options(confidence: Any, max_fraction: Any, gof_bootstrap: Any) -> tuple[float, float]:
    """The options of `analyze` checked: (confidence, max_fraction) as floats, or `EVTError`."""
    try:
        confidence = float(confidence)
        max_fraction = float(max_fraction)
    except (TypeError, ValueError):
        raise EVTError("confidence and max_fraction must be numbers") from None
    if not 0.0 < confidence < 1.0:
        raise EVTError(f"confidence must be strictly between 0 and 1 (got {confidence:g})")
    if not 0.0 < max_fraction < 1.0:
        raise EVTError(f"max_fraction must be strictly between 0 and 1 (got {max_fraction:g})")
    if int(gof_bootstrap) != gof_bootstrap or gof_bootstrap < 0:
        raise EVTError("gof_bootstrap must be a non-negative integer")
    return confidence, max_fraction


def analyze(
    sample: Any,
    *,
    minimize: bool = False,
    confidence: float = 0.95,
    threshold: float | str | None = "auto",
    max_fraction: float = 0.05,
    gof_bootstrap: int = 200,
    seed: int = 0,
) -> EVTResult:
    """Estimate the best possible value (upper endpoint, or lower when `minimize`) of the
    distribution `sample` was drawn from, with a profile-likelihood interval.

    Parameters
    ----------
    sample: any 1-D sequence of at least 20 finite numbers, not all equal.
    minimize: estimate the lower endpoint (latency, cost) instead of the upper one.
    confidence: level of the interval, strictly between 0 and 1.
    threshold: "auto" (or None) for the automatic choice of `evt.threshold`, or a value in the
        sample's units (values beyond it, in the direction of improvement, are the excesses).
    max_fraction: in automatic mode, largest share of the sample beyond the threshold.
    gof_bootstrap: parametric-bootstrap refits for the goodness-of-fit p-values (0: none).
    seed: seed of the bootstrap; results are deterministic for a given seed.

    Raises `EVTError` on bad input. Never prints; numerical warnings are silenced.
    """
    x = as_sample(sample)
    confidence, max_fraction = _check_options(confidence, max_fraction, gof_bootstrap)
    u_given = _parse_threshold(threshold)
    sign = -1.0 if minimize else 1.0
    z = sign * x
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        choice = choose_threshold(z, max_fraction=max_fraction, threshold=None if u_given is None else sign * u_given)
        fit = choice.fit
        u = choice.chosen.threshold
        y = z[z > u] - u
        interval = endpoint_interval(y, fit, confidence)
        gof = goodness_of_fit(y, fit.xi, fit.sigma, bootstrap=int(gof_bootstrap), seed=seed)
        se = standard_errors(y, fit.xi, fit.sigma)

    se_out = _optimum_standard_error(se, fit)

    lo_int, hi_int = u + interval.lower, u + interval.upper
    est_int = u + interval.estimate
    if minimize:
        estimate, lower, upper = -est_int, -hi_int, -lo_int
    else:
        estimate, lower, upper = est_int, lo_int, hi_int

    flags = _flags(x, y, fit, gof, choice, max_fraction)

    return EVTResult(
        n=int(x.size),
        minimize=bool(minimize),
        confidence=confidence,
        best_observed=float(sign * z.max()),
        threshold=float(sign * u),
        exceedances=int(y.size),
        xi=fit.xi,
        sigma=fit.sigma,
        loglik=fit.loglik,
        standard_errors=se_out,
        estimate=float(estimate),
        lower=float(lower),
        upper=float(upper),
        gof=gof,
        flags=tuple(flags),
        threshold_choice=choice,
        max_fraction=max_fraction,
        seed=seed,
        sample=z,
        excesses=y,
        fit=fit,
        interval=interval,
    )


def _optimum_standard_error(se, fit) -> dict[str, float | None] | None:
    """Standard errors of xi, sigma and (by the delta method) of the endpoint ``u - sigma/xi``."""
    if se is None:
        return None
    se_opt = None
    if fit.xi < 0:
        grad = np.array([fit.sigma / fit.xi**2, -1.0 / fit.xi])
        cov = np.array([[se["xi"] ** 2, se["cov_xi_sigma"]], [se["cov_xi_sigma"], se["sigma"] ** 2]])
        var = float(grad @ cov @ grad)
        se_opt = math.sqrt(var) if var > 0 else None
    return {"xi": se["xi"], "sigma": se["sigma"], "optimum": se_opt}


def _flags(x: np.ndarray, y: np.ndarray, fit, gof, choice, max_fraction: float) -> list[str]:
    """The reliability flags of `FLAG_NOTES`, in their order."""
    flags = []
    if fit.xi <= -0.5:
        flags.append("irregular")
    if fit.boundary:
        flags.append("boundary")
    if fit.xi >= 0.0:
        flags.append("heavy_tail")
    if y.size < MIN_EXCEEDANCES:
        flags.append("few_exceedances")
    if 1.0 - np.unique(y).size / y.size > TIES_FRACTION:
        flags.append("ties")
    if y.size / x.size > max_fraction + 1e-12:
        flags.append("large_fraction")
    if gof.bootstrap:
        poor = min(gof.ad_pvalue, gof.ks_pvalue) < GOF_LEVEL
    else:
        poor = not choice.chosen.acceptable
    if poor or (choice.auto and not any(c.acceptable for c in choice.candidates)):
        flags.append("poor_fit")
    return flags
