"""Racing finalists under noise (KN with Hsu's stop): interleaving, warm-up, ties, budget, and
the probability of a correct selection on known truths."""

from __future__ import annotations

import math
import random

import pytest

from tasksolve.solver.selection.racing import kn_h2, race, t_half_width


class Bed:
    """Plans with known means and normal noise of relative size `cv`; records the order measured."""

    def __init__(self, means: dict, cv: float, seed: int) -> None:
        self.means, self.cv, self.rng, self.seen = means, cv, random.Random(seed), []

    def __call__(self, plan, repeat_index: int) -> float:
        self.seen.append((plan, repeat_index))
        return self.means[plan] * (1 + self.cv * self.rng.gauss(0, 1))


def test_h2_tends_to_its_large_sample_limit():
    # eta ~ -ln(2 alpha / (k-1)) / (n0 - 1) for large n0, so h2 -> -2 ln(2 alpha / (k-1))
    assert kn_h2(2, 0.05, 10_000) == pytest.approx(-2 * math.log(0.1), rel=1e-3)
    assert kn_h2(10, 0.05, 10) > kn_h2(10, 0.05, 20) > kn_h2(2, 0.05, 20)  # more plans, less data: wider


def test_repeats_are_interleaved_never_back_to_back_and_warmup_is_discarded():
    bed = Bed({"a": 1.0, "b": 0.99, "c": 0.97, "d": 0.9}, cv=0.05, seed=1)
    result = race(list(bed.means), bed, n0=6, warmup=2, confirm=4, seed=3)
    plans = [p for p, _ in bed.seen]
    assert all(x != y for x, y in zip(plans, plans[1:]))
    for stats in result.stats:
        measured = [r for p, r in bed.seen if p == stats.plan]
        assert measured == list(range(len(measured)))  # repeat indices count up per plan
        confirmations = 4 if stats.plan == result.best else 0
        assert stats.n == len(measured) - 2 - confirmations or stats.plan != result.best
    assert result.measurements == len(bed.seen)
    assert result.confirmed and result.best in {"a", "b"}


def test_a_clear_winner_is_found_quickly_and_identical_plans_are_ties():
    bed = Bed({"a": 1.0, "b": 0.5, "c": 0.4}, cv=0.01, seed=2)
    result = race(list(bed.means), bed, n0=5, confirm=0)
    assert result.best == "a" and result.ties == [] and result.rounds == 5
    twins = Bed({"x": 1.0, "y": 1.0, "z": 0.5}, cv=0.02, seed=3)
    result = race(list(twins.means), twins, n0=5, confirm=0)
    assert result.best in {"x", "y"} and set(result.ties) == {"x", "y"} - {result.best}
    assert result.stopped in {"the rest within the zone", "one plan left"}


def test_a_budget_stops_the_race_and_the_survivors_are_ties():
    bed = Bed({p: 1.0 - 0.015 * p for p in range(6)}, cv=0.10, seed=4)
    result = race(list(bed.means), bed, n0=5, confirm=3, budget=60)
    assert result.stopped == "budget spent" and result.measurements <= 60
    assert len(result.ties) >= 1 and not result.confirmed


def test_bad_settings_are_refused():
    with pytest.raises(ValueError):
        race([], lambda p, r: 1.0)
    with pytest.raises(ValueError):
        race([1, 2], lambda p, r: 1.0, n0=1)
    assert math.isinf(t_half_width([1.0]))


def test_least_favourable_configuration_selects_the_best_at_the_nominal_rate():
    """Every other plan exactly `zone` below the best (KN's least favourable configuration):
    PCS >= 1 - alpha = 0.95; 200 races, so a 3-sigma binomial margin of 0.046."""
    correct = 0
    for seed in range(200):
        means = {0: 1.0, **dict.fromkeys(range(1, 5), 0.98)}
        bed = Bed(means, cv=0.04, seed=seed)
        correct += race(list(means), bed, zone=0.02, n0=10, confirm=0, seed=seed).best == 0
    assert correct / 200 >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / 200)
