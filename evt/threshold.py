"""Threshold choice for peaks over threshold (Coles 2001, section 4.3.1; ASPLOS'12 section 3.3.2).

Candidates. With ``n`` observations and ``k_max = floor(max_fraction * n)`` (at most
`max_fraction` of the sample above the threshold, 5% by default as in ASPLOS'12), the candidates
leave ``k`` observations above them for up to `CANDIDATES` values of k evenly spaced between
``k_lo = max(min(MIN_EXCEEDANCES, k_max), ceil(k_max / 5))`` and ``k_max``; the threshold of a
candidate is the (k+1)-th largest value, so exactly k values lie strictly above it (fewer with
ties). When ``k_max < MIN_FIT`` the sample is too small for the fraction: a single candidate with
``MIN_FIT`` excesses is used and `evt.analyze` flags ``large_fraction``.

Statistics of each candidate (all exposed in the result): the GPD fit, the Anderson-Darling
statistic A^2 of its excesses against that fit (`evt.gof`), and the linearity of the mean
excess above it, measured as the RMS standardised deviation from the line the fit implies
(`evt.meanexcess.linearity_deviation`).

Rule. A candidate is *acceptable* when neither statistic exceeds its 10% critical value under
the GPD with estimated parameters (`critical_values`: the 90% quantiles of both statistics
for exact GPD samples, interpolated in xi; they depend on xi and hardly on k). Among
acceptable candidates the one with the most excesses is chosen (the lowest acceptable
threshold: least variance without detectable misfit, the idea of the sequential threshold
tests of Choulakian and Stephens 2001 and Bader et al. 2018). If no candidate is acceptable,
the one whose worse statistic is smallest relative to its critical value is chosen and the
result is flagged ``poor_fit``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from tasksolve.evt.errors import EVTError
from tasksolve.evt.gof import gof_statistics
from tasksolve.evt.gpd import GPDFit, fit_gpd, gpd_rvs
from tasksolve.evt.meanexcess import linearity_deviation

#: fewest excesses for which a fit is attempted at all
MIN_FIT = 10
#: fewest excesses for which the asymptotic (Wilks) interval is trusted; below: few_exceedances
MIN_EXCEEDANCES = 30
#: number of threshold candidates examined in automatic mode
CANDIDATES = 10
#: screening level of the rule
SCREEN_LEVEL = 0.10

RULE = (
    "candidates leave k = k_lo..k_max values above (k_max = floor(max_fraction*n)); a candidate "
    "is acceptable when its Anderson-Darling A^2 and its mean-excess deviation are both below "
    "their 10% critical values under the fitted GPD; the acceptable candidate with the most "
    "excesses is chosen, else the best-fitting one (flag poor_fit)"
)

# 90% quantiles of A^2 and of the mean-excess deviation for exact GPD samples of k = 100
# excesses with both parameters estimated; produced by
# ``simulate_critical_values(_XI_TABLE, k=100, reps=10000, seed=0)``.
# (2-4 minutes on one core; the tests re-check a few entries with fewer replications).
_XI_TABLE = np.array([-1.0, -0.9, -0.8, -0.7, -0.6, -0.5, -0.4, -0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3, 0.4, 0.5])
_AD_CRIT = np.array(
    [1.57, 1.232, 1.156, 1.077, 1.006, 0.975, 0.916, 0.885, 0.853, 0.808, 0.79, 0.763, 0.746, 0.724, 0.705, 0.686]
)
_ME_CRIT = np.array(
    [1.373, 1.109, 1.028, 0.995, 0.974, 0.943, 0.902, 0.857, 0.807, 0.731, 0.665, 0.581, 0.509, 0.451, 0.41, 0.372]
)


def simulate_critical_values(
    xi_values: np.ndarray, *, k: int = 100, reps: int = 10000, level: float = 1.0 - SCREEN_LEVEL, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Quantile `level` of A^2 and of the mean-excess deviation under GPD(xi, 1) samples of
    size `k`, each statistic computed against the sample's own maximum-likelihood fit."""
    from tasksolve.evt.gof import null_statistics

    ad_q, me_q = [], []
    for i, xi in enumerate(np.asarray(xi_values, dtype=float)):
        rng = np.random.default_rng([seed, i])
        ad_b, _ = null_statistics(float(xi), 1.0, k, reps, rng)
        ad_q.append(float(np.quantile(ad_b, level)))
        rng = np.random.default_rng([seed, i, 1])
        devs = []
        for _ in range(reps):
            y = gpd_rvs(float(xi), 1.0, k, rng)
            fit = fit_gpd(y)
            devs.append(linearity_deviation(y, fit.xi, fit.sigma))
        devs = np.asarray(devs)
        me_q.append(float(np.quantile(devs[np.isfinite(devs)], level)) if np.isfinite(devs).any() else math.nan)
    return np.asarray(ad_q), np.asarray(me_q)


