"""When sampling may stop: the verdict is decided (`decided`), on the verdict's own rules.

`solver.certify.run` asks this at every look of the sequential algorithm (`evt.sequential`'s
``stop``); the time budget (`solver.certify.budget`) is the other way sampling ends.
"""

from __future__ import annotations

from tasksolve.solver.certify.verdict import SATURATION_SHARE, Decision

#: a `best_found` verdict counts as decided once one more draw beats the best with at most this
#: probability (95% confidence): 299 draws
DECIDED_DRAW_BOUND = 0.01


def decided(decision: Decision, beat_bound: float | None, atom=None) -> bool:
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
