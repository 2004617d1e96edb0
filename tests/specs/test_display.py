"""The display formatter: units in [1, 1000), fixed digits, no scientific notation, honest ±."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from tasksolve.specs import display


def test_examples():
    assert display.rate(10937500.0) == "10.94 Mpps"
    assert display.seconds(2.13e-6) == "2.130 us"
    assert display.rate(999.96e3) == "1.000 Mpps"
    assert display.quantity(2.5e-6, "s") == "2.500 us"
    assert display.share(-0.015) == "-1.50%"
    assert display.quantity(10937500.0, "packets/s", 3.56931e-09) == "10.94 Mpps"
    assert display.quantity(10937500.0, "packets/s", 31000) == "10.94 Mpps ± 0.03"


@given(st.floats(min_value=1e-3, max_value=1e12, allow_nan=False))
def test_rates_read_back_within_the_shown_digits(value):
    text = display.rate(value)
    assert "e" not in text.split()[0]
    number, unit = text.split()
    scale = {"Gpps": 1e9, "Mpps": 1e6, "kpps": 1e3, "pps": 1.0}[unit]
    assert math.isclose(float(number) * scale, value, rel_tol=1e-3)
    assert float(number) < 1000 or unit == "Gpps"