def critical_values(xi: float) -> tuple[float, float]:
    """10% critical values (A^2, mean-excess deviation) at shape `xi` (linear interpolation in
    the table, clamped at its ends; NaN for the mean excess where it is undefined)."""
    x = min(max(xi, _XI_TABLE[0]), _XI_TABLE[-1])
    ad = float(np.interp(x, _XI_TABLE, _AD_CRIT))
    ok = np.isfinite(_ME_CRIT)
    me = float(np.interp(x, _XI_TABLE[ok], _ME_CRIT[ok])) if xi < 0.5 else math.nan
    return ad, me


@dataclass(frozen=True)
class Candidate:
    """One threshold and the statistics that decided for or against it (maximisation
    orientation; `evt.result` converts thresholds and endpoints back for minimisation)."""

    threshold: float
    exceedances: int
    fraction: float
    xi: float
    sigma: float
    endpoint: float
    ad_statistic: float
    ad_critical: float
    me_deviation: float
    me_critical: float
    acceptable: bool

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class ThresholdChoice:
    """All candidates, the index of the chosen one, and whether the choice was automatic."""

    candidates: tuple[Candidate, ...]
    selected: int
    auto: bool
    fits: tuple[GPDFit, ...]

    @property
    def chosen(self) -> Candidate:
        return self.candidates[self.selected]

    @property
    def fit(self) -> GPDFit:
        return self.fits[self.selected]


def _evaluate(xs: np.ndarray, u: float) -> tuple[Candidate, GPDFit] | None:
    y = xs[xs > u] - u
    if y.size < 2 or y.max() <= 0.0:
        return None
    fit = fit_gpd(y)
    ad, _ = gof_statistics(y, fit.xi, fit.sigma)
    dev = linearity_deviation(y, fit.xi, fit.sigma)
    ad_c, me_c = critical_values(fit.xi)
    ok = ad <= ad_c and (not math.isfinite(dev) or not math.isfinite(me_c) or dev <= me_c)
    cand = Candidate(
        threshold=float(u),
        exceedances=int(y.size),
        fraction=y.size / xs.size,
        xi=fit.xi,
        sigma=fit.sigma,
        endpoint=float(u + fit.theta),
        ad_statistic=ad,
        ad_critical=ad_c,
        me_deviation=dev,
        me_critical=me_c,
        acceptable=bool(ok),
    )
    return cand, fit


def candidate_counts(n: int, max_fraction: float) -> list[int]:
    """Numbers of excesses examined in automatic mode, largest first (module docstring)."""
    k_max = int(math.floor(max_fraction * n + 1e-9))
    if k_max < MIN_FIT:
        return [min(MIN_FIT, n - 1)]
    k_lo = max(min(MIN_EXCEEDANCES, k_max), int(math.ceil(k_max / 5)))
    ks = np.unique(np.round(np.linspace(k_lo, k_max, CANDIDATES)).astype(int))
    return sorted((int(k) for k in ks), reverse=True)


def choose_threshold(
    sample: np.ndarray, *, max_fraction: float = 0.05, threshold: float | None = None
) -> ThresholdChoice:
    """Choose (or evaluate the given) threshold for a sample in maximisation orientation.

    Raises `EVTError` when the given threshold leaves fewer than `MIN_FIT` values above it, or
    when no candidate has at least two distinct excesses.
    """
    xs = np.sort(np.asarray(sample, dtype=float))
    n = xs.size
    if threshold is not None:
        above = int(np.sum(xs > threshold))
        if above < MIN_FIT:
            raise EVTError(f"threshold {threshold:g} leaves {above} value(s) beyond it; at least {MIN_FIT} are needed")
        res = _evaluate(xs, float(threshold))
        if res is None:
            raise EVTError(f"threshold {threshold:g} leaves no spread beyond it")
        return ThresholdChoice((res[0],), 0, False, (res[1],))

    cands: list[Candidate] = []
    fits: list[GPDFit] = []
    seen: set[float] = set()
    for k in candidate_counts(n, max_fraction):
        u = float(xs[n - k - 1])
        # with ties at the top, step down to a level that leaves at least MIN_FIT values above
        while np.sum(xs > u) < min(MIN_FIT, n - 1):
            below = xs[xs < u]
            if below.size == 0:
                break
            u = float(below[-1])
        if u in seen:
            continue
        seen.add(u)
        res = _evaluate(xs, u)
        if res is not None:
            cands.append(res[0])
            fits.append(res[1])
    if not cands:
        raise EVTError("no threshold leaves at least two distinct values above it")
    acceptable = [i for i, c in enumerate(cands) if c.acceptable]
    if acceptable:
        sel = max(acceptable, key=lambda i: (cands[i].exceedances, -i))
    else:

        def badness(c: Candidate) -> float:
            r = c.ad_statistic / c.ad_critical
            if math.isfinite(c.me_deviation) and math.isfinite(c.me_critical):
                r = max(r, c.me_deviation / c.me_critical)
            return r

        sel = min(range(len(cands)), key=lambda i: badness(cands[i]))
    return ThresholdChoice(tuple(cands), sel, True, tuple(fits))
