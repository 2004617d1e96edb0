"""Assemble the evidence and the typed certificate from one certification run.

`solver.certify.run` samples; this module turns what it measured into the verdict's `Evidence`
(`solver.certify.verdict`) and the typed `Certificate` (`solver.certify.certificate`): the known
plans (each with its half-width), the bounds (each labelled with the oracle it bounds), what the
draws are and what the draw bound covers, the optimum (the GPD's endpoint interval, or the
atom's ``[best, open)``), and the baselines.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tasksolve.solver.certify.bounds import Bound
from tasksolve.solver.certify.certificate import (
    Baseline,
    BoundSummary,
    Gaps,
    KnownPlanRow,
    Optimum,
    Reason,
    TopAtomSummary,
)
from tasksolve.solver.certify.known import KnownPlan
from tasksolve.solver.certify.verdict import Decision, Evidence, Saturation
from tasksolve.specs.oracles import noun

if TYPE_CHECKING:
    from tasksolve.evt.atom import TopAtom
    from tasksolve.solver.certify.judgement import Sample
    from tasksolve.solver.certify.noisy import NoisyEvidence

#: how far above the far end an atom's interval is open, in words (the JSON's null reason)
OPEN_ABOVE = (
    "open on the side of improvement: the best value is hit by several draws, and no sample bounds a plan it never drew"
)


def draws_and_cover(design: str, kind: str, pipeline: bool) -> tuple[str, str]:
    """(what one draw is, what the draw bound covers), in words (item of the certificate)."""
    oracle = noun(kind)
    if design == "random":
        what = "random pipeline plans" if pipeline else "uniform random plans"
        return what, f"{what} measured on the {oracle}"
    if pipeline:
        return (
            "local-search restarts",
            "local optima of the pipeline closed form from random pipeline plans, each measured on the "
            f"{oracle} -- not every plan of that oracle",
        )
    if kind == "analytic":
        return "local-search restarts", "local optima of the closed form from uniform random starts"
    from tasksolve.solver.certify.designs import SCREEN

    return (
        "local-search restarts",
        f"local optima of the closed form from uniform random starts, each screened on the {oracle} "
        f"(the best of the local optimum and its {SCREEN - 1} best neighbours by the closed form) -- a statement "
        f"about these restarts, not about every plan of the {oracle}",
    )


def bound_summaries(bounds: list[Bound], oracle_kind: str) -> list[BoundSummary]:
    out = []
    for bound in bounds:
        applies = bound.oracle == oracle_kind
        model, here = noun(bound.oracle), noun(oracle_kind)
        label = f"rigorous bound on the {model}" if applies else f"the {model}'s bound (not a bound on the {here})"
        if applies and bound.noisy:
            label = f"bound on the {model} ({bound.confidence:.0%} simultaneous upper limits)"
        if not applies and bound.proven_optimum is not None:
            # the value is the bound, the proven optimum is printed beside it: one label for both
            label = f"the {model}'s bound and proven optimum (neither bounds the {here})"
        out.append(
            BoundSummary(
                label=label,
                oracle=bound.oracle,
                value=bound.value,
                source=bound.source,
                status=bound.status,
                proven_optimum=bound.proven_optimum,
                objective=bound.objective,
                applies=applies,
                failed_steps=list(bound.failed_steps),
                plan_bound=bound.plan_value,
                nulls={"plan_bound": bound.plan_note} if bound.plan_note else {},
            )
        )
    return out


@dataclass(frozen=True)
class Judging:
    """How a sample is judged: the objective's direction, the target gap, the confidence, the
    bounds (each on its oracle), the oracle the plans were measured on, what one draw is (in
    words), the formatter of a figure, and a stochastic oracle's re-measurement (or None)."""

    minimize: bool
    target_gap: float
    confidence: float
    bounds: Sequence[Bound]
    oracle_kind: str
    draws: str
    show: Callable[[float], str] = str
    noisy: NoisyEvidence | None = None
    space: str = ""  # the plans judged, where not every plan (`verdict.Evidence.space`)


