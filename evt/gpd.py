"""Generalized Pareto distribution: likelihood and maximum-likelihood fit of threshold excesses.

Model (Coles 2001, section 4.2, eq. 4.2): the excesses ``y = x - u > 0`` of a threshold ``u``
follow ``H(y) = 1 - (1 + xi * y / sigma) ** (-1 / xi)``; for ``xi < 0`` the support ends at
``-sigma / xi`` and the distribution of ``x`` has the finite upper endpoint
``x_F = u - sigma / xi`` (the optimum we certify).

Likelihood (Coles 2001, section 4.3.2, eq. 4.10)::

    l(xi, sigma) = -k log sigma - (1 + 1/xi) * sum log(1 + xi y_i / sigma)

**Endpoint parametrisation.** With ``theta = x_F - u`` (so ``sigma = -xi * theta``) and, more
generally, ``tau = xi / sigma`` (``tau = -1/theta`` when ``xi < 0``), the likelihood for fixed
``tau`` is maximised in closed form by ``xi(tau) = mean(log(1 + tau y))`` (Grimshaw 1993), which
leaves the one-dimensional profile::

    l*(tau) = -k log(xi(tau) / tau) - k xi(tau) - k          (tau != 0)
    l*(0)   = -k log(mean y) - k                             (exponential limit, xi = 0)

Every fit here maximises ``l*`` over ``tau in (-1/max y, inf)``: a dense grid over the whole
range followed by a bounded Brent refinement (`scipy.optimize.minimize_scalar`), so there is no
starting value to get wrong. The shape is restricted to ``xi >= -1``: below it the likelihood
is unbounded (it grows without limit as the endpoint approaches the largest excess, Coles
2001, section 4.3.2); at ``xi = -1`` the GPD is uniform on ``(0, max y)`` and the fit is
reported as a *boundary* fit.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import optimize

#: Grid of the dimensionless search variable ``s = tau * max(y)``: the negative branch
#: (finite endpoint ``theta = max(y) * (1 + r)``, r from 1e-8 to 1e8), the exponential limit
#: s = 0, and the positive branch (heavy tails) up to s = 1e12 (xi up to about 4 for k = 1000).
_R_GRID = 10.0 ** np.linspace(-8.0, 8.0, 161)
_S_GRID = np.concatenate([-1.0 / (1.0 + _R_GRID), [0.0], 10.0 ** np.linspace(-8.0, 12.0, 201)])
#: Coarser grid for the vectorised bootstrap refits (the refit is refined by Brent anyway).
_R_COARSE = 10.0 ** np.linspace(-6.0, 6.0, 37)
_S_COARSE = np.concatenate([-1.0 / (1.0 + _R_COARSE), [0.0], 10.0 ** np.linspace(-6.0, 12.0, 55)])
#: largest (rows x grid x k) array built at once by `fit_gpd_batch` (~32 MB of float64)
_BATCH_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class GPDFit:
    """Maximum-likelihood GPD fit of `k` excesses (orientation: maximisation, excess units)."""

    xi: float
    sigma: float
    loglik: float
    k: int
    #: the fit runs to the shape boundary xi = -1 (uniform excesses; endpoint = largest excess)
    boundary: bool = False

    @property
    def theta(self) -> float:
        """Distance from the threshold to the upper endpoint, ``-sigma/xi`` (inf when xi >= 0)."""
        if self.xi >= 0.0:
            return math.inf
        return -self.sigma / self.xi


def gpd_loglik(y: np.ndarray, xi: float, sigma: float) -> float:
    """Log-likelihood of excesses `y` under GPD(xi, sigma) (Coles 2001, eq. 4.10; xi=0: eq. 4.11).

    Returns ``-inf`` outside the support (an excess beyond the endpoint) or for sigma <= 0.
    """
    y = np.asarray(y, dtype=float)
    if sigma <= 0.0 or not np.isfinite(sigma):
        return -math.inf
    k = y.size
    if abs(xi) < 1e-12:
        return float(-k * math.log(sigma) - y.sum() / sigma)
    z = xi * y / sigma
    if np.any(z <= -1.0):
        if xi == -1.0 and np.all(z >= -1.0):  # uniform: the density is 1/sigma up to the endpoint
            return float(-k * math.log(sigma))
        return -math.inf
    return float(-k * math.log(sigma) - (1.0 + 1.0 / xi) * np.log1p(z).sum())


def gpd_loglik_endpoint(y: np.ndarray, xi: float, theta: float) -> float:
    """Log-likelihood in the endpoint parametrisation ``sigma = -xi * theta`` (xi < 0)."""
    if not xi < 0.0:
        raise ValueError("the endpoint parametrisation needs xi < 0")
    return gpd_loglik(y, xi, -xi * theta)


def _profile_scaled(ys: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Profile log-likelihood ``l*(tau)`` and ``xi(tau)`` of scaled excesses (max 1), ``s = tau``.

    `ys` has shape (..., k) and `s` shape (..., G); the result has shape (..., G). The shape is
    clipped at -1 (the constrained maximiser in xi is ``max(xi(tau), -1)`` because the
    likelihood is unimodal in xi for fixed tau), where ``l = k log(-s)``.
    """
    k = ys.shape[-1]
    s = np.asarray(s, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        big_l = np.log1p(s[..., :, None] * ys[..., None, :]).sum(axis=-1)
        xi = big_l / k
        ratio = np.where(s != 0.0, big_l / np.where(s != 0.0, k * s, 1.0), 0.0)
        free = -k * np.log(ratio) - big_l - k
        clipped = k * np.log(np.where(s < 0.0, -s, 1.0))
        expo = -k * np.log(ys.mean(axis=-1))[..., None] - k
        ll = np.where(s == 0.0, expo, np.where(xi < -1.0, clipped, free))
        xi = np.where(s == 0.0, 0.0, np.maximum(xi, -1.0))
    ll = np.where(np.isnan(ll), -np.inf, ll)
    return ll, xi


def _to_var(s: float, branch: str) -> float:
    if branch == "neg":
        return math.log(-1.0 / s - 1.0)
    if branch == "pos":
        return math.log(s)
    return s


def _from_var(v: float, branch: str) -> float:
    if branch == "neg":
        return -1.0 / (1.0 + math.exp(v))
    if branch == "pos":
        return math.exp(v)
    return v


def _refine(ys: np.ndarray, grid: np.ndarray, ll: np.ndarray) -> tuple[float, float, bool]:
    """Refine the grid maximiser with bounded Brent; returns (s, loglik_scaled, boundary)."""
    i = int(np.argmax(ll))
    if i == 0:  # xi clipped at -1 and l = k log(-s) increases towards s = -1: uniform fit
        return -1.0, 0.0, True
    lo, hi = grid[i - 1], grid[min(i + 1, grid.size - 1)]
    if lo < 0.0 and hi < 0.0:
        branch = "neg"
    elif lo > 0.0 and hi > 0.0:
        branch = "pos"
    else:
        branch = "lin"
    a, b = sorted((_to_var(lo, branch), _to_var(hi, branch)))

    def objective(v: float) -> float:
        val = _profile_scaled(ys, np.array([_from_var(v, branch)]))[0][0]
        return -val if np.isfinite(val) else 1e300

    best_s, best_ll = float(grid[i]), float(ll[i])
    if b > a:
        res = optimize.minimize_scalar(
            objective, bounds=(a, b), method="bounded", options={"xatol": 1e-10 if branch != "lin" else 1e-14}
        )
        if np.isfinite(res.fun) and -res.fun > best_ll:
            best_s, best_ll = _from_var(float(res.x), branch), float(-res.fun)
    return best_s, best_ll, False


def _fit_from_s(y: np.ndarray, ymax: float, s: float, ll_scaled: float, boundary: bool) -> GPDFit:
    k = y.size
    loglik = ll_scaled - k * math.log(ymax)
    if boundary:
        return GPDFit(xi=-1.0, sigma=ymax, loglik=loglik, k=k, boundary=True)
    if s == 0.0:
        return GPDFit(xi=0.0, sigma=float(y.mean()), loglik=loglik, k=k)
    xi = float(np.log1p(s * y / ymax).mean())
    if xi <= -1.0:
        return GPDFit(xi=-1.0, sigma=-ymax / s, loglik=loglik, k=k, boundary=True)
    return GPDFit(xi=xi, sigma=xi * ymax / s, loglik=loglik, k=k)


def _check_excesses(y: np.ndarray) -> np.ndarray:
    y = np.asarray(y, dtype=float).ravel()
    if y.size < 2:
        raise ValueError("a GPD fit needs at least 2 excesses")
    if not np.all(np.isfinite(y)) or np.any(y < 0.0):
        raise ValueError("excesses must be finite and non-negative")
    if y.max() <= 0.0:
        raise ValueError("excesses are all zero")
    return y


def fit_gpd(y: np.ndarray) -> GPDFit:
    """Maximum-likelihood GPD fit of excesses `y` (location 0), shape restricted to xi >= -1.

    Global over the shape: the profile ``l*(tau)`` is evaluated on a 363-point grid covering
    every endpoint from ``max y * (1 + 1e-8)`` to ``max y * 1e8``, the exponential limit and heavy
    tails, then refined by bounded Brent around the best grid point.
    """
    y = _check_excesses(y)
    ymax = float(y.max())
    ys = y / ymax
    ll, _ = _profile_scaled(ys, _S_GRID)
    s, ll_best, boundary = _refine(ys, _S_GRID, ll)
    return _fit_from_s(y, ymax, s, ll_best, boundary)


def _dprofile_scaled(ys: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Sign-carrying derivative ``d l*/ds`` of the scaled profile, one `s` per row of `ys`."""
    k = ys.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t = 1.0 + s[:, None] * ys
        big_l = np.log(t).sum(axis=1)
        d_l = (ys / t).sum(axis=1)
        free = -k * d_l / big_l + k / s - d_l
        clipped = k / s
        out = np.where(big_l / k < -1.0, clipped, free)
    # at s = 0 the derivative is the limit; its sign only matters away from the optimum
    return np.where(np.isfinite(out), out, 0.0)


def fit_gpd_batch(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Fit each row of `samples` (B, k); returns arrays ``(xi, sigma)`` (used by the bootstrap).

    Same estimator as `fit_gpd`, vectorised over rows: a coarser grid of ``l*``, then the root
    of ``d l*/ds`` is bracketed by the grid neighbours of the best point and located by 45
    bisection steps in the grid variable (log r, log s or s), which is exact to ~1e-13 of the
    bracket. Rows whose best grid point is the xi = -1 edge are boundary (uniform) fits.
    """
    samples = np.asarray(samples, dtype=float)
    b_count, k = samples.shape
    rows = max(1, _BATCH_ELEMENTS // (k * _S_COARSE.size))
    if b_count > rows:  # bound the memory of the (rows, grid, k) array
        parts = [fit_gpd_batch(samples[i : i + rows]) for i in range(0, b_count, rows)]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    ymax = samples.max(axis=1)
    ys = samples / ymax[:, None]
    grid = _S_COARSE
    ll, _ = _profile_scaled(ys, np.broadcast_to(grid, (b_count, grid.size)))
    i = np.argmax(ll, axis=1)
    lo = grid[np.maximum(i - 1, 0)]
    hi = grid[np.minimum(i + 1, grid.size - 1)]
    branch = np.where((lo < 0) & (hi < 0), 0, np.where((lo > 0) & (hi > 0), 1, 2))

    def to_var(s: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(branch == 0, np.log(np.abs(-1.0 / s - 1.0)), np.where(branch == 1, np.log(np.abs(s)), s))

    def from_var(v: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return np.where(
                branch == 0, -1.0 / (1.0 + np.exp(v)), np.where(branch == 1, np.exp(np.minimum(v, 700.0)), v)
            )

    a, b = to_var(lo), to_var(hi)
    a, b = np.minimum(a, b), np.maximum(a, b)
    for _ in range(45):
        mid = 0.5 * (a + b)
        rising = _dprofile_scaled(ys, from_var(mid)) > 0.0
        a = np.where(rising, mid, a)
        b = np.where(rising, b, mid)
    s = from_var(0.5 * (a + b))
    ll_ref, xi_ref = _profile_scaled(ys, s[:, None])
    ll_ref, xi_ref = ll_ref[:, 0], xi_ref[:, 0]
    grid_best = ll[np.arange(b_count), i]
    use_grid = ~(ll_ref >= grid_best)
    s = np.where(use_grid, grid[i], s)
    _, xi_g = _profile_scaled(ys, s[:, None])
    xi = np.where(use_grid, xi_g[:, 0], xi_ref)
    boundary = (i == 0) | (xi <= -1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        sigma = np.where(s == 0.0, samples.mean(axis=1), xi * ymax / np.where(s == 0.0, 1.0, s))
    xi = np.where(boundary, -1.0, xi)
    sigma = np.where(boundary & (i == 0), ymax, sigma)
    return xi, sigma


def profile_endpoint(y: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Profile log-likelihood of the endpoint distance ``theta = x_F - u`` (xi in [-1, 0)).

    ``l_p(theta) = max over xi of l(xi, sigma = -xi * theta)`` in closed form (module docstring);
    ``theta = inf`` gives the exponential limit. Values of theta below ``max y`` are impossible
    (``-inf``).
    """
    y = _check_excesses(y)
    ymax = float(y.max())
    theta = np.atleast_1d(np.asarray(theta, dtype=float))
    out = np.full(theta.shape, -np.inf)
    ok = theta >= ymax
    with np.errstate(divide="ignore"):
        s = np.where(np.isinf(theta), 0.0, -ymax / np.where(ok, theta, 1.0))
    s = np.where(ok & (s <= -1.0), -1.0, s)
    ll, _ = _profile_scaled(y / ymax, s[ok])
    # at theta == max y exactly the clipped branch gives k log(1) = 0 (uniform on (0, max y))
    out[ok] = ll - y.size * math.log(ymax)
    return out


def gpd_cdf(y: np.ndarray, xi: float, sigma: float) -> np.ndarray:
    """GPD distribution function ``H(y)`` (Coles 2001, eq. 4.2), clipped to [0, 1]."""
    y = np.maximum(np.asarray(y, dtype=float), 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if abs(xi) < 1e-12:
            h = -np.expm1(-y / sigma)
        else:
            z = np.maximum(1.0 + xi * y / sigma, 0.0)
            h = 1.0 - z ** (-1.0 / xi)
    return np.clip(np.nan_to_num(h, nan=1.0), 0.0, 1.0)


def gpd_ppf(q: np.ndarray, xi: float, sigma: float) -> np.ndarray:
    """GPD quantile function, the inverse of `gpd_cdf`."""
    q = np.asarray(q, dtype=float)
    if abs(xi) < 1e-12:
        return -sigma * np.log1p(-q)
    return sigma / xi * np.expm1(-xi * np.log1p(-q))


def gpd_rvs(xi: float, sigma: float, size: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Draw GPD(xi, sigma) excesses by inversion."""
    return gpd_ppf(rng.random(size), xi, sigma)


def standard_errors(y: np.ndarray, xi: float, sigma: float) -> dict[str, float] | None:
    """Asymptotic standard errors of (xi, sigma) and their covariance, or None.

    Uses the numerical observed information of statsmodels' `GenericLikelihoodModel` at the
    maximum-likelihood estimate; only meaningful for a regular fit, ``xi > -0.5`` (Coles 2001,
    section 4.3.2: for xi <= -0.5 the classical asymptotic properties fail), so None is
    returned otherwise, or when the information matrix is not positive definite.
    """
    if not xi > -0.5 or not sigma > 0:
        return None
    from statsmodels.base.model import GenericLikelihoodModel

    y = np.asarray(y, dtype=float)

    class _GPD(GenericLikelihoodModel):
        def loglikeobs(self, params: np.ndarray) -> np.ndarray:
            sh, sc = params
            if sc <= 0:
                return np.full(self.endog.shape, -np.inf)
            if abs(sh) < 1e-12:
                return -np.log(sc) - self.endog / sc
            z = 1.0 + sh * self.endog / sc
            with np.errstate(divide="ignore", invalid="ignore"):
                out = -np.log(sc) - (1.0 + 1.0 / sh) * np.log(z)
            return np.where(z > 0, out, -np.inf)

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        model = _GPD(y, extra_params_names=["xi", "sigma"])
        hess = np.asarray(model.hessian(np.array([xi, sigma])), dtype=float)
    if not np.all(np.isfinite(hess)):
        return None
    try:
        cov = np.linalg.inv(-hess)
    except np.linalg.LinAlgError:
        return None
    if not (cov[0, 0] > 0 and cov[1, 1] > 0):
        return None
    return {"xi": math.sqrt(cov[0, 0]), "sigma": math.sqrt(cov[1, 1]), "cov_xi_sigma": float(cov[0, 1])}
