"""Discrete-event simulation of a plan on SimPy (docs/design.md, "Semantics every oracle shares").

Time is counted in cycles of the topology's clock; SimPy's `Environment` holds the clock and
the event queue.

**Fluid processor sharing.**  For every resource ``r`` and every domain ``D`` of its level,
``load_r(D)`` is the sum of what the threads of ``D`` load now: ``demand`` while processing a
packet, ``idle_demand`` while waiting for input or blocked on a full output queue (busy-polling
runtimes spin in both cases).  A processing thread progresses at
``rate = min(1, min over the resources it demands of capacity_r / load_r(D))`` cycles of work
per cycle.  Loads are kept as exact integers (demands in units of 1e-9), so a rate depends only
on which threads are co-located, never on the order events were applied.

**Event discipline** (equivalent to interrupting and rescheduling every affected thread): a thread
changes what it loads only when it starts processing, starts waiting or blocks.  Then the loads
of its domains are updated, and only the domains whose load was or is above capacity are
*dirty*; the processing threads demanding a dirty resource get their new rate, their remaining
work is advanced at the old rate, and their completion is rescheduled as a new SimPy `Timeout`
carrying a token (stale completions are ignored).  A thread that finishes a packet and starts
the next at once loads the same demand, so nothing else is touched.

**Packets.**  Threads form groups (see `simulate.model`).  A thread processes packets in order;
it starts packet ``k`` once the messages of all its predecessor groups have arrived (join), its
work is ``sum of task cycles * X`` (see `simulate.service`) plus the communication cost of each
incoming message (by the innermost level it shares with the replica that produced it); when it
finishes it sends one message to every successor group (fork) and, if a destination queue is
full, blocks until there is room for all of them.  Replicas of a group take packets in turn
(packet ``k`` -> replica ``k mod R``); with ``shared_queue`` they take the next packet from one
queue whenever they are free (NPIRE's global task queue).  Queues are bounded FIFOs of
``queue_capacity`` messages per (consumer, producer group): a message for the consumer's packet
``j`` enters only when ``j < started + capacity`` (for a single producer, exactly a FIFO of that
capacity; with replicated producers the window never deadlocks because the packet the consumer
needs next always fits).

**Sources.**  Saturated (default): the entry thread always has a packet; its generation time is
when the entry thread starts it.  Otherwise packets arrive at ``rate`` per second per instance,
deterministically or as a Poisson process, into an unbounded source queue; the generation time
is the arrival time.  A packet departs when every exit group has finished it; its latency is the
departure time minus its generation time.

**Output analysis**: see `simulate.output` (windows, MSER warm-up removal, batch means); the run
stops when the relative 95% half-width of the total throughput (and of the mean latency with
``stop_on`` latency) is at most ``precision``, or after ``packets`` departures.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Iterable

import numpy as np
import simpy
from simpy.events import Timeout

from simulate.analytic import solve
from simulate.errors import NonFiniteResultError, OracleError, SimulationTimeout
from simulate.measurement import Measurement
from simulate.model import ThreadGraph
from simulate.output import Analysis, analyse
from simulate.service import arrival_stream, service_stream

IDLE, BUSY, BLOCKED = 0, 1, 2
SCALE = 1_000_000_000  # demand units per 1.0 of capacity


@dataclass(frozen=True)
class DesSettings:
    """How one simulation runs (defaults from the spec's `oracle` section; see `from_spec`).

    ``packets``: stop after this many departures (all instances); ``warmup``: at most this many
    departures (all instances) are discarded as warm-up, the point itself is chosen by MSER;
    ``queue_capacity`` None means unbounded queues.
    """

    packets: int = 200_000
    warmup: int = 2_000
    arrival: str = "saturated"
    rate: float | None = None            # packets/s per instance
    service: str = "deterministic"
    cv: float | None = None
    queue_capacity: int | None = 16
    seed: int = 0
    precision: float = 0.01
    shared_queue: bool = False
    stop_on: tuple[str, ...] = ("throughput",)
    min_batches: int = 10
    max_batches: int = 30
    window_packets: float = 1.0          # target packets per window of the slowest instance
    max_windows: int = 400               # merge windows pairwise beyond this
    stall_windows: int = 400             # no departure for this many windows: a deadlock
    latency_warmup: bool = True          # also wait for the latency's warm-up (see `run_raw`)
    time_cap: float | None = 60.0        # wall-clock seconds per run (None: no cap), checked per window

    @classmethod
    def from_spec(cls, spec, **overrides) -> "DesSettings":
        o = spec.oracle
        base = cls(
            packets=o.packets, warmup=o.warmup, arrival=o.arrival.process, rate=o.arrival.rate,
            service=o.service.distribution, cv=o.service.cv, queue_capacity=o.queue_capacity,
            seed=o.seed, precision=o.precision, time_cap=o.time_cap,
        )
        unknown = set(overrides) - set(cls.__dataclass_fields__)
        if unknown:
            raise TypeError(f"unknown simulation setting(s): {', '.join(sorted(unknown))}")
        settings = replace(base, **overrides)
        settings.check()
        return settings

    def check(self) -> None:
        if self.arrival not in ("saturated", "deterministic", "poisson"):
            raise OracleError(f"unknown arrival process `{self.arrival}`")
        if self.arrival != "saturated" and not (self.rate and self.rate > 0):
            raise OracleError(f"arrival process `{self.arrival}` needs a positive rate (packets/s per instance)")
        if self.service not in ("deterministic", "exponential", "cv"):
            raise OracleError(f"unknown service distribution `{self.service}`")
        if self.service == "cv" and self.cv is None:
            raise OracleError("service distribution `cv` needs `cv` (the coefficient of variation)")
        if self.queue_capacity is not None and self.queue_capacity < 1:
            raise OracleError("queue_capacity must be at least 1")
        if not 0 < self.precision < 1:
            raise OracleError("precision must be a fraction between 0 and 1")
        if self.time_cap is not None and not self.time_cap > 0:
            raise OracleError("time_cap must be a positive number of seconds")
        bad = set(self.stop_on) - {"throughput", "latency"}
        if bad:
            raise OracleError(f"stop_on: unknown figure(s) {sorted(bad)}")


class _Port:
    """The input side of a consumer: one per thread (round robin) or per group (shared queue)."""

    __slots__ = ("stride", "offset", "caps", "frontier", "pending", "ready", "ready_times",
                 "started", "waiters", "idle", "saturated", "qlen", "q_area", "q_since",
                 "wait_sum", "wait_n", "single")

    def __init__(self, stride: int, offset: int, caps: list[int | None], saturated: bool) -> None:
        self.stride = stride
        self.offset = offset
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


@dataclass
class _Snapshot:
    time: float
    busy: list[float]
    blocked: list[float]
    work: list[float]          # progress, the packet in hand included
    work_done: list[float]     # work of the completed packets
    done: list[int]
    wait_sum: list[float]
    wait_n: list[int]
    q_area: list[float]
    departed: int


@dataclass
class RunResult:
    """Raw outcome of one run (cycles), before conversion into a `Measurement`."""

    analysis: Analysis
    window: float
    snapshots: list[_Snapshot]
    departures: list[np.ndarray]
    latencies: list[np.ndarray]
    converged: bool
    events: int = 0
    notes: list[str] = field(default_factory=list)


class Simulation:
    """One simulation of a compiled plan: ``Simulation(graph, settings, context_names).run()``
    returns a `Measurement`.  An object runs once (build a new one for another run)."""

    def __init__(self, graph: ThreadGraph, settings: DesSettings, context_names: list[str] | None = None) -> None:
        self.graph = graph
        self.settings = settings
        self.context_names = context_names
        s = graph.structure
        self.T = T = graph.n_threads
        self.env = simpy.Environment()
        # ---------------------------------------------------------------- resources -> slots
        capacity = graph.capacity
        slot_of: dict[tuple[int, int], int] = {}
        self.cap: list[float] = []      # in demand units, +inf when contention is off
        self.load: list[int] = []
        self.members: list[list[int]] = []
        self.tslots: list[list[tuple[int, int, int]]] = [[] for _ in range(T)]
        self.rslots: list[list[int]] = [[] for _ in range(T)]
        for t in range(T):
            for r in range(len(s.resources)):
                busy = int(round(s.demand[t, r] * SCALE))
                idle = int(round(s.idle_demand[t, r] * SCALE))
                if busy == 0 and idle == 0:
                    continue
                if not math.isfinite(capacity[r]):
                    continue
                key = (r, graph.domain(t, r))
                if key not in slot_of:
                    slot_of[key] = len(self.cap)
                    self.cap.append(float(int(round(capacity[r] * SCALE))))
                    self.load.append(0)
                    self.members.append([])
                slot = slot_of[key]
                self.tslots[t].append((slot, busy, idle))
                if busy > 0:
                    self.rslots[t].append(slot)
                    self.members[slot].append(t)
        # ---------------------------------------------------------------- thread state
        self.st = [IDLE] * T
        self.rem = [0.0] * T
        self.rate = [-1.0] * T
        self.last = [0.0] * T
        self.tok = [0] * T
        self.since = [0.0] * T
        self.acc_busy = [0.0] * T
        self.acc_blocked = [0.0] * T
        self.acc_work = [0.0] * T
        self.done = [0] * T
        self.cur_k = [0] * T
        self.cur_work = [0.0] * T
        self.outbox: list[list[tuple[_Port, int, int]]] = [[] for _ in range(T)]
        # ---------------------------------------------------------------- work and communication
        seed = settings.seed
        self.cycles = [sum(c) for c in s.task_cycles]
        self.task_cycles = s.task_cycles
        self.streams = []
        for t in range(T):
            streams = [service_stream(seed, settings.service, settings.cv, t, j) for j in range(len(s.task_cycles[t]))]
            self.streams.append(None if all(x is None for x in streams) else streams)
        self.comm_const = [0.0] * T
        self.comm_var: list[list[tuple[int, tuple[float, ...]]] | None] = [None] * T
        for t in range(T):
            per_pred = graph.comm[t]
            if all(len(costs) == 1 for costs in per_pred):
                self.comm_const[t] = float(sum(costs[0] for costs in per_pred))
            else:
                preds = s.groups[s.group_of[t]].preds
                self.comm_var[t] = list(zip(preds, per_pred))
        # with a shared queue, which replica processed packet k is known only at run time:
        # made_by[g][k] = [replica, successor groups still to read it]
        self.made_by: list[dict[int, list[int]] | None] = [
            {} if settings.shared_queue and len(group.threads) > 1 and group.succs else None
            for group in s.groups]
        # ---------------------------------------------------------------- ports and routing
        saturated = settings.arrival == "saturated"
        qcap = settings.queue_capacity
        self.port_of: list[_Port] = [None] * T  # type: ignore[list-item]
        self.g_ports: list[list[_Port]] = []
        for group in s.groups:
            n_pred = len(group.preds)
            is_entry = n_pred == 0
            caps: list[int | None] = [qcap] * n_pred
            if is_entry and not saturated:
                caps = [None]          # the unbounded source queue
            sat = is_entry and saturated
            R = len(group.threads)
            if settings.shared_queue and R > 1:
                port = _Port(1, 0, caps, sat)
                ports = [port]
                for t in group.threads:
                    self.port_of[t] = port
            else:
                ports = []
                for r, t in enumerate(group.threads):
                    port = _Port(R, r, list(caps), sat)
                    ports.append(port)
                    self.port_of[t] = port
            self.g_ports.append(ports)
        self.succ: list[list[tuple[list[_Port], int]]] = []
        for group in s.groups:
            out = []
            for g2 in group.succs:
                out.append((self.g_ports[g2], s.groups[g2].preds.index(group.index)))
            self.succ.append(out)
        self.group_of = s.group_of
        self.replica_of = s.replica_of
        self.instance_of = s.instance_of
        n_inst = len(s.instances)
        self.sink_of_group = [False] * len(s.groups)
        self.n_sinks = [len(sinks) for sinks in s.sink_groups]
        for sinks in s.sink_groups:
            for g in sinks:
                self.sink_of_group[g] = True
        self.sink_count: list[dict[int, int]] = [dict() for _ in range(n_inst)]
        self.gen: list[dict[int, float]] = [dict() for _ in range(n_inst)]
        self.dep_times: list[list[float]] = [[] for _ in range(n_inst)]
        self.lat: list[list[float]] = [[] for _ in range(n_inst)]
        self.departed = 0
        self.events = 0
        self.agenda: deque[tuple[_Port, int]] = deque()
        self._complete_cb = self._on_complete
        # what a thread adds to each slot's load when it starts processing (minus when it stops)
        self.tdelta = [[(s, db - di) for s, db, di in slots if db != di] for slots in self.tslots]
        self.ports = [p for ports in self.g_ports for p in ports]
        self.port_index = {id(p): i for i, p in enumerate(self.ports)}

    # ====================================================================== rates and loads
    def _compute_rate(self, u: int) -> float:
        r = 1.0
        load, cap = self.load, self.cap
        for s in self.rslots[u]:
            l = load[s]
            if l > cap[s]:
                x = cap[s] / l
                if x < r:
                    r = x
        return r

    def _schedule(self, u: int, delay: float) -> None:
        tok = self.tok[u] + 1
        self.tok[u] = tok
        Timeout(self.env, delay if delay > 0.0 else 0.0, (u, tok)).callbacks.append(self._complete_cb)

    def _set_state(self, t: int, new: int) -> None:
        st = self.st
        old = st[t]
        if old == new:
            return
        now = self.env._now
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
        now = self.env._now
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

    def _on_complete(self, event) -> None:
        t, token = event._value
        if self.tok[t] != token:
            return
        self.events += 1
        self._finish(t)
        if self.agenda:
            self._drain()

    def _drain(self) -> None:
        agenda = self.agenda
        while agenda:
            port, kind = agenda.popleft()
            if kind == 0:                      # the port has packets for idle consumers
                idle = port.idle
                while idle and port.ready > port.started:
                    self._start(idle.pop(0))
            elif port.waiters:                 # room freed: retry the blocked producers
                self._wake(port)

    def _finish(self, t: int) -> None:
        now = self.env._now
        self.rate[t] = -1.0                      # no completion scheduled while in transition
        self.rem[t] = 0.0
        self.acc_work[t] += self.cur_work[t]
        self.done[t] += 1
        k = self.cur_k[t]
        g = self.group_of[t]
        if self.sink_of_group[g]:
            self._sink(self.instance_of[t], k, now)
        made = self.made_by[g]
        if made is not None:
            made[k] = [self.replica_of[t], len(self.succ[g])]
        box = self.outbox[t]
        for ports, pi in self.succ[g]:
            n = len(ports)
            port = ports[k % n]
            j = k // n
            if not self._deposit(port, pi, j):
                box.append((port, pi, j))
                port.waiters.append(t)
        if box:
            self._set_state(t, BLOCKED)
        else:
            self._next(t)

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

    def _deposit(self, port: _Port, pi: int, j: int) -> bool:
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
            now = self.env._now
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
        now = self.env._now
        j = port.started
        port.started = j + 1
        k = j * port.stride + port.offset
        if port.saturated:
            self.gen[self.instance_of[t]][k] = now
        else:
            port.q_area += port.qlen * (now - port.q_since)
            port.q_since = now
            port.qlen -= 1
            port.wait_sum += now - port.ready_times.popleft()
            port.wait_n += 1
        streams = self.streams[t]
        if streams is None:
            work = self.cycles[t]
        else:
            work = 0.0
            for c, stream in zip(self.task_cycles[t], streams):
                work += c if stream is None else c * stream.next()
        var = self.comm_var[t]
        if var is None:
            work += self.comm_const[t]
        else:
            for producer_group, costs in var:
                made = self.made_by[producer_group]
                if made is None:
                    work += costs[k % len(costs)]
                else:
                    entry = made[k]
                    work += costs[entry[0]]
                    entry[1] -= 1
                    if entry[1] == 0:
                        del made[k]
        self.cur_k[t] = k
        self.cur_work[t] = work
        self.rem[t] = work
        if self.st[t] == BUSY:               # straight from the previous packet: same load
            r = self._compute_rate(t)
            self.rate[t] = r
            self.last[t] = now
            self._schedule(t, work / r)
        else:
            self._set_state(t, BUSY)
        if port.waiters:
            self.agenda.append((port, 1))

    def _wake(self, port: _Port) -> None:
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
                self._next(p)

    # ====================================================================== sources
    def _arrival(self, event) -> None:
        i, k = event._value
        now = self.env._now
        self.gen[i][k] = now
        ports = self._entry_ports[i]
        n = len(ports)
        self._deposit(ports[k % n], 0, k // n)
        ev = Timeout(self.env, self._arrivals[i].next(), (i, k + 1))
        ev.callbacks.append(self._arrival)
        if self.agenda:
            self._drain()

    # ====================================================================== bookkeeping
    def _snapshot(self) -> _Snapshot:
        now = self.env._now
        st, since = self.st, self.since
        busy, blocked = self.acc_busy, self.acc_blocked
        work = list(self.acc_work)
        for t in range(self.T):
            dt = now - since[t]
            if st[t] == BUSY:
                busy[t] += dt
                if self.rate[t] >= 0:
                    work[t] += self.cur_work[t] - (self.rem[t] - self.rate[t] * (now - self.last[t]))
            elif st[t] == BLOCKED:
                blocked[t] += dt
            since[t] = now
        for port in self.ports:
            port.q_area += port.qlen * (now - port.q_since)
            port.q_since = now
        return _Snapshot(now, list(busy), list(blocked), work, list(self.acc_work), list(self.done),
                         [p.wait_sum for p in self.ports], [p.wait_n for p in self.ports],
                         [p.q_area for p in self.ports], self.departed)

    # ====================================================================== run
    def initial_window(self) -> float:
        """Window length (cycles): ``window_packets`` times the longer of the slowest instance's
        period and the slowest thread's time per packet (closed form, pessimistic), or the
        arrival gap.  Replicas that take packets in turn deliver them in bursts, one burst per
        thread time: a window must hold bursts, not the quiet between two of them."""
        try:
            closed = solve(self.graph)
            period = float(max(np.max(closed.period), np.max(closed.time)))
        except (ValueError, ZeroDivisionError):
            period = float(max(self.cycles))
        if not math.isfinite(period) or period <= 0:
            period = float(max(self.cycles))
        if self.settings.arrival != "saturated":
            period = max(period, self.graph.clock / self.settings.rate)
        return self.settings.window_packets * period

    def run_raw(self) -> RunResult:
        settings = self.settings
        env = self.env
        s = self.graph.structure
        # initial loads: everyone idle
        for t in range(self.T):
            for slot, _busy, idle in self.tslots[t]:
                self.load[slot] += idle
        if settings.arrival != "saturated":
            gap = self.graph.clock / settings.rate
            self._arrivals = [arrival_stream(settings.seed, settings.arrival, gap, i) for i in range(len(s.instances))]
            self._entry_ports = [self.g_ports[s.entry_group[i]] for i in range(len(s.instances))]
            for i in range(len(s.instances)):
                ev = Timeout(env, self._arrivals[i].next(), (i, 0))
                ev.callbacks.append(self._arrival)
        for t in range(self.T):
            port = self.port_of[t]
            if port.saturated:
                self._start(t)
            else:
                port.idle.append(t)
        self._drain()
        window = self.initial_window()
        snapshots = [self._snapshot()]
        n = 0
        next_check = 2 * settings.min_batches
        analysis = Analysis(False, 0, 0, 0, 0)
        converged = False
        with_latency = "latency" in settings.stop_on
        # unbounded queues behind a saturated source grow for ever: no latency steady state
        latency_warmup = settings.latency_warmup and not (
            settings.arrival == "saturated" and settings.queue_capacity is None)
        last_departed, quiet = 0, 0
        deadline = None if settings.time_cap is None else time.monotonic() + settings.time_cap
        while True:
            n += 1
            env.run(until=n * window)
            if deadline is not None and time.monotonic() > deadline:
                raise SimulationTimeout(
                    f"the simulation ran past its wall-clock cap of {settings.time_cap:g} s (oracle.time_cap) after "
                    f"{self.departed} packets; raise oracle.time_cap or lower oracle.packets / oracle.precision")
            snapshots.append(self._snapshot())
            if self.departed == last_departed:
                quiet += 1
                if quiet >= settings.stall_windows:
                    raise OracleError(
                        f"the simulation stalled: no packet left the system for {quiet} windows "
                        f"({quiet * window / self.graph.clock:.3g} s); the plan deadlocks")
            else:
                quiet, last_departed = 0, self.departed
            capped = self.departed >= settings.packets
            if n >= next_check or capped:
                analysis = analyse(window, n, self._dep_arrays(), self._lat_arrays(), settings.warmup,
                                   settings.min_batches, settings.max_batches, with_latency=True,
                                   latency_warmup=latency_warmup)
                if analysis.ok:
                    good = analysis.relative_hw() <= settings.precision
                    if with_latency:
                        good = good and analysis.relative_latency_hw() <= settings.precision
                    if good:
                        converged = True
                        break
                if capped:
                    break
                next_check = n + max(settings.min_batches // 2, n // 4)
            if n >= 2 * settings.max_windows and n % 2 == 0:
                snapshots = snapshots[::2]
                window *= 2
                n //= 2
                next_check = max(n + 1, next_check // 2)
        notes = []
        if not analysis.ok and latency_warmup and self.departed >= settings.packets:
            analysis = analyse(window, n, self._dep_arrays(), self._lat_arrays(), settings.warmup,
                               settings.min_batches, settings.max_batches, latency_warmup=False)
            latency_warmup = False
        if not latency_warmup:
            notes.append("the latency did not have to reach a steady state (unbounded queues, an "
                         "overloaded source or a run cut at the packet cap): its figures describe the run")
        if not analysis.ok:
            raise OracleError(
                f"the simulation ended after {self.departed} packets (the `packets` cap) without enough "
                "measurements for a confidence interval; raise oracle.packets")
        if not converged:
            notes.append(
                f"stopped at the packet cap ({settings.packets}) before reaching the requested precision "
                f"({100 * settings.precision:g}%): relative half-width {100 * analysis.relative_hw():.2f}%")
        return RunResult(analysis, window, snapshots, self._dep_arrays(), self._lat_arrays(), converged,
                         self.events, notes)

    def _dep_arrays(self) -> list[np.ndarray]:
        return [np.asarray(d, dtype=float) for d in self.dep_times]

    def _lat_arrays(self) -> list[np.ndarray]:
        return [np.asarray(d, dtype=float) for d in self.lat]

    def run(self) -> Measurement:
        return to_measurement(self, self.run_raw())


def to_measurement(sim: Simulation, raw: RunResult) -> Measurement:
    """Convert a run (cycles) into a `Measurement` (seconds, packets/s)."""
    graph = sim.graph
    s = graph.structure
    clock = graph.clock
    a = raw.analysis
    start, end = raw.snapshots[a.first], raw.snapshots[a.last]
    span = end.time - start.time
    names = sim.context_names
    threads = []
    util = []
    for t in range(graph.n_threads):
        port_i = sim.port_index[id(sim.port_of[t])]
        busy = end.busy[t] - start.busy[t]
        waits = end.wait_n[port_i] - start.wait_n[port_i]
        done = end.done[t] - start.done[t]
        work = end.work[t] - start.work[t]
        utilization = busy / span
        util.append(utilization)
        threads.append({
            "thread": s.names[t],
            "context": names[graph.contexts[t]] if names else str(graph.contexts[t]),
            "utilization": utilization,
            "queue_wait": ((end.wait_sum[port_i] - start.wait_sum[port_i]) / waits / clock) if waits else 0.0,
            "blocked": (end.blocked[t] - start.blocked[t]) / span,
            "queue_length": (end.q_area[port_i] - start.q_area[port_i]) / span,
            "rate": (work / busy) if busy > 0 else 1.0,
            "work": ((end.work_done[t] - start.work_done[t]) / done) if done else float(sim.cycles[t]),
        })
    per_inst = a.per_instance * clock
    _check_finite({"throughput": a.total * clock, "throughput half-width": a.total_hw * clock,
                   "latency mean": a.latency_mean / clock, "latency p99": a.latency_p99 / clock,
                   "per-instance throughput": float(np.sum(per_inst))})
    per_inst_hw = a.per_instance_hw * clock
    slowest = int(np.argmin(per_inst))
    bottlenecks = {}
    for i, name in enumerate(s.instances):
        mine = [t for t in range(graph.n_threads) if s.instance_of[t] == i]
        best = max(mine, key=lambda t: (round(util[t], 9), -threads[t]["rate"]))
        bottlenecks[name] = s.names[best]
    return Measurement(
        throughput=a.total * clock,
        per_instance={name: float(x) for name, x in zip(s.instances, per_inst)},
        half_width=a.total_hw * clock,
        min_throughput=float(per_inst.min()),
        latency_mean=a.latency_mean / clock,
        latency_p50=a.latency_p50 / clock,
        latency_p99=a.latency_p99 / clock,
        threads=threads,
        bottleneck=bottlenecks[s.instances[slowest]],
        oracle="des",
        per_instance_half_width={name: float(x) for name, x in zip(s.instances, per_inst_hw)},
        latency_half_width=a.latency_hw / clock,
        bottlenecks=bottlenecks,
        per_instance_latency=({name: float(x) / clock for name, x in zip(s.instances, a.latency_per_instance)}
                              if a.latency_per_instance is not None else {}),
        converged=raw.converged,
        packets=a.packets,
        simulated_seconds=span / clock,
        warmup_seconds=start.time / clock,
        seed=sim.settings.seed,
        notes=raw.notes,
    )


def _check_finite(figures: dict[str, float]) -> None:
    """Raise `NonFiniteResultError` naming the first figure that is NaN or infinite."""
    for name, value in figures.items():
        if not math.isfinite(value):
            raise NonFiniteResultError(f"the simulation produced a non-finite {name} ({value}); the plan's "
                                       "figures cannot be trusted (a thread with no work or a zero clock?)")


def simulate(spec, plan, graph: ThreadGraph | None = None, **overrides) -> Measurement:
    """Simulate a `specs.Plan` under `spec` (settings from ``spec.oracle``, then `overrides`)."""
    from simulate.model import compile_plan

    settings = DesSettings.from_spec(spec, **overrides)
    if graph is None:
        graph = compile_plan(spec, plan)
    return Simulation(graph, settings, spec.topology.context_names).run()
