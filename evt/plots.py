"""Diagnostic plots (matplotlib, Agg canvas; PNG and SVG files), each returning its Figure so
that callers can embed it (e.g. in an HTML report).

* `plot_ecdf`: empirical distribution with the threshold, best observed value, estimated
  optimum and its interval;
* `plot_mean_excess`: mean residual life plot (Coles 2001, section 4.3.1) with its 95% band,
  the chosen threshold and the line implied by the fit;
* `plot_qq`: quantile plot of the excesses against the fitted GPD (Coles 2001, section 4.3.4);
* `plot_profile`: profile log-likelihood of the optimum with the Wilks cut and the interval;
* `plot_sequential`: history of `evt.sequential` (best, estimate, interval, target).

matplotlib is imported only here, and only when a plot is made; pyplot is never used, so no
global backend state is touched.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

    from tasksolve.evt.result import EVTResult, SequentialResult

FORMATS = ("png", "svg")


def _figure(width: float = 6.4, height: float = 4.2) -> tuple[Figure, Any]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def save_figure(fig: Figure, path: str | Path, formats: tuple[str, ...] = FORMATS) -> list[Path]:
    """Write `fig` as ``path`` with each suffix of `formats` (any suffix of `path` is replaced);
    returns the files written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for fmt in formats:
        target = path.with_suffix("." + fmt)
        fig.savefig(target, format=fmt, dpi=120)
        out.append(target)
    return out


def _finish(fig: Figure, path: str | Path | None) -> Figure:
    if path is not None:
        save_figure(fig, path)
    return fig


def _mark_optimum(ax: Any, result: EVTResult) -> None:
    ax.axvline(result.best_observed, color="tab:green", lw=1.2, label="best observed")
    if math.isfinite(result.estimate):
        ax.axvline(result.estimate, color="tab:red", lw=1.2, label="estimated optimum")
    lo, hi = result.lower, result.upper
    if math.isfinite(lo) and math.isfinite(hi):
        ax.axvspan(lo, hi, color="tab:red", alpha=0.12, label=f"{result.confidence:.0%} interval")
    elif math.isfinite(lo) or math.isfinite(hi):
        edge = lo if math.isfinite(lo) else hi
        ax.axvline(edge, color="tab:red", ls=":", lw=1, label=f"{result.confidence:.0%} limit (other side unbounded)")


def plot_ecdf(result: EVTResult, path: str | Path | None = None) -> Figure:
    """Empirical distribution function of the whole sample with the threshold, the best
    observed value, the estimated optimum and its interval marked."""
    fig, ax = _figure()
    x, f = result.ecdf()
    ax.step(x, f, where="post", color="tab:blue", lw=1, label="empirical CDF")
    ax.axvline(result.threshold, color="grey", ls="--", lw=1, label="threshold")
    _mark_optimum(ax, result)
    ax.set_xlabel("value")
    ax.set_ylabel("fraction of the sample at or below")
    ax.set_title(f"Sample (n = {result.n}) and the estimated {'minimum' if result.minimize else 'maximum'}")
    ax.legend(loc="best", fontsize=8)
    return _finish(fig, path)


def plot_mean_excess(result: EVTResult, path: str | Path | None = None) -> Figure:
    """Mean residual life plot with its band, the threshold and the fitted line."""
    fig, ax = _figure()
    me = result.mean_excess()
    ax.plot(me.levels, me.values, color="tab:blue", lw=1, label="mean excess")
    ax.fill_between(
        me.levels,
        me.values - me.half_width,
        me.values + me.half_width,
        color="tab:blue",
        alpha=0.15,
        lw=0,
        label="95% band",
    )
    ax.axvline(result.threshold, color="grey", ls="--", lw=1, label="threshold")
    fitted = result.mean_excess_fit(me.levels)
    if np.isfinite(fitted).any():
        ax.plot(me.levels, fitted, color="tab:red", lw=1.2, label="GPD fit (Coles eq. 4.9)")
    ax.set_xlabel("level")
    ax.set_ylabel("mean distance beyond the level")
    ax.set_title("Mean excess (mean residual life)")
    ax.legend(loc="best", fontsize=8)
    return _finish(fig, path)


