"""Kinds of core: the P and E cores of a hybrid processor, each with its own speed.

A topology's ``kinds`` maps a name to a `CpuKind`: the domains it covers and how fast a task runs
there.  The design follows hwloc's CPU kinds (``hwloc/cpukinds.h``: sets of PUs with an
efficiency rank and attributes such as ``FrequencyMaxMHz``) and the Linux scheduler's CPU
capacity (``Documentation/scheduler/sched-capacity.rst``: the work a CPU does per second relative
to the most capable one, 1024 for the biggest), which are the two ways machines report them:

* ``speed``: the kind's cycles per second relative to the topology's ``clock`` (a capacity of
  512/1024 is ``speed: 0.5``), or ``clock``: the kind's own clock (``speed = clock / clock of the
  topology``);
* ``ipc``: its instructions per cycle relative to the reference core (an E-core retires fewer
  per cycle: a lower IPC is not a lower clock); a task of ``cycles`` on the reference core needs
  ``cycles / ipc`` here, unless the task gives its cycles per kind (``cycles: {P: 900, E: 1500}``).

Every model counts time in cycles of the topology's clock: a task of ``c`` cycles on a kind runs
``c / ipc / speed`` of them (`specs.kind_work`).  Messages cost what the topology's communication
section says, whatever the kinds (memory latency does not scale with a core's clock).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from tasksolve.specs.fields import Clock, Number, StrictModel, Text

Ratio = Annotated[Number, Field(gt=0, le=1000)]


class CpuKind(StrictModel):
    """One kind of core: its speed (or clock), its relative IPC and the domains it covers."""

    speed: Ratio | None = Field(
        default=None, description="cycles per second relative to the topology's clock (default 1)"
    )
    clock: Clock | None = Field(default=None, description="the kind's own clock, instead of `speed`")
    ipc: Ratio = Field(default=1.0, description="instructions per cycle relative to the reference core")
    domains: list[str] | None = Field(
        default=None, description="the domains of this kind; none: every context no other kind names"
    )
    description: Text | None = None

    @model_validator(mode="after")
    def _one_speed(self) -> CpuKind:
        if self.speed is not None and self.clock is not None:
            raise ValueError("give `speed` or `clock`, not both")
        return self

    def relative_speed(self, reference_clock: float) -> float:
        """Cycles per second relative to `reference_clock` (1 when neither is given)."""
        if self.clock is not None:
            return self.clock / reference_clock
        return 1.0 if self.speed is None else self.speed
