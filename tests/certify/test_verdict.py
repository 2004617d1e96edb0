"""The verdict rules, each on constructed evidence (solver/certify/verdict.py)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from tasksolve.solver.certify.bounds import GivenBound
from tasksolve.solver.certify.known import KnownPlan
from tasksolve.solver.certify.verdict import (
    BLOCKING_FLAGS,
    MIN_SAMPLES,
    POSITIVE,
    SATURATION_SHARE,
    VERDICTS,
    Evidence,
    Saturation,
    decide,
    exit_code,
    in_words,
    signed_gap,
)


def bound(value, oracle="analytic", proven=None, source="cpsat"):
    return GivenBound(oracle, value, proven, source)


def evidence(**changes) -> Evidence:
    base = dict(
        plan_value=99.0,
        minimize=False,
        target_gap=0.05,
        n=1000,
        estimate=100.0,
        lower=99.5,
        upper=101.0,
        known=[KnownPlan("best sampled plan", 98.0)],
        oracle="des",
    )
    base.update(changes)
    return Evidence(**base)


def codes(decision) -> set[str]:
    return {reason["code"] for reason in decision.reasons}


def test_a_clean_case_is_certified_on_the_estimate():
    decision = decide(evidence())
    assert decision.verdict == "certified" and decision.basis == "EVT estimate"
    assert "no_bound" in codes(decision)  # the simulation has no rigorous bound: said so
    assert "simulation" in next(r["sentence"] for r in decision.reasons if r["code"] == "no_bound")
    assert decision.positive and decision.exit_code == 0


def test_too_far_from_the_far_limit_is_not_certified():
    decision = decide(evidence(plan_value=90.0, known=[KnownPlan("best sampled plan", 90.0)]))
    assert decision.verdict == "not_certified" and "gap" in codes(decision)


def test_a_known_plan_beyond_the_far_limit_refutes_the_estimate():
    decision = decide(evidence(known=[KnownPlan("CP-SAT plan", 101.5)]))
    assert decision.verdict == "refuted" and decision.exit_code == 1
    assert "101.5" in decision.sentence and decision.sentence.startswith("refuted: ")


def test_the_plan_above_the_estimate_refutes_it_with_a_signed_gap():
    # the `run t2-ipfwd-x20` case: a plan 18.7% above the estimate was shown as a green "gap 18.71%"
    decision = decide(evidence(plan_value=118.7, known=[KnownPlan("certified plan itself", 118.7)]))
    assert decision.verdict == "refuted"
    assert decision.gaps["estimate"] > 0
    assert any("18.70% above the estimated optimum" in w for w in decision.words)


def test_a_small_sample_names_the_minimum():
    decision = decide(evidence(n=100))
    assert decision.verdict == "not_certified" and "small_sample" in codes(decision)
    assert str(MIN_SAMPLES) in decision.sentence


def test_each_unreliable_flag_blocks_with_one_sentence():
    for flag in ("ties", "poor_fit", "boundary", "irregular", "few_exceedances", "large_fraction"):
        decision = decide(evidence(flags=(flag,)))
        assert decision.verdict == "not_certified", flag
        sentence = next(r["sentence"] for r in decision.reasons if r["code"] == flag)
        assert BLOCKING_FLAGS[flag] in sentence and sentence.count(". ") == 0


def test_heavy_tail_gives_no_finite_optimum():
    decision = decide(evidence(flags=("heavy_tail",), upper=math.inf, estimate=math.inf))
    assert decision.verdict == "no_finite_optimum" and decision.exit_code == 1
    assert decision.sentence.startswith("no finite optimum: ")


def test_a_failed_solver_step_forbids_certified_even_with_a_bound():
    decision = decide(evidence(bounds=[bound(99.5)], failed_steps=["configuration bound"], oracle="analytic"))
    assert decision.verdict == "not_certified" and "failed_step" in codes(decision)
    assert decision.basis == "solver"


def test_the_bound_proves_a_plan_whatever_evt_says():
    decision = decide(
        evidence(bounds=[bound(100.0, source="configuration LP")], flags=("ties", "poor_fit"), n=50, oracle="analytic")
    )
    assert decision.verdict == "proven" and decision.basis == "bound" and decision.exit_code == 0
    assert decision.sentence.startswith("proven: ") and "closed form" in decision.sentence


def test_a_bound_equal_to_the_plan_reads_zero_not_minus_zero():
    decision = decide(evidence(plan_value=100.0, bounds=[bound(100.0, oracle="des")], n=50, oracle="des"))
    assert decision.verdict == "proven" and "(0.00% above the plan)" in decision.sentence


def test_a_bound_of_another_oracle_proves_nothing():
    # the t2-constrained case: the closed form's optimum shown as if it bounded the simulation
    decision = decide(evidence(bounds=[bound(100.0, oracle="analytic")], n=50, oracle="des"))
    assert decision.verdict == "not_certified"
    sentence = next(r["sentence"] for r in decision.reasons if r["code"] == "no_bound")
    assert "not the simulation" in sentence


def test_a_simulation_bound_proves_with_the_plan_half_width_against_it():
    ok = decide(evidence(plan_value=96.0, plan_half_width=0.5, bounds=[bound(100.0, oracle="des")], n=50))
    assert ok.verdict == "proven" and "half-width" in ok.sentence and "simulation" in ok.sentence
    # 95.5 +/- 0.6: pessimistically 94.9, 5.1% below the bound: no proof
    short = decide(evidence(plan_value=95.5, plan_half_width=0.6, bounds=[bound(100.0, oracle="des")], n=50))
    assert short.verdict != "proven"


def test_a_proven_optimum_decides_and_refutes_a_low_estimate():
    # the `certify t2-ipfwd-intadd-x2 --samples 100` case: 0.25% "certified", 13.1% below the optimum
    decision = decide(
        evidence(
            plan_value=95.0,
            estimate=95.0,
            lower=95.0,
            upper=95.2,
            bounds=[bound(109.4, proven=109.4)],
            oracle="analytic",
            known=[KnownPlan("best sampled plan", 95.0)],
        )
    )
    assert decision.verdict == "not_certified" and decision.basis == "proven optimum"
    assert "13.16% below the proven optimum" in decision.sentence
    assert {"refuted", "below_optimum"} <= codes(decision)


def test_minimising_uses_the_lower_limit():
    latency = dict(minimize=True, estimate=1.0, lower=0.99, upper=1.01, known=[KnownPlan("best sampled plan", 1.03)])
    assert decide(evidence(plan_value=1.02, **latency)).verdict == "certified"
    refuted = decide(evidence(plan_value=1.02, **{**latency, "known": [KnownPlan("a plan", 0.98)]}))
    assert refuted.verdict == "refuted"
    assert decide(evidence(plan_value=1.2, **latency)).verdict == "not_certified"


def test_gaps_in_words_carry_the_sign():
    assert signed_gap(97.9, 100.0) < 0 and signed_gap(102.1, 100.0) > 0
    assert in_words(signed_gap(97.9, 100.0), "estimate") == "the plan is 2.10% below the estimate"
    assert in_words(signed_gap(102.1, 100.0), "estimate") == "the plan is 2.10% above the estimate"


finite = st.floats(min_value=1.0, max_value=1e3, allow_nan=False)


@given(
    plan=finite,
    estimate=finite,
    spread=st.floats(0, 0.5),
    known=st.lists(finite, max_size=4),
    bound_value=st.none() | finite,
    minimize=st.booleans(),
    n=st.integers(20, 5000),
    flags=st.lists(st.sampled_from(sorted(BLOCKING_FLAGS)), max_size=2, unique=True),
)
def test_certified_only_when_nothing_contradicts_it(plan, estimate, spread, known, bound_value, minimize, n, flags):
    lower, upper = estimate * (1 - spread), estimate * (1 + spread)
    if bound_value is not None:  # a bound is never beaten by a plan
        bound_value = min([bound_value, plan, *known]) if minimize else max([bound_value, plan, *known])
    ev = evidence(
        plan_value=plan,
        estimate=estimate,
        lower=lower,
        upper=upper,
        minimize=minimize,
        n=n,
        flags=tuple(flags),
        known=[KnownPlan("k", v) for v in known] + [KnownPlan("plan", plan)],
        bounds=[] if bound_value is None else [globals()["bound"](bound_value)],
        oracle="analytic" if bound_value is not None else "des",
    )
    decision = decide(ev)
    assert decision.sentence and all(r["sentence"] for r in decision.reasons)
    assert decision.exit_code == (0 if decision.verdict in POSITIVE else 1)
    if decision.verdict == "proven":
        assert abs(plan - bound_value) <= 0.05 * abs(bound_value) + 1e-12
        return
    if decision.verdict != "certified":
        return
    far = lower if minimize else upper
    assert n >= MIN_SAMPLES and not flags
    assert all((v >= far) if minimize else (v <= far) for v in known + [plan])
    assert abs(far - plan) <= 0.05 * abs(far) + 1e-12


def saturated(hits=900, n=1000, best=100.0):
    return Saturation(best=best, hits=hits, n=n, beat_bound=0.003, draws="local-search restarts")


def atom_evidence(**changes):
    base = dict(
        plan_value=100.0,
        estimate=100.0,
        lower=100.0,
        upper=math.inf,
        known=[KnownPlan("best sampled plan", 100.0)],
        top_atom="900 of 1000 samples end on the best value",
        saturation=saturated(),
    )
    base.update(changes)
    return evidence(**base)


def test_a_saturated_search_is_best_found_and_claims_no_gap():
    decision = decide(atom_evidence())
    assert decision.verdict == "best_found" and decision.exit_code == 0 and decision.basis == "draw bound"
    assert decision.sentence.startswith("best found: ") and "no gap to the optimum is claimed" in decision.sentence
    assert "0.30%" in decision.sentence and "900" in decision.sentence


def test_saturation_needs_most_draws_on_the_best_value():
    few = int(SATURATION_SHARE * 1000) - 1
    decision = decide(atom_evidence(saturation=saturated(hits=few)))
    assert decision.verdict == "not_certified" and "not_saturated" in codes(decision)


def test_a_plan_below_the_saturated_best_is_not_best_found():
    # 3% below the sample's best: within the 5% target, so not refused by rule 3, but not the best found
    decision = decide(atom_evidence(plan_value=97.0))
    assert decision.verdict == "not_certified" and "beaten" in codes(decision)


def test_a_known_plan_beyond_the_target_and_noise_refuses():
    decision = decide(atom_evidence(plan_value=90.0, plan_half_width=1.0))
    assert decision.verdict == "not_certified" and decision.basis == "known plan"
    # within noise: 99.5 +/- 1 against 100 is not beaten
    assert decide(atom_evidence(plan_value=99.5, plan_half_width=1.0)).verdict == "best_found"


def test_a_better_known_plan_within_noise_does_not_refute_the_saturation():
    known = [KnownPlan("best sampled plan", 100.0), KnownPlan("CP-SAT plan", 100.4, 0.5)]
    assert decide(atom_evidence(known=known)).verdict == "best_found"
    beaten = decide(atom_evidence(known=[KnownPlan("best sampled plan", 100.0), KnownPlan("CP-SAT plan", 101.0, 0.1)]))
    assert beaten.verdict == "not_certified"


def test_every_verdict_has_a_meaning_and_an_exit_code():
    assert set(VERDICTS) == {"proven", "certified", "best_found", "not_certified", "refuted", "no_finite_optimum"}
    assert POSITIVE == {"proven", "certified", "best_found"}
    assert exit_code("refuted") == 1 and exit_code("best_found") == 0 and exit_code("unknown") == 1


@given(
    plan=finite,
    best=finite,
    hits=st.integers(0, 1000),
    hw=st.floats(0, 5),
    minimize=st.booleans(),
)
def test_best_found_only_when_nothing_beats_the_plan(plan, best, hits, hw, minimize):
    sat = Saturation(best=best, hits=max(hits, 0), n=1000, beat_bound=0.003)
    interval = (-math.inf, best) if minimize else (best, math.inf)
    ev = evidence(
        plan_value=plan,
        plan_half_width=hw,
        minimize=minimize,
        estimate=best,
        lower=interval[0],
        upper=interval[1],
        known=[KnownPlan("best sampled plan", best)],
        top_atom="atom",
        saturation=sat,
    )
    decision = decide(ev)
    if decision.verdict == "best_found":
        assert hits >= SATURATION_SHARE * 1000
        worse_by = (plan - best) if minimize else (best - plan)
        assert worse_by <= hw + 1e-9 * abs(plan)
