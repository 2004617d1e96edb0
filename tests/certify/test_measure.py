"""One measurement per placement class (`solver.certify.measure`) and when sampling may stop
(`solver.certify.judgement.decided`)."""

from __future__ import annotations

import random

import pytest

from tasksolve.simulate.oracle import make_oracle
from tasksolve.solver.certify.judgement import DECIDED_DRAW_BOUND, Judgement, decided, unsaturable
from tasksolve.solver.certify.measure import MAX_REPEATS, ClassOracle, class_seed, pooled, precise
from tasksolve.solver.certify.verdict import Decision
from tasksolve.specs import Plan, load_spec
from tasksolve.specs.symmetry import UsableTree


class Counting:
    """An oracle that records the seeds it is called with."""

    def __init__(self, spec):
        self.inner = make_oracle(spec, "analytic")
        self.seeds: list[int] = []

    def evaluate(self, plan, seed=None):
        self.seeds.append(seed)
        return self.inner.evaluate(plan, seed=seed)


def symmetric_copy(spec, contexts, rng):
    tree = UsableTree.of(spec.topology, spec.usable_contexts)
    mapping = tree.random_automorphism(rng)
    return [mapping[c] for c in contexts]


def test_equivalent_plans_are_measured_once_with_the_class_seed():
    spec = load_spec("t2-ipfwd-intadd-x2")
    inner = Counting(spec)
    oracle = ClassOracle(spec, inner, seed=7)
    rng = random.Random(0)
    contexts = [0, 4, 1, 8, 12, 9]
    first = oracle.evaluate(Plan.from_contexts(spec, contexts))
    for _ in range(20):
        other = symmetric_copy(spec, contexts, rng)
        assert oracle.evaluate_contexts(other) is first
    assert oracle.measured == 1 and oracle.classes == 1
    assert inner.seeds == [class_seed(7, oracle.key(contexts))]
    # the seed is the class's and the run's: the same from another order, another for another run
    again = ClassOracle(spec, Counting(spec), seed=7)
    again.evaluate_contexts(symmetric_copy(spec, contexts, rng))
    assert again.oracle.seeds == inner.seeds
    assert class_seed(8, oracle.key(contexts)) != inner.seeds[0]
    assert oracle.evaluate_contexts([0, 1, 2, 3, 4, 5]) is not first and oracle.measured == 2


def decision(verdict: str, basis: str = "EVT estimate") -> Decision:
    return Decision(verdict, basis, verdict, [], {}, [])


def test_sampling_stops_only_on_a_decided_verdict():
    assert decided(decision("certified"), None) and decided(decision("proven", "bound"), None)
    assert not decided(decision("best_found", "draw bound"), DECIDED_DRAW_BOUND * 1.01)
    assert decided(decision("best_found", "draw bound"), DECIDED_DRAW_BOUND)
    assert decided(decision("not_certified", "proven optimum"), None)  # more samples cannot change it
    assert decided(decision("not_certified", "known plan"), None)
    for verdict in ("not_certified", "refuted", "no_finite_optimum"):
        assert not decided(decision(verdict), 0.001)


class Atom:
    def __init__(self, hits, n):
        self.hits, self.n = hits, n


def test_an_atom_too_few_draws_reach_stops_sampling_negative():
    # t2-constrained: 766 of 2000 restarts on the best value; at 300 draws 38% is already decided
    assert unsaturable(114, 300) and not unsaturable(140, 300) and not unsaturable(300, 300)
    assert decided(decision("not_certified"), 0.01, Atom(114, 300))
    assert not decided(decision("not_certified"), 0.01, Atom(140, 300))
    assert not decided(decision("refuted"), 0.01, Atom(10, 300))


class Noisy:
    """A stochastic stand-in: the closed form's figures with a seeded noise and half-width."""

    def __init__(self, spec):
        self.inner = make_oracle(spec, "analytic")
        self.seeds: list[int] = []

    def evaluate(self, plan, seed=None):
        import dataclasses

        import numpy as np

        self.seeds.append(seed)
        m = self.inner.evaluate(plan, seed=seed)
        noise = 1 + 0.01 * np.random.default_rng(seed).standard_normal()
        return dataclasses.replace(m, throughput=m.throughput * noise, half_width=0.02 * m.throughput)


