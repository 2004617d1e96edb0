"""Noisy figures (`simulate.noise`): warm-up discarded, runs interleaved, t intervals, adaptive
repeats up to the budget, the host's noise floor."""

from __future__ import annotations

import math
import random
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasksolve.simulate.noise import RepeatPolicy, interleaved, noise_floor, t_interval


def test_one_run_has_an_unknown_spread_never_zero():
    assert t_interval([5.0]) == (5.0, math.inf)
    mean, half = t_interval([1.0, 3.0])
    assert mean == 2.0 and half == pytest.approx(12.706 * math.sqrt(2) / math.sqrt(2), rel=1e-4)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 5), st.integers(0, 3), st.integers(1, 6), st.integers(0, 6))
def test_runs_are_interleaved_never_back_to_back_and_warm_up_is_discarded(count, warmup, repeats, extra):
    order: list[int] = []
    policy = RepeatPolicy(repeats=repeats, warmup=warmup, precision=1e-9, budget=repeats + extra)

    def run(i: int) -> float:
        order.append(i)
        return float(len(order))  # always rising: the precision is never reached

    kept = interleaved(count, run, policy)
    assert all(len(k) == repeats + extra for k in kept)  # the budget, exactly
    assert len(order) == count * (warmup + repeats + extra)
    if count > 1:
        assert all(a != b for a, b in zip(order, order[1:]))
    assert sorted(x for k in kept for x in k) == list(range(count * warmup + 1, len(order) + 1))


def test_adaptive_repeats_stop_at_the_precision_and_the_coverage_is_about_95_percent():
    rng = random.Random(3)
    policy = RepeatPolicy(repeats=3, precision=0.01, budget=200)
    covered, counts = 0, []
    for _ in range(300):
        kept = interleaved(2, lambda i: (100.0 if i == 0 else 50.0) * (1 + 0.03 * rng.gauss(0, 1)), policy)
        counts += [len(k) for k in kept]
        mean, half = t_interval(kept[0])
        assert half / mean <= 0.01 or len(kept[0]) == 200
        covered += abs(mean - 100.0) <= half
    # n ~ (1.96 * 0.03 / 0.01)^2 ~ 35 runs; sequential stopping costs a little coverage
    assert 25 < statistics.median(counts) < 60
    assert covered / 300 > 0.88


def test_the_noise_floor_is_the_pooled_cv_of_the_repeated_plans():
    rng = random.Random(5)
    runs = [[m * (1 + 0.05 * rng.gauss(0, 1)) for _ in range(400)] for m in (10.0, 1000.0)] + [[7.0]]
    assert noise_floor(runs) == pytest.approx(0.05, rel=0.1)
    assert noise_floor([[1.0], [2.0]]) is None
