"""The verdict rules at their boundaries (solver/certify/verdict.py; docs/design.md, "Verdicts").

Each rule is tested where it switches: a gap exactly at the target and just either side, a sample
of exactly `MIN_SAMPLES` and one fewer, a saturation share of exactly `SATURATION_SHARE` and just
below, the two-hit minimum, values within `RELATIVE_TIE` and just outside it, the far limit of both
objective senses, and the direction of rule 3's noise allowance. Every expected verdict and figure
is worked out by hand in a comment, never by running the rule; the figures are chosen so that the
boundary cases are exact in binary floating point (e.g. ``(95 - 100) / 100`` is the float 0.05, and
``64``, ``128``, ``0.25`` are dyadic).
"""

from __future__ import annotations

import math

import pytest

from tasksolve.solver.certify.bounds import Bound, GivenBound, Rigorous
from tasksolve.solver.certify.known import KnownPlan
from tasksolve.solver.certify.noisy import NoisyEvidence
from tasksolve.solver.certify.verdict import (
    MIN_SAMPLES,
    RELATIVE_TIE,
    SATURATION_SHARE,
    Saturation,
    beats,
    decide,
    in_words,
    loss,
    signed_gap,
)

from .test_noisy import evidence as noisy_evidence
from .test_noisy import saturated as noisy_saturated
from .test_noisy import tail, yardstick
from .test_verdict import atom_evidence, bound, codes, evidence, saturated


def reason(decision, code: str) -> str:
    return next(r["sentence"] for r in decision.reasons if r["code"] == code)


def test_the_constants_are_the_documented_ones():
    """Pins the three conventions the rules name (docs/design.md, departure 21; module docstring)."""
    assert (MIN_SAMPLES, SATURATION_SHARE, RELATIVE_TIE) == (600, 0.5, 1e-9)


# --------------------------------------------------------------------------- rule 0: a value beyond a bound
def test_a_plan_beyond_an_applicable_bound_by_more_than_the_tie_is_a_contradiction():
    """The plan 100.05 (no half-width) beats the simulation's bound 100 by 0.05, beyond the tie
    (1e-9 x 100 = 1e-7) and the simulation's resolution (1e-4 x 100 = 0.01): rule 0, said in full.
    100.005 is within the resolution and 100 + 5e-8 within the tie: proven instead."""
    beyond = decide(evidence(plan_value=100.05, bounds=[bound(100.0, oracle="des")]))
    assert beyond.verdict == "not_certified" and beyond.basis == "contradiction"
    assert beyond.sentence == (
        "not certified: the plan measured 100.05 on the simulation, better than the cpsat bound (100) that "
        "applies to it: the measurement or the bound is wrong, so no verdict is drawn from either"
    )
    assert beyond.reasons[0]["code"] == "contradiction"
    assert decide(evidence(plan_value=100.0 + 5e-8, bounds=[bound(100.0, oracle="des")])).verdict == "proven"
    assert decide(evidence(plan_value=100.005, bounds=[bound(100.0, oracle="des")])).verdict == "proven"


def test_a_plan_beyond_a_bound_by_its_half_width_is_noise():
    """The plan 100.5 +/- 0.5 is exactly its half-width past the bound 100: not beyond it (proven: its
    pessimistic value is 100); with +/- 0.48 it is beyond its half-width and the simulation's
    resolution (0.01): rule 0. Latency: 99.5 +/- 0.48 under 100."""
    assert decide(evidence(plan_value=100.5, plan_half_width=0.5, bounds=[bound(100.0, oracle="des")])).verdict == (
        "proven"
    )
    beyond = decide(evidence(plan_value=100.5, plan_half_width=0.48, bounds=[bound(100.0, oracle="des")]))
    assert beyond.basis == "contradiction"
    latency = dict(
        minimize=True, estimate=101.0, lower=100.5, upper=102.0, known=[KnownPlan("best sampled plan", 103.0)]
    )
    fast = decide(evidence(plan_value=99.5, plan_half_width=0.48, bounds=[bound(100.0, oracle="des")], **latency))
    assert fast.basis == "contradiction"


def test_a_known_plan_beyond_a_bound_is_a_contradiction_beyond_its_half_width():
    """Known plans are measured values too: 100.05 without a half-width past the bound 100 is named;
    101 +/- 1 is exactly its half-width past it (no contradiction), 101 +/- 0.98 is beyond it and
    the simulation's resolution (0.01)."""
    named = decide(evidence(known=[KnownPlan("CP-SAT plan", 100.05)], bounds=[bound(100.0, oracle="des")]))
    assert named.basis == "contradiction"
    assert named.sentence.startswith("not certified: the CP-SAT plan measured 100.05 on the simulation, better than")
    within = decide(evidence(known=[KnownPlan("CP-SAT plan", 101.0, 1.0)], bounds=[bound(100.0, oracle="des")]))
    assert within.basis != "contradiction"
    beyond = decide(evidence(known=[KnownPlan("CP-SAT plan", 101.0, 0.98)], bounds=[bound(100.0, oracle="des")]))
    assert beyond.basis == "contradiction"


