"""Progress on stderr for long work: one spinner line per phase, with its elapsed time.

Library functions report the start of each phase through a ``say(message)`` callable; `Phases`
is the CLI's implementation: the running phase shows a spinner and a clock, a finished phase
stays on screen as one dim line with the time it took. `Phases.update` shows counts inside the
running phase (the ``count`` callable of the profiling tables and predictors). Bars with counts (the sampling bar of
`certify`) nest inside it. Nothing is shown with ``--json`` (stdout stays pure JSON) or when
``enabled`` is false.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from tasksolve.solver.cli.common import err_console

if TYPE_CHECKING:
    from rich.progress import Progress


class Phases:
    """``with Phases(enabled) as say: say("solving"); ...; say("measuring")``."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._bar: Progress | None = None
        self._task = None
        self._message = ""
        self._started = 0.0

    def __enter__(self) -> Phases:
        if self.enabled:
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=err_console,
                transient=True,
            )
            self._bar.start()
        return self

    def __call__(self, message: str) -> None:
        if not self.enabled:
            return
        self._finish()
        self._message, self._started = message, time.perf_counter()
        self._task = self._bar.add_task(message, total=None)

    def update(self, message: str) -> None:
        """Counts inside the running phase (``"predicted 20000/1526000 plans"``): the phase line
        shows them without starting a new phase."""
        if not self.enabled or self._task is None:
            return
        self._bar.update(self._task, description=f"{self._message}: {message}")

    def _finish(self) -> None:
        if self._task is not None:
            self._bar.remove_task(self._task)
            self._bar.console.print(
                f"[dim]{self._message} ({time.perf_counter() - self._started:.1f} s)[/]", markup=True, highlight=False
            )
            self._task = None

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._finish()
            self._bar.stop()
