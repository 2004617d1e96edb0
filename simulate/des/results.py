"""What one simulation reports (`simulate.des`): a run in cycles turned into a `Measurement`
(seconds, packets/s; docs/design.md, "Semantics every oracle shares": Metrics) and the
non-finite-figure check.  The run loop (`simulate.des.run`) calls this module, never the reverse."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from tasksolve.simulate.errors import NonFiniteResultError
from tasksolve.simulate.measurement import Measurement

if TYPE_CHECKING:  # annotations only: the run loop imports this module
    from tasksolve.simulate.des.run import RunResult, Simulation


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
        threads.append(
            {
                "thread": s.names[t],
                "context": names[graph.contexts[t]] if names else str(graph.contexts[t]),
                "utilization": utilization,
                "queue_wait": ((end.wait_sum[port_i] - start.wait_sum[port_i]) / waits / clock) if waits else 0.0,
                "blocked": (end.blocked[t] - start.blocked[t]) / span,
                "queue_length": (end.q_area[port_i] - start.q_area[port_i]) / span,
                "rate": (work / busy) if busy > 0 else 1.0,
                "work": ((end.work_done[t] - start.work_done[t]) / done) if done else float(sim.cycles[t]),
            }
        )
    per_inst = a.per_instance * clock
    check_finite(
        {
            "throughput": a.total * clock,
            "throughput half-width": a.total_hw * clock,
            "latency mean": a.latency_mean / clock,
            "latency p99": a.latency_p99 / clock,
            "per-instance throughput": float(np.sum(per_inst)),
        }
    )
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
        per_instance_latency=(
            {name: float(x) / clock for name, x in zip(s.instances, a.latency_per_instance)}
            if a.latency_per_instance is not None
            else {}
        ),
        converged=raw.converged,
        packets=a.packets,
        simulated_seconds=span / clock,
        warmup_seconds=start.time / clock,
        seed=sim.settings.seed,
        notes=raw.notes,
    )


def check_finite(figures: dict[str, float]) -> None:
    """Raise `NonFiniteResultError` naming the first figure that is NaN or infinite."""
    for name, value in figures.items():
        if not math.isfinite(value):
            raise NonFiniteResultError(
                f"the simulation produced a non-finite {name} ({value}); the plan's "
                "figures cannot be trusted (a thread with no work or a zero clock?)"
            )
