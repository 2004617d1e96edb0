"""How the simulation's state moves (`simulate.des`): loads and rates, packets, sources.

Event discipline (docs/design.md, "Semantics every oracle shares"): a thread changes what it
loads only when it starts processing, starts waiting or blocks (`_set_state`).  Then the loads of
its slots are updated; only slots whose load was or is above capacity are *dirty*; the processing
threads demanding a dirty slot get their new rate, their remaining work advanced at the old rate,
and their completion rescheduled with a new token (stale completions are ignored).  Completions
wait in one heap of ``(time, order, thread, token)``, and one SimPy timeout (the *pump*) stands
for its earliest: in a saturated shared slot every state change re-rates all its members, and a
SimPy timeout per reschedule (1.2 million for 24,000 state changes on a 384-thread server) cost
more than the rest of the simulation; a heap entry is a tuple.  Completions due at one instant
run in the order they were scheduled, as SimPy's own queue would run them.  Handlers never call each other recursively through the queues: a deposit that makes
a waiting consumer ready, and a start that frees room for blocked producers, only append to the
agenda, which `_drain` empties in order after each event (same simulated instant).  Only SimPy's
public API is used: ``env.now``, ``env.timeout(delay, value)``, ``event.callbacks``,
``event.value``.
"""

from __future__ import annotations

from collections.abc import Iterable
from heapq import heappop, heappush

from tasksolve.simulate.des.phases import Phases
from tasksolve.simulate.des.ports import BLOCKED, BUSY, IDLE, Port
from tasksolve.simulate.des.tables import Tables

INF = float("inf")


