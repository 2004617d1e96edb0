"""Figures for people: the one formatter of rates, times, frequencies and shares on screen.

`specs.units` writes values back into specs (exact, round-trip text such as ``0.0109375Gpps``);
this module writes them for reading: a unit chosen so that the number lies in [1, 1000), four
significant digits, no scientific notation, and a half-width shown with the digits of the value
it qualifies in two significant digits and its own unit (so ``10.94 Mpps ± 31 kpps``, never
``± 3.56931e-09``).  Only a value below a thousandth of the smallest unit (`TINY`: a plan on a
capacity of 1e-300 runs at 8.651e-294 pps) or a million of the largest (`HUGE`: its packets take
4.620e+293 s) is written in scientific notation, in that unit: in fixed notation it would be
hundreds of digits.
"""

from __future__ import annotations

import math

_RATE = (("Gpps", 1e9), ("Mpps", 1e6), ("kpps", 1e3), ("pps", 1.0))
_TIME = (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9), ("ps", 1e-12))
_FREQ = (("GHz", 1e9), ("MHz", 1e6), ("kHz", 1e3), ("Hz", 1.0))


#: below this share of the smallest unit, or from this multiple of the largest, a value is
#: written in scientific notation
TINY, HUGE = 1e-3, 1e6


def _scaled(value: float, scales, digits: int) -> tuple[str, str, float]:
    if value is None or not math.isfinite(value):
        return ("-" if value is None else ("inf" if value > 0 else "-inf")), scales[-1][0], 1.0
    if value == 0:
        return "0", next(u for u, s in scales if s == 1.0), 1.0
    magnitude = abs(value)
    if magnitude < TINY * scales[-1][1]:
        return f"{value / scales[-1][1]:.{digits - 1}e}", scales[-1][0], scales[-1][1]
    if magnitude >= HUGE * scales[0][1]:
        return f"{value / scales[0][1]:.{digits - 1}e}", scales[0][0], scales[0][1]
    for index, (unit, scale) in enumerate(scales):
        if magnitude >= scale * 0.9995 or scale == scales[-1][1]:
            number = float(f"{value / scale:.{digits - 1}e}")  # `digits` significant digits
            if abs(number) >= 1000 and index > 0:  # 995,000 to two digits is 1.0 Mpps, not 1000 kpps
                (unit, scale), number = scales[index - 1], number / 1000
            exponent = int(math.floor(math.log10(abs(number))))
            decimals = max(0, digits - 1 - exponent)
            return f"{number:.{decimals}f}", unit, scale
    raise AssertionError("unreachable")  # pragma: no cover


def rate(pps: float | None, digits: int = 4) -> str:
    """``10937500.0`` -> ``10.94 Mpps``."""
    text, unit, _ = _scaled(pps, _RATE, digits)
    return text if text in ("-", "inf", "-inf") else f"{text} {unit}"


def seconds(value: float | None, digits: int = 4) -> str:
    """``2.13e-6`` -> ``2.130 us``."""
    text, unit, _ = _scaled(value, _TIME, digits)
    return text if text in ("-", "inf", "-inf") else f"{text} {unit}"


def frequency(hz: float | None, digits: int = 4) -> str:
    text, unit, _ = _scaled(hz, _FREQ, digits)
    return text if text in ("-", "inf", "-inf") else f"{text} {unit}"


def share(fraction: float | None, decimals: int = 2) -> str:
    """``0.0213`` -> ``2.13%``; signed shares keep their sign (``-1.50%``)."""
    if fraction is None or not math.isfinite(fraction):
        return "-"
    return f"{fraction * 100:.{decimals}f}%"


_UNITS = {"packets/s": (rate, _RATE), "s": (seconds, _TIME)}

# a half-width under this share of its value is a deterministic run's float noise, not a spread
FLOAT_NOISE = 1e-9


def half_width(value: float, unit: str) -> str:
    """A 95% half-width on its own: two significant digits in its own unit (``31 kpps``,
    ``15 ns``): a spread has no more digits worth reading."""
    show, _ = _UNITS[unit]
    return show(abs(value), 2)


def quantity(value: float | None, unit: str, half_width_: float | None = None, digits: int = 4) -> str:
    """A value in `unit` (``packets/s`` or ``s``, `specs.objective.Objective.unit`), with its
    half-width in its own unit and two significant digits: ``10.94 Mpps ± 31 kpps``; the ± part
    is left out when it is a deterministic run's float noise (under `FLOAT_NOISE` of the value).
    `Objective.format` calls it."""
    show, _ = _UNITS[unit]
    main = show(value, digits)
    if value is None or not half_width_ or not math.isfinite(half_width_):
        return main
    if abs(half_width_) <= FLOAT_NOISE * abs(value):
        return main
    return f"{main} ± {half_width(half_width_, unit)}"


def count(n: int, noun: str) -> str:
    """``1 placement class``, ``3 placement classes``, ``2 empty strands``: English plurals of the
    nouns the tool counts (levels, classes, plans, samples)."""
    if n == 1:
        return f"{n} {noun}"
    plural = noun + ("es" if noun.endswith(("s", "x", "ch", "sh")) else "s")
    return f"{n} {plural}"
