"""Experiments built on the simulation: maximum sustainable arrival rate, idealised runs.

* **Maximum sustainable rate** (NPIRE): the highest arrival rate (packets/s per instance) at
  which the departure rate keeps up, i.e. every instance's measured throughput is at least
  ``(1 - tolerance / 10) * rate`` (up to its confidence half-width).  Found by bisection: the upper end starts a little above the
  saturated throughput of the slowest instance (doubled while the system still keeps up), the
  lower end at 0, and the interval is halved until ``hi - lo <= tolerance * hi``.
* **Idealised runs** (NPIRE's bottleneck hunting, §5 and Figure 8): the same plan with one limit
  switched off at a time -- ``contention`` (infinite capacities: NPIRE's perfect bus and memory
  pipelining, B and M), ``communication`` (free messages), ``queues`` (unbounded queues),
  ``locks`` (critical sections without their lock and never failing: NPIRE's S, "no
  synchronization") -- and the throughput of each; the limit whose removal helps most is the one
  that binds (`bounding_limit`).  NPIRE's I (infinite PEs) and Z (zero-cycle instructions) have
  no counterpart: a plan fixes its threads, and work is what the threads do.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from simulate.des import DesSettings, Simulation
from simulate.errors import OracleError
from simulate.measurement import Measurement
from simulate.model import ThreadGraph, compile_plan

IDEALS = ("contention", "communication", "queues", "locks")


def ideal_runs(
    spec, plan, what: tuple[str, ...] = IDEALS, graph: ThreadGraph | None = None, **overrides
) -> dict[str, Measurement]:
    """``{"actual": ..., "contention": ..., ...}``: the plan as is, then with each limit off."""
    unknown = set(what) - set(IDEALS)
    if unknown:
        raise OracleError(f"unknown idealisation(s) {', '.join(sorted(unknown))} (one of {', '.join(IDEALS)})")
    graph = graph or compile_plan(spec, plan)
    settings = DesSettings.from_spec(spec, **overrides)
    names = spec.topology.context_names
    out = {"actual": Simulation(graph, settings, names).run()}
    for item in what:
        if item == "locks" and not any(graph.structure.sync):
            out[item] = out["actual"]  # nothing to switch off: the same run
        elif item == "queues":
            out[item] = Simulation(graph, replace(settings, queue_capacity=None), names).run()
        else:
            out[item] = Simulation(graph.idealised(item), settings, names).run()
    return out


def bounding_limit(runs: dict[str, Measurement]) -> tuple[str | None, float]:
    """The limit whose removal raises the throughput most, and the ratio of the throughput without
    it to the actual one; None (ratio 1) when no removal raises it beyond the two runs' 95%
    half-widths: the threads' own work binds."""
    actual = runs["actual"]
    best, ratio = None, 1.0
    for name, m in runs.items():
        if name == "actual" or actual.throughput <= 0:
            continue
        gain = m.throughput / actual.throughput
        if m.throughput - actual.throughput > m.half_width + actual.half_width and gain > ratio:
            best, ratio = name, gain
    return best, ratio


@dataclass
class MaxRate:
    """Result of the bisection: `rate` packets/s per instance (`total` for all instances)."""

    rate: float
    total: float
    tolerance: float
    arrival: str
    runs: list[dict] = field(default_factory=list)  # rate, throughput (min instance), kept_up


def max_rate(
    spec,
    plan,
    tolerance: float | None = None,
    arrival: str = "deterministic",
    graph: ThreadGraph | None = None,
    max_runs: int = 40,
    **overrides,
) -> MaxRate:
    """Highest arrival rate per instance that the plan sustains (see the module docstring).

    `tolerance` defaults to the simulation's precision; `arrival` is ``deterministic`` (NPIRE's
    constant-rate traffic) or ``poisson``.
    """
    if arrival not in ("deterministic", "poisson"):
        raise OracleError("max_rate needs an arrival process: deterministic or poisson")
    graph = graph or compile_plan(spec, plan)
    names = spec.topology.context_names
    base = DesSettings.from_spec(spec, **overrides)
    tol = base.precision if tolerance is None else float(tolerance)
    saturated = Simulation(graph, replace(base, arrival="saturated", rate=None), names).run()
    runs: list[dict] = []

    def keeps_up(rate: float) -> bool:
        if len(runs) >= max_runs:
            raise OracleError(f"max_rate did not converge in {max_runs} simulations")
        m = Simulation(graph, replace(base, arrival=arrival, rate=rate, latency_warmup=False), names).run()
        slowest = min(x + m.per_instance_half_width.get(name, 0.0) for name, x in m.per_instance.items())
        ok = slowest >= (1.0 - 0.1 * tol) * rate
        runs.append({"rate": rate, "throughput": m.min_throughput, "kept_up": ok})
        return ok

    lo, hi = 0.0, saturated.min_throughput * (1.0 + 4 * tol)
    while keeps_up(hi):
        lo, hi = hi, 2.0 * hi
    while hi - lo > tol * hi:
        mid = 0.5 * (lo + hi)
        if keeps_up(mid):
            lo = mid
        else:
            hi = mid
    n_inst = len(graph.instances)
    return MaxRate(rate=lo, total=lo * n_inst, tolerance=tol, arrival=arrival, runs=runs)
