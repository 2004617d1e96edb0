"""The closed-form model (docs/design.md, "Semantics every oracle shares", last item).

Every co-located thread is assumed to load its resources all the time with its full ``demand``
(never ``idle_demand``).  For a plan binding thread ``t`` to context ``c_t``:

* load of resource ``r`` in the domain ``D`` of r's level holding ``c_t``
  (the machine for machine-level resources)::

      load_r(D) = sum of demand[u, r] over every thread u with c_u in D

* progress rate, over the resources ``t`` demands (``demand[t, r] > 0``)::

      rate_t = min(1, min_r capacity_r / load_r(D_r(t)))

* work per packet (cycles), the consumer paying for each incoming message::

      work_t = cycles_t + sum over predecessor threads p of
               topology.message_cycles(shared_level(c_p, c_t), bytes(p -> t))

  (for a pipeline thread: the sum of its tasks' cycles, edges inside the thread cost nothing,
  and with replicated producers the mean cost over the replicas it receives from, see
  `simulate.model`);
  plus, for a task that reads or writes a device (`specs.devices`), the cost of reaching it
  from ``c_t``;
* time per packet ``s_t = work_t / rate_t``; a group run by ``R`` replicas in turn processes
  ``R`` packets in the time its slowest replica processes one (the simulation's optional
  shared queue, where faster replicas take more packets, is not modelled: the formula is that
  of replicas taking packets in turn);
* period of an instance (cycles per packet) ``period_i = max over its threads t of s_t / R_t``;
  throughput ``X_i = clock / period_i`` packets/s; total ``sum_i X_i``; minimum ``min_i X_i``;
* latency of an instance = the longest path from its entry to its exits in the thread-group
  graph, each group weighing ``max over its replicas of s_t``, in seconds (``/ clock``).  Every
  packet of instance ``i`` has that latency, so the packet latencies have mean
  ``sum_i X_i L_i / sum_i X_i`` and quantiles of the distribution putting weight ``X_i`` on
  ``L_i``; `BatchModel` also reports ``max_i L_i`` (what a latency bound checks).

NPIRE's synchronisation (`simulate.locks`): a lock serialises its holders, so ``period_i >=
lock_period`` of each lock of instance ``i`` (`simulate.locks.lock_period`: the sum over the
critical sections run under it of ``critical_cycles / (rate_t * R_t)``, the lock's busy time per
packet); optimistic sections add their mean failure cost to ``work_t``; a thread whose last task
signals early lets its successors start ``unsent / rate_t`` before it finishes.

The model is exact for the simulation when ``idle_demand == demand`` (a thread then loads the same
demand whether it works or spins) and a pessimistic bound otherwise -- except for locks: the lock
bound is the simulation's throughput when a lock's holders are the replicas of one group (tested,
deterministic work), and optimistic when its holders are different stages (the lock then idles
while a packet travels from one to the next).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from tasksolve.simulate.locks import lock_bound, lock_holdings, speculation_work, unsent
from tasksolve.simulate.measurement import Measurement
from tasksolve.simulate.messages import weighted_messages
from tasksolve.simulate.model import ThreadGraph, binding_structure, compile_plan
from tasksolve.specs.devices import device_table
from tasksolve.specs.objective import Objective

#: above this many contexts the shared level of two contexts is computed, not looked up in a C*C table
SHARED_TABLE_CONTEXTS = 8192

# ----------------------------------------------------------------------------- one plan


def thread_rates(graph: ThreadGraph) -> np.ndarray:
    """``rate_t`` of every thread (see the module docstring)."""
    s = graph.structure
    demand = s.demand
    capacity = graph.capacity
    rates = np.ones(graph.n_threads)
    for r in range(len(s.resources)):
        if not np.isfinite(capacity[r]):
            continue
        users = np.nonzero(demand[:, r] > 0)[0]
        if len(users) == 0:
            continue
        domains = np.array([graph.domain(t, r) for t in range(graph.n_threads)])
        load = np.bincount(domains, weights=demand[:, r])
        ratio = capacity[r] / load[domains[users]]
        rates[users] = np.minimum(rates[users], ratio)
    return rates


@dataclass
class AnalyticResult:
    """Per-thread and per-instance quantities of the closed form for one plan (cycles)."""

    rate: np.ndarray  # (T,)
    work: np.ndarray  # (T,) cycles per packet, communication included
    time: np.ndarray  # (T,) work / rate
    period: np.ndarray  # (I,) cycles per packet
    latency: np.ndarray  # (I,) cycles
    bottleneck: list[int]  # per instance: thread index setting the period


def solve(graph: ThreadGraph) -> AnalyticResult:
    """The closed form on a compiled plan."""
    s = graph.structure
    rate = thread_rates(graph)
    work = graph.work
    time = work / rate
    replicas = np.array([len(s.groups[g].threads) for g in s.group_of], dtype=float)
    per_packet = time / replicas
    n_inst = len(s.instances)
    period = np.zeros(n_inst)
    bottleneck = [-1] * n_inst
    for t in range(graph.n_threads):
        i = s.instance_of[t]
        if per_packet[t] > period[i]:
            period[i] = per_packet[t]
            bottleneck[i] = t
    synced = any(s.sync) and "locks" not in graph.ideal
    if synced:
        lock_bound(s, rate, replicas, period, bottleneck)
    group_time = [max(time[t] for t in g.threads) for g in s.groups]
    early = [0.0] * len(s.groups)
    if any(s.sync):
        after = unsent(s) / rate
        early = [max(after[t] for t in g.threads) for g in s.groups]
    finish = [0.0] * len(s.groups)
    for g in graph.structure.group_order:
        group = s.groups[g]
        start = max((finish[p] - early[p] for p in group.preds), default=0.0)
        finish[g] = start + group_time[g]
    latency = np.zeros(n_inst)
    for i in range(n_inst):
        latency[i] = max(finish[g] for g in s.sink_groups[i])
    return AnalyticResult(rate=rate, work=work, time=time, period=period, latency=latency, bottleneck=bottleneck)


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """Smallest value whose cumulative weight reaches fraction `q` of the total."""
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    k = int(np.searchsorted(cumulative, q * cumulative[-1] - 1e-12 * cumulative[-1]))
    return float(values[order][min(k, len(values) - 1)])


def evaluate(spec, plan, graph: ThreadGraph | None = None) -> Measurement:
    """Evaluate a `specs.Plan` with the closed form.  Pass a compiled `graph` to skip compiling.

    Queues are not modelled: ``queue_wait`` is 0 and ``blocked`` is None in `Measurement.threads`.
    """
    if graph is None:
        graph = compile_plan(spec, plan)
    result = solve(graph)
    return measurement_from(graph, result, spec.topology.context_names)


def measurement_from(graph: ThreadGraph, result: AnalyticResult, context_names: list[str]) -> Measurement:
    s = graph.structure
    clock = graph.clock
    per_inst = clock / result.period
    per_instance = {name: float(x) for name, x in zip(s.instances, per_inst)}
    latency_s = result.latency / clock
    replicas = np.array([len(s.groups[g].threads) for g in s.group_of], dtype=float)
    threads = []
    for t in range(graph.n_threads):
        i = s.instance_of[t]
        threads.append(
            {
                "thread": s.names[t],
                "context": context_names[graph.contexts[t]],
                "utilization": float(result.time[t] / (replicas[t] * result.period[i])),
                "queue_wait": 0.0,
                "blocked": None,
                "queue_length": 0.0,
                "rate": float(result.rate[t]),
                "work": float(result.work[t]),
            }
        )
    slowest = int(np.argmax(result.period))
    return Measurement(
        throughput=float(per_inst.sum()),
        per_instance=per_instance,
        half_width=0.0,
        min_throughput=float(per_inst.min()),
        latency_mean=float(np.dot(per_inst, latency_s) / per_inst.sum()),
        latency_p50=weighted_quantile(latency_s, per_inst, 0.5),
        latency_p99=weighted_quantile(latency_s, per_inst, 0.99),
        threads=threads,
        bottleneck=s.names[result.bottleneck[slowest]],
        oracle="analytic",
        per_instance_half_width=dict.fromkeys(s.instances, 0.0),
        bottlenecks={name: s.names[result.bottleneck[i]] for i, name in enumerate(s.instances)},
        per_instance_latency={name: float(x) for name, x in zip(s.instances, latency_s)},
    )


# ----------------------------------------------------------------------------- many plans


@dataclass
class BatchResult:
    """Closed-form figures of P binding plans (arrays over plans)."""

    total: np.ndarray  # (P,) packets/s
    per_instance: np.ndarray  # (P, I) packets/s, instances in `spec.instances` order
    min_instance: np.ndarray  # (P,) packets/s
    latency_max: np.ndarray  # (P,) seconds: the slowest instance's critical path
    latency_mean: np.ndarray  # (P,) seconds: throughput-weighted mean of the instances' paths

    def values(self, objective: str) -> np.ndarray:
        """The number to maximise per plan (as `Measurement.value`: total or minimum throughput,
        or minus the slowest instance's latency ``-max_i L_i``)."""
        figure = {"total_throughput": self.total, "min_throughput": self.min_instance, "latency": self.latency_max}
        return Objective.of(objective).score(figure[objective])


class BatchModel:
    """The closed form for many binding plans at once (NumPy, no Python loop over plans).

    ``contexts`` is an integer array of shape **(plans, threads)**: row ``p`` gives the context
    index of every thread of `spec.threads` (in that order) in plan ``p`` (plans x threads is the
    fast layout: each plan is contiguous).  A 1-D array is one plan.  Rows must be injective and
    use valid context indices; this is not checked (use `specs.check_plan` on plans from
    elsewhere).  The formula is the one in the module docstring, for binding plans (one task per
    group, run by one thread or by the task's replicas).
    """

    def __init__(self, spec, chunk: int = 16384) -> None:
        structure = binding_structure(spec)
        topo = spec.topology
        self.spec = spec
        self.chunk = chunk
        self.n_threads = structure.n_threads
        self.n_contexts = topo.n_contexts
        self.clock = float(topo.clock)
        self.cycles = np.array(structure.cycles, dtype=float)
        # kinds of core (`specs.cpu_kinds`): every thread's cycles on every kind, and each context's kind
        self.kind_cycles = structure.kind_cycles if topo.kinds else None
        self.context_kind = np.array(topo.context_kinds, dtype=np.intp)
        self._sync_tables(structure)
        self._capacity = np.asarray(structure.capacity, dtype=float)
        self._resource_level = list(structure.resource_level)
        self._domains = {
            level: (topo.strides[level], topo.domain_count(level)) for level in set(self._resource_level) if level >= 0
        }
        self._set_demand(np.asarray(structure.demand, dtype=float))
        # communication: each message's cycles by the innermost level its two contexts share
        self._strides = list(topo.strides)
        self._shared = _shared_levels(topo) if self.n_contexts <= SHARED_TABLE_CONTEXTS else None
        self._messages = weighted_messages(structure)
        self.edges = self._edge_tables(topo.message_cycles)
        uses = [spec.applications[ref.app].tasks[ref.task].device for ref in spec.threads]
        tables = {(u.name, u.bytes): device_table(topo, u) for u in uses if u is not None}  # one per use
        self.devices = [(t, tables[(u.name, u.bytes)]) for t, u in enumerate(uses) if u is not None]
        # replicas (`spec.threads` order keeps a task's replicas adjacent): each processes 1/R of the packets
        self.share = np.array([1.0 / len(structure.groups[g].threads) for g in structure.group_of])
        # instances: contiguous blocks of threads in spec.threads order
        self.n_instances = len(structure.instances)
        self.instance_names = structure.instances
        inst = np.array(structure.instance_of)
        self.starts = np.array([int(np.argmax(inst == i)) for i in range(self.n_instances)])
        self.blocks = list(zip(self.starts.tolist(), self.starts[1:].tolist() + [self.n_threads]))
        if not np.all(np.diff(inst) >= 0):
            raise AssertionError("threads of an instance are not contiguous")
        groups = structure.groups
        self.order = [t for g in structure.group_order for t in groups[g].threads]
        self.preds = [
            [q for p in groups[structure.group_of[t]].preds for q in groups[p].threads] for t in range(self.n_threads)
        ]
        self.sinks = [[t for g in structure.sink_groups[i] for t in groups[g].threads] for i in range(self.n_instances)]

    def _edge_tables(self, cost) -> list[tuple[int, int, np.ndarray]]:
        """(producer, consumer, cycles by shared level + 1) of every message that costs something
        somewhere, weighted by the share of the consumer's packets that producer makes
        (`simulate.model.producer_shares`); `cost(shared_level, size)` is the cycles of one message."""
        levels = len(self._strides)
        lookups: dict[int, np.ndarray] = {}
        edges = []
        for q, t, size, weight in self._messages:
            if size not in lookups:
                lookups[size] = np.array([cost(level, size) for level in range(-1, levels)], dtype=float)
            if lookups[size].any():
                edges.append((q, t, lookups[size] * weight))
        return edges

    def _levels(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The innermost level shared by contexts `a` and `b` (elementwise), plus one (0: the machine)."""
        if self._shared is not None:
            return self._shared[a * self.n_contexts + b]
        out = np.zeros(a.shape, dtype=np.int8)
        for k, stride in enumerate(self._strides):
            out[a // stride == b // stride] = k + 1
        return out

    def with_communication(self, cycles: dict[int, float]) -> BatchModel:
        """The same model with a direct communication section: `cycles[level]` per message
        between threads whose innermost shared level is `level` (-1: the machine), any size
        (what fitting them to measurements evaluates, `solver.calibration`)."""
        clone = copy.copy(self)
        clone.edges = self._edge_tables(lambda level, size: float(cycles.get(level, 0.0)))
        return clone

    def _sync_tables(self, structure) -> None:
        """NPIRE's synchronisation (`simulate.locks`): optimistic sections' mean cost in the
        cycles, per lock its instance, holders and cycles held, and the cycles after a signal --
        the last two per kind of core (columns), as the holder's context runs them."""
        self._locks: list[tuple[int, np.ndarray, np.ndarray]] = []
        self._unsent = None
        if not any(structure.sync):
            return
        kinds = len(self.spec.topology.kind_names)
        on_kind = [
            structure.on_kinds([k] * structure.n_threads) if self.kind_cycles is not None else structure
            for k in range(kinds)
        ]
        self.cycles = self.cycles + speculation_work(structure)
        if self.kind_cycles is not None:
            self.kind_cycles = self.kind_cycles + np.stack([speculation_work(s) for s in on_kind], axis=1)
        by_lock: dict[int, list[tuple[int, list[float]]]] = {}
        for rows in zip(*(lock_holdings(s) for s in on_kind)):
            lock, t = rows[0][0], rows[0][1]
            by_lock.setdefault(lock, []).append((t, [cycles for _, _, cycles in rows]))
        for rows in by_lock.values():
            threads = np.array([t for t, _ in rows])
            self._locks.append((structure.instance_of[rows[0][0]], threads, np.array([c for _, c in rows])))
        self._unsent = np.stack([unsent(s) for s in on_kind], axis=1)

    def _set_demand(self, demand: np.ndarray) -> None:
        """Per resource level, the (demand, users, capacity) of every resource some thread loads;
        machine-wide loads, which do not depend on the plan, folded into `base_rate`."""
        base = np.ones(self.n_threads)
        by_level: dict[int, list[tuple[np.ndarray, np.ndarray, float]]] = {}
        for r, level in enumerate(self._resource_level):
            users = np.nonzero(demand[:, r] > 0)[0]
            if len(users) == 0:
                continue
            if level < 0:  # one domain: the load does not depend on the plan
                base[users] = np.minimum(base[users], self._capacity[r] / demand[:, r].sum())
                continue
            by_level.setdefault(level, []).append((demand[:, r].copy(), users, float(self._capacity[r])))
        self.base_rate = base
        self.levels = [(*self._domains[level], res) for level, res in sorted(by_level.items())]
        self._weight_cache: dict[tuple[int, int], np.ndarray] = {}

    def with_parameters(self, cycles: np.ndarray, demand: np.ndarray) -> BatchModel:
        """The same model with other per-thread ``cycles`` (T,) and ``demand`` (T, resources in
        the topology's order): what fitting them to measurements evaluates (`solver.calibration`)."""
        clone = copy.copy(self)
        clone.cycles = np.asarray(cycles, dtype=float)
        if self.kind_cycles is not None:  # every kind scaled as the reference is
            clone.kind_cycles = self.kind_cycles * (clone.cycles / self.cycles)[:, None]
        clone._set_demand(np.asarray(demand, dtype=float))
        return clone

    # ------------------------------------------------------------------------------------
    def times(self, contexts: np.ndarray) -> np.ndarray:
        """``work_t / rate_t`` (cycles per packet) of every thread, shape (T, P): computed in the
        threads x plans layout, where every per-thread operation runs on a contiguous row."""
        return self._times(contexts)[0]

    def _times(self, contexts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`times` and the rates, both (T, P)."""
        ctx = np.ascontiguousarray(np.asarray(contexts, dtype=np.intp).T)
        T, P = ctx.shape
        rate = np.repeat(self.base_rate[:, None], P, axis=1)
        for stride, n_domains, resources in self.levels:
            idx = ctx // stride
            idx += (np.arange(P) * n_domains)[None, :]
            flat = idx.ravel()
            for demand, users, capacity in resources:
                load = np.bincount(flat, weights=self._weights(demand, P), minlength=P * n_domains)
                with np.errstate(divide="ignore"):  # empty domains: inf, never gathered
                    ratio = np.divide(capacity, load, out=load)  # per domain, then gathered
                if len(users) == T:
                    np.minimum(rate, ratio[idx], out=rate)
                else:
                    rate[users] = np.minimum(rate[users], ratio[idx[users]])
        if self.kind_cycles is None:
            work = np.repeat(self.cycles[:, None], P, axis=1)
        else:
            work = np.take_along_axis(self.kind_cycles, self.context_kind[ctx], axis=1)
        for q, t, lookup in self.edges:
            work[t] += lookup[self._levels(ctx[q], ctx[t])]
        for t, table in self.devices:
            work[t] += table[ctx[t]]
        work /= rate
        return work, rate

    def _weights(self, demand: np.ndarray, P: int) -> np.ndarray:
        """`demand` repeated for `P` plans, cached for the batch size last evaluated only: each
        entry is T x P floats, and a search alternates sizes (single plans, batches, chunks)."""
        key = (id(demand), P)
        cached = self._weight_cache.get(key)
        if cached is None:
            if any(size != P for _, size in self._weight_cache):
                self._weight_cache.clear()
            cached = self._weight_cache[key] = np.repeat(demand, P)
        return cached

    def evaluate(self, contexts) -> BatchResult:
        """All figures for every plan (rows of `contexts`)."""
        contexts = np.asarray(contexts)
        if contexts.ndim == 1:
            contexts = contexts[None, :]
        if contexts.ndim != 2 or contexts.shape[1] != self.n_threads:
            raise ValueError(f"contexts must have shape (plans, {self.n_threads}); got {contexts.shape}")
        if len(contexts) == 0:  # no plans (a sample every constraint filtered out): empty figures
            none = np.zeros(0)
            return BatchResult(none, np.zeros((0, len(self.spec.instances))), none, none, none)
        parts = [self._evaluate(contexts[i : i + self.chunk]) for i in range(0, len(contexts), self.chunk)]
        if len(parts) == 1:
            return parts[0]
        return BatchResult(
            *(
                np.concatenate([getattr(p, f) for p in parts])
                for f in ("total", "per_instance", "min_instance", "latency_max", "latency_mean")
            )
        )

    def _evaluate(self, contexts: np.ndarray) -> BatchResult:
        s, rate = self._times(contexts)  # (T, P)
        P = s.shape[1]
        kind = self.context_kind[np.asarray(contexts, dtype=np.intp).T]  # (T, P): each thread's kind
        period = np.empty((self.n_instances, P))
        share = self.share
        for i, (a, b) in enumerate(self.blocks):
            np.multiply(s[a], share[a], out=period[i])
            for t in range(a + 1, b):
                np.maximum(period[i], s[t] * share[t] if share[t] != 1.0 else s[t], out=period[i])
        for i, threads, cycles in self._locks:  # `lock_period` of every plan: each holder 1/R of the packets
            held = np.take_along_axis(cycles, kind[threads], axis=1) * share[threads][:, None]
            np.maximum(period[i], (held / rate[threads]).sum(axis=0), out=period[i])
        per_instance = np.divide(self.clock, period)
        finish = np.empty_like(s)
        emit = finish if self._unsent is None else np.empty_like(s)  # when messages leave
        after = None if self._unsent is None else np.take_along_axis(self._unsent, kind, axis=1)
        for t in self.order:
            preds = self.preds[t]
            if not preds:
                finish[t] = s[t]
            elif len(preds) == 1:
                np.add(s[t], emit[preds[0]], out=finish[t])
            else:
                np.add(s[t], np.max(emit[preds], axis=0), out=finish[t])
            if emit is not finish:
                emit[t] = finish[t] - after[t] / rate[t]
        latency = np.empty_like(period)
        for i, sinks in enumerate(self.sinks):
            latency[i] = finish[sinks[0]] if len(sinks) == 1 else np.max(finish[sinks], axis=0)
        latency /= self.clock
        total = per_instance.sum(axis=0)
        return BatchResult(
            total=total,
            per_instance=np.ascontiguousarray(per_instance.T),
            min_instance=per_instance.min(axis=0),
            latency_max=latency.max(axis=0),
            latency_mean=(per_instance * latency).sum(axis=0) / total,
        )

    def throughput(self, contexts) -> np.ndarray:
        """Total throughput (packets/s) per plan."""
        return self.evaluate(contexts).total

    def values(self, contexts, objective: str) -> np.ndarray:
        """The number to maximise per plan for `objective`."""
        return self.evaluate(contexts).values(objective)


def _shared_levels(topo) -> np.ndarray:
    """(C*C,) int8: the innermost level contexts ``a`` and ``b`` share, plus one, at ``a * C + b``."""
    C = topo.n_contexts
    shared = np.zeros((C, C), dtype=np.int8)
    ctx = np.arange(C)
    for k, stride in enumerate(topo.strides):
        shared[(ctx[:, None] // stride) == (ctx[None, :] // stride)] = k + 1
    return shared.ravel()