class Dynamics(Phases, Tables):
    """The event handlers of one simulation (phased packets: `simulate.des.phases`)."""

    # ====================================================================== rates and loads
    def _compute_rate(self, u: int) -> float:
        r = 1.0
        load, cap = self.load, self.cap
        for s in self.rslots[u]:
            loaded = load[s]
            if loaded > cap[s]:
                x = cap[s] / loaded
                if x < r:
                    r = x
        return r

    def _schedule(self, u: int, delay: float) -> None:
        """Thread `u` completes its work `delay` cycles from now, unless rescheduled first.  A
        later completion keeps u's heap entry (`finish_at` moves; the entry, when it comes up,
        moves on): in a saturated slot half the reschedules are postponements."""
        when = self.env.now + (delay if delay > 0.0 else 0.0)
        self.finish_at[u] = when
        if self.entry_at[u] <= when:
            return
        tok = self.tok[u] + 1
        self.tok[u] = tok
        self.entry_at[u] = when
        heappush(self.due, (when, next(self.order), u, tok))
        if when < self.pump_at and not self.pumping:
            self._pump_for(when)

    def _pump_for(self, when: float) -> None:
        """The pump: a SimPy timeout at `when` (its value) that runs the completions due then."""
        self.pump_at = when
        now = self.env.now
        self.env.timeout(when - now if when > now else 0.0, when).callbacks.append(self._pump_cb)

    def _set_state(self, t: int, new: int) -> None:
        st = self.st
        old = st[t]
        if old == new:
            return
        now = self.env.now
        if old == BUSY:
            self.acc_busy[t] += now - self.since[t]
        elif old == BLOCKED:
            self.acc_blocked[t] += now - self.since[t]
        self.since[t] = now
        st[t] = new
        if old == BUSY or new == BUSY:
            dirty = None
            load, cap = self.load, self.cap
            sign = 1 if new == BUSY else -1
            for s, delta in self.tdelta[t]:
                o = load[s]
                n = o + sign * delta
                load[s] = n
                c = cap[s]
                if o > c or n > c:
                    if dirty is None:
                        dirty = [s]
                    else:
                        dirty.append(s)
            if dirty is not None:
                self._rerate(dirty)
            if new == BUSY:
                r = self._compute_rate(t)
                self.rate[t] = r
                self.last[t] = now
                self._schedule(t, self.rem[t] / r)

    def _rerate(self, dirty: list[int]) -> None:
        if len(dirty) == 1:
            affected: Iterable[int] = self.members[dirty[0]]
        else:
            union: set[int] = set()
            for s in dirty:
                union.update(self.members[s])
            affected = sorted(union)
        st, rate, rem, last = self.st, self.rate, self.rem, self.last
        now = self.env.now
        compute = self._compute_rate
        for u in affected:
            old = rate[u]
            if old < 0.0 or st[u] != BUSY:
                continue
            r = compute(u)
            if r != old:
                rem[u] -= old * (now - last[u])
                last[u] = now
                rate[u] = r
                self._schedule(u, rem[u] / r)

    # ====================================================================== packets
    # Handlers never call each other recursively through the queues: a deposit that makes a
    # waiting consumer ready, and a start that frees room for blocked producers, only append to
    # the agenda, which `_drain` empties in order after each event (same simulated instant).

    def _pump(self, event) -> None:
        """Run every completion due by the pump's time (stale tokens skipped), those scheduled
        meanwhile for the same instant included, then set the pump for the next one."""
        until = event.value
        if until == self.pump_at:
            self.pump_at = INF  # this pump is spent; a superseded one finds nothing new
        due, tok = self.due, self.tok
        self.pumping = True
        while due and due[0][0] <= until:
            _, _, t, token = heappop(due)
            if tok[t] != token:
                continue
            if self.finish_at[t] > until:  # postponed meanwhile
                self._requeue(t, token)
                continue
            self.entry_at[t] = INF
            self.events += 1
            if self.phased[t]:
                self._phase_done(t)
            else:
                self._finish(t)
            if self.agenda:
                self._drain()
        self.pumping = False
        while due:  # the earliest entry live and not postponed, so the pump is not wasted
            _, _, t, token = due[0]
            if tok[t] != token:
                heappop(due)
            elif self.finish_at[t] > due[0][0]:
                heappop(due)
                self._requeue(t, token)
            else:
                break
        if due and due[0][0] < self.pump_at:
            self._pump_for(due[0][0])

    def _requeue(self, t: int, token: int) -> None:
        """Thread `t`'s entry again, at its postponed completion time."""
        when = self.finish_at[t]
        self.entry_at[t] = when
        heappush(self.due, (when, next(self.order), t, token))

    def _drain(self) -> None:
        agenda = self.agenda
        while agenda:
            port, kind = agenda.popleft()
            if kind == 0:  # the port has packets for idle consumers
                idle = port.idle
                while idle and port.ready > port.started:
                    self._start(idle.pop(0))
            elif port.waiters:  # room freed: retry the blocked producers
                self._wake(port)

    def _finish(self, t: int) -> None:
        now = self.env.now
        self.rate[t] = -1.0  # no completion scheduled while in transition
        self.rem[t] = 0.0
        self.acc_work[t] += self.cur_work[t]
        self.done[t] += 1
        k = self.cur_k[t]
        g = self.group_of[t]
        if self.sink_of_group[g]:
            self._sink(self.instance_of[t], k, now)
        if self._fork(t, k):
            self._set_state(t, BLOCKED)
        else:
            self._next(t)

    def _fork(self, t: int, k: int) -> bool:
        """Send packet `k`'s message to every successor group; True when a queue is full."""
        g = self.group_of[t]
        made = self.made_by[g]
        if made is not None:
            made[k] = [self.replica_of[t], len(self.succ[g])]
        box = self.outbox[t]
        for ports, pi, rule in self.succ[g]:
            r, j = rule.route(k)
            port = ports[r]
            if not self._deposit(port, pi, j):
                box.append((port, pi, j))
                port.waiters.append(t)
        return bool(box)

    def _sink(self, i: int, k: int, now: float) -> None:
        if self.n_sinks[i] > 1:
            count = self.sink_count[i].get(k, 0) + 1
            if count < self.n_sinks[i]:
                self.sink_count[i][k] = count
                return
            self.sink_count[i].pop(k, None)
        self.dep_times[i].append(now)
        self.lat[i].append(now - self.gen[i].pop(k))
        self.departed += 1

    def _deposit(self, port: Port, pi: int, j: int) -> bool:
        cap = port.caps[pi]
        if cap is not None and j - port.started >= cap:
            return False
        f = port.frontier[pi]
        if j != f:
            port.pending[pi].add(j)
            return True
        f += 1
        pend = port.pending[pi]
        while pend and f in pend:
            pend.remove(f)
            f += 1
        port.frontier[pi] = f
        ready = f if port.single else min(port.frontier)
        if ready > port.ready:
            now = self.env.now
            port.q_area += port.qlen * (now - port.q_since)
            port.q_since = now
            grow = ready - port.ready
            port.qlen += grow
            port.ready = ready
            times = port.ready_times
            for _ in range(grow):
                times.append(now)
            if port.idle:
                self.agenda.append((port, 0))
        return True

    def _next(self, t: int) -> None:
        port = self.port_of[t]
        if port.saturated or (port.ready > port.started and not port.idle):
            self._start(t)
        else:
            self._set_state(t, IDLE)
            port.idle.append(t)
            if port.ready > port.started:
                self.agenda.append((port, 0))

    def _start(self, t: int) -> None:
        port = self.port_of[t]
        now = self.env.now
        j = port.started
        port.started = j + 1
        k = port.dispatch.packet(port.replica, j)
        if port.saturated:
            self.gen[self.instance_of[t]][k] = now
        else:
            port.q_area += port.qlen * (now - port.q_since)
            port.q_since = now
            port.qlen -= 1
            port.wait_sum += now - port.ready_times.popleft()
            port.wait_n += 1
        if self.phased[t]:
            self._begin_packet(t, k)
            if port.waiters:
                self.agenda.append((port, 1))
            return
        streams = self.streams[t]
        if streams is None:
            work = self.cycles[t]
        else:
            work = 0.0
            for c, stream in zip(self.task_cycles[t], streams):
                work += c if stream is None else c * stream.next()
        work = self._incoming(t, k, work)
        self.cur_k[t] = k
        self.cur_work[t] = work
        self.rem[t] = work
        if self.st[t] == BUSY:  # straight from the previous packet: same load
            r = self._compute_rate(t)
            self.rate[t] = r
            self.last[t] = now
            self._schedule(t, work / r)
        else:
            self._set_state(t, BUSY)
        if port.waiters:
            self.agenda.append((port, 1))

    def _incoming(self, t: int, k: int, work: float) -> float:
        """`work` plus the cost of packet `k`'s incoming messages (by the producer replica)."""
        var = self.comm_var[t]
        work += self.comm_const[t]
        if var is None:
            return work
        for producer_group, costs in var:
            made = self.made_by[producer_group]
            if made is None:
                work += costs[self.g_dispatch[producer_group].replica(k)]
            else:
                entry = made[k]
                work += costs[entry[0]]
                entry[1] -= 1
                if entry[1] == 0:
                    del made[k]
        return work

    def _wake(self, port: Port) -> None:
        waiters = port.waiters
        port.waiters = []
        for p in waiters:
            box = self.outbox[p]
            if not box:
                continue
            left = []
            for entry in box:
                if not self._deposit(entry[0], entry[1], entry[2]):
                    left.append(entry)
                    if p not in entry[0].waiters:
                        entry[0].waiters.append(p)
            self.outbox[p] = left
            if not left and self.st[p] == BLOCKED:
                self._unblocked(p)

    # ====================================================================== sources
    def _arrival(self, event) -> None:
        i, k = event.value
        now = self.env.now
        self.gen[i][k] = now
        ports, rule = self._entry_ports[i]
        r, j = rule.route(k)
        self._deposit(ports[r], 0, j)
        self.env.timeout(self._arrivals[i].next(), (i, k + 1)).callbacks.append(self._arrival)
        if self.agenda:
            self._drain()
