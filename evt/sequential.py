"""The sequential sampling algorithm of ASPLOS'12 (Radojkovic et al., Figure 13), generic over
a sampler callable.

    sample N_init values; loop:
        analyse the sample (POT, GPD, endpoint interval at `confidence`)
        if the best observed value is within `target_gap` of the optimum: stop (met)
        if max_n values have been drawn: stop (not met)
        draw N_delta more values (fewer if that would pass max_n)

Criterion. "Within target_gap" is judged with the interval's far limit (upper when maximising,
lower when minimising), not the point estimate: ``gap_worst <= target_gap`` (see
`evt.result` for the gap definition). A step whose interval is open on the far side, or whose
sample cannot be analysed yet (e.g. still constant), has no measured gap and never meets the
criterion. Every step is kept in the history.

Caller's stopping rule. With ``stop=`` the caller decides instead: ``stop(sample, result)`` is
called after every analysis (``result`` is None when the sample cannot be analysed, e.g. when its
best value is drawn many times) and the algorithm stops when it returns True -- the caller's
verdict is decided -- or at `max_n`.  This is how a certificate stops only on evidence its own
verdict accepts (never on a fit the verdict would reject); `evt` stays free of the caller's rules.

Exhaustible sources. With ``exhaustible=True`` a sampler may return *fewer* values than asked
(none at all included): its source has ended (e.g. the caller's time budget is spent).  The
algorithm then analyses what it has, asks `stop` once more, and ends; the history's ``stopped``
says why sampling ended -- ``"met"`` (the criterion or the caller's rule), ``"max_n"`` or
``"exhausted"`` -- so a caller can say that a verdict was reached on what the source gave, not
because it was decided.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from tasksolve.evt.analysis import analyze
from tasksolve.evt.errors import EVTError
from tasksolve.evt.result import EVTResult, SequentialResult, SequentialStep


def _draw(sampler: Callable[[int], Any], k: int, exhaustible: bool = False) -> np.ndarray:
    values = np.asarray(sampler(k), dtype=float).ravel()
    if values.size > k or (values.size < k and not exhaustible):
        raise EVTError(f"the sampler returned {values.size} value(s) when asked for {k}")
    if not np.all(np.isfinite(values)):
        raise EVTError("the sampler returned NaN or infinite values")
    return values


def _check(n_init: int, n_delta: int, max_n: int, target_gap: float, confidence: float) -> None:
    """The parameters of `sequential`, or `EVTError`."""
    for name, value in (("n_init", n_init), ("n_delta", n_delta), ("max_n", max_n)):
        if int(value) != value or value < 1:
            raise EVTError(f"{name} must be a positive integer")
    if max_n < n_init:
        raise EVTError("max_n must be at least n_init")
    if not (target_gap > 0 and math.isfinite(target_gap)):
        raise EVTError("target_gap must be a positive number")
    if not 0.0 < confidence < 1.0:
        raise EVTError("confidence must be strictly between 0 and 1")


def _step(res: EVTResult, met: bool) -> SequentialStep:
    """One step of the algorithm from its analysis."""
    return SequentialStep(
        n=res.n,
        best=res.best_observed,
        estimate=res.estimate,
        lower=res.lower,
        upper=res.upper,
        gap_point=res.gap_point,
        gap_worst=res.gap_worst,
        met=met,
        flags=res.flags,
    )


def _failed_step(sample: np.ndarray, best: float, met: bool, error: str) -> SequentialStep:
    """One step whose sample EVT could not analyse (`error` says why)."""
    return SequentialStep(
        n=int(sample.size),
        best=best,
        estimate=None,
        lower=None,
        upper=None,
        gap_point=None,
        gap_worst=None,
        met=met,
        error=error,
    )


def sequential(
    sampler: Callable[[int], Any],
    *,
    n_init: int = 1000,
    n_delta: int = 500,
    target_gap: float = 0.05,
    confidence: float = 0.95,
    max_n: int = 10000,
    minimize: bool = False,
    threshold: float | str | None = "auto",
    max_fraction: float = 0.05,
    gof_bootstrap: int = 0,
    seed: int = 0,
    stop: Callable[[np.ndarray, EVTResult | None], bool] | None = None,
    exhaustible: bool = False,
) -> SequentialResult:
    """Run the sequential algorithm; `sampler(k)` must return `k` new values.

    Stops at the first sample size where ``gap_worst <= target_gap`` (or, with `stop`, where
    ``stop(sample, result)`` is True), when `max_n` values have been drawn, or (`exhaustible`)
    when the sampler returns fewer values than asked (module docstring). `gof_bootstrap` is passed to every analysis (0 by default: the criterion
    does not use goodness of fit; the flags of each step are still recorded).
    Raises `EVTError` on bad parameters or a sampler returning wrong or non-finite values.
    """
    _check(n_init, n_delta, max_n, target_gap, confidence)
    sample = _draw(sampler, int(n_init), exhaustible)
    exhausted = sample.size < n_init
    steps: list[SequentialStep] = []
    last: EVTResult | None = None
    met = False
    while sample.size:
        best = float(sample.min() if minimize else sample.max())
        try:
            res = analyze(
                sample,
                minimize=minimize,
                confidence=confidence,
                threshold=threshold,
                max_fraction=max_fraction,
                gof_bootstrap=gof_bootstrap,
                seed=seed,
            )
        except EVTError as exc:
            met = bool(stop(sample, None)) if stop is not None else False
            steps.append(_failed_step(sample, best, met, str(exc)))
        else:
            last = res
            if stop is not None:
                met = bool(stop(sample, res))
            else:
                met = math.isfinite(res.gap_worst) and res.gap_worst <= target_gap
            steps.append(_step(res, met))
        if met or exhausted or sample.size >= max_n:
            break
        k = min(int(n_delta), int(max_n) - sample.size)
        more = _draw(sampler, k, exhaustible)
        exhausted = more.size < k
        if not more.size:
            break
        sample = np.concatenate([sample, more])
    return SequentialResult(
        steps=steps,
        met=met,
        target_gap=float(target_gap),
        confidence=float(confidence),
        minimize=bool(minimize),
        max_n=int(max_n),
        sample=sample,
        result=last,
        stopped="met" if met else ("exhausted" if exhausted else "max_n"),
    )
