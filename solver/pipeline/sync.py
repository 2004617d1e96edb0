"""NPIRE's synchronisation in the pipeline closed form: critical sections under a lock, optimistic
sections and early signals (NPIRE §2.4, §2.6, §2.7), charged as `simulate.analytic` charges them
(`simulate.locks`), so that a mapped pipeline candidate keeps the figures of the binding closed
form of its threads.

Per task (`TaskSync`, from the spec's `critical` and `signal` fields, in the problem's ticks):

* a **critical section** under lock ``L`` (one per application instance and name) is the last
  ``critical`` ticks of the task's work.  A lock serialises its holders, so the period is at least
  the lock's busy time per packet, ``sum over the replicas i of a group g holding it of
  critical_g * slowdown_(g,i) / R_g`` (`simulate.locks.lock_period`);
* an **optimistic** section (``speculate: p``) takes no lock; its failures are geometric, so each
  execution costs ``p / (1 - p) * (critical + rollback)`` more on average (`retry`), added to the
  group's work (not to the weights of its demand, as in `simulate.locks.speculation_work`); with
  ``conflict`` the failures also grow with the other threads' commits, and the charge assumes
  none (the least conflict), so that the period stays a lower bound;
* an **early signal** (``signal: s``) on the last task of a group sends the group's messages after
  a share ``s`` of that task's work: the successors may start ``(1 - s) * work * slowdown`` earlier
  (`simulate.locks.unsent`).

The CP-SAT pipeline model (`solver.pipeline.model`) does not encode these terms: its plans are
judged by `evaluate`, which does, and it claims no proven optimum on a problem that has them.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import NamedTuple

from tasksolve.simulate.locks import mean_retry
from tasksolve.specs.units import parse_fraction


class TaskSync(NamedTuple):
    """A task's synchronisation in ticks (module docstring)."""

    lock: str | None  # the lock its critical section holds; None: none, or optimistic
    critical: int  # ticks of its work inside that lock (0 without one)
    retry: int  # mean ticks per packet of failed optimistic executions
    signal: Fraction | None  # share of its work after which the messages leave


def task_sync(task, scale: int) -> TaskSync | None:
    """The `TaskSync` of a spec task, or None when it has no `critical` and no `signal`."""
    crit = task.critical
    if crit is None and task.signal is None:
        return None
    share = task.critical_cycles / task.cycles if crit is not None else 0.0
    section = share * task.work
    lock, critical, retry = None, 0, 0
    if crit is not None and crit.speculate is not None:  # optimistic, `speculate: 0` included
        retry = round(mean_retry(float(crit.speculate), section, float(crit.rollback)) * scale)
    elif crit is not None:
        lock, critical = crit.lock, round(section * scale)
    signal = None if task.signal is None else Fraction(str(parse_fraction(task.signal)))
    return TaskSync(lock, critical, retry, signal)


def retry_ticks(sync: Sequence[TaskSync | None], tasks: Sequence[int]) -> int:
    """Mean ticks of failed optimistic sections per packet of a group running `tasks`."""
    return sum(sync[t].retry for t in tasks if sync and sync[t] is not None)


def lock_period(sync, groups, slowdowns) -> tuple[Fraction, int]:
    """``(busy, group)``: the largest busy time of a lock per packet (ticks) and the group holding
    it longest (-1 without locks).  `groups` are the candidate's groups, `slowdowns` per group
    per replica."""
    busy: dict[str, Fraction] = {}
    longest: dict[str, tuple[Fraction, int]] = {}
    for g, (group, slow) in enumerate(zip(groups, slowdowns)):
        held: dict[str, int] = {}
        for t in group.tasks:
            s = sync[t] if sync else None
            if s is not None and s.lock is not None:
                held[s.lock] = held.get(s.lock, 0) + s.critical
        for lock, ticks in held.items():
            mine = sum((ticks * x for x in slow), Fraction(0)) / group.replicas
            busy[lock] = busy.get(lock, Fraction(0)) + mine
            if lock not in longest or ticks * max(slow) > longest[lock][0]:
                longest[lock] = (ticks * max(slow), g)
    if not busy:
        return Fraction(0), -1
    lock = max(busy, key=lambda name: (busy[name], name))
    return busy[lock], longest[lock][1]


def early_ticks(sync, work: Sequence[int], group, slowdown: Fraction) -> Fraction:
    """How much earlier than its finish a group's messages leave: ``(1 - s) * work * slowdown``
    of its last task's early signal (0 without one); `work` per task in ticks."""
    t = group.tasks[-1]
    last = sync[t] if sync else None
    if last is None or last.signal is None:
        return Fraction(0)
    return (1 - last.signal) * work[t] * slowdown


def has_sync(sync) -> bool:
    """Whether any task has a lock, an optimistic section or an early signal."""
    return any(s is not None for s in sync)