def test_a_plan_beyond_the_proven_optimum_is_a_contradiction():
    """The bound 100.5 holds the plan 100.005, its proven optimum 100 does not: rule 0 names the optimum."""
    decision = decide(evidence(plan_value=100.005, bounds=[bound(100.5, proven=100.0)], oracle="analytic"))
    assert decision.sentence.startswith(
        "not certified: the plan measured 100.005 on the closed form, better than the cpsat proven optimum (100) "
    )


# --------------------------------------------------------------------------- rules 2 and 4: the proven optimum
def proven_case(plan: float, minimize: bool = False, **changes):
    """A proven optimum (and bound) of 100 on the closed form; EVT out of the way (50 plans), the
    known plan worse than the plan, the EVT interval (99.5, 101) not refuted by 100 either way."""
    worse = 110.0 if minimize else 90.0
    base = dict(plan_value=plan, minimize=minimize, bounds=[bound(100.0, proven=100.0)], oracle="analytic", n=50)
    return evidence(**{**base, "known": [KnownPlan("best sampled plan", worse)], **changes})


def test_rule_4_proves_a_plan_exactly_at_the_target_maximising():
    """Throughput: the plan 95 loses (100 - 95) / 100 = 5% = the target: not more (rule 2 does not
    hold), within it (rule 4: `proven`); 95.01 loses 4.99%."""
    at = decide(proven_case(95.0))
    assert at.verdict == "proven" and at.basis == "bound"
    assert at.sentence == (
        "proven: the plan (95) is within the 5.00% target of the best possible on the closed form: "
        "the cpsat bound proves no plan exceeds 100 (5.00% above the plan)"
    )
    inside = decide(proven_case(95.01))
    assert inside.verdict == "proven" and "(4.99% above the plan)" in inside.sentence


def test_rule_2_refuses_a_plan_just_beyond_the_target_maximising():
    """The plan 94.99 loses (100 - 94.99) / 100 = 5.01% > 5%: `not_certified` on the proven optimum."""
    beyond = decide(proven_case(94.99))
    assert beyond.verdict == "not_certified" and beyond.basis == "proven optimum"
    assert beyond.sentence == "not certified: the plan is 5.01% below the proven optimum, more than the 5.00% target"
    assert beyond.reasons[0]["code"] == "below_optimum"


def test_rules_2_and_4_at_the_target_minimising():
    """Latency: the plan 105 loses (105 - 100) / 100 = 5%: `proven`; 105.01 loses 5.01%: refused."""
    at = decide(proven_case(105.0, minimize=True))
    assert at.verdict == "proven" and "(5.00% above the plan)" in at.sentence
    beyond = decide(proven_case(105.01, minimize=True))
    assert beyond.verdict == "not_certified" and beyond.basis == "proven optimum"
    assert beyond.sentence == "not certified: the plan is 5.01% above the proven optimum, more than the 5.00% target"


def test_the_half_width_counts_against_the_plan_at_the_target():
    """The pessimistic value: throughput 96 - 1 = 95 (5% below 100: proven) and 96 - 1.01 = 94.99
    (5.01%: refused); latency 104 + 1 = 105 (proven) and 104 + 1.01 = 105.01 (refused). The refusal's
    sentence gives the plan's own gap (4%, which reads as within the 5% target), not the pessimistic
    5.01% the rule judged, and says both (it once gave only the 4%, which read as within the target)."""
    at = decide(proven_case(96.0, plan_half_width=1.0))
    assert at.verdict == "proven"
    assert at.sentence.startswith(
        "proven: the plan (96 ± 1) is within the 5.00% target of the best possible on the closed form, "
        "counting its half-width against it: "
    )
    beyond = decide(proven_case(96.0, plan_half_width=1.01))
    assert beyond.verdict == "not_certified" and beyond.basis == "proven optimum"
    assert beyond.sentence == (
        "not certified: the plan is 4.00% below the proven optimum (5.01% at the unfavourable end of its interval), "
        "more than the 5.00% target"
    )
    assert decide(proven_case(104.0, minimize=True, plan_half_width=1.0)).verdict == "proven"
    late = decide(proven_case(104.0, minimize=True, plan_half_width=1.01))
    assert late.verdict == "not_certified" and late.basis == "proven optimum"


def test_rule_4_alone_at_the_target_of_a_bound_without_optimum():
    """A bound of 100 with no proven optimum: the plan 95 (5% below) is proven, 94.99 (5.01%) is not
    and falls through to rule 9 (EVT is out of the way), not to rule 2."""
    at = decide(proven_case(95.0, bounds=[bound(100.0)]))
    assert at.verdict == "proven"
    beyond = decide(proven_case(94.99, bounds=[bound(100.0)]))
    assert beyond.verdict == "not_certified" and beyond.basis == "EVT estimate"


# --------------------------------------------------------------------------- rule 3: a known plan, beyond noise
def beaten_case(plan_half_width: float, known: KnownPlan, plan: float = 64.0):
    """Target 25%; the known plan 128 beats the plan 64 by (128 - 64) / 128 = 50%. EVT is out of the
    way (50 plans) and its interval (129, 131) is above the known plan (no refutation)."""
    return evidence(
        plan_value=plan,
        plan_half_width=plan_half_width,
        target_gap=0.25,
        n=50,
        estimate=130.0,
        lower=129.0,
        upper=131.0,
        known=[known],
    )


