"""The degenerate-top rule (`evt.atom`) on samples whose distribution is known.

A local-optima sample piles up on its best value: an atom at the top, which the continuous GPD
tail cannot model.  What the rule states instead -- "one more draw beats the best sampled value
with probability at most 1 - (1 - c)^(1/n)" -- must hold at its stated level for *any*
distribution: checked on discrete distributions with an atom at the top whose mass is known, over
many seeds, against a binomial tolerance; and a certificate drawn from an atom is never
`certified`."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasksolve import evt
from tasksolve.solver.certify.known import KnownPlan
from tasksolve.solver.certify.verdict import Evidence, decide


def draw(rng: np.random.Generator, n: int, top_mass: float) -> np.ndarray:
    """Top value 10 with probability `top_mass`, an atom 9 with probability 0.3, else U(0, 8)."""
    u = rng.random(n)
    return np.where(u < top_mass, 10.0, np.where(u < top_mass + 0.3, 9.0, rng.uniform(0, 8, n)))


def mass_above(best: float, top_mass: float) -> float:
    return top_mass if best < 10.0 else 0.0  # above 9 lies only the top atom


@pytest.mark.parametrize("n", [200, 1000])
def test_draw_bound_holds_at_its_level_when_the_top_is_hardest_to_see(n):
    # the top's mass just above the bound: the statement fails exactly when the top is missed,
    # which happens with probability (1 - q)^n ~ 5%
    q = evt.beat_bound(n, 0.95) * (1 + 1e-9)
    seeds = 4000
    fails = 0
    for seed in range(seeds):
        x = draw(np.random.default_rng([n, seed]), n, q)
        fails += mass_above(float(x.max()), q) > evt.beat_bound(n, 0.95)
    expected = (1 - q) ** n
    assert abs(expected - 0.05) < 1e-3
    sd = math.sqrt(seeds * expected * (1 - expected))
    assert abs(fails - seeds * expected) <= 4 * sd  # coverage 95% within a binomial tolerance


def test_draw_bound_never_fails_when_the_top_atom_is_large():
    for seed in range(300):
        x = draw(np.random.default_rng(seed), 200, 0.2)
        atom = evt.top_atom(x)
        assert atom is not None and atom.best == 10.0 and atom.hits >= 2
        assert mass_above(atom.best, 0.2) <= atom.beat_bound


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5000), st.floats(0.5, 0.999))
def test_beat_bound_is_the_tolerance_limit(n, c):
    p = evt.beat_bound(n, c)
    assert 0 < p < 1
    assert math.isclose((1 - p) ** n, 1 - c, rel_tol=1e-9)  # P(all n draws miss a mass p) = 1 - c


def test_atom_found_counted_and_oriented():
    x = np.array([1.0, 2.0, 3.0, 3.0, 3.0 * (1 + 1e-12), 0.5])
    atom = evt.top_atom(x)
    assert atom.hits == 3 and atom.best == pytest.approx(3.0) and atom.interval == (atom.best, math.inf)
    assert atom.singletons == 3 and atom.good_turing == pytest.approx(0.5)  # 1, 2 and 0.5 seen once
    assert evt.top_atom(np.array([1.0, 2.0, 3.0])) is None
    low = evt.top_atom(np.array([5.0, 1.0, 1.0, 2.0]), minimize=True)
    assert low.best == 1.0 and low.interval == (-math.inf, 1.0)
    assert evt.top_atom(np.full(30, 7.0)).hits == 30  # a constant sample is one atom


def test_a_certificate_on_an_atom_is_never_certified():
    x = draw(np.random.default_rng(0), 1000, 0.4)
    atom = evt.top_atom(x)
    decision = decide(
        Evidence(
            plan_value=atom.best,
            minimize=False,
            target_gap=0.05,
            n=x.size,
            estimate=atom.best,
            lower=atom.interval[0],
            upper=atom.interval[1],
            known=[KnownPlan("best sampled plan", atom.best)],
            top_atom=atom.sentence(),
        )
    )
    assert decision.verdict == "not_certified"
    assert "top_atom" in {r["code"] for r in decision.reasons}
    assert decision.sentence.startswith("not certified: ") and "attract at most" in decision.sentence
