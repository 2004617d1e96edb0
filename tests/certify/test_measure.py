"""One measurement per placement class (`solver.certify.measure`) and when sampling may stop
(`solver.certify.run.decided`)."""

from __future__ import annotations

import random

from tasksolve.simulate.oracle import make_oracle
from tasksolve.solver.certify.measure import ClassOracle, class_seed
from tasksolve.solver.certify.run import DECIDED_DRAW_BOUND, decided, unsaturable
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