def test_rule_3_at_the_target_after_the_noise_allowance():
    """The allowance is the two half-widths relative to the plan: (8 + 8) / 64 = 25%, so the plan
    loses 50% - 25% = 25% = the target: not more, so rule 3 does not hold; the known plan still beats
    it beyond noise, which rule 9 says."""
    at = decide(beaten_case(8.0, KnownPlan("CP-SAT plan", 128.0, 8.0)))
    assert at.verdict == "not_certified" and at.basis == "EVT estimate"
    assert reason(at, "beaten") == "the CP-SAT plan (128) beats the plan (64 ± 8) beyond noise"


def test_rule_3_just_beyond_the_target_after_the_noise_allowance():
    """Half-widths 8 and 7.9: allowance 15.9 / 64 = 24.84%, loss 50% - 24.84% = 25.16% > 25%: refused
    on the known plan (the sentence gives the 50% before the allowance)."""
    beyond = decide(beaten_case(7.9, KnownPlan("CP-SAT plan", 128.0, 8.0)))
    assert beyond.verdict == "not_certified" and beyond.basis == "known plan"
    assert beyond.sentence == (
        "not certified: the CP-SAT plan (128) beats the plan (64 ± 7.9) by 50.00%, more than the 25.00% target"
    )
    assert beyond.reasons[0]["code"] == "beaten"
    inside = decide(beaten_case(8.1, KnownPlan("CP-SAT plan", 128.0, 8.0)))  # allowance 25.16%: loss 24.84%
    assert inside.basis == "EVT estimate"


def test_the_noise_allowance_is_subtracted_from_the_loss():
    """Rule 3's direction: a plan beaten by 50% with an allowance of (12 + 12) / 64 = 37.5% loses only
    12.5% beyond noise, within the 25% target (the allowance added would make it 87.5%)."""
    within = decide(beaten_case(12.0, KnownPlan("CP-SAT plan", 128.0, 12.0)))
    assert within.verdict == "not_certified" and within.basis == "EVT estimate" and "beaten" in codes(within)


@pytest.mark.parametrize(
    "known",
    [KnownPlan("CP-SAT plan", 128.0), KnownPlan("CP-SAT plan", 128.0, 0.0)],
    ids=["default", "zero"],
)
def test_a_known_plan_without_half_width_counts_none(known):
    """A known plan given without a half-width (or 0) has none: with the plan's 16 the
    allowance is 16 / 64 = 25%, loss 50% - 25% = 25% = the target: not refused on it. With the plan's
    15.9936 the allowance is 24.99% and the loss 25.01%: refused (0.01 of half-width more on the known
    plan would have made it 24.9944%)."""
    at = decide(beaten_case(16.0, known))
    assert at.basis == "EVT estimate" and "beaten" in codes(at)
    assert decide(beaten_case(15.9936, known)).basis == "known plan"


def test_the_plan_without_half_width_counts_none():
    """The plan measured exactly (half-width 0): the known plan's 16 / 64 = 25% is the whole
    allowance: loss 25% = the target; with 15.9936 (24.99%) the loss is 25.01%: refused."""
    assert decide(beaten_case(0.0, KnownPlan("CP-SAT plan", 128.0, 16.0))).basis == "EVT estimate"
    assert decide(beaten_case(0.0, KnownPlan("CP-SAT plan", 128.0, 15.9936))).basis == "known plan"


def test_rule_3_judges_the_best_of_the_known_plans():
    """Two known plans beat the plan 100: 102 (+/- 0.5, 1.96%) and 110 (+/- 0.1, 10 / 110 = 9.09%, 9.0%
    beyond the allowance 0.1 / 100): the better one decides and is named, whatever the half-widths."""
    known = [KnownPlan("CP-SAT plan", 102.0, 0.5), KnownPlan("local search", 110.0, 0.1)]
    decision = decide(evidence(plan_value=100.0, known=known))
    assert decision.basis == "known plan"
    assert decision.sentence == (
        "not certified: the local search (110) beats the plan (100) by 9.09%, more than the 5.00% target"
    )


def test_a_plan_of_zero_measures_the_allowance_in_absolute_terms():
    """A plan of 0 (no relative scale): the allowance is (0.5 + 0.25) / 1 = 0.75 and the loss
    against 10 is (10 - 0) / 10 = 1, so 1 - 0.75 = 0.25 = the target: not refused on it."""
    zero = evidence(
        plan_value=0.0,
        plan_half_width=0.25,
        target_gap=0.25,
        n=50,
        estimate=11.0,
        lower=10.5,
        upper=12.0,
        known=[KnownPlan("CP-SAT plan", 10.0, 0.5)],
    )
    at = decide(zero)
    assert at.verdict == "not_certified" and at.basis == "EVT estimate" and "beaten" in codes(at)
    zero.known = [KnownPlan("CP-SAT plan", 10.0, 0.49)]  # allowance 0.74: 0.26 > 0.25
    assert decide(zero).basis == "known plan"


