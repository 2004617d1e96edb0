"""Experiments built on the simulation: maximum sustainable arrival rate, idealised runs.

* **Maximum sustainable rate** (NPIRE): the highest arrival rate (packets/s per instance) at
  which the departure rate keeps up, i.e. every instance's measured throughput is at least
  ``(1 - tolerance / 10) * rate`` (up to its confidence half-width).  Found by bisection: the upper end starts a little above the
  saturated throughput of the slowest instance (doubled while the system still keeps up), the
  lower end at 0, and the interval is halved until ``hi - lo <= tolerance * hi``.
* **Latency at offered load**: the latency people mean is the one at a stated load, not the
  saturated one (a saturated source keeps every queue full, so that latency grows with
  ``oracle.queue_capacity``).  `latency_at_load` finds the maximum rate by the bisection above and
  simulates once more with arrivals at ``load x`` that rate (``oracle.load``, default 90%; the
  rate found with constant-rate arrivals).  The
  rate is known within the bisection's tolerance: the load actually offered lies between
  ``(1 - tolerance) x load`` and ``(1 + tolerance / 10) x load`` of the true maximum.
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

from tasksolve.simulate.des import DesSettings, Simulation
from tasksolve.simulate.errors import OracleError
from tasksolve.simulate.measurement import Measurement
from tasksolve.simulate.model import ThreadGraph, compile_plan

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
    saturated: Measurement | None = None  # the saturated run the bisection started from


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
    return MaxRate(rate=lo, total=lo * n_inst, tolerance=tol, arrival=arrival, runs=runs, saturated=saturated)


@dataclass
class LoadedLatency:
    """The latency at an offered load: `measurement` is the run with arrivals at `rate` packets/s
    per instance, ``load x max_rate.rate``; `saturated` the saturated run (same plan, same seed)."""

    load: float
    rate: float
    measurement: Measurement
    max_rate: MaxRate

    @property
    def saturated(self) -> Measurement:
        return self.max_rate.saturated


def latency_at_load(
    spec,
    plan,
    load: float | None = None,
    *,
    arrival: str | None = None,
    tolerance: float | None = None,
    graph: ThreadGraph | None = None,
    **overrides,
) -> LoadedLatency:
    """The plan's latency with packets arriving at `load` (default ``oracle.load``) times its
    maximum sustainable rate (module docstring).  The maximum rate is the plan's capacity, found
    with constant-rate arrivals (NPIRE's traffic; Poisson bursts make "keeps up" a matter of
    luck near it); the latency is measured with `arrival`, by default the spec's arrival process
    when it is one (``deterministic`` or ``poisson``), else deterministic.  `tolerance` is the
    bisection's relative precision (default ``oracle.precision``).
    Cost: one saturated run, about ``log2(1 / tolerance) + 2`` bisection runs, one run at the load."""
    load = float(spec.oracle.load if load is None else load)
    if not 0.0 < load <= 1.0:
        raise OracleError(f"oracle.load must be in (0, 1] (got {load:g}): a share of the maximum rate")
    if arrival is None:
        process = spec.oracle.arrival.process
        arrival = process if process in ("deterministic", "poisson") else "deterministic"
    graph = graph or compile_plan(spec, plan)
    found = max_rate(spec, plan, tolerance, "deterministic", graph=graph, **overrides)
    if found.rate <= 0.0:
        raise OracleError("the plan sustains no arrival rate: its latency at a load is undefined")
    rate = load * found.rate
    base = DesSettings.from_spec(spec, **overrides)
    stop_on = tuple(dict.fromkeys((*base.stop_on, "latency")))  # the figure wanted is the latency
    settings = replace(base, arrival=arrival, rate=rate, stop_on=stop_on)
    measured = Simulation(graph, settings, spec.topology.context_names).run()
    return LoadedLatency(load=load, rate=rate, measurement=measured, max_rate=found)