def test_repeats_are_seeded_by_the_class_and_pooled():
    """`refine` adds runs seeded by (class, repeat number): the pooled figure is the mean and the
    half-width sqrt(sum h^2)/r, the same whichever symmetric copy asks, and repeat 0 is the class's
    first measurement."""
    spec = load_spec("t2-ipfwd-intadd-x2")
    contexts = [0, 4, 1, 8, 12, 9]
    oracle = ClassOracle(spec, Noisy(spec), seed=5)
    first = oracle.evaluate_contexts(contexts)
    refined = oracle.refine(contexts, 3)
    key = oracle.key(contexts)
    assert oracle.oracle.seeds == [class_seed(5, key, r) for r in range(3)] and class_seed(5, key, 0) == class_seed(
        5, key
    )
    runs = oracle.runs[key]
    assert runs[0] is first and len(runs) == 3 == oracle.repeats(contexts)
    assert abs(refined.throughput - sum(m.throughput for m in runs) / 3) < 1e-6 * refined.throughput
    assert abs(refined.half_width - (sum(m.half_width**2 for m in runs) ** 0.5) / 3) < 1e-9 * refined.half_width
    assert oracle.evaluate_contexts(contexts) is refined and oracle.refine(contexts, 2) is refined  # never fewer
    other = ClassOracle(spec, Noisy(spec), seed=5)
    copy = symmetric_copy(spec, contexts, random.Random(1))
    assert other.refine(copy, 3).throughput == refined.throughput  # the class's figure, whoever asks
    assert pooled([first]) is first


def judge_against(bound: float):
    """A judge whose verdict is `proven` when the plan's pessimistic value is within 1% of `bound`
    (rule 4 with a 1% target), and the measurements it was asked about."""
    asked = []

    def judge(measured) -> Judgement:
        asked.append(measured)
        pessimistic = measured.throughput - measured.half_width
        verdict = "proven" if pessimistic >= bound * 0.99 else "not_certified"
        return Judgement(None, decision(verdict, "bound"), None)

    return judge, asked


#: (seed, repeats, verdict, the pooled value and half-width over the closed form's T), worked out
#: by hand from `Noisy`: run r of the plan's class has value T (1 + 0.01 z_r) and half-width 0.02 T,
#: its noise z_r the standard normal seeded by ``class_seed(seed, key, r)``; the bound is run 0's
#: value, the target 99% of it; r runs pool to T (1 + 0.01 mean z) with half-width 0.02 T / sqrt(r).
#: Run 0 always meets the target with its value but not with its pessimistic value (value less
#: 0.02 T): the noise decides, so a second run is added, and so on while it still decides.
PRECISE_CASES = [
    # z = 0.4455, 1.7204: target 0.99 x 1.00445 = 0.99441; two runs: 1.01083 - 0.01414 = 0.99669
    # >= 0.99441, proven with or without the noise -> stop at 2, proven
    (0, 2, "proven", 1.01083, 0.01414),
    # z = 0.4685, -1.8302: target 0.99464; two runs: value 0.99319 < 0.99464, not certified with or
    # without the noise -> stop at 2, not_certified (the repeats showed the value itself misses)
    (2, 2, "not_certified", 0.99319, 0.01414),
    # z = 1.5493, 0.7824, -0.3171, -0.4001: target 1.00534; values 1.01549, 1.01166, 1.00672 meet it
    # and pessimistic 0.99549, 0.99752, 0.99517 do not (the noise decides at 1, 2 and 3 runs); at
    # MAX_REPEATS = 4 runs 1.00404 - 0.01 = 0.99404 -> stop at the cap, not_certified
    (1, 4, "not_certified", 1.00404, 0.01),
]


@pytest.mark.parametrize(("seed", "repeats", "verdict", "value", "half_width"), PRECISE_CASES)
def test_the_plan_gets_repeats_only_while_its_noise_decides_the_verdict(seed, repeats, verdict, value, half_width):
    spec = load_spec("t2-ipfwd-intadd-x2")
    plan = Plan.from_contexts(spec, [0, 4, 1, 8, 12, 9])
    contexts = plan.contexts(spec)
    truth = make_oracle(spec, "analytic").evaluate(plan).throughput  # T: 10.94 Mpps on this plan
    oracle = ClassOracle(spec, Noisy(spec), seed=seed)
    first = oracle.evaluate(plan)
    judge, asked = judge_against(first.throughput)
    measured, found = precise(oracle, contexts, first, spec.objective, judge)
    assert MAX_REPEATS == 4 and oracle.repeats(contexts) == repeats and found.decision.verdict == verdict
    assert measured is oracle.table[oracle.key(contexts)] and any(a is measured for a in asked)  # judged: pooled
    assert measured.throughput == pytest.approx(value * truth, abs=1e-5 * truth)
    assert measured.half_width == pytest.approx(half_width * truth, abs=1e-5 * truth)


def test_far_from_the_bound_the_noise_decides_nothing():
    """A bound 1.5 times the plan's value: the plan misses 99% of it with or without its 2%
    half-width, so the verdict is `not_certified` and no repeat is added."""
    spec = load_spec("t2-ipfwd-intadd-x2")
    plan = Plan.from_contexts(spec, [0, 4, 1, 8, 12, 9])
    far = ClassOracle(spec, Noisy(spec), seed=1)
    first = far.evaluate(plan)
    judge, _ = judge_against(first.throughput * 1.5)
    measured, found = precise(far, plan.contexts(spec), first, spec.objective, judge)
    assert found.decision.verdict == "not_certified" and far.repeats(plan.contexts(spec)) == 1 and measured is first