# --------------------------------------------------------------------------- rules 5 and 6: the far limit
def evt_case(plan: float, minimize: bool = False, **changes):
    """A valid EVT interval whose far limit is 100 (the upper limit when maximising, the lower when
    minimising); the known plan is 1 worse than the far side of the plan."""
    if minimize:
        base = dict(estimate=101.0, lower=100.0, upper=102.0, known=[KnownPlan("best sampled plan", 106.0)])
    else:
        base = dict(estimate=99.0, lower=98.0, upper=100.0, known=[KnownPlan("best sampled plan", 94.0)])
    return evidence(plan_value=plan, minimize=minimize, **{**base, **changes})


def test_rule_6_certifies_exactly_at_the_target_of_the_far_limit():
    """Throughput: 95 is (100 - 95) / 100 = 5% below the far limit 100: `certified`; 94.99 (5.01%)
    is not, and rule 9 says why first."""
    at = decide(evt_case(95.0))
    assert at.verdict == "certified" and at.basis == "EVT estimate"
    assert at.sentence == (
        "certified: the plan is within the 5.00% target of the optimum at 95% confidence "
        "(the plan is 5.00% below the far limit of the 95% interval, 100)"
    )
    beyond = decide(evt_case(94.99))
    assert beyond.verdict == "not_certified" and "gap" in codes(beyond)
    assert beyond.sentence == (
        "not certified: the plan is 5.01% below the far limit of the 95% interval: it may lose more than the 5.00% target"
    )


def test_rule_6_at_the_target_minimising():
    """Latency: 105 is (105 - 100) / 100 = 5% above the far limit 100 (the lower one): `certified`;
    105.01 (5.01%) is not."""
    at = decide(evt_case(105.0, minimize=True))
    assert at.verdict == "certified" and "(the plan is 5.00% above the far limit" in at.sentence
    assert decide(evt_case(105.01, minimize=True)).verdict == "not_certified"


def test_the_far_limit_of_a_maximised_plan_is_the_upper_one():
    """Interval (90, 110) around 100: maximising, the far limit is 110, which the plan 100 misses by
    10 / 110 = 9.09% (it would be 11.1% above the lower limit 90: certified on the optimistic end).
    The plan 107 is 3 / 110 = 2.7% below it: certified, a known plan at 105 being inside the interval;
    one at 111 is beyond the far limit: refuted (111 beats 107 by 3.6%, within the target)."""
    wide = dict(estimate=100.0, lower=90.0, upper=110.0, known=[KnownPlan("best sampled plan", 95.0)])
    decision = decide(evidence(plan_value=100.0, **wide))
    assert decision.verdict == "not_certified" and decision.gaps["far_limit"] == pytest.approx(-10 / 110)
    assert "the plan is 9.09% below the far limit of the 95% interval" in decision.words
    inside = decide(evidence(plan_value=107.0, **{**wide, "known": [KnownPlan("CP-SAT plan", 105.0)]}))
    assert inside.verdict == "certified"
    refuted = decide(evidence(plan_value=107.0, **{**wide, "known": [KnownPlan("CP-SAT plan", 111.0)]}))
    assert refuted.verdict == "refuted"


def test_the_far_limit_of_a_minimised_plan_is_the_lower_one():
    """Latency, interval (90, 110): the far limit is 90, which the plan 100 misses by 10 / 90 = 11.1%
    (it would be 9.1% below the upper limit 110: certified on the optimistic end). The plan 94 is
    4 / 90 = 4.4% above it: certified, a known plan at 95 being inside the interval; one at 89 is
    beyond the far limit: refuted (the plan 92 loses 3 / 89 = 3.4% to it, within the target)."""
    wide = dict(minimize=True, estimate=100.0, lower=90.0, upper=110.0, known=[KnownPlan("best sampled plan", 105.0)])
    decision = decide(evidence(plan_value=100.0, **wide))
    assert decision.verdict == "not_certified" and decision.gaps["far_limit"] == pytest.approx(10 / 90)
    assert "the plan is 11.11% above the far limit of the 95% interval" in decision.words
    inside = decide(evidence(plan_value=94.0, **{**wide, "known": [KnownPlan("CP-SAT plan", 95.0)]}))
    assert inside.verdict == "certified"
    refuted = decide(evidence(plan_value=92.0, **{**wide, "known": [KnownPlan("CP-SAT plan", 89.0)]}))
    assert refuted.verdict == "refuted"
    assert refuted.sentence == (
        "refuted: the CP-SAT plan (89) is better than the EVT interval's far limit (90), "
        "so the estimate is wrong and no verdict is drawn from it"
    )


def test_a_known_plan_equal_to_the_far_limit_does_not_refute():
    """Refutation is strict: the known plan at exactly the far limit (101) is not beyond it, so the
    plan 99 (1.98% below 101) is certified; at 101.01 it is refuted."""
    assert decide(evidence(known=[KnownPlan("CP-SAT plan", 101.0)])).verdict == "certified"
    assert decide(evidence(known=[KnownPlan("CP-SAT plan", 101.01)])).verdict == "refuted"


