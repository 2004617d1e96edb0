"""Quantities with units in the YAML: frequencies, times, sizes, rates, percentages.

Each ``parse_*`` function accepts a number or a string such as ``1.4GHz``, ``2.5us``, ``8KiB``,
``2Mpps`` or ``75%`` and returns a plain number in the base unit (Hz, seconds, bytes, per second,
fraction).  Each ``format_*`` function writes a number back in the shortest form that parses to
exactly the same value, so that a spec dumped and loaded again is equal to the original.

Plain numbers (no unit) mean: Hz for frequencies, **cycles** for times (see `Duration`), bytes for
sizes, per second for rates; a spec file must give a size its unit (`size_needs_unit`).

A resource's capacity and a task's demand may be *measured* (`Measure`): a bandwidth (``200GB/s``,
``100Gb/s``), a size (``32MiB``) or a packet rate (``20Mpps``) for a capacity; bytes (``256B``) or
packets (``1packet``) for a demand.  `specs.measured` converts them into the model's shares.  A unit error raises `UnitError` with a message that names the units
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
    "Measure",
    "parse_measured_capacity",
    "parse_measured_demand",
    "size_needs_unit",
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

    same = [u for u in units if u.lower() == unit.lower()]  # `gb/s`, `mib`: the case slipped
    if same:
        return "` or `".join(same)  # `gb/s`: `GB/s` or `Gb/s` (bytes or bits)
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


# --------------------------------------------------------------------- sizes in spec files
def size_needs_unit(value: object) -> None:
    """Refuse a size written as a plain number other than 0 (``bytes: 64`` is bytes? lines?
    KiB?), as a clock without its unit is refused: the spec language asks for ``64B``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value != 0:
        number = int(value) if float(value).is_integer() else value
        raise UnitError(f"a size needs a unit: {shown(value)} would be {number} bytes; did you mean `{number}B`?")


# --------------------------------------------------------------------- measured capacities and demands
# A measured capacity is a bandwidth (bytes per second; bits are converted), a size or a packet
# rate; a measured demand is a size (bytes moved per packet, or a working set) or packets.
_BANDWIDTH = {
    **{unit + "/s": scale for unit, scale in _SIZE.items()},
    **{p + "b/s": f / 8 for p, f in _SI.items()},
    **{p + "bps": f / 8 for p, f in _SI.items() if p != "K"},
}
_PACKETS = {"packet": 1.0, "packets": 1.0, "pkt": 1.0, "pkts": 1.0}
_PPS = {unit: scale for unit, scale in _RATE.items() if unit != "/s"}
#: the kinds of measure, each with its units and the base unit figures are printed in
MEASURES = {
    "bandwidth": (_BANDWIDTH, "B/s"),
    "size": (_SIZE, "B"),
    "rate": (_PPS, "pps"),
    "packets": (_PACKETS, "packets"),
}
MAX_BANDWIDTH = 1e15  # bytes per second: a petabyte per second


@dataclass(frozen=True)
class Measure:
    """A measured quantity as written: `number` in `unit` (of kind `kind`, see `MEASURES`)."""

    number: float
    unit: str
    kind: str

    @property
    def value(self) -> float:
        """In the base unit: bytes per second, bytes, packets per second or packets."""
        return self.number * MEASURES[self.kind][0][self.unit]

    def __str__(self) -> str:
        text = (
            repr(int(self.number)) if self.number == int(self.number) and abs(self.number) < 1e15 else repr(self.number)
        )
        return f"{text}{self.unit}"


def _measure(value: object, what: str, kinds: tuple[str, ...], example: str, share: str) -> Measure | None:
    """A `Measure` of one of `kinds`, or None for a plain number or one with the unit `share`
    (a share: ``%`` for a demand)."""
    if not isinstance(value, str):
        return None
    table = {unit: kind for kind in kinds for unit in MEASURES[kind][0]}
    number, unit = _split(value, what, {**dict.fromkeys(table, 1.0), **({share: 0.01} if share else {})}, example)
    if unit in ("", share):
        return None
    if number < 0:
        raise UnitError(f"a {what} must not be negative, got {shown(value)}")
    return Measure(number, unit, table[unit])


def parse_measured_capacity(value: object) -> Measure | None:
    """A measured capacity (``200GB/s``, ``100Gb/s``, ``32MiB``, ``20Mpps``), or None for a plain
    number (a unitless capacity, parsed by the caller)."""
    measure = _measure(value, "capacity", ("bandwidth", "size", "rate"), "`200GB/s`, `32MiB`, `20Mpps` or a number", "")
    if measure is None:
        return None
    limits = {"bandwidth": (MAX_BANDWIDTH, "1PB/s"), "size": (MAX_SIZE, "1TiB"), "rate": (MAX_RATE, "1Tpps")}
    limit, limit_text = limits[measure.kind]
    if not measure.value > 0:
        raise UnitError(f"a capacity must be positive, got {shown(value)}")
    _at_most(measure.value, limit, "capacity", value, limit_text)
    return measure


def parse_measured_demand(value: object) -> Measure | None:
    """A measured demand: bytes (``256B`` moved per packet, or a working set ``2MiB``) or packets
    (``1packet``); None for a share (a plain number or a percentage, parsed by the caller)."""
    measure = _measure(value, "demand", ("size", "packets"), "`0.4`, `40%`, `256B` or `1packet`", "%")
    if measure is not None:
        _at_most(measure.value, MAX_SIZE if measure.kind == "size" else 1e6, "demand", value, "1TiB or 1e6 packets")
    return measure
