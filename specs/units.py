"""Quantities with units in the YAML: frequencies, times, sizes, rates, percentages.

Each ``parse_*`` function accepts a number or a string such as ``1.4GHz``, ``2.5us``, ``8KiB``,
``2Mpps`` or ``75%`` and returns a plain number in the base unit (Hz, seconds, bytes, per second,
fraction).  Each ``format_*`` function writes a number back in the shortest form that parses to
exactly the same value, so that a spec dumped and loaded again is equal to the original.

Plain numbers (no unit) mean: Hz for frequencies, **cycles** for times (see `Duration`), bytes for
sizes, per second for rates.  A unit error raises `UnitError` with a message that names the units
that would have been accepted.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from tasksolve.specs.errors import SpecsError, shown

__all__ = [
    "UnitError",
    "Duration",
    "parse_frequency",
    "parse_clock",
    "parse_duration",
    "parse_seconds",
    "parse_size",
    "parse_rate",
    "parse_fraction",
    "format_frequency",
    "format_duration",
    "format_size",
    "format_rate",
    "format_fraction",
]


class UnitError(SpecsError, ValueError):
    """A value that is not a number with one of the expected units."""


_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_QUANTITY = re.compile(rf"^\s*({_NUMBER})\s*([A-Za-z%/µ]*)\s*$")

_SI = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_SUB = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9, "ps": 1e-12}
_SIZE = {
    "B": 1,
    "kB": 1000,
    "KB": 1000,
    "MB": 1000**2,
    "GB": 1000**3,
    "KiB": 1024,
    "MiB": 1024**2,
    "GiB": 1024**3,
}
_FREQ = {p + "Hz": f for p, f in _SI.items() if p != "K"}
_RATE = {**{p + "pps": f for p, f in _SI.items() if p != "K"}, "/s": 1.0}


def _split(value: object, what: str, units: dict[str, float], example: str) -> tuple[float, str]:
    """Split `value` into (number, unit text); the unit must be in `units` or empty."""
    if isinstance(value, bool) or value is None:
        raise UnitError(f"expected a {what} such as {example}, got {shown(value)}")
    if isinstance(value, (int, float)):
        try:
            number, unit = float(value), ""
        except OverflowError:
            raise UnitError(f"expected a {what} such as {example}, got {shown(value)} (too large)") from None
    elif isinstance(value, str):
        match = _QUANTITY.match(value) if len(value) <= 64 else None
        if not match:
            raise UnitError(f"expected a {what} such as {example}, got {shown(value)}")
        number, unit = float(match.group(1)), match.group(2)
    else:
        raise UnitError(f"expected a {what} such as {example}, got a {type(value).__name__}")
    if not math.isfinite(number):
        raise UnitError(f"expected a finite {what}, got {shown(value)}")
    if unit and unit not in units:
        accepted = ", ".join(sorted(units, key=lambda u: (units[u], u)))
        hint = _closest_unit(unit, units)
        suggestion = f"; did you mean `{hint}`?" if hint else ""
        raise UnitError(f"unknown unit `{unit}` in {shown(value)} (accepted: {accepted}){suggestion}")
    return number, unit


# The ranges every quantity must lie in (documented in the JSON Schema and the README): wider
# than any machine or run this tool is for, narrow enough that products of them stay finite.
CLOCK_RANGE = (1e6, 1e11)  # 1 MHz .. 100 GHz
MAX_SIZE = 1024**4  # 1 TiB per message
MAX_RATE = 1e12  # packets per second
MAX_WALL_SECONDS = 7 * 24 * 3600.0  # a week of wall-clock time
MAX_TIME_SECONDS = 3600.0  # an hour of processor time (latency bounds)
MAX_CYCLES = 1e15


def _at_most(number: float, limit: float, what: str, value: object, limit_text: str) -> float:
    if number > limit:
        raise UnitError(f"{what} {shown(value)} is out of range (at most {limit_text})")
    return number


def _closest_unit(unit: str, units: dict[str, float]) -> str | None:
    import difflib

    found = difflib.get_close_matches(unit, list(units), n=1, cutoff=0.6)
    return found[0] if found else None


def parse_frequency(value: object) -> float:
    """A clock frequency in Hz: ``1.4GHz``, ``800MHz``; a plain number is Hz."""
    number, unit = _split(value, "frequency", _FREQ, "`1.4GHz`")
    hz = number * (_FREQ[unit] if unit else 1.0)
    if hz <= 0:
        raise UnitError(f"a frequency must be positive, got {shown(value)}")
    return hz


def parse_clock(value: object) -> float:
    """A processor clock: a frequency between 1 MHz and 100 GHz. A plain number below 1 MHz is
    refused with a suggestion (``clock: 1.4`` would be 1.4 Hz: almost surely a forgotten unit)."""
    hz = parse_frequency(value)
    number, unit = _split(value, "frequency", _FREQ, "`1.4GHz`")
    low, high = CLOCK_RANGE
    if not unit and hz < low:
        guess = f"{number:g}GHz" if number < 1000 else f"{number / 1e3:g}GHz" if number < 1e6 else f"{number:g}Hz"
        raise UnitError(f"a clock needs a unit: {shown(value)} would be {hz:g} Hz; did you mean `{guess}`?")
    if not low <= hz <= high:
        raise UnitError(f"clock {shown(value)} is out of range (1MHz to 100GHz)")
    return hz


def parse_size(value: object) -> int:
    """A size in bytes: ``64B``, ``8KiB``, ``1MB``; a plain number is bytes."""
    number, unit = _split(value, "size", _SIZE, "`64B` or `8KiB`")
    size = _at_most(number * (_SIZE[unit] if unit else 1), MAX_SIZE, "size", value, "1TiB")
    if size < 0 or size != int(size):
        raise UnitError(f"a size must be a whole, non-negative number of bytes, got {shown(value)}")
    return int(size)


def parse_rate(value: object) -> float:
    """A packet rate per second: ``2Mpps``, ``500kpps``, ``1000/s``; a plain number is per second."""
    number, unit = _split(value, "rate", _RATE, "`2Mpps`")
    rate = number * (_RATE[unit] if unit else 1.0)
    if rate <= 0:
        raise UnitError(f"a rate must be positive, got {shown(value)}")
    return _at_most(rate, MAX_RATE, "rate", value, "1Tpps")


def parse_seconds(value: object) -> float:
    """A wall-clock duration in seconds: ``30s``, ``500ms``; a plain number is seconds."""
    number, unit = _split(value, "duration", {**_SUB, "min": 60.0, "h": 3600.0}, "`30s`")
    seconds = number * ({**_SUB, "min": 60.0, "h": 3600.0}[unit] if unit else 1.0)
    if seconds <= 0:
        raise UnitError(f"a duration must be positive, got {shown(value)}")
    return _at_most(seconds, MAX_WALL_SECONDS, "duration", value, "a week, 168h")


def parse_fraction(value: object) -> float:
    """A fraction in [0, 1]: ``0.75`` or ``75%``."""
    number, unit = _split(value, "fraction", {"%": 0.01}, "`0.75` or `75%`")
    fraction = number * (0.01 if unit else 1.0)
    if not 0.0 <= fraction <= 1.0:
        raise UnitError(f"a fraction must lie between 0 and 1 (0% and 100%), got {shown(value)}")
    return fraction


@dataclass(frozen=True)
class Duration:
    """A processor-time quantity: either seconds (``3us``) or cycles (a plain number, ``4500``).

    The clock that converts one into the other belongs to the topology, so the spec keeps what
    the user wrote and converts on use (`to_seconds`, `to_cycles`).
    """

    value: float
    unit: str  # "s" or "cycles"

    def to_seconds(self, clock_hz: float) -> float:
        return self.value if self.unit == "s" else self.value / clock_hz

    def to_cycles(self, clock_hz: float) -> float:
        return self.value * clock_hz if self.unit == "s" else self.value

    def __str__(self) -> str:
        return format_duration(self)


def parse_duration(value: object) -> Duration:
    """A processor time: ``2.5us``, ``300ns``, ``1ms`` (seconds) or a plain number of cycles."""
    if isinstance(value, Duration):
        return value
    units = {**_SUB, "cycles": 1.0}
    number, unit = _split(value, "time", units, "`2.5us` or a number of cycles")
    if number <= 0:
        raise UnitError(f"a time must be positive, got {shown(value)}")
    if unit in ("", "cycles"):
        return Duration(_at_most(number, MAX_CYCLES, "time", value, "1e15 cycles"), "cycles")
    return Duration(_at_most(number * _SUB[unit], MAX_TIME_SECONDS, "time", value, "1h"), "s")


def _shortest(value: float, scales: list[tuple[str, float]], parse) -> str:
    """The first ``number+unit`` text among `scales` that parses back to exactly `value`."""
    for unit, scale in scales:
        scaled = value / scale
        text = repr(int(scaled)) if scaled == int(scaled) and abs(scaled) < 1e15 else repr(scaled)
        candidate = f"{text}{unit}"
        try:
            if parse(candidate) == value:
                return candidate
        except UnitError:
            continue
    raise AssertionError("unreachable: the last scale always round-trips")  # pragma: no cover


def format_frequency(hz: float) -> str:
    return _shortest(hz, [("GHz", 1e9), ("MHz", 1e6), ("kHz", 1e3), ("Hz", 1.0)], parse_frequency)


def format_size(size: int) -> str:
    for unit in ("GiB", "MiB", "KiB"):
        if size and size % _SIZE[unit] == 0:
            return f"{size // _SIZE[unit]}{unit}"
    return f"{size}B"


def format_rate(rate: float) -> str:
    return _shortest(rate, [("Gpps", 1e9), ("Mpps", 1e6), ("kpps", 1e3), ("pps", 1.0)], parse_rate)


def format_duration(duration: Duration) -> str | float:
    if duration.unit == "cycles":
        return f"{duration.value!r}cycles" if duration.value != int(duration.value) else f"{int(duration.value)}cycles"
    scales = [("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9), ("ps", 1e-12)]
    best = None
    for unit, scale in scales:
        try:
            text = _shortest(duration.value, [(unit, scale)], lambda t: parse_duration(t).value)
        except AssertionError:
            continue
        if best is None or len(text) < len(best):
            best = text
    return best if best is not None else f"{duration.value!r}s"


def format_fraction(fraction: float) -> str:
    return f"{fraction * 100:g}%" if parse_fraction(f"{fraction * 100:g}%") == fraction else repr(fraction)
