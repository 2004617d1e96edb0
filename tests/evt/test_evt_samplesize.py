"""Sample-size formulas of ASPLOS'12 (evt.samplesize)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasksolve.evt import EVTError, capture_probability, samples_needed


def test_formula() -> None:
    assert capture_probability(0.01, 100) == pytest.approx(1 - 0.99**100)
    assert capture_probability(0.5, 0) == 0.0
    np.testing.assert_allclose(capture_probability(0.1, np.array([1, 2])), [0.1, 0.19])
    # ASPLOS'12-style reading: 1000 draws catch one of the best 1% with probability > 0.9999
    assert capture_probability(0.01, 1000) > 0.9999
    assert samples_needed(0.01, 0.95) == 299  # ceil(log 0.05 / log 0.99) = ceil(298.07)
    assert samples_needed(1e-9, 0.5) == math.ceil(math.log(0.5) / math.log1p(-1e-9))


@settings(max_examples=60, deadline=None)
@given(p=st.floats(1e-6, 0.9), prob=st.floats(1e-3, 0.999))
def test_samples_needed_is_the_smallest_sufficient_n(p: float, prob: float) -> None:
    n = samples_needed(p, prob)
    assert capture_probability(p, n) >= prob
    assert n == 1 or capture_probability(p, n - 1) < prob


@pytest.mark.parametrize("args", [(0.0, 10), (1.0, 10), (1.5, 10), ("x", 10)])
def test_bad_p(args: tuple) -> None:
    with pytest.raises(EVTError):
        capture_probability(*args)


def test_bad_inputs() -> None:
    with pytest.raises(EVTError):
        capture_probability(0.1, -1)
    with pytest.raises(EVTError):
        samples_needed(0.1, 1.0)