def test_a_proven_optimum_beyond_the_far_limit_refutes_the_estimate():
    """A proven optimum of 101 (the far limit itself) refutes nothing; 101.5 is beyond it: the plan
    is still proven (rule 4, 99 within 5% of the bound 101.5) and the reasons say the estimate is
    wrong, naming the proven optimum."""
    equal = decide(evidence(bounds=[bound(101.0, proven=101.0)], oracle="analytic"))
    assert equal.verdict == "proven" and "refuted" not in codes(equal)
    beyond = decide(evidence(bounds=[bound(101.5, proven=101.5)], oracle="analytic"))
    assert beyond.verdict == "proven"
    assert reason(beyond, "refuted") == (
        "the proven optimum (101.5) is better than the EVT interval's far limit (101), "
        "so the estimate is wrong and no verdict is drawn from it"
    )


def test_the_refutation_names_the_best_refuter():
    """Of two plans beyond the far limit 101 (102 with half-width 0.5, 103 with 0.1), the better one
    is named: 103, whatever the half-widths or the order."""
    known = [KnownPlan("CP-SAT plan", 102.0, 0.5), KnownPlan("local search", 103.0, 0.1)]
    decision = decide(evidence(known=known))
    assert decision.verdict == "refuted" and decision.sentence.startswith("refuted: the local search (103) is better")
    latency = evidence(minimize=True, estimate=100.0, lower=90.0, upper=110.0, plan_value=92.0)
    latency.known = [KnownPlan("CP-SAT plan", 88.0), KnownPlan("local search", 89.0)]
    assert decide(latency).sentence.startswith("refuted: the CP-SAT plan (88) is better")


def test_an_infinite_far_limit_refutes_nothing_and_certifies_nothing():
    """Without the heavy-tail flag but with no finite upper limit: no known plan is beyond it (100
    beats the plan 99 by 1%, within the target), and no gap to it can be bounded."""
    decision = decide(evidence(upper=math.inf, known=[KnownPlan("CP-SAT plan", 100.0)]))
    assert decision.verdict == "not_certified" and "refuted" not in codes(decision)
    assert reason(decision, "gap") == (
        "no finite far limit of the 95% interval to compare with: it may lose more than the 5.00% target"
    )


def test_without_a_gpd_interval_nothing_is_refuted():
    """EVT could not analyse the sample: its interval (here finite, up to 101) is not in use, so the
    known plan at 102 refutes nothing (it beats the plan 99 by 2.9%, within the target)."""
    decision = decide(evidence(unanalysable="fewer than 30 distinct values", known=[KnownPlan("CP-SAT plan", 102.0)]))
    assert decision.verdict == "not_certified" and "refuted" not in codes(decision)


# --------------------------------------------------------------------------- the sample size
def test_a_sample_of_exactly_min_samples_is_enough():
    """600 plans: certified (the plan 99 is 1.98% below the far limit 101), no small-sample reason."""
    decision = decide(evidence(n=600))
    assert decision.verdict == "certified" and "small_sample" not in codes(decision)


def test_one_plan_fewer_than_min_samples_is_not():
    """599 plans: not certified, and the small sample is the first reason."""
    decision = decide(evidence(n=599))
    assert decision.verdict == "not_certified"
    assert decision.sentence == (
        "not certified: the sample has 599 plans; the threshold rule needs at least 600 "
        "(30 values beyond a threshold that leaves at most 5% of the sample above it)"
    )


def test_the_gap_reason_at_the_target_on_a_small_sample():
    """Rule 9 says "gap" only beyond the target: the plan 95 (5% below the far limit 100) on 599 plans
    is refused for the sample alone; 94.99 (5.01%) for the gap too."""
    assert codes(decide(evt_case(95.0, n=599))) == {"no_bound", "small_sample"}
    assert codes(decide(evt_case(94.99, n=599))) == {"no_bound", "small_sample", "gap"}


# --------------------------------------------------------------------------- rule 7: saturation
def test_a_share_of_exactly_one_half_saturates():
    """500 of 1000 draws on the best value: share 0.5, saturated: `best_found`."""
    decision = decide(atom_evidence(saturation=saturated(hits=500)))
    assert decision.verdict == "best_found"
    assert decision.sentence == (
        "best found: none of the 1000 local-search restarts beats the plan (100) beyond measurement noise and "
        "500 of them ended on the best value, so one more would beat that value with probability at most 0.30% "
        "(95% confidence); no gap to the optimum is claimed"
    )


def test_a_share_just_below_one_half_does_not():
    """499 of 1000: share 0.499 < 0.5: not saturated, and that is the first reason."""
    decision = decide(atom_evidence(saturation=saturated(hits=499)))
    assert decision.verdict == "not_certified"
    assert decision.sentence == (
        "not certified: only 499 of 1000 local-search restarts end on the best value (saturation needs 50%)"
    )


def test_saturation_needs_two_hits():
    """2 of 4 draws (share 0.5, two hits): `best_found`. 1 of 2 (share 0.5, one hit): a single draw on
    the best value is no atom: not saturated, yet not "below one half" either, so the first reason is
    the top atom's own sentence (ranked before the missing bound)."""
    assert decide(atom_evidence(saturation=saturated(hits=2, n=4))).verdict == "best_found"
    once = decide(atom_evidence(saturation=saturated(hits=1, n=2), top_atom="the best value was hit once"))
    assert once.verdict == "not_certified" and "not_saturated" not in codes(once)
    assert once.sentence == "not certified: the best value was hit once"
    assert [r["code"] for r in once.reasons] == ["no_bound", "top_atom"]


