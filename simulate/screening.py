"""The metric's domain, and a screen for figures orders of magnitude away from the others.

A measured figure is a throughput (work items per second) or a latency (seconds): both must be
positive and finite, and without ``oracle.range`` within `PLAUSIBLE` -- a throughput of at most
1e15 items per second (a thousand times any machine's packet or memory rate), a latency between a
picosecond and a million seconds -- so that a program printing ``1e308`` is refused, not
certified (`domain_problem`); ``oracle.range`` replaces those limits by an explicit interval.
Beyond the domain, `Screen` flags a figure `SPREAD` times (three orders of magnitude) or more
above or below the median of the figures measured so far in the same run (once at least
`MIN_HISTORY` are known): no plan of one problem is a thousand times faster than the typical one,
a program that printed a wrong number can be.  The command oracle re-measures a flagged run once
and refuses the figure if the new run is flagged too (`simulate.command`); samples records read
back from disk are screened the same way (`solver.certify.records`).
"""

from __future__ import annotations

import math
import statistics

#: a figure this many times above or below the median of the others is flagged
SPREAD = 1000.0
#: figures known before the screen flags anything
MIN_HISTORY = 3
#: the domain of a figure when the spec gives no oracle.range (module docstring)
PLAUSIBLE = {"throughput": (0.0, 1e15), "latency": (1e-12, 1e6)}


def domain_problem(figure: float, latency: bool, bounds: tuple[float, float] | None = None) -> str | None:
    """Why `figure` is outside the metric's domain (positive, finite, within `bounds`), or None."""
    what = "latency" if latency else "throughput"
    if not isinstance(figure, (int, float)) or isinstance(figure, bool) or not math.isfinite(figure):
        return f"a {what} of {figure!r}: it must be a finite number"
    if not figure > 0:
        return f"a {what} of {figure:g}: it must be positive"
    if bounds is not None and not bounds[0] <= figure <= bounds[1]:
        return f"a {what} of {figure:g}, outside oracle.range [{bounds[0]:g}, {bounds[1]:g}]"
    low, high = PLAUSIBLE[what]
    if bounds is None and not low <= figure <= high:
        return (
            f"a {what} of {figure:g}, outside the plausible [{low:g}, {high:g}] "
            "(give oracle.range if the figures really are so)"
        )
    return None


def spread_ratio(figure: float, others: list[float]) -> float | None:
    """`figure` over the median of `others` when that is `SPREAD` or more away (else None)."""
    if len(others) < MIN_HISTORY:
        return None
    median = statistics.median(abs(x) for x in others)
    ratio = abs(figure) / median if median else math.inf
    return ratio if ratio >= SPREAD or ratio <= 1.0 / SPREAD else None


class Screen:
    """The figures of one run, and which new one is orders of magnitude away from them."""

    def __init__(self) -> None:
        self.figures: list[float] = []

    def away(self, figure: float) -> str | None:
        """Why `figure` is flagged (None: in line with the others)."""
        ratio = spread_ratio(figure, self.figures)
        if ratio is None:
            return None
        median = statistics.median(self.figures)
        return f"{figure:g} is {ratio:.3g} times the median ({median:g}) of the {len(self.figures)} figures measured before"

    def keep(self, figure: float) -> None:
        self.figures.append(figure)
