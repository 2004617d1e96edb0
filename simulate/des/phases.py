"""Packets in phases (`simulate.des`): NPIRE's critical sections, optimistic sections and early
signals (NPIRE §2.4, §2.6, §2.7; docs/design.md, "Semantics every oracle shares").

A thread whose tasks have none of these runs a packet as one piece of work (`Dynamics._start`,
unchanged).  Otherwise (`Structure.sync`) the packet is a list of **steps**: work, *acquire* a
lock, *release* it, *signal* (send the messages to the successor groups).  Per task, in order: the
incoming messages' cost comes first (as without phases), then the task's cycles with its critical
section as the last ``critical`` share of them between an acquire and a release, and, for the
thread's last task, the signal after ``signal`` of its cycles.  Each lock is a `simpy.Resource` of
capacity 1 (one per application instance and lock name): a thread that finds it held waits in
FIFO order and meanwhile loads its ``idle_demand``.  An optimistic section (``speculate``) takes no
lock; it fails a geometric number of times (each execution independently, with the given
probability) and each failure costs the section again plus its rollback cycles.  With
``conflict`` its failures depend on the other threads (first committer wins, as optimistic
concurrency control's backward validation, Kung & Robinson, TODS 6(2) 1981, in the order NPIRE
§2.7 imposes): the section is an *enter* step before its work and a *commit* step after it; each
lock counts the commits of its optimistic sections, and an execution that saw ``k`` of them
between its enter and its commit fails with probability ``1 - (1 - speculate) * (1 -
conflict)^k`` (one uniform draw per commit); a failure costs its rollback cycles, then the
section runs again from a new enter.  Every optimistic section of a lock that has one with
``conflict`` commits this way (its own ``conflict`` may be 0: it never fails on a conflict, but
its commits count), and a release of the lock counts as a commit too (its holder wrote the data).  The first execution to commit never fails on a conflict,
so no conflict probability livelocks.  `spec_tries` and `spec_fails` count, per thread and task,
the executions of optimistic sections and the failed ones.  With the ``locks`` idealisation
every section runs without its lock and never fails.  A thread blocked on a full queue at an
early signal keeps its packet and resumes it once every message is in.
"""

from __future__ import annotations

import simpy

from tasksolve.simulate.des.ports import BLOCKED, BUSY, LOCKWAIT
from tasksolve.simulate.service import conflict_stream, failure_stream

WORK, ACQUIRE, RELEASE, SIGNAL, ENTER, COMMIT = 0, 1, 2, 3, 4, 5