def test_the_share_of_no_draws_is_zero():
    """Pins `Saturation.share`: hits / n, and 0 (not a division error) without draws."""
    assert saturated(hits=1, n=4).share == 0.25
    assert Saturation(best=1.0, hits=0, n=0, beat_bound=1.0).share == 0.0


def test_a_sampled_best_beyond_the_tie_blocks_saturation():
    """The sample's best value 100.005 beats the plan 100 (no half-width) by 0.005, beyond the tie
    (1e-7): no `best_found`. 100 + 5e-8 is within the tie: `best_found`."""
    above = decide(atom_evidence(saturation=saturated(best=100.005)))
    assert above.verdict == "not_certified"
    tied = decide(atom_evidence(saturation=saturated(best=100.0 + 5e-8)))
    assert tied.verdict == "best_found"


def test_a_known_plan_within_the_tie_does_not_block_saturation():
    """A known plan 5e-8 above the plan 100 is the same value (tie 1e-9 x 100 = 1e-7); 2e-7 above it
    beats the plan, which blocks `best_found` (rule 3 does not hold: 2e-9 is far within the target)."""
    tied = [KnownPlan("best sampled plan", 100.0), KnownPlan("CP-SAT plan", 100.0 + 5e-8)]
    assert decide(atom_evidence(known=tied)).verdict == "best_found"
    above = decide(atom_evidence(known=[KnownPlan("best sampled plan", 100.0), KnownPlan("CP-SAT plan", 100.0 + 2e-7)]))
    assert above.verdict == "not_certified" and above.basis == "EVT estimate" and "beaten" in codes(above)


# --------------------------------------------------------------------------- beats: the tie and the half-widths
def test_beats_beyond_the_relative_tie():
    """Against 1000 the tie is 1e-9 x 1000 = 1e-6: better by 1.005e-6 beats, by 0.995e-6 does not;
    minimising, lower is better."""
    assert beats(1000.0 + 1.005e-6, 0.0, 1000.0, 0.0, False)
    assert not beats(1000.0 + 0.995e-6, 0.0, 1000.0, 0.0, False)
    assert beats(1000.0 - 1.005e-6, 0.0, 1000.0, 0.0, True)
    assert not beats(1000.0 + 1.005e-6, 0.0, 1000.0, 0.0, True)


def test_beats_a_plan_of_zero_by_the_floor_of_the_tie():
    """Against 0 the tie is 1e-9 x 1e-300 = 1e-309 (a subnormal): 1.005e-309 beats, 0.995e-309 does not."""
    assert beats(1.005e-309, 0.0, 0.0, 0.0, False)
    assert not beats(0.995e-309, 0.0, 0.0, 0.0, False)


def test_beats_is_strict_beyond_the_two_half_widths():
    """0.75 against 0 with half-widths 0.5 and 0.25: the margin is 0.5 + 0.25 + 1e-309, which is 0.75
    in binary64; better by exactly the margin does not beat. 101 against 100 with 0.6 and 0.5 does not
    (margin 1.1), 101.2 does."""
    assert not beats(0.75, 0.5, 0.0, 0.25, False)
    assert not beats(101.0, 0.6, 100.0, 0.5, False)
    assert beats(101.2, 0.6, 100.0, 0.5, False)


def test_beats_reads_a_missing_half_width_as_none():
    """None half-widths count 0: 100.005 beats 100 (margin 1e-7)."""
    assert beats(100.005, None, 100.0, None, False)


# --------------------------------------------------------------------------- rules 1, 8 and 9: the sentences
def test_a_failed_step_is_the_first_sentence():
    """Rule 1 quotes the first failed step."""
    decision = decide(evidence(failed_steps=["configuration bound", "level LP"]))
    assert decision.sentence == (
        "not certified: the solver step 'configuration bound' failed, so the plan and the bound may be weaker than shown"
    )


def test_the_heavy_tail_is_said_once_and_other_flags_too():
    """Rule 8 with the ties flag as well: the ties flag is said by the evidence, the heavy tail by rule 8."""
    decision = decide(evidence(flags=("heavy_tail", "ties"), upper=math.inf, estimate=math.inf))
    assert decision.verdict == "no_finite_optimum" and decision.basis == "EVT estimate"
    assert [r["code"] for r in decision.reasons] == ["no_bound", "ties", "heavy_tail"]
    assert decision.sentence == (
        "no finite optimum: the sample's tail has no finite end (xi >= 0), so there is no optimum to compare "
        "the plan with, and the search is not saturated"
    )


def test_a_heavy_tail_flag_without_a_gpd_interval_is_not_rule_8():
    """With an atom at the top no GPD interval is in use: the heavy-tail flag decides nothing."""
    decision = decide(atom_evidence(flags=("heavy_tail",), saturation=saturated(hits=400)))
    assert decision.verdict == "not_certified" and "heavy_tail" not in codes(decision)


