"""What a certification judges and when sampling more cannot change it: the `Sample`, the
`Judgement` (the verdict's evidence and decision) and `decided` -- ASPLOS'12 Figure 13's stopping
rule, on the verdict's own rules (`solver.certify.verdict`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from tasksolve.solver.certify.verdict import SATURATION_SHARE, Decision, Evidence

if TYPE_CHECKING:
    from tasksolve.evt.atom import TopAtom
    from tasksolve.evt.result import EVTResult

#: a `best_found` verdict counts as decided once one more draw beats the best with at most this
#: probability (95% confidence): 299 draws
DECIDED_DRAW_BOUND = 0.01


class Sample(NamedTuple):
    """The sample the verdict judges: its values (the samples' orientation), its EVT analysis
    (None where the sample cannot be analysed) and why not."""

    values: np.ndarray
    analysis: EVTResult | None = None
    why_not: str | None = None


class Judgement(NamedTuple):
    """The verdict's evidence, its decision, and the sample's atom at the top (or None)."""

    evidence: Evidence
    decision: Decision
    atom: TopAtom | None

    @property
    def decided(self) -> bool:
        return decided(self.decision, self.atom.beat_bound if self.atom is not None else None, self.atom)


def decided(decision: Decision, beat_bound: float | None, atom: TopAtom | None = None) -> bool:
    """Sampling more cannot change the verdict: it is positive (a `best_found` only once the
    draw bound is at most `DECIDED_DRAW_BOUND`), it rests on the solver's evidence or a known plan
    that beats the plan by more than the target (rules 1-3: more samples cannot undo them), or the
    search cannot saturate: the best value is an atom (so no GPD interval will be used) whose
    share of the draws is below `verdict.SATURATION_SHARE` even at its upper 95% Clopper-Pearson
    limit (`unsaturable`)."""
    if decision.basis in ("solver", "proven optimum", "known plan"):
        return True  # more samples only add known plans: a plan beaten by more than the target stays beaten
    if not decision.positive:
        return atom is not None and decision.verdict == "not_certified" and unsaturable(atom.hits, atom.n)
    return decision.verdict != "best_found" or (beat_bound is not None and beat_bound <= DECIDED_DRAW_BOUND)


def unsaturable(hits: int, n: int, confidence: float = 0.95) -> bool:
    """The upper `confidence` Clopper-Pearson limit of the best value's share is below
    `SATURATION_SHARE` (one-sided: ``Beta(confidence; hits + 1, n - hits)``)."""
    from scipy import stats

    if hits >= n:
        return False
    return float(stats.beta.ppf(confidence, hits + 1, n - hits)) < SATURATION_SHARE
