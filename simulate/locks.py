"""NPIRE's synchronisation in the thread graph: critical sections under a lock, optimistic
(speculative) critical sections and early signals (NPIRE §2.4, §2.6, §2.7; docs/design.md,
"Semantics every oracle shares").

Per thread, one `Sync` per task (`Structure.sync`, None when no task of the thread has a critical
section or an early signal).  A lock is one per application instance and lock name (the persistent
heap of one program that its tasks and their replicas share, §2.4); a critical section is the last
``critical`` share of its task's cycles (the task takes the lock before its first shared access and
releases it after the last).  The closed-form pieces (`speculation_work`, `lock_holdings`,
`unsent`, `lock_period`, `lock_bound`) are what `simulate.analytic` adds to the period and the
latency.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Sync(NamedTuple):
    """A task's NPIRE synchronisation (docs/design.md, "Semantics every oracle shares")."""

    lock: int  # index into `Structure.locks`, -1 without a critical section
    critical: float  # share of the task's cycles inside the critical section (its last ones)
    speculate: float | None  # fraction of optimistic executions that fail (NPIRE §2.7), None: lock
    rollback: float  # cycles a failed optimistic execution costs before it runs again
    signal: float | None  # share of the task's cycles after which the thread's messages leave (§2.6)
    conflict: float = 0.0  # chance that one commit of the lock's sections during an execution fails it


def sync_tables(spec, groups, instance_names, thread_lists, n) -> tuple[list[str], list]:
    """`Structure.locks` and `Structure.sync` (see the module docstring)."""
    locks: dict[tuple[int, str], int] = {}
    sync: list[tuple[Sync, ...] | None] = [None] * n
    for group in groups:
        application = spec.applications[group.app]
        rows = []
        for task in group.tasks:
            spec_task = application.tasks[task]
            crit = spec_task.critical
            lock = -1
            if crit is not None:
                lock = locks.setdefault((group.instance, crit.lock), len(locks))
            rows.append(
                Sync(
                    lock=lock,
                    critical=spec_task.critical_cycles / spec_task.cycles,
                    speculate=None if crit is None else crit.speculate,
                    rollback=0.0 if crit is None else float(crit.rollback),
                    signal=spec_task.signal,
                    conflict=0.0 if crit is None or crit.conflict is None else float(crit.conflict),
                )
            )
        if any(row.lock >= 0 or row.signal is not None for row in rows):
            for t in thread_lists[group.index]:
                sync[t] = tuple(rows)
    names = [f"{instance_names[inst]}:{name}" for (inst, name) in locks]
    return names, sync


def mean_retry(speculate: float, section: float, rollback: float) -> float:
    """Mean extra cycles per execution of an optimistic section failing with probability
    `speculate`: ``p / (1 - p)`` failures (geometric), each costing the section plus its rollback.

    With `conflict` (`Sync.conflict`) an execution fails with ``1 - (1 - speculate) * (1 -
    conflict)^k``, ``k`` the commits of the same lock's sections while it ran; every closed form
    charges ``k = 0`` (the least conflict, here and in `solver.pipeline.sync`), so the work it
    charges is the least any run pays and the throughputs it gives stay upper bounds."""
    return speculate / (1.0 - speculate) * (section + rollback)


def speculation_work(structure) -> np.ndarray:
    """Mean extra cycles per packet of failed optimistic critical sections (`mean_retry`), at the
    least conflict (none: only the ``speculate`` failures)."""
    extra = np.zeros(structure.n_threads)
    for t, rows in enumerate(structure.sync):
        for c, row in zip(structure.task_cycles[t], rows or ()):
            if row.lock >= 0 and row.speculate:
                extra[t] += mean_retry(row.speculate, row.critical * c, row.rollback)
    return extra


def conflicted(structure) -> np.ndarray:
    """Per thread, whether one of its optimistic sections fails on conflicts (``conflict`` > 0):
    its work per packet then has no upper bound a closed form knows (it grows with the other
    threads' commits), only the lower one `speculation_work` charges."""
    out = np.zeros(structure.n_threads, dtype=bool)
    for t, rows in enumerate(structure.sync or ()):
        out[t] = any(row.lock >= 0 and row.speculate is not None and row.conflict > 0 for row in rows or ())
    return out


def lock_holdings(structure) -> list[tuple[int, int, float]]:
    """(lock, thread, cycles held per packet) of every critical section run under its lock."""
    return [
        (row.lock, t, row.critical * c)
        for t, rows in enumerate(structure.sync)
        for c, row in zip(structure.task_cycles[t], rows or ())
        if row.lock >= 0 and row.speculate is None
    ]


def unsent(structure) -> np.ndarray:
    """Cycles a thread still works after its messages left (early signal of its last task)."""
    after = np.zeros(structure.n_threads)
    for t, rows in enumerate(structure.sync):
        if rows and rows[-1].signal is not None:
            after[t] = (1.0 - rows[-1].signal) * structure.task_cycles[t][-1]
    return after


def lock_period(critical, rate, replicas) -> float:
    """Busy time of one lock per packet (cycles), a lower bound on the period (NPIRE §2.4: at most
    one holder at a time): ``sum_h critical_h / (rate_h * R_h)`` over its holders ``h`` -- a
    thread running ``critical_h`` cycles of work under the lock at ``rate_h``, replica of a group
    of ``R_h`` that take packets in turn (so it holds the lock for one packet in ``R_h``)."""
    return float(sum(c / (r * n) for c, r, n in zip(critical, rate, replicas)))


def lock_bound(structure, rate, replicas, period, bottleneck) -> None:
    """Raise each instance's period to the busy time of its most loaded lock (`lock_period`);
    the bottleneck is then that lock's longest holder."""
    s = structure
    holders: dict[int, list[tuple[int, float]]] = {}
    for lock, t, cycles in lock_holdings(s):
        holders.setdefault(lock, []).append((t, cycles))
    for rows in holders.values():
        busy = lock_period([c for _, c in rows], [rate[t] for t, _ in rows], [replicas[t] for t, _ in rows])
        i = s.instance_of[rows[0][0]]
        if busy > period[i]:
            period[i] = busy
            bottleneck[i] = max(rows, key=lambda row: row[1] / rate[row[0]])[0]