def test_an_unanalysable_sample_is_said_first():
    """No GPD interval when EVT cannot analyse the sample: that is rule 9's first reason (ranked before
    the missing bound), whatever the sample's size."""
    decision = decide(evidence(unanalysable="fewer than 30 distinct values"))
    assert decision.verdict == "not_certified"
    assert decision.sentence == (
        "not certified: EVT cannot analyse the sample (fewer than 30 distinct values), so there is no GPD interval"
    )
    assert [r["code"] for r in decision.reasons] == ["no_bound", "unanalysable"]


# --------------------------------------------------------------------------- bounds and their sentences
def test_every_bound_implements_the_protocol():
    """The five bound classes are `Bound`s; `Rigorous` gives CP-SAT's bound and source under the
    protocol's names (the solver where no source is named) and its proven optimum where CP-SAT
    proved it; the others carry no solver plan, status or failed step unless they have one."""
    from fractions import Fraction

    from tasksolve.solver.certify.bounds import SimulationBound
    from tasksolve.solver.certify.measured_bound import MeasuredBound
    from tasksolve.solver.pipeline.bound import PipelineBound

    rigorous = Rigorous("OPTIMAL", 100.0, "cpsat", 98.0, None)
    assert (rigorous.oracle, rigorous.value, rigorous.proven_optimum, rigorous.source) == (
        "analytic",
        100.0,
        98.0,
        "cpsat",
    )
    feasible = Rigorous("FEASIBLE", 100.0, None, 98.0, None, ["level bound"])
    assert (feasible.proven_optimum, feasible.source, list(feasible.failed_steps)) == (None, "solver", ["level bound"])
    simulation = SimulationBound(5.0, "throughput", "enumeration", 3, 0.1, {})
    measured = MeasuredBound(6.0, "throughput", 4, 2, 1, 1.2, 0.95, True, 0.1)
    pipeline = PipelineBound(7.0, Fraction(1), "OPTIMAL", 0.1)
    given = GivenBound("des", 1.0, 0.5, "measured")
    for b in (rigorous, feasible, simulation, measured, pipeline, given):
        assert isinstance(b, Bound), type(b).__name__
    for b in (simulation, measured, pipeline, given):
        assert (b.objective, list(b.failed_steps)) == (None, [])
    assert [b.noisy for b in (rigorous, simulation, measured, pipeline, given)] == [False, False, True, False, False]
    assert (simulation.oracle, measured.oracle, pipeline.oracle) == ("des", "des", "analytic")


def test_the_missing_bound_names_the_bounds_of_other_oracles():
    """A bound without a value is no bound at all; one of another oracle (or of none: the model) is
    named with what it bounds."""
    empty = decide(evidence(bounds=[GivenBound("des", None, source="measured")], n=50))
    assert reason(empty, "no_bound") == "no rigorous bound applies to the simulation"
    unfound = decide(evidence(bounds=[GivenBound("analytic", None, source="CP-SAT")], n=50))
    assert reason(unfound, "no_bound") == "no rigorous bound applies to the simulation"  # another oracle's, no value
    other = decide(evidence(bounds=[GivenBound("model", 120.0, source="fluid LP")], n=50, oracle="command"))
    assert reason(other, "no_bound") == (
        "no rigorous bound applies to the real program; the fluid LP bound (120) bounds the model, not the real program"
    )


def test_the_oracle_is_named_in_the_proof():
    """The proof names what the bound is about: the pipeline model, or an oracle by its kind."""
    pipeline = evidence(bounds=[bound(100.0, oracle="pipeline model")], oracle="pipeline model", n=50)
    assert "of the best possible on the pipeline CP-SAT model:" in decide(pipeline).sentence
    command = evidence(bounds=[bound(100.0, oracle="command")], oracle="command", n=50)
    assert "of the best possible on the real program:" in decide(command).sentence
    other = evidence(bounds=[bound(100.0, oracle="probe")], oracle="probe", n=50)
    assert "of the best possible on the probe oracle:" in decide(other).sentence


def test_the_gaps_and_words_of_a_decision():
    """Plan 95, estimate 100, far limit 125, bound and proven optimum 100: gaps -5%, -24%, -5%, -5%
    (each (95 - x) / x), said in that order; `to_dict` holds the decision's fields."""
    decision = decide(
        evidence(plan_value=95.0, upper=125.0, bounds=[bound(100.0, proven=100.0)], oracle="analytic", n=50)
    )
    assert decision.verdict == "proven"
    assert decision.gaps == pytest.approx(
        {"estimate": -0.05, "far_limit": -0.24, "bound": -0.05, "proven_optimum": -0.05}, rel=1e-12
    )
    assert decision.words == [
        "the plan is 5.00% below the estimated optimum",
        "the plan is 24.00% below the far limit of the 95% interval",
        "the plan is 5.00% below the proven bound (cpsat)",
        "the plan is 5.00% below the proven optimum",
    ]
    data = decision.to_dict()
    assert data["verdict"] == "proven" and data["basis"] == "bound" and data["words"] == decision.words
    assert set(data) == {"verdict", "basis", "sentence", "reasons", "gaps", "words"}


