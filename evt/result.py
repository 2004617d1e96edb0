"""Result objects of `evt.analyze` and `evt.sequential`: text summary, JSON-ready dict, and the
data behind every plot, all in the caller's orientation (maximisation or minimisation).

Orientation. Minimisation is handled by negating the sample (the lower endpoint of X is minus
the upper endpoint of -X); results store the internal, maximisation-oriented fit and convert
thresholds, optima and interval limits back (the interval's far limit is the *lower* limit when
minimising). xi and sigma are orientation-free (they describe the tail of the distance beyond
the threshold).

Gaps. With B the best observed value and E the estimated optimum, the point gap is
``|E - B| / |E|``: the relative improvement still possible according to the estimate; the worst
gap replaces E by the interval's far limit (upper when maximising, lower when minimising), i.e.
what can be claimed at the chosen confidence. A gap is ``inf`` whenever the limit it uses is
infinite (heavy tail, or an interval open on the far side) or zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tasksolve.evt.endpoint import EndpointInterval, profile_curve
from tasksolve.evt.gof import GoodnessOfFit, qq_data
from tasksolve.evt.gpd import GPDFit
from tasksolve.evt.meanexcess import MeanExcess, mean_excess
from tasksolve.evt.threshold import RULE, ThresholdChoice

#: what each flag means (shown by `summary()` and included in `to_dict()`)
FLAG_NOTES = {
    "irregular": "xi <= -0.5: the likelihood is irregular, so Wilks' interval and standard errors "
    "are only approximate (no standard errors are reported)",
    "boundary": "the likelihood runs to the boundary xi = -1 (uniform tail): the estimate is the "
    "best observed value itself",
    "heavy_tail": "xi >= 0: the fitted tail has no finite endpoint; the optimum is not bounded by the data",
    "few_exceedances": "fewer than 30 values beyond the threshold: the interval is unreliable",
    "ties": "more than 10% of the values beyond the threshold are repeated: the continuous GPD "
    "model is doubtful (the optimum may have been sampled already)",
    "large_fraction": "more than max_fraction of the sample lies beyond the threshold",
    "poor_fit": "the bootstrap goodness-of-fit tests reject the GPD at the 5% level, or no "
    "threshold candidate passed the 10% screening (without bootstrap: the chosen "
    "threshold failed it)",
}


def _relative_gap(limit: float, best: float) -> float:
    if not math.isfinite(limit):
        return math.inf
    diff = abs(limit - best)
    if diff == 0.0:
        return 0.0
    if limit == 0.0:
        return math.inf
    return diff / abs(limit)


@dataclass
class EVTResult:
    """Peaks-over-threshold estimate of the optimum of a sample (see `evt.analyze`)."""

    n: int
    minimize: bool
    confidence: float
    best_observed: float
    threshold: float
    exceedances: int
    xi: float
    sigma: float
    loglik: float
    #: standard errors of xi, sigma and the optimum (delta method), None if irregular
    standard_errors: dict[str, float | None] | None
    estimate: float
    lower: float
    upper: float
    gof: GoodnessOfFit
    flags: tuple[str, ...]
    threshold_choice: ThresholdChoice
    max_fraction: float
    seed: int
    # internal (maximisation-oriented) data for plots and further analysis
    sample: np.ndarray = field(repr=False)
    excesses: np.ndarray = field(repr=False)
    fit: GPDFit = field(repr=False)
    interval: EndpointInterval = field(repr=False)

    # ---- derived figures ---------------------------------------------------------------
    @property
    def sign(self) -> float:
        return -1.0 if self.minimize else 1.0

    @property
    def fraction_above(self) -> float:
        return self.exceedances / self.n

    @property
    def far_limit(self) -> float:
        """The interval limit on the side of possible improvement (upper when maximising)."""
        return self.lower if self.minimize else self.upper

    @property
    def gap_point(self) -> float:
        return _relative_gap(self.estimate, self.best_observed)

    @property
    def gap_worst(self) -> float:
        return _relative_gap(self.far_limit, self.best_observed)

    @property
    def gap_point_absolute(self) -> float:
        return abs(self.estimate - self.best_observed)

    @property
    def gap_worst_absolute(self) -> float:
        return abs(self.far_limit - self.best_observed)

    # ---- plot data (caller's orientation) ---------------------------------------------
    def ecdf(self) -> tuple[np.ndarray, np.ndarray]:
        """Sorted sample (caller's orientation) and its empirical distribution function."""
        x = np.sort(self.sign * self.sample)
        return x, np.arange(1, x.size + 1) / x.size

    def mean_excess(self) -> MeanExcess:
        """Mean excess beyond each level, in the direction of improvement (above when
        maximising, below when minimising); levels in the caller's orientation."""
        me = mean_excess(self.sample)
        return MeanExcess(self.sign * me.levels, me.values, me.counts, me.half_width)

    def mean_excess_fit(self, levels: np.ndarray) -> np.ndarray:
        """Mean excess implied by the fit (Coles 2001, eq. 4.9) at caller-oriented `levels`
        beyond the threshold (NaN elsewhere or when xi >= 1)."""
        d = self.sign * np.asarray(levels, dtype=float) - self.sign * self.threshold
        if self.xi >= 1.0:
            return np.full(d.shape, np.nan)
        e = (self.sigma + self.xi * d) / (1.0 - self.xi)
        return np.where((d >= 0) & (e > 0), e, np.nan)

    def qq(self) -> tuple[np.ndarray, np.ndarray]:
        """Model and empirical quantiles of the excesses (distance beyond the threshold)."""
        return qq_data(self.excesses, self.xi, self.sigma)

    def profile(self, points: int = 200) -> tuple[np.ndarray, np.ndarray, float]:
        """Optimum values (caller's orientation), their profile log-likelihood, and the cut
        ``l_max - chi2_1(confidence)/2`` defining the interval."""
        theta, ll = profile_curve(self.excesses, self.fit, self.interval, points)
        u_int = self.sign * self.threshold
        return self.sign * (u_int + theta), ll, self.loglik - self.interval.critical / 2.0

    # ---- reports -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (infinities stay floats; `json.dumps` writes them as Infinity,
        the CLI writes "inf")."""
        choice = self.threshold_choice

        def cand(c: Any) -> dict[str, Any]:
            d = c.to_dict()
            d["threshold"] = self.sign * c.threshold
            d["endpoint"] = self.sign * c.endpoint
            d["selected"] = c is choice.chosen
            return d

        return {
            "n": self.n,
            "minimize": self.minimize,
            "best_observed": self.best_observed,
            "threshold": self.threshold,
            "exceedances": self.exceedances,
            "fraction_above": self.fraction_above,
            "xi": self.xi,
            "sigma": self.sigma,
            "loglik": self.loglik,
            "standard_errors": self.standard_errors,
            "optimum": {
                "estimate": self.estimate,
                "lower": self.lower,
                "upper": self.upper,
                "confidence": self.confidence,
                "method": "profile likelihood, Wilks chi-square(1)",
            },
            "gap": {
                "point": self.gap_point,
                "worst": self.gap_worst,
                "point_absolute": self.gap_point_absolute,
                "worst_absolute": self.gap_worst_absolute,
            },
            "gof": self.gof.to_dict(),
            "flags": list(self.flags),
            "flag_notes": {f: FLAG_NOTES[f] for f in self.flags},
            "threshold_choice": {
                "auto": choice.auto,
                "max_fraction": self.max_fraction,
                "rule": RULE if choice.auto else "given by the caller",
                "candidates": [cand(c) for c in choice.candidates],
            },
            "seed": self.seed,
        }

    def summary(self) -> str:
        """A few lines of plain text for a person."""
        goal = "minimisation" if self.minimize else "maximisation"
        pct = (
            f"{self.confidence:.0%}"
            if self.confidence * 100 == round(self.confidence * 100)
            else f"{self.confidence:.3g}"
        )
        choice = self.threshold_choice
        how = f"chosen automatically among {len(choice.candidates)} candidate(s)" if choice.auto else "given"
        se = self.standard_errors or {}

        def se_txt(key: str) -> str:
            v = se.get(key)
            return f" (se {v:.3g})" if v is not None else ""

        lines = [
            f"EVT estimate of the optimum ({goal}), {pct} confidence",
            f"  sample           n = {self.n}, best observed = {self.best_observed:.6g}",
            f"  threshold        {self.threshold:.6g} ({self.exceedances} values beyond, "
            f"{self.fraction_above:.1%}), {how}",
            f"  GPD fit          xi = {self.xi:.4g}{se_txt('xi')}, sigma = {self.sigma:.4g}{se_txt('sigma')}",
            f"  optimum          {self.estimate:.6g}  [{self.lower:.6g}, {self.upper:.6g}]"
            f"  (profile likelihood{_wald(se.get('optimum'))})",
            f"  gap              best observed is {_pct(self.gap_point)} from the estimate, "
            f"{_pct(self.gap_worst)} from the far limit of the interval",
        ]
        g = self.gof
        if g.bootstrap:
            lines.append(
                f"  goodness of fit  Anderson-Darling A2 = {g.ad_statistic:.3g} "
                f"(p = {g.ad_pvalue:.3g}),"
                f" Kolmogorov-Smirnov D = {g.ks_statistic:.3g} (p = {g.ks_pvalue:.3g}); "
                f"{g.bootstrap} bootstrap refits"
            )
        else:
            lines.append(
                f"  goodness of fit  A2 = {g.ad_statistic:.3g}, D = {g.ks_statistic:.3g} (no bootstrap: no p-values)"
            )
        if self.flags:
            lines.append("  flags            " + ", ".join(self.flags))
            for f in self.flags:
                lines.append(f"    - {f}: {FLAG_NOTES[f]}")
        else:
            lines.append("  flags            none")
        return "\n".join(lines)


def _wald(se: float | None) -> str:
    return f"; Wald se {se:.3g}" if se is not None else ""


def _pct(x: float) -> str:
    if not math.isfinite(x):
        return "unbounded (inf)"
    return f"{100.0 * x:.3g}%"


@dataclass(frozen=True)
class SequentialStep:
    """One round of the sequential algorithm (caller's orientation)."""

    n: int
    best: float
    estimate: float | None
    lower: float | None
    upper: float | None
    gap_point: float | None
    gap_worst: float | None
    met: bool
    flags: tuple[str, ...] = ()
    #: why no estimate could be made at this size (e.g. constant sample so far)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "best": self.best,
            "estimate": self.estimate,
            "lower": self.lower,
            "upper": self.upper,
            "gap_point": self.gap_point,
            "gap_worst": self.gap_worst,
            "met": self.met,
            "flags": list(self.flags),
            "error": self.error,
        }


