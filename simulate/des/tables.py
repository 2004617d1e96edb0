"""The tables one simulation runs on (`simulate.des`), built once from the thread graph.

* **slots**: one per (resource, domain) that some thread loads, with its capacity and current
  load in integer units of its resource (`simulate.des.units`), so that rates depend only on who
  is co-located; per thread, the slots it loads (busy and idle demand) and those that limit it;
* **thread state**: IDLE / BUSY / BLOCKED, remaining work, current rate, completion token, and
  the busy/blocked/work accumulators;
* **work**: task cycles, service-time streams, communication costs per predecessor (constant, or
  by the producer replica);
* **ports and routing**: the input queues (`simulate.des.ports`), the successor ports of every
  group, sinks, and the per-instance departure and latency records;
* **phases** (NPIRE's locks and signals): built by `simulate.des.phases.Phases._build_phases`.
"""

from __future__ import annotations

import itertools
import math
from collections import deque

import simpy

from tasksolve.simulate.des.dispatch import dispatcher
from tasksolve.simulate.des.ports import IDLE, Port
from tasksolve.simulate.des.settings import DesSettings
from tasksolve.simulate.des.units import resource_units
from tasksolve.simulate.model import ThreadGraph
from tasksolve.simulate.service import service_stream


class Tables:
    """The state of one simulation; `simulate.des.dynamics` moves it, `simulate.des.run` runs it."""

    def __init__(self, graph: ThreadGraph, settings: DesSettings, context_names: list[str] | None = None) -> None:
        self.graph = graph
        self.settings = settings
        self.context_names = context_names
        self.T = graph.n_threads
        self.env = simpy.Environment()
        self._build_slots()
        self._build_threads()
        self._build_work()
        self._build_ports()
        self._build_phases()

    def _build_slots(self) -> None:
        graph, T = self.graph, self.T
        s = graph.structure
        capacity = graph.capacity
        slot_of: dict[tuple[int, int], int] = {}
        self.cap: list[int] = []  # in the resource's units (`resource_units`)
        self.load: list[int] = []
        self.members: list[list[int]] = []
        self.tslots: list[list[tuple[int, int, int]]] = [[] for _ in range(T)]
        self.rslots: list[list[int]] = [[] for _ in range(T)]
        units = [resource_units([capacity[r], *s.demand[:, r], *s.idle_demand[:, r]]) for r in range(len(s.resources))]
        for t in range(T):
            for r in range(len(s.resources)):
                busy = units[r](s.demand[t, r])
                idle = units[r](s.idle_demand[t, r])
                if busy == 0 and idle == 0:
                    continue
                if not math.isfinite(capacity[r]):
                    continue
                key = (r, graph.domain(t, r))
                if key not in slot_of:
                    slot_of[key] = len(self.cap)
                    self.cap.append(units[r](capacity[r]))
                    self.load.append(0)
                    self.members.append([])
                slot = slot_of[key]
                self.tslots[t].append((slot, busy, idle))
                if busy > 0:
                    self.rslots[t].append(slot)
                    self.members[slot].append(t)

    def _build_threads(self) -> None:
        T = self.T
        self.st = [IDLE] * T
        self.rem = [0.0] * T
        self.rate = [-1.0] * T
        self.last = [0.0] * T
        self.tok = [0] * T
        self.entry_at = [math.inf] * T  # the time of t's completion entry in the heap (inf: none)
        self.finish_at = [0.0] * T  # when t completes at its current rate
        self.since = [0.0] * T
        self.acc_busy = [0.0] * T
        self.acc_blocked = [0.0] * T
        self.acc_work = [0.0] * T
        self.done = [0] * T
        self.cur_k = [0] * T
        self.cur_work = [0.0] * T
        self.outbox: list[list[tuple[Port, int, int]]] = [[] for _ in range(T)]

    def _build_work(self) -> None:
        graph, settings, T = self.graph, self.settings, self.T
        s = graph.structure
        seed = settings.seed
        self.cycles = [sum(c) for c in s.task_cycles]
        self.task_cycles = s.task_cycles
        self.streams = []
        for t in range(T):
            streams = [service_stream(seed, settings.service, settings.cv, t, j) for j in range(len(s.task_cycles[t]))]
            self.streams.append(None if all(x is None for x in streams) else streams)
        self.comm_const = [0.0] * T
        self.comm_var: list[list[tuple[int, tuple[float, ...]]] | None] = [None] * T
        device = graph.device_comm or [0.0] * T  # reaching a device: the same every packet
        for t in range(T):
            per_pred = graph.comm[t]
            self.comm_const[t] = device[t]
            if all(len(costs) == 1 for costs in per_pred):
                self.comm_const[t] += float(sum(costs[0] for costs in per_pred))
            else:
                preds = s.groups[s.group_of[t]].preds
                self.comm_var[t] = list(zip(preds, per_pred))
        # with a shared queue, which replica processed packet k is known only at run time:
        # made_by[g][k] = [replica, successor groups still to read it]
        self.made_by: list[dict[int, list[int]] | None] = [
            {} if settings.shared_queue and len(group.threads) > 1 and group.succs else None for group in s.groups
        ]

    def _build_ports(self) -> None:
        settings, T = self.settings, self.T
        s = self.graph.structure
        saturated = settings.arrival == "saturated"
        qcap = settings.queue_capacity
        self.port_of: list[Port] = [None] * T  # type: ignore[list-item]
        self.g_ports: list[list[Port]] = []
        self.g_dispatch = [dispatcher(group, settings.seed, settings.shared_queue) for group in s.groups]
        for group in s.groups:
            n_pred = len(group.preds)
            is_entry = n_pred == 0
            caps: list[int | None] = [qcap] * n_pred
            if is_entry and not saturated:
                caps = [None]  # the unbounded source queue
            sat = is_entry and saturated
            R = len(group.threads)
            rule = self.g_dispatch[group.index]
            if settings.shared_queue and R > 1:
                port = Port(rule, 0, caps, sat)
                ports = [port]
                for t in group.threads:
                    self.port_of[t] = port
            else:
                ports = []
                for r, t in enumerate(group.threads):
                    port = Port(rule, r, list(caps), sat)
                    ports.append(port)
                    self.port_of[t] = port
            self.g_ports.append(ports)
        self.succ: list[list[tuple[list[Port], int]]] = []
        for group in s.groups:
            out = []
            for g2 in group.succs:
                out.append((self.g_ports[g2], s.groups[g2].preds.index(group.index), self.g_dispatch[g2]))
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
        self.agenda: deque[tuple[Port, int]] = deque()
        # completions: a heap of (time, order, thread, token) and the one SimPy timeout, the pump,
        # standing for its earliest (`simulate.des.dynamics`)
        self.due: list[tuple[float, int, int, int]] = []
        self.order = itertools.count()
        self.pump_at = math.inf
        self.pumping = False
        self._pump_cb = self._pump
        # what a thread adds to each slot's load when it starts processing (minus when it stops)
        self.tdelta = [[(s, db - di) for s, db, di in slots if db != di] for slots in self.tslots]
        self.ports = [p for ports in self.g_ports for p in ports]
        self.port_index = {id(p): i for i, p in enumerate(self.ports)}