# --------------------------------------------------------------------------- the plan's half-width, shown or not
def simulation_bound_case(plan: float, half_width: float):
    """The plan proven by a bound on the simulation equal to it; the known plan 10% worse."""
    known = [KnownPlan("best sampled plan", 0.9 * plan)]
    return evidence(plan_value=plan, plan_half_width=half_width, bounds=[bound(plan, oracle="des")], n=50, known=known)


def test_a_half_width_of_at_least_5e_5_of_the_value_is_shown():
    """5e-5 x 100000 = 5: a half-width of 5 is shown, 4.99 is float noise (not shown, still counted),
    5.02 is shown."""
    assert "the plan (100000 ± 5) is within" in decide(simulation_bound_case(100000.0, 5.0)).sentence
    hidden = decide(simulation_bound_case(100000.0, 4.99)).sentence
    assert "the plan (100000) is within" in hidden and "counting its half-width against it" in hidden
    assert "the plan (100000 ± 5.02) is within" in decide(simulation_bound_case(100000.0, 5.02)).sentence


def test_a_half_width_that_shows_as_zero_is_not_shown():
    """With two decimals a half-width of 0.001 reads 0.00, like no half-width: not shown."""
    decision = decide(simulation_bound_case(1.0, 0.001), show=lambda v: f"{v:.2f}")
    assert "the plan (1.00) is within" in decision.sentence
    exact = decide(simulation_bound_case(1.0, 0.0), show=lambda v: f"{v:.2f}")
    assert "the plan (1.00) is within" in exact.sentence and "counting" not in exact.sentence


# --------------------------------------------------------------------------- the signed gaps
def test_signed_gap_loss_and_words_by_hand():
    """``(value - reference) / |reference|``; the loss in the objective's sense; None and inf where no
    finite, non-zero reference is."""
    assert signed_gap(97.0, 100.0) == pytest.approx(-0.03) and signed_gap(5.0, 1.0) == 4.0
    assert signed_gap(3.0, -2.0) == 2.5  # the sign of the difference, not of the reference
    for reference in (0.0, None, math.inf):
        assert signed_gap(1.0, reference) is None
    assert signed_gap(math.inf, 1.0) is None
    assert loss(95.0, 100.0, False) == 0.05 and loss(105.0, 100.0, True) == 0.05
    assert loss(105.0, 100.0, False) == -0.05
    assert loss(1.0, None, False) == math.inf and loss(1.0, 0.0, True) == math.inf
    assert in_words(None, "x") == "no finite x to compare with"
    assert in_words(0.0, "x") == in_words(-0.0, "x") == "the plan equals the x"
    assert in_words(1.0, "x") == "the plan is 100.00% above the x"
    assert in_words(-0.5, "x") == "the plan is 50.00% below the x"


# --------------------------------------------------------------------------- on a noisy oracle
def test_the_yardstick_sentence_and_words():
    """Rule 3 on the re-measured yardstick: its advantage 10% with the interval [7%, 13%], said in
    full; its words come first."""
    decision = decide(noisy_evidence(plan_value=90.0, noisy=NoisyEvidence(yardstick(-0.10, 0.03), None)))
    assert decision.sentence == (
        "not certified: the best sampled plan, re-measured (100), beats the plan by 10.00% "
        "(95% interval [7.00%, 13.00%]), more than the 5.00% target"
    )
    assert decision.words[0].startswith("the plan is 10.00% below the best sampled plan re-measured (100, 20 fresh")
    assert decision.reasons[0]["code"] == "beaten" and decision.basis == "known plan"


def test_only_the_plans_beside_the_yardstick_are_unpaired():
    """With a yardstick (the first known plan, re-measured) the others are listed as unpaired; without
    one, every known plan is."""
    known = [KnownPlan("best sampled plan", 98.0, 0.5), KnownPlan("CP-SAT plan", 97.0, 0.5)]
    paired = decide(noisy_evidence(known=known, noisy=NoisyEvidence(yardstick(0.0, 0.02), None)))
    assert reason(paired, "unpaired").startswith("CP-SAT plan: measured apart from the plan")
    alone = decide(noisy_evidence(known=known, noisy=NoisyEvidence(None, None, "nothing to re-measure")))
    assert reason(alone, "unpaired").startswith("best sampled plan, CP-SAT plan: measured apart from the plan")


def test_no_gap_to_an_interval_hidden_by_noise_or_an_atom():
    """On a noisy oracle, a tail hidden by noise or an atom at the top leaves no EVT gap: the words say
    so in place of the estimate's and the far limit's."""
    hidden = decide(noisy_evidence(noisy=NoisyEvidence(yardstick(0.0, 0.02), tail(0.5))))
    assert hidden.words[1:] == ["no EVT estimate on this noisy oracle (see the reasons)"]
    atom = decide(noisy_saturated(noisy=NoisyEvidence(yardstick(0.005, 0.02), None)))
    assert atom.verdict == "best_found"
    assert atom.gaps["estimate"] is None and atom.gaps["far_limit"] is None
    assert atom.words[1:] == ["no EVT estimate on this noisy oracle (see the reasons)"]
    assert "ended on the best value or within noise of it" in atom.sentence