@dataclass
class SequentialResult:
    """History of `evt.sequential`: every step, whether the target was met, the final sample
    and the analysis of the last step that could be analysed."""

    steps: list[SequentialStep]
    met: bool
    target_gap: float
    confidence: float
    minimize: bool
    max_n: int
    sample: np.ndarray = field(repr=False)
    result: EVTResult | None = field(repr=False, default=None)
    #: why sampling ended: "met", "max_n", or "exhausted" (the sampler gave fewer values than asked)
    stopped: str = "max_n"

    @property
    def n(self) -> int:
        return int(self.sample.size)

    def to_dict(self) -> dict[str, Any]:
        return {
            "met": self.met,
            "n": self.n,
            "target_gap": self.target_gap,
            "confidence": self.confidence,
            "minimize": self.minimize,
            "max_n": self.max_n,
            "stopped": self.stopped,
            "steps": [s.to_dict() for s in self.steps],
            "result": self.result.to_dict() if self.result is not None else None,
        }

    def summary(self) -> str:
        head = (
            f"sequential EVT sampling: target gap {_pct(self.target_gap)} at {self.confidence:.0%} confidence, "
            + (f"met at n = {self.n}" if self.met else f"not met after n = {self.n}")
            + (" (the source was exhausted)" if self.stopped == "exhausted" else "")
        )
        rows = [head, "       n          best      estimate    far limit    worst gap"]
        for s in self.steps:
            if s.error:
                rows.append(f"  {s.n:>6}  {s.best:>12.6g}  (no estimate: {s.error})")
                continue
            far = s.lower if self.minimize else s.upper
            rows.append(
                f"  {s.n:>6}  {s.best:>12.6g}  {s.estimate:>12.6g}  {far:>11.6g}  "
                f"{_pct(s.gap_worst):>11}{'  <- met' if s.met else ''}"
            )
        return "\n".join(rows)
