"""The verdict: when a certificate may say `certified`, and why not otherwise.

A verdict that can be wrong is worse than none, so `certified` needs every piece of evidence to
agree; each refusal is one reason with one sentence (docs/design.md, "Certificates").

Evidence (`Evidence`): the plan's value, the EVT estimate of the optimum and its interval
(ASPLOS'12 section 3.3: the upper endpoint of the fitted GPD, profile-likelihood interval), the
EVT flags (`evt.result.FLAG_NOTES`), the sample size, every *known plan* (the best sampled plan,
the solvers' plans), the rigorous bound and the proven optimum when the closed form was solved
by CP-SAT, and the solver steps that failed.

Rules, in order:

1. rigorous bound (closed form only, no failed solver step): when the plan is within the target
   of the bound, the plan is ``certified`` on the bound (a proof, whatever EVT says); when a
   proven optimum exists and the plan is farther from it than the target, ``not_certified`` on
   the proven optimum;
2. ``failed_step`` -- a solver step failed: never certified (the answer may be weaker than shown);
3. ``no_finite_optimum`` -- the fitted tail has no endpoint (xi >= 0);
4. ``estimate_refuted`` -- a known plan (or the proven optimum) is better than the interval's far
   limit: the estimate is wrong, and so would be any verdict drawn from it;
5. ``not_certified`` when the best value is an atom (`evt.atom`: hit by two samples or more, so the
   GPD tail does not hold and the interval is open above), when EVT cannot analyse the sample, when the sample is smaller than `MIN_SAMPLES` (the threshold rule's 30
   excesses at 5%), when a flag of `BLOCKING_FLAGS` is raised, or when the plan may lose more
   than the target against the far limit;
6. ``certified`` otherwise.

Gaps are signed, ``(plan - reference) / |reference|``: negative when the plan's figure is below
the reference (a throughput short of the optimum, or a latency shorter than the estimate).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: the threshold rule (`evt.threshold`) keeps at most 5% of the sample beyond the threshold and
#: trusts the interval from 30 excesses on: below 600 plans it cannot do both
MIN_SAMPLES = 600

#: one sentence per EVT flag that forbids an EVT-based `certified`
BLOCKING_FLAGS = {
    "ties": "many values beyond the threshold are repeated, so the continuous tail model does not hold "
    "(the sample may already contain the optimum, or may be stuck on a plateau below it)",
    "poor_fit": "the goodness-of-fit tests reject the Generalised Pareto tail, so its endpoint is not "
    "a trustworthy estimate of the optimum",
    "boundary": "the fit runs to the uniform-tail boundary (xi = -1), so the estimate is just the best "
    "sampled value and says nothing beyond it",
    "irregular": "the shape xi is at most -0.5, where the likelihood is irregular and the interval's "
    "confidence is not guaranteed",
    "few_exceedances": "fewer than 30 values lie beyond the threshold, too few for the interval",
    "large_fraction": "more than 5% of the sample lies beyond the threshold, so the values fitted are not the tail",
    "heavy_tail": "the fitted tail has no finite endpoint (xi >= 0)",
}

VERDICTS = {
    "certified": "the plan is within the target of the optimum",
    "not_certified": "the evidence does not show the plan within the target of the optimum",
    "estimate_refuted": "a known plan is better than the estimated optimum's far limit: the estimate is wrong",
    "no_finite_optimum": "the sample's tail has no finite endpoint: there is no optimum to compare with",
}


@dataclass
class Evidence:
    """What the verdict is drawn from (values in the objective's unit: packets/s or seconds)."""

    plan_value: float
    minimize: bool
    target_gap: float
    n: int
    estimate: float
    lower: float
    upper: float
    confidence: float = 0.95
    flags: tuple[str, ...] = ()
    known: list[tuple[str, float]] = field(default_factory=list)  # (which plan, value)
    bound: float | None = None  # rigorous bound on the optimum (closed form only)
    bound_source: str | None = None
    proven_optimum: float | None = None  # when CP-SAT proved optimality on the closed form
    failed_steps: list[str] = field(default_factory=list)
    oracle: str = "analytic"
    unanalysable: str | None = None  # why EVT could not analyse the sample (then no estimate)
    top_atom: str | None = None  # `evt.TopAtom.sentence()` when the best value is hit twice or more

    @property
    def far(self) -> float:
        return self.lower if self.minimize else self.upper


@dataclass
class Decision:
    verdict: str
    basis: str  # "bound", "proven optimum" or "EVT estimate"
    sentence: str  # the verdict in one sentence
    reasons: list[dict[str, str]]  # {"code", "sentence"}: why (each one sentence)
    gaps: dict[str, float | None]  # signed gaps of the plan to the estimate, far limit, bound, optimum
    words: list[str]  # the signed gaps in words

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def signed_gap(value: float, reference: float | None) -> float | None:
    """``(value - reference) / |reference|``; None without a finite, non-zero reference."""
    if reference is None or not math.isfinite(reference) or reference == 0 or not math.isfinite(value):
        return None
    return (value - reference) / abs(reference)


def loss(value: float, reference: float | None, minimize: bool) -> float:
    """What the plan may lose against `reference` (positive: the reference is better)."""
    gap = signed_gap(value, reference)
    if gap is None:
        return math.inf
    return gap if minimize else -gap


def in_words(gap: float | None, what: str) -> str:
    if gap is None:
        return f"no finite {what} to compare with"
    if gap == 0:
        return f"the plan equals the {what}"
    return f"the plan is {abs(gap):.2%} {'below' if gap < 0 else 'above'} the {what}"


def _better(a: float, b: float, minimize: bool) -> bool:
    return a < b if minimize else a > b


def decide(ev: Evidence, show: Callable[[float], str] = lambda v: f"{v:.6g}") -> Decision:
    """The verdict of the module docstring."""
    far = ev.far
    gaps = {
        "estimate": signed_gap(ev.plan_value, ev.estimate),
        "far_limit": signed_gap(ev.plan_value, far),
        "bound": signed_gap(ev.plan_value, ev.bound),
        "proven_optimum": signed_gap(ev.plan_value, ev.proven_optimum),
    }
    words = [
        in_words(gaps["estimate"], "estimated optimum"),
        in_words(gaps["far_limit"], f"far limit of the {ev.confidence:.0%} interval"),
    ]
    if ev.bound is not None:
        words.append(in_words(gaps["bound"], f"proven bound ({ev.bound_source or 'CP-SAT'})"))
    if ev.proven_optimum is not None:
        words.append(in_words(gaps["proven_optimum"], "proven optimum"))
    reasons: list[dict[str, str]] = []

    def say(code: str, sentence: str) -> None:
        reasons.append({"code": code, "sentence": sentence})

    def done(verdict: str, basis: str, sentence: str) -> Decision:
        return Decision(verdict, basis, sentence, reasons, gaps, words)

    for step in ev.failed_steps:
        say("failed_step", f"the solver step '{step}' failed, so the plan and the bound may be weaker than shown")
    if ev.bound is None:
        say(
            "no_bound",
            "no rigorous bound exists for the "
            + ("simulation" if ev.oracle == "des" else f"{ev.oracle} oracle")
            + "; the EVT estimate of the optimum stands in for it",
        )
    target = f"{ev.target_gap:.2%}"
    heavy = "heavy_tail" in ev.flags
    if ev.top_atom:
        say("top_atom", ev.top_atom)
    if ev.unanalysable:
        say("unanalysable", f"EVT cannot analyse the sample ({ev.unanalysable}), so there is no estimate")
    refuters = [(label, value) for label, value in ev.known if math.isfinite(far) and _better(value, far, ev.minimize)]
    if ev.proven_optimum is not None and math.isfinite(far) and _better(ev.proven_optimum, far, ev.minimize):
        refuters.append(("proven optimum", ev.proven_optimum))
    if heavy:
        say("heavy_tail", BLOCKING_FLAGS["heavy_tail"])
    elif refuters:
        label, value = max(refuters, key=lambda r: -r[1] if ev.minimize else r[1])
        say(
            "refuted",
            f"the {label} ({show(value)}) is better than the interval's far limit ({show(far)}), "
            "so the EVT estimate is refuted",
        )
    if ev.n < MIN_SAMPLES:
        say(
            "small_sample",
            f"the sample has {ev.n} plans; the threshold rule needs at least {MIN_SAMPLES} "
            "(30 values beyond a threshold that leaves at most 5% of the sample above it)",
        )
    for flag in ev.flags:
        if flag in BLOCKING_FLAGS and flag != "heavy_tail":
            say(flag, f"{flag}: {BLOCKING_FLAGS[flag]}")
    if not heavy and not refuters and not ev.unanalysable and loss(ev.plan_value, far, ev.minimize) > ev.target_gap:
        say("gap", f"{words[1]}: it may lose more than the {target} target")

    # rigorous evidence first (closed form only), then the EVT estimate
    if not ev.failed_steps and ev.bound is not None and loss(ev.plan_value, ev.bound, ev.minimize) <= ev.target_gap:
        return done(
            "certified", "bound", f"certified: {words[2]}, within the {target} target: a proof on the closed form"
        )
    if ev.proven_optimum is not None and loss(ev.plan_value, ev.proven_optimum, ev.minimize) > ev.target_gap:
        sentence = f"{in_words(gaps['proven_optimum'], 'proven optimum')}, more than the {target} target"
        reasons.insert(0, {"code": "below_optimum", "sentence": sentence})
        return done("not_certified", "proven optimum", f"not certified: {sentence}")
    if heavy:
        return done("no_finite_optimum", "EVT estimate", "no verdict: " + VERDICTS["no_finite_optimum"])
    if refuters:
        return done(
            "estimate_refuted",
            "EVT estimate",
            "estimate refuted: " + next(r["sentence"] for r in reasons if r["code"] == "refuted"),
        )
    blocking = [r for r in reasons if r["code"] != "no_bound"]
    if blocking:
        return done("not_certified", "EVT estimate", "not certified: " + blocking[0]["sentence"])
    return done(
        "certified",
        "EVT estimate",
        f"certified: {words[1]}, within the {target} target at {ev.confidence:.0%} confidence",
    )
