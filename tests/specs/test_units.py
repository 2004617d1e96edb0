"""Units in the YAML: parsing, errors and exact round trips."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tasksolve.specs import units


@pytest.mark.parametrize(
    "text,hz", [("1.4GHz", 1.4e9), ("800MHz", 8e8), ("2.5kHz", 2500.0), (1e9, 1e9), ("100Hz", 100.0)]
)
def test_frequency(text, hz):
    assert units.parse_frequency(text) == pytest.approx(hz)


@pytest.mark.parametrize(
    "text,seconds", [("2.5us", 2.5e-6), ("300ns", 3e-7), ("1ms", 1e-3), ("2s", 2.0), ("7µs", 7e-6)]
)
def test_duration_in_seconds(text, seconds):
    duration = units.parse_duration(text)
    assert duration.unit == "s"
    assert duration.value == pytest.approx(seconds)
    assert duration.to_cycles(2e9) == pytest.approx(seconds * 2e9)


def test_plain_duration_is_cycles():
    duration = units.parse_duration(4200)
    assert duration == units.Duration(4200.0, "cycles")
    assert duration.to_seconds(1.4e9) == pytest.approx(3e-6)
    assert units.parse_duration("4200cycles") == duration


@pytest.mark.parametrize("text,size", [("64B", 64), ("8KiB", 8192), ("1KB", 1000), ("2MiB", 2 * 1024**2), (1500, 1500)])
def test_size(text, size):
    assert units.parse_size(text) == size


@pytest.mark.parametrize("text,rate", [("2Mpps", 2e6), ("500kpps", 5e5), ("1000/s", 1000.0), (10, 10.0)])
def test_rate(text, rate):
    assert units.parse_rate(text) == pytest.approx(rate)


@pytest.mark.parametrize("text,fraction", [("75%", 0.75), (0.3, 0.3), ("100%", 1.0), ("0%", 0.0)])
def test_fraction(text, fraction):
    assert units.parse_fraction(text) == pytest.approx(fraction)


@pytest.mark.parametrize(
    "parse,text,fragment",
    [
        (units.parse_frequency, "1.4GHzz", "unknown unit `GHzz`"),
        (units.parse_frequency, "1.4 GHz Hz", "expected a frequency"),
        (units.parse_frequency, "-1GHz", "must be positive"),
        (units.parse_frequency, True, "expected a frequency"),
        (units.parse_duration, "3uss", "did you mean `us`?"),
        (units.parse_duration, "0us", "must be positive"),
        (units.parse_size, "1.5B", "whole"),
        (units.parse_size, "64b", "unknown unit `b`"),
        (units.parse_rate, "2Mpp", "did you mean `Mpps`?"),
        (units.parse_fraction, "150%", "between 0 and 1"),
        (units.parse_frequency, "nan", "expected a frequency"),
        (units.parse_frequency, float("inf"), "finite"),
    ],
)
def test_unit_errors(parse, text, fragment):
    with pytest.raises(units.UnitError, match=None) as info:
        parse(text)
    assert fragment in str(info.value)


@given(st.floats(min_value=1e3, max_value=1e11, allow_nan=False))
def test_frequency_round_trip(hz):
    assert units.parse_frequency(units.format_frequency(hz)) == hz


@given(st.floats(min_value=1e-12, max_value=1e3, allow_nan=False))
def test_duration_round_trip(seconds):
    duration = units.Duration(seconds, "s")
    assert units.parse_duration(units.format_duration(duration)) == duration


@given(st.integers(0, 2**40))
def test_size_round_trip(size):
    assert units.parse_size(units.format_size(size)) == size


@given(st.floats(min_value=1e-3, max_value=1e12, allow_nan=False))
def test_rate_round_trip(rate):
    assert units.parse_rate(units.format_rate(rate)) == rate
