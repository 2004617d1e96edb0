"""The certify phase's time budget: when sampling must stop if the verdict is not decided.

The main job derives the budget from its time limit (`solver.job.settings.JobSettings.certify_seconds`;
docs/design.md, "The certify phase's time budget").  On the adaptive and the sequential paths
(`solver.certify.run`) sampling stops once the verdict cannot change or at the budget's sampling
deadline, whichever comes first; a sample cut by the budget is always a prefix of the stream (the
first n restarts, `SamplingService.ensure`), so it stays an iid sample, and the certificate says
that sampling stopped on the budget (`SamplesSummary.stopped`, and a sentence after the verdict's).

When the verdict is already decided before the first sample (a rigorous bound proves the plan,
`Certification.settled`), nothing after the plan's measurement is needed for it: the probe's
restarts and the samples then get no minimum, and a local-search climb still running at the
deadline is cut (`BudgetCut`; a cut sample is dropped, so the sample stays a prefix).  Each step
that ran short is noted (`Budget.note`) and the certificate lists them (``budget.short``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from tasksolve.solver.errors import SolverError

#: the share of the certify budget that sampling may use (the rest: the verdict, the other design)
SAMPLING_SHARE = 0.75
#: the share of the budget after which the probe's restarts stop (the rest is the sample's)
PROBE_SHARE = 0.25
#: the share of the budget after which the finalists' climbs stop (the rest is the other design's)
CLIMB_SHARE = 0.9


@dataclass
class Budget:
    """The certify phase's time budget (docs/design.md, "The certify phase's time budget").

    The probe's restarts stop at `probe_deadline` (at least one is measured).  Sampling on the
    adaptive and sequential paths stops at `sampling_deadline` (`SAMPLING_SHARE`
    of the budget) if the verdict is not decided by then; the finalists climb on the oracle until
    `climb_deadline` while it is still not decided; the other design's comparison sample
    gets what is left, as many plans as the measured cost of one simulation (`measure_s`) allows.
    A run with a fixed sample the caller asked for (``--samples``) has no budget at all: its
    certificate does not depend on the machine's speed.  No budget
    (`seconds` None or <= 0): no deadline."""

    seconds: float | None = None
    started: float = 0.0
    measure_s: float | None = None  # one measurement of the plan (prepare), the cost of one random plan
    spent: bool = False  # sampling ended on the budget before the verdict was decided
    short: list[str] = field(default_factory=list)  # the steps that ran short, one sentence each

    @classmethod
    def of(cls, seconds: float | None, started: float | None = None) -> Budget:
        return cls(seconds if seconds and seconds > 0 else None, time.monotonic() if started is None else started)

    @property
    def deadline(self) -> float | None:
        return None if self.seconds is None else self.started + self.seconds

    @property
    def probe_deadline(self) -> float | None:
        """No probe restart (`solver.certify.designs.probe`) starts after `PROBE_SHARE` of the budget."""
        return None if self.seconds is None else self.started + PROBE_SHARE * self.seconds

    @property
    def climb_deadline(self) -> float | None:
        """The finalists' climbs on the oracle (`solver.certify.finalists`) stop at `CLIMB_SHARE`."""
        return None if self.seconds is None else self.started + CLIMB_SHARE * self.seconds

    @property
    def sampling_deadline(self) -> float | None:
        return None if self.seconds is None else self.started + SAMPLING_SHARE * self.seconds

    def left(self) -> float | None:
        """Seconds left before `deadline` (None: no budget; never negative)."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def over(self, deadline: float | None) -> bool:
        """Whether `deadline` (a `time.monotonic()` reading, None: none) has passed."""
        return deadline is not None and time.monotonic() >= deadline

    def note(self, sentence: str) -> None:
        """Record that a step ran short of the budget (the certificate's ``budget.short``)."""
        if sentence not in self.short:
            self.short.append(sentence)

    def to_dict(self) -> dict[str, object] | None:
        """The certificate's ``budget``: its seconds and the steps that ran short (None: no budget)."""
        if self.seconds is None:
            return None
        return {"seconds": self.seconds, "short": list(self.short)}

    def affordable(self, n: int) -> int:
        """At most `n` plans of one measurement each, within what is left of the budget."""
        if self.seconds is None or not n:
            return n
        left = self.deadline - time.monotonic()
        if left <= 0:
            return 0
        return n if not self.measure_s else min(n, int(left / self.measure_s))


def budget_sentence(seconds: float, n: int, draws: str) -> str:
    """What the certificate adds to its verdict when sampling ended on the time budget."""
    return (
        f"Sampling stopped on the time budget ({seconds:.0f} s) after {n} {draws}, before the verdict "
        "was decided: more samples could change it."
    )


class BudgetCut(SolverError):
    """A local-search climb reached the certify budget's hard deadline before its local optimum
    (`solver.certify.designs.Climber`): the restart is dropped, never measured half-way."""
