"""The certificate's progress bar: samples measured, the best value so far, the current estimate.

`rich` is imported only when the bar is shown (stderr: stdout holds results).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from tasksolve import evt


class Progress:
    """A rich progress bar with the best value so far and the current estimate."""

    def __init__(self, enabled: bool, total: int, minimize: bool, unit: Callable[[float], str]) -> None:
        self.enabled = enabled
        self.minimize = minimize
        self.unit = unit
        self.best: float | None = None
        self.estimate: str = "-"
        if enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(
                TextColumn("[bold]sampling"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.description}"),
                transient=False,
                console=Console(stderr=True),  # progress on stderr only: stdout holds results
            )
            self.task = self.bar.add_task("", total=total)

    def __enter__(self):
        if self.enabled:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self.bar.__exit__(*exc)

    def advance(self, k: int, service) -> None:
        if not self.enabled:
            return
        best = service.best(minimize=self.minimize)
        text = f"best {self.unit(best.value)}" if best else ""
        self.bar.update(self.task, advance=k, description=f"{text}  estimate {self.estimate}")

    def set_total(self, total: int) -> None:
        """Grow the total to `total` (a total never shrinks: the count would read backwards)."""
        if self.enabled:
            self.bar.update(self.task, total=max(total, self.total()))

    def set_completed(self, done: int) -> None:
        """`done` measured (a resumed sample's records), the total grown to hold them."""
        if self.enabled:
            self.bar.update(self.task, completed=done, total=max(done, self.total()))

    def total(self) -> int:
        """The bar's current total (0 when hidden)."""
        return int(self.bar.tasks[0].total or 0) if self.enabled else 0


def refresh_estimate(bar: Progress, service, minimize: bool, confidence: float, unit) -> None:
    values = service.values()
    if not bar.enabled or values.size < 100:
        return
    try:
        result = evt.analyze(values, minimize=minimize, confidence=confidence, gof_bootstrap=0)
        bar.estimate = unit(result.estimate) if math.isfinite(result.estimate) else "none"
    except evt.EVTError:
        bar.estimate = "-"