def plot_qq(result: EVTResult, path: str | Path | None = None) -> Figure:
    """Quantile plot: sorted excesses against the fitted GPD quantiles."""
    fig, ax = _figure(4.8, 4.6)
    model, emp = result.qq()
    ax.plot(model, emp, "o", ms=3, color="tab:blue", label="excesses")
    top = float(max(np.nanmax(model), np.nanmax(emp)))
    ax.plot([0, top], [0, top], color="grey", lw=1, label="y = x")
    ax.set_xlabel("fitted GPD quantile")
    ax.set_ylabel("empirical quantile")
    ax.set_title(f"QQ plot (xi = {result.xi:.3g}, k = {result.exceedances})")
    ax.legend(loc="best", fontsize=8)
    return _finish(fig, path)


def plot_profile(result: EVTResult, path: str | Path | None = None) -> Figure:
    """Profile log-likelihood of the optimum, the Wilks cut and the interval."""
    fig, ax = _figure()
    opt, ll, cut = result.profile()
    ok = np.isfinite(ll)
    ax.plot(opt[ok], ll[ok], color="tab:blue", lw=1.2, label="profile log-likelihood")
    ax.axhline(cut, color="grey", ls="--", lw=1, label=f"max - chi2(1, {result.confidence:.0%})/2")
    _mark_optimum(ax, result)
    ax.set_xlabel("optimum")
    ax.set_ylabel("log-likelihood")
    ax.set_title("Profile likelihood of the optimum")
    if ok.any():
        span = float(np.max(ll[ok]) - cut)
        ax.set_ylim(cut - 3 * max(span, 1.0), float(np.max(ll[ok])) + 0.3 * max(span, 1.0))
    ax.legend(loc="best", fontsize=8)
    return _finish(fig, path)


def plot_sequential(history: SequentialResult, path: str | Path | None = None) -> Figure:
    """Best observed value, estimated optimum and interval against the sample size."""
    fig, ax = _figure()
    steps = [s for s in history.steps if s.error is None]
    n_all = [s.n for s in history.steps]
    ax.plot(n_all, [s.best for s in history.steps], "o-", color="tab:green", ms=3, label="best observed")
    if steps:
        n = np.array([s.n for s in steps], dtype=float)
        est = np.array([s.estimate for s in steps], dtype=float)
        lo = np.array([s.lower for s in steps], dtype=float)
        hi = np.array([s.upper for s in steps], dtype=float)
        ax.plot(n, np.where(np.isfinite(est), est, np.nan), "o-", color="tab:red", ms=3, label="estimated optimum")
        finite = np.isfinite(lo) & np.isfinite(hi)
        ax.fill_between(
            n,
            np.where(finite, lo, np.nan),
            np.where(finite, hi, np.nan),
            color="tab:red",
            alpha=0.12,
            lw=0,
            label=f"{history.confidence:.0%} interval",
        )
        met = [s for s in steps if s.met]
        if met:
            ax.axvline(met[0].n, color="k", ls=":", lw=1, label="criterion met")
    ax.set_xlabel("sample size n")
    ax.set_ylabel("value")
    ax.set_title(f"Sequential sampling (target gap {history.target_gap:.3g})")
    ax.legend(loc="best", fontsize=8)
    return _finish(fig, path)


def write_plots(result: EVTResult, directory: str | Path, prefix: str = "evt") -> list[Path]:
    """Write the four diagnostic plots of `result` into `directory` (PNG and SVG each);
    returns the files written."""
    directory = Path(directory)
    files: list[Path] = []
    for name, func in (
        ("ecdf", plot_ecdf),
        ("mean_excess", plot_mean_excess),
        ("qq", plot_qq),
        ("profile", plot_profile),
    ):
        fig = func(result)
        files += save_figure(fig, directory / f"{prefix}_{name}")
    return files