def evidence(
    sample: Sample, atom: TopAtom | None, plan: KnownPlan, known: list[KnownPlan], judging: Judging
) -> Evidence:
    """What the verdict rules decide from: the `sample` (its values, analysis and why not), its
    `atom` at the top, the `plan`'s value and half-width and the `known` plans.  When the best
    value is an atom (`evt.atom`), the GPD's interval is replaced by what the sample supports: the
    best value, open on the side of improvement, and the saturation (hits, draw bound).  On a
    stochastic oracle (``judging.noisy``, a `solver.certify.noisy.NoisyEvidence`) the first known
    plan, the sampled best, is replaced by its re-measurement: its fresh mean and half-width."""
    analysis, why_not, values = sample.analysis, sample.why_not, sample.values
    minimize, confidence, show, noisy = judging.minimize, judging.confidence, judging.show, judging.noisy
    if noisy is not None and noisy.yardstick is not None and known and values.size:
        yard = noisy.yardstick
        known = [KnownPlan(f"{yard.label} (re-measured)", yard.yardstick_mean, yard.yardstick_half_width), *known[1:]]
    nan = math.nan
    estimate, lower, upper = (
        (nan, nan, nan) if analysis is None else (analysis.estimate, analysis.lower, analysis.upper)
    )
    saturation = None
    if atom is not None:
        estimate, (lower, upper) = atom.best, atom.interval
        saturation = Saturation(atom.best, atom.hits, atom.n, atom.beat_bound, confidence, judging.draws)
    top_sentence = atom.sentence(show) if atom is not None else None
    if noisy is not None and atom is not None and noisy.best_sampled() is not None:
        from tasksolve.solver.certify.noisy import atom_sentence

        # the atom's figure is the sampled best (biased upward): its re-measurement stands for it
        estimate, half = noisy.best_sampled()
        lower, upper = (-math.inf, estimate + half) if minimize else (estimate - half, math.inf)
        top_sentence = atom_sentence(atom, show) if atom is noisy.atom else top_sentence
    failed = [step for b in judging.bounds for step in b.failed_steps]
    return Evidence(
        plan_value=plan.value,
        plan_half_width=plan.half_width or 0.0,
        minimize=minimize,
        target_gap=judging.target_gap,
        n=int(values.size),
        estimate=estimate,
        lower=lower,
        upper=upper,
        confidence=confidence,
        flags=("unanalysable",) if analysis is None else tuple(analysis.flags),
        known=known,
        unanalysable=why_not if atom is None else None,
        top_atom=top_sentence,
        saturation=saturation,
        bounds=list(judging.bounds),
        failed_steps=sorted(set(failed)),
        oracle=judging.oracle_kind,
        noisy=noisy,
        space=judging.space,
    )


def optimum(ev: Evidence, atom, values: np.ndarray, confidence: float, why_not: str | None) -> Optimum:
    from tasksolve import evt

    nulls: dict[str, str] = {}
    if atom is not None:
        source = "best value (atom: hit by several draws)"
        nulls["lower" if ev.minimize else "upper"] = OPEN_ABOVE
        top = TopAtomSummary(
            atom.n, atom.best, atom.hits, atom.singletons, atom.confidence, atom.beat_bound, atom.good_turing
        )
    elif math.isfinite(ev.estimate) or "heavy_tail" in ev.flags:
        source = "GPD endpoint, profile-likelihood interval (ASPLOS'12 section 3.3)"
        top = None
        if "heavy_tail" in ev.flags:
            why = "the fitted tail has no finite end (xi >= 0)"
            nulls.update({"estimate": why, "lower" if ev.minimize else "upper": why})
    else:
        source, top = "none", None
        why = f"EVT could not analyse the sample ({why_not})" if why_not else "no estimate"
        nulls.update({"estimate": why, "lower": why, "upper": why})
    return Optimum(
        estimate=ev.estimate,
        lower=ev.lower,
        upper=ev.upper,
        confidence=confidence,
        source=source,
        top_atom=top,
        beat_bound=evt.beat_bound(int(values.size), confidence) if values.size else None,
        nulls=nulls,
    )


def gaps(decision: Decision) -> Gaps:
    g = decision.gaps
    interval = None
    if g.get("measured_best_lower") is not None:
        interval = [g["measured_best_lower"], g["measured_best_upper"]]
    return Gaps(
        g["estimate"],
        g["far_limit"],
        g["bound"],
        g["proven_optimum"],
        list(decision.words),
        g.get("measured_best"),
        interval,
    )


def reasons(decision: Decision) -> list[Reason]:
    return [Reason(r["code"], r["sentence"]) for r in decision.reasons]


def known_list(known: list[KnownPlan]) -> list[KnownPlanRow]:
    return [KnownPlanRow.of(k) for k in known]


def baselines(
    spec, values: np.ndarray, balanced: int, seed: int, oracle, objective: str, design: str = "random"
) -> list[Baseline]:
    from tasksolve.solver.binding.samplers import balanced_plans
    from tasksolve.specs import Plan
    from tasksolve.specs.objective import Objective

    sense = Objective.of(objective)
    worst = sense.worst(values)
    name = "random" if design == "random" else "local optima"
    rows = [Baseline(f"{name} (average)", float(values.mean())), Baseline(f"{name} (worst)", float(worst))]
    if balanced:
        plans = balanced_plans(spec, balanced, seed)
        if len(plans):
            measured = [oracle.evaluate(Plan.from_contexts(spec, [int(c) for c in row]), seed=seed) for row in plans]
            vals = np.array([m.natural(objective) for m in measured])
            rows.append(Baseline(f"balanced (average of {len(vals)})", float(vals.mean())))
            rows.append(Baseline(f"balanced (worst of {len(vals)})", float(sense.worst(vals))))
    return rows
