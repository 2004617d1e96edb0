"""The thread states and the input queues ("ports") of the simulation (`simulate.des`).

A port is the input side of a consumer: one per thread when replicas take packets in turn, one
per group with a shared queue (NPIRE).  It holds, per producer group, the frontier of messages
received in order and those received ahead of it, the window of ``queue_capacity`` messages, the
threads waiting for a packet or blocked on a full window, and the queue-length and queue-wait
accumulators.
"""

from __future__ import annotations

from collections import deque

IDLE, BUSY, BLOCKED, LOCKWAIT = 0, 1, 2, 3  # LOCKWAIT: waiting for a lock (NPIRE)
SCALE = 1_000_000_000  # demand units per 1.0 of capacity


class Port:
    """The input side of a consumer: one per thread (round robin) or per group (shared queue)."""

    __slots__ = (
        "dispatch",
        "replica",
        "caps",
        "frontier",
        "pending",
        "ready",
        "ready_times",
        "started",
        "waiters",
        "idle",
        "saturated",
        "qlen",
        "q_area",
        "q_since",
        "wait_sum",
        "wait_n",
        "single",
    )

    def __init__(self, dispatch, replica: int, caps: list[int | None], saturated: bool) -> None:
        self.dispatch = dispatch  # `simulate.des.dispatch`: which packets are this port's
        self.replica = replica
        self.caps = caps
        self.frontier = [0] * len(caps)
        self.pending: list[set[int]] = [set() for _ in caps]
        self.single = len(caps) == 1
        self.ready = 0
        self.ready_times: deque[float] = deque()
        self.started = 0
        self.waiters: list[int] = []
        self.idle: list[int] = []
        self.saturated = saturated
        self.qlen = 0
        self.q_area = 0.0
        self.q_since = 0.0
        self.wait_sum = 0.0
        self.wait_n = 0
