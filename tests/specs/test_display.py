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
    assert display.quantity(10937500.0, "packets/s", 31000) == "10.94 Mpps ± 31 kpps"
    assert display.quantity(10937500.0, "packets/s", 131.7) == "10.94 Mpps ± 130 pps"
    assert display.quantity(2.13e-6, "s", 1.53e-8) == "2.130 us ± 15 ns"
    assert display.half_width(996000.0, "packets/s") == "1.0 Mpps"  # two digits round up to the next unit
    assert display.rate(8.651e-294) == "8.651e-294 pps"  # a capacity of 1e-300: no 290 zeros
    assert display.seconds(4.62e293) == "4.620e+293 s" and display.seconds(999_999.0) == "1000000 s"


@given(st.floats(min_value=1e-3, max_value=1e12, allow_nan=False))
def test_rates_read_back_within_the_shown_digits(value):
    text = display.rate(value)
    assert "e" not in text.split()[0]
    number, unit = text.split()
    scale = {"Gpps": 1e9, "Mpps": 1e6, "kpps": 1e3, "pps": 1.0}[unit]
    assert math.isclose(float(number) * scale, value, rel_tol=1e-3)
    assert float(number) < 1000 or unit == "Gpps"


@given(st.floats(min_value=1e-320, max_value=0.99e-3))
def test_a_rate_below_a_thousandth_of_a_pps_is_scientific_and_reads_back(value):
    """A plan on a capacity of 1e-300 runs at about 1e-294 pps: fixed notation would print
    hundreds of zeros; the figure stays readable and exact to its four digits."""
    number, unit = display.rate(value).split()
    assert unit == "pps" and "e" in number and len(number) <= 11
    assert math.isclose(float(number), value, rel_tol=1e-3)


def test_counts_agree_with_their_number():
    assert display.count(1, "placement class") == "1 placement class"
    assert display.count(1526, "placement class") == "1526 placement classes"
    assert display.count(2, "empty strand") == "2 empty strands"
    assert display.count(0, "sample") == "0 samples"


@given(st.floats(min_value=1e-3, max_value=1e12), st.floats(min_value=1e-6, max_value=0.5))
def test_a_half_width_has_two_significant_digits_and_its_unit(value, share):
    text = display.quantity(value, "packets/s", value * share)
    number, unit = text.split(" ± ")[1].split()
    digits = number.split("e")[0].replace(".", "").lstrip("0")  # below 1e-3 pps: scientific
    assert len(digits) <= 3 and unit.endswith("pps")  # "130" has two significant digits and a 0