class Phases:
    """The phased-packet handlers; mixed into `simulate.des.dynamics.Dynamics`."""

    def _build_phases(self) -> None:
        graph, T = self.graph, self.T
        s = graph.structure
        sync = s.sync or [None] * T
        self.phased = [rows is not None for rows in sync]
        self.sync = sync
        self.lock_free = "locks" in graph.ideal
        self.locks = [simpy.Resource(self.env, capacity=1) for _ in s.locks]
        self.steps: list[list[tuple[int, float]]] = [[] for _ in range(T)]
        self.step_i = [0] * T
        self.prog = [0.0] * T  # work of the finished steps of the packet in hand
        self.segw = [0.0] * T  # work of the step in hand
        self.in_packet = [False] * T
        self.signalled = [False] * T
        self.held: list[simpy.Event | None] = [None] * T  # the granted lock request
        self._grant_cb = [lambda _event, t=t: self._on_granted(t) for t in range(T)]
        self.conflicted = {row.lock for rows in sync if rows for row in rows if row.lock >= 0 and row.conflict}
        self.failures = [
            [self._failure_stream(t, j, row) for j, row in enumerate(rows)]
            if rows is not None and not self.lock_free
            else None
            for t, rows in enumerate(sync)
        ]
        self.commits = [0] * len(s.locks)  # commits of each lock's optimistic sections
        self.entered = [0] * T  # the lock's commit count when the section in hand was entered
        self.section = [[0.0] * len(rows) if rows else [] for rows in sync]  # its cycles, this packet
        self.spec_tries = [[0] * len(rows) if rows else [] for rows in sync]
        self.spec_fails = [[0] * len(rows) if rows else [] for rows in sync]

    def _failure_stream(self, t: int, j: int, row):
        """Task `j` of thread `t`: uniform draws for an optimistic section with conflicts, the
        geometric failure counts for one without, None when it never fails or takes a lock."""
        if row.lock < 0 or row.speculate is None:
            return None
        if row.lock in self.conflicted:
            return conflict_stream(self.settings.seed, t, j)
        return failure_stream(self.settings.seed, row.speculate, t, j) if row.speculate else None

    def _packet_steps(self, t: int, comm: float, cycles: list[float]) -> tuple[list[tuple[int, float]], float]:
        """The steps of one packet and its total work (see the module docstring)."""
        steps: list[tuple[int, float]] = []
        pending = comm
        total = comm
        rows = self.sync[t]
        last = len(rows) - 1
        for j, (c, row) in enumerate(zip(cycles, rows)):
            marks = []
            extra = 0.0
            if j == last and row.signal is not None:
                marks.append((row.signal * c, SIGNAL, 0))
            if row.lock >= 0 and not self.lock_free:
                crit = row.critical * c
                if row.speculate is None:
                    marks += [(c - crit, ACQUIRE, row.lock), (c, RELEASE, row.lock)]
                elif row.lock in self.conflicted:
                    marks += [(c - crit, ENTER, row.lock), (c, COMMIT, j)]
                    self.section[t][j] = crit
                else:
                    failed = 0 if self.failures[t][j] is None else self.failures[t][j].next()
                    extra = failed * (crit + row.rollback)
                    self.spec_tries[t][j] += 1 + failed
                    self.spec_fails[t][j] += failed
            position = 0.0
            for at, kind, lock in sorted(marks, key=lambda m: m[0]):
                pending += at - position
                position = at
                if pending > 0.0:
                    steps.append((WORK, pending))
                    pending = 0.0
                steps.append((kind, lock))
            pending += c - position + extra
            total += c + extra
        if pending > 0.0:
            steps.append((WORK, pending))
        return steps, total

    def _begin_packet(self, t: int, k: int) -> None:
        """Start packet `k` on a phased thread (after `_start`'s queue bookkeeping)."""
        streams = self.streams[t]
        if streams is None:
            cycles = list(self.task_cycles[t])
        else:
            cycles = [c if x is None else c * x.next() for c, x in zip(self.task_cycles[t], streams)]
        comm = self._incoming(t, k, 0.0)
        self.steps[t], self.cur_work[t] = self._packet_steps(t, comm, cycles)
        self.cur_k[t] = k
        self.step_i[t] = 0
        self.prog[t] = 0.0
        self.in_packet[t] = True
        self.signalled[t] = False
        self._advance(t)

    def _advance(self, t: int) -> None:
        """Run the packet's steps until one takes time (work, a held lock, a full queue)."""
        steps = self.steps[t]
        i = self.step_i[t]
        while i < len(steps):
            kind, value = steps[i]
            i += 1
            self.step_i[t] = i
            if kind == WORK:
                self.segw[t] = self.rem[t] = value
                if self.st[t] == BUSY:
                    rate = self.rate[t] = self._compute_rate(t)
                    self.last[t] = self.env.now
                    self._schedule(t, value / rate)
                else:
                    self._set_state(t, BUSY)
                return
            if kind == ACQUIRE:
                request = self.held[t] = self.locks[int(value)].request()
                if not request.triggered:
                    self._set_state(t, LOCKWAIT)
                    request.callbacks.append(self._grant_cb[t])
                    return
            elif kind == RELEASE:
                self.locks[int(value)].release(self.held[t])
                self.held[t] = None
                self.commits[int(value)] += 1
            elif kind == SIGNAL:
                self.signalled[t] = True
                if self._fork(t, self.cur_k[t]):
                    self._set_state(t, BLOCKED)
                    return
            elif kind == ENTER:
                self.entered[t] = self.commits[int(value)]
            else:
                self._commit(t, int(value), i)
        self._end_packet(t)

    def _commit(self, t: int, j: int, i: int) -> None:
        """Commit the optimistic section of task `j` (module docstring); on a failure, insert its
        rollback and a new execution before step `i`."""
        row = self.sync[t][j]
        k = self.commits[row.lock] - self.entered[t]
        self.spec_tries[t][j] += 1
        if self.failures[t][j].next() >= 1.0 - (1.0 - row.speculate) * (1.0 - row.conflict) ** k:
            self.commits[row.lock] += 1
            return
        self.spec_fails[t][j] += 1
        crit = self.section[t][j]
        redo = [(WORK, row.rollback)] if row.rollback > 0 else []
        redo.append((ENTER, row.lock))
        if crit > 0:
            redo.append((WORK, crit))
        redo.append((COMMIT, j))
        self.steps[t][i:i] = redo
        self.cur_work[t] += row.rollback + crit

    def _phase_done(self, t: int) -> None:
        """A work step finished."""
        self.rate[t] = -1.0
        self.rem[t] = 0.0
        self.prog[t] += self.segw[t]
        self._advance(t)

    def _on_granted(self, t: int) -> None:
        self._advance(t)
        if self.agenda:
            self._drain()

    def _end_packet(self, t: int) -> None:
        self.in_packet[t] = False
        self.acc_work[t] += self.cur_work[t]
        self.done[t] += 1
        k = self.cur_k[t]
        if self.sink_of_group[self.group_of[t]]:
            self._sink(self.instance_of[t], k, self.env.now)
        if not self.signalled[t] and self._fork(t, k):
            self._set_state(t, BLOCKED)
        else:
            self._next(t)

    def _unblocked(self, t: int) -> None:
        """Every message of a blocked thread is in: resume its packet, or take the next."""
        if self.phased[t] and self.in_packet[t]:
            self._advance(t)
        else:
            self._next(t)

    def _phase_progress(self, t: int, now: float) -> float:
        """Work done on the packet in hand (for the snapshots)."""
        if not self.in_packet[t]:
            return 0.0
        done = self.prog[t]
        if self.st[t] == BUSY and self.rate[t] >= 0:
            done += self.segw[t] - (self.rem[t] - self.rate[t] * (now - self.last[t]))
        return done
