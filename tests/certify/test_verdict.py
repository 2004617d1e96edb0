"""The verdict rules, each on constructed evidence (solver/certify/verdict.py)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from tasksolve.solver.certify.verdict import BLOCKING_FLAGS, MIN_SAMPLES, Evidence, decide, in_words, signed_gap


def evidence(**changes) -> Evidence:
    base = dict(
        plan_value=99.0,
        minimize=False,
        target_gap=0.05,
        n=1000,
        estimate=100.0,
        lower=99.5,
        upper=101.0,
        known=[("best sampled plan", 98.0)],
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


def test_too_far_from_the_far_limit_is_not_certified():
    decision = decide(evidence(plan_value=90.0))
    assert decision.verdict == "not_certified" and "gap" in codes(decision)


def test_a_known_plan_beyond_the_far_limit_refutes_the_estimate():
    decision = decide(evidence(known=[("CP-SAT plan", 101.5)]))
    assert decision.verdict == "estimate_refuted"
    assert "101.5" in decision.sentence and "refuted" in decision.sentence


def test_the_plan_above_the_estimate_refutes_it_with_a_signed_gap():
    # the `run t2-ipfwd-x20` case: a plan 18.7% above the estimate was shown as a green "gap 18.71%"
    decision = decide(evidence(plan_value=118.7, known=[("certified plan itself", 118.7)]))
    assert decision.verdict == "estimate_refuted"
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
    assert decision.verdict == "no_finite_optimum"


def test_a_failed_solver_step_forbids_certified_even_with_a_bound():
    decision = decide(
        evidence(bound=99.5, bound_source="cpsat", failed_steps=["configuration bound"], oracle="analytic")
    )
    assert decision.verdict == "not_certified" and "failed_step" in codes(decision)


def test_the_bound_proves_a_plan_whatever_evt_says():
    decision = decide(
        evidence(bound=100.0, bound_source="configuration LP", flags=("ties", "poor_fit"), n=50, oracle="analytic")
    )
    assert decision.verdict == "certified" and decision.basis == "bound"


def test_a_proven_optimum_decides_and_refutes_a_low_estimate():
    # the `certify t2-ipfwd-intadd-x2 --samples 100` case: 0.25% "certified", 13.1% below the optimum
    decision = decide(
        evidence(
            plan_value=95.0,
            estimate=95.0,
            lower=95.0,
            upper=95.2,
            bound=109.4,
            proven_optimum=109.4,
            oracle="analytic",
            known=[("best sampled plan", 95.0)],
        )
    )
    assert decision.verdict == "not_certified" and decision.basis == "proven optimum"
    assert "13.16% below the proven optimum" in decision.sentence
    assert {"refuted", "below_optimum"} <= codes(decision)


def test_minimising_uses_the_lower_limit():
    latency = dict(minimize=True, estimate=1.0, lower=0.99, upper=1.01, known=[("best sampled plan", 1.03)])
    assert decide(evidence(plan_value=1.02, **latency)).verdict == "certified"
    refuted = decide(evidence(plan_value=1.02, **{**latency, "known": [("a plan", 0.98)]}))
    assert refuted.verdict == "estimate_refuted"
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
    bound=st.none() | finite,
    minimize=st.booleans(),
    n=st.integers(20, 5000),
    flags=st.lists(st.sampled_from(sorted(BLOCKING_FLAGS)), max_size=2, unique=True),
)
def test_certified_only_when_nothing_contradicts_it(plan, estimate, spread, known, bound, minimize, n, flags):
    lower, upper = estimate * (1 - spread), estimate * (1 + spread)
    if bound is not None:  # a bound is never beaten by a plan
        bound = min([bound, plan, *known]) if minimize else max([bound, plan, *known])
    ev = evidence(
        plan_value=plan,
        estimate=estimate,
        lower=lower,
        upper=upper,
        minimize=minimize,
        n=n,
        flags=tuple(flags),
        known=[("k", v) for v in known] + [("plan", plan)],
        bound=bound,
        oracle="analytic" if bound is not None else "des",
    )
    decision = decide(ev)
    assert decision.sentence and all(r["sentence"] for r in decision.reasons)
    if decision.verdict != "certified":
        return
    if decision.basis == "bound":
        assert abs(plan - bound) <= 0.05 * abs(bound) + 1e-12
        return
    far = lower if minimize else upper
    assert n >= MIN_SAMPLES and not flags
    assert all((v >= far) if minimize else (v <= far) for v in known + [plan])
    assert abs(far - plan) <= 0.05 * abs(far) + 1e-12
