"""One measurement per placement class (`solver.certify.measure`) and when sampling may stop
(`solver.certify.run.decided`)."""

from __future__ import annotations

import random

from tasksolve.simulate.oracle import make_oracle
from tasksolve.solver.certify.measure import MAX_REPEATS, ClassOracle, class_seed, pooled, precise
from tasksolve.solver.certify.stopping import DECIDED_DRAW_BOUND, decided, unsaturable
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


class Judged:
    """A run whose verdict is `proven` when the plan's pessimistic value is within 1% of `bound`."""

    def __init__(self, spec, oracle, plan, bound):
        self.spec, self.oracle, self.plan, self.bound = spec, oracle, plan, bound
        self.measured = oracle.evaluate(plan)

    def judge(self, values, analysis, why_not):
        pessimistic = self.measured.throughput - self.measured.half_width
        verdict = "proven" if pessimistic >= self.bound * 0.99 else "not_certified"
        return None, decision(verdict, "bound"), None


def test_the_plan_gets_repeats_only_while_its_noise_decides_the_verdict():
    spec = load_spec("t2-ipfwd-intadd-x2")
    plan = Plan.from_contexts(spec, [0, 4, 1, 8, 12, 9])
    # the value meets the bound's target, the pessimistic value (2% half-width) does not: repeats
    # shrink the half-width by sqrt(r) until the verdict no longer depends on it, at most MAX_REPEATS
    oracle = ClassOracle(spec, Noisy(spec), seed=1)
    run = Judged(spec, oracle, plan, bound=oracle.evaluate(plan).throughput)
    found = precise(run, None, None, None)
    r = oracle.repeats(plan.contexts(spec))
    assert 2 <= r <= MAX_REPEATS and run.measured is oracle.table[oracle.key(plan.contexts(spec))]
    assert found[1].verdict == (
        "proven" if run.measured.throughput - run.measured.half_width >= run.bound * 0.99 else "not_certified"
    )
    # far from the bound the noise decides nothing: no repeat
    far = ClassOracle(spec, Noisy(spec), seed=1)
    quiet = Judged(spec, far, plan, bound=far.evaluate(plan).throughput * 1.5)
    assert precise(quiet, None, None, None)[1].verdict == "not_certified" and far.repeats(plan.contexts(spec)) == 1
