"""What a sample supports when its best value is an atom: hit by several draws.

The peaks-over-threshold model (ASPLOS'12 section 3.3, `evt.analyze`) is a *continuous* tail: a
Generalised Pareto distribution puts no mass on a point, so a sample whose best value is drawn
twice or more is not a sample of it.  It happens whenever the distribution has an atom at the top
of the sample -- above all with local optima of random restarts, where most restarts climb to the
same best plan (the evidence multistart stopping rules build on is how often the best local
optimum was hit: Boender & Rinnooy Kan, "Bayesian stopping rules for multistart global
optimization methods", Math. Programming 37, 1987 -- cited for the setting; their Bayesian rules
are not used here).  A GPD fitted there puts its endpoint at (or just above) the repeated
value whether or not a better plan exists: its interval's coverage is not its stated level.

What such a sample does support, without any model of the values:

* the optimum is *at least* the best value ``M`` (a plan reaching it was measured): the interval
  for the optimum is ``[M, +inf)`` -- open above, since no sample bounds the value of a plan it
  never drew;
* the probability ``q`` that one more draw beats ``M`` is small: for *any* distribution,
  ``P(q > p) <= (1 - p)^n`` (the sample maximum is a distribution-free one-sided tolerance limit:
  Wilks, "Determination of sample sizes for setting tolerance limits", Ann. Math. Stat. 12, 1941;
  proof: with ``t`` the smallest value whose exceedance probability is at most ``p``, ``q > p``
  needs all ``n`` draws below ``t``, each with probability at most ``1 - p``).  So at confidence
  ``c``, ``q <= p_c = 1 - (1 - c)^(1/n)`` (about ``3/n`` at 95%).  The bound holds for discrete
  distributions too (it is conservative there), so its coverage can be checked on any known
  distribution (tests/evt/test_atom.py);
* the Good-Turing estimate of the probability that one more draw gives a value never seen,
  ``N1 / n`` with ``N1`` the values seen exactly once (Good, "The population frequencies of
  species and the estimation of population parameters", Biometrika 40, 1953), is reported as a
  point estimate beside the bound.

Together: "the optimum is ``M``, or better plans exist that together attract at most ``p_c`` of
the draws".  That is a statement about the design's draws, not a gap in the objective's units, so
a certificate built on it cannot claim a plan within a target gap (`solver.certify.verdict`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from tasksolve.evt.errors import EVTError

#: two values closer than this (relative) are the same value (a closed form's equal plans differ
#: by rounding only)
RELATIVE_TIE = 1e-9


@dataclass(frozen=True)
class TopAtom:
    """The best value of a sample hit `hits` >= 2 times, and what that supports."""

    n: int
    best: float  # in the caller's orientation
    hits: int
    singletons: int  # values seen exactly once (Good-Turing's N1)
    confidence: float
    minimize: bool

    @property
    def beat_bound(self) -> float:
        """Upper confidence bound on the probability that one more draw beats `best`."""
        return beat_bound(self.n, self.confidence)

    @property
    def good_turing(self) -> float:
        """Good-Turing estimate of the probability that one more draw gives an unseen value."""
        return self.singletons / self.n

    @property
    def interval(self) -> tuple[float, float]:
        """The optimum's interval: from the best value to the open side of improvement."""
        return (-math.inf, self.best) if self.minimize else (self.best, math.inf)

    def sentence(self, show=lambda v: f"{v:.6g}") -> str:
        return (
            f"{self.hits} of {self.n} samples end on the best value {show(self.best)}; a GPD tail cannot "
            f"model a value hit more than once, so the sample supports only this: the optimum is that "
            f"value, or better plans exist that together attract at most {self.beat_bound:.2%} of the draws "
            f"({self.confidence:.0%} confidence, distribution-free; Good-Turing estimate of an unseen value: "
            f"{self.good_turing:.2%}), and it bounds no value above it"
        )

    def to_dict(self) -> dict[str, Any]:
        lower, upper = self.interval
        return {
            "n": self.n,
            "best": self.best,
            "hits": self.hits,
            "singletons": self.singletons,
            "confidence": self.confidence,
            "beat_bound": self.beat_bound,
            "good_turing": self.good_turing,
            "lower": None if lower == -math.inf else lower,
            "upper": None if upper == math.inf else upper,
            "nulls": {
                "lower" if self.minimize else "upper": "open on the side of improvement: no sample bounds "
                "a plan it never drew"
            },
        }


def beat_bound(n: int, confidence: float) -> float:
    """``1 - (1 - confidence)^(1/n)``: at `confidence`, the chance that a draw beats the maximum
    of `n` iid draws is at most this (any distribution; module docstring)."""
    if n < 1:
        raise EVTError("the sample is empty")
    if not 0.0 < confidence < 1.0:
        raise EVTError(f"confidence must be strictly between 0 and 1 (got {confidence:g})")
    return -math.expm1(math.log1p(-confidence) / n)


def top_atom(sample: Any, *, minimize: bool = False, confidence: float = 0.95) -> TopAtom | None:
    """The sample's best value as an atom (hit at least twice, `RELATIVE_TIE`), else None."""
    x = np.asarray(sample, dtype=float).ravel()
    if x.size == 0 or not np.isfinite(x).all():
        raise EVTError("the sample must hold at least one value, all finite")
    z = -x if minimize else x
    best = float(z.max())
    tie = RELATIVE_TIE * max(abs(best), 1e-300)
    hits = int(np.count_nonzero(z >= best - tie))
    if hits < 2:
        return None
    rounded = np.round(z / tie) if tie > 0 else z
    _, counts = np.unique(rounded, return_counts=True)
    return TopAtom(
        n=int(x.size),
        best=float(-best if minimize else best),
        hits=hits,
        singletons=int(np.count_nonzero(counts == 1)),
        confidence=float(confidence),
        minimize=bool(minimize),
    )
