"""Threshold choice (evt.threshold)."""

from __future__ import annotations

import numpy as np
import pytest

from tasksolve.evt.errors import EVTError
from tasksolve.evt.gof import null_statistics
from tasksolve.evt.threshold import _AD_CRIT, _XI_TABLE, MIN_FIT, candidate_counts, choose_threshold, critical_values


def test_candidate_counts_respect_max_fraction() -> None:
    ks = candidate_counts(5000, 0.05)
    assert ks[0] == 250 and ks == sorted(ks, reverse=True)
    assert min(ks) == 50 and len(ks) == 10
    small = candidate_counts(1000, 0.05)
    assert small[0] == 50 and small[-1] == 30 and len(small) == 10
    assert all(a > b for a, b in zip(small, small[1:]))
    assert candidate_counts(100, 0.05) == [MIN_FIT]  # too small for 5%: flagged by analyze


def test_chosen_threshold_leaves_at_most_max_fraction_above() -> None:
    x = np.random.default_rng(1).normal(size=3000)
    for frac in (0.02, 0.05, 0.1):
        choice = choose_threshold(x, max_fraction=frac)
        assert all(c.exceedances <= frac * 3000 for c in choice.candidates)
        assert choice.chosen.exceedances == int(np.sum(x > choice.chosen.threshold))


def test_given_threshold() -> None:
    x = np.random.default_rng(2).normal(size=300)
    choice = choose_threshold(x, threshold=1.0)
    assert len(choice.candidates) == 1 and not choice.auto
    assert choice.chosen.threshold == 1.0
    with pytest.raises(EVTError, match="at least 10"):
        choose_threshold(x, threshold=float(np.sort(x)[-5]))


def test_critical_values_interpolate_the_table() -> None:
    ad, me = critical_values(-0.25)
    assert ad == pytest.approx((0.885 + 0.853) / 2) and 0.807 < me < 0.857
    assert critical_values(-5.0)[0] == _AD_CRIT[0]
    assert np.isnan(critical_values(0.7)[1])


@pytest.mark.parametrize("xi", [-0.3, 0.0])
def test_ad_table_entry_reproduces(xi: float) -> None:
    """The tabulated 90% point must leave ~10% of fresh null A^2 values above it: with 2000
    replications the count above is Binomial(2000, 0.1), 99.9% within [160, 243]."""
    ad, _ = null_statistics(xi, 1.0, 100, 2000, np.random.default_rng(123))
    crit = float(np.interp(xi, _XI_TABLE, _AD_CRIT))
    assert 160 <= int(np.sum(ad > crit)) <= 243
