"""Goodness of fit of the GPD to the threshold excesses (Coles 2001, section 4.3.4).

Statistics, on the excesses sorted ``y_(1) <= ... <= y_(k)`` with ``z_i = H(y_(i))`` under the
fitted GPD:

* Anderson-Darling ``A^2 = -k - (1/k) sum (2i - 1) [log z_i + log(1 - z_(k+1-i))]``
  (weights the tails, where the endpoint is decided);
* Kolmogorov-Smirnov ``D = max_i max(i/k - z_i, z_i - (i-1)/k)``.

A boundary fit (xi = -1) puts the endpoint exactly at the largest excess, whose ``z`` is then 1
by construction; that observation is left out of both statistics (given the maximum, the other
excesses are uniform below it), otherwise A^2 would be infinite for every uniform sample.

Because the parameters are estimated from the same excesses, the classical null tables do not
apply. p-values come from a parametric bootstrap (Stute, Gonzales Manteiga and Presedo Quindimil
1993): `bootstrap` samples of size k are drawn from the fitted GPD, each is refitted by maximum
likelihood (`evt.gpd.fit_gpd_batch`), and the p-value is ``(1 + #{T_b >= T}) / (bootstrap + 1)``.
Seeded, hence deterministic. QQ data follow Coles' quantile plot: ``(H^-1(i/(k+1)), y_(i))``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tasksolve.evt.gpd import fit_gpd_batch, gpd_cdf, gpd_ppf, gpd_rvs

_EPS = 1e-12


def _cdf_batch(y: np.ndarray, xi: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """Row-wise GPD cdf for (B, k) excesses with per-row parameters."""
    xi = xi[:, None]
    sigma = sigma[:, None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        z = np.maximum(1.0 + xi * y / sigma, 0.0)
        safe_xi = np.where(np.abs(xi) < 1e-12, 1.0, xi)
        h = np.where(np.abs(xi) < 1e-12, -np.expm1(-y / sigma), 1.0 - z ** (-1.0 / safe_xi))
    return np.clip(np.nan_to_num(h, nan=1.0), 0.0, 1.0)


def ad_statistic(z_sorted: np.ndarray) -> np.ndarray:
    """Anderson-Darling A^2 of sorted probability-integral transforms (last axis)."""
    z = np.clip(z_sorted, _EPS, 1.0 - _EPS)
    k = z.shape[-1]
    i = np.arange(1, k + 1)
    terms = (2 * i - 1) * (np.log(z) + np.log1p(-z[..., ::-1]))
    return -k - terms.sum(axis=-1) / k


def ks_statistic(z_sorted: np.ndarray) -> np.ndarray:
    """Kolmogorov-Smirnov D of sorted probability-integral transforms (last axis)."""
    k = z_sorted.shape[-1]
    i = np.arange(1, k + 1)
    return np.maximum((i / k - z_sorted).max(axis=-1), (z_sorted - (i - 1) / k).max(axis=-1))


def _statistics(z_sorted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(A^2, D) per row of sorted transforms (B, k); rows ending at z = 1 (boundary fits) are
    evaluated without that last observation (module docstring)."""
    ad, ks = ad_statistic(z_sorted), ks_statistic(z_sorted)
    at_end = z_sorted[:, -1] >= 1.0
    if at_end.any() and z_sorted.shape[1] > 2:
        ad = np.where(at_end, ad_statistic(z_sorted[:, :-1]), ad)
        ks = np.where(at_end, ks_statistic(z_sorted[:, :-1]), ks)
    return ad, ks


def gof_statistics(y: np.ndarray, xi: float, sigma: float) -> tuple[float, float]:
    """(A^2, D) of excesses `y` against GPD(xi, sigma)."""
    z = np.sort(gpd_cdf(np.asarray(y, dtype=float), xi, sigma))[None, :]
    ad, ks = _statistics(z)
    return float(ad[0]), float(ks[0])


@dataclass(frozen=True)
class GoodnessOfFit:
    """Anderson-Darling and Kolmogorov-Smirnov statistics with bootstrap p-values."""

    ad_statistic: float
    ks_statistic: float
    #: None when no bootstrap was run (``bootstrap == 0``)
    ad_pvalue: float | None
    ks_pvalue: float | None
    bootstrap: int
    seed: int

    def to_dict(self) -> dict:
        return {
            "anderson_darling": {"statistic": self.ad_statistic, "p_value": self.ad_pvalue},
            "kolmogorov_smirnov": {"statistic": self.ks_statistic, "p_value": self.ks_pvalue},
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "method": "parametric bootstrap with refitting (parameters estimated)"
            if self.bootstrap
            else "statistics only (no bootstrap requested)",
        }


def null_statistics(
    xi: float, sigma: float, k: int, bootstrap: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(A^2, D) of `bootstrap` samples of size `k` from GPD(xi, sigma), each against its own fit."""
    samples = gpd_rvs(xi, sigma, (bootstrap, k), rng)
    samples = np.maximum(samples, 0.0)
    xis, sigmas = fit_gpd_batch(samples)
    z = np.sort(_cdf_batch(samples, xis, sigmas), axis=1)
    return _statistics(z)


def goodness_of_fit(y: np.ndarray, xi: float, sigma: float, *, bootstrap: int = 200, seed: int = 0) -> GoodnessOfFit:
    """Anderson-Darling and Kolmogorov-Smirnov tests of the fitted GPD.

    `bootstrap` is the number of parametric-bootstrap refits (0: statistics only). The same
    bootstrap samples serve both p-values.
    """
    y = np.asarray(y, dtype=float)
    ad, ks = gof_statistics(y, xi, sigma)
    if bootstrap <= 0:
        return GoodnessOfFit(ad, ks, None, None, 0, seed)
    rng = np.random.default_rng(seed)
    ad_b, ks_b = null_statistics(xi, sigma, y.size, bootstrap, rng)
    p_ad = float((1 + np.sum(ad_b >= ad - 1e-12)) / (bootstrap + 1))
    p_ks = float((1 + np.sum(ks_b >= ks - 1e-12)) / (bootstrap + 1))
    return GoodnessOfFit(ad, ks, p_ad, p_ks, bootstrap, seed)


def qq_data(y: np.ndarray, xi: float, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """Quantile-plot data (Coles 2001, section 4.3.4): model quantiles ``H^-1(i/(k+1))`` and the
    sorted excesses."""
    y = np.sort(np.asarray(y, dtype=float))
    k = y.size
    return gpd_ppf(np.arange(1, k + 1) / (k + 1), xi, sigma), y
