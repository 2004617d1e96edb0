"""How one simulation runs: `DesSettings`, read from the spec's ``oracle`` section (docs/design.md,
"Semantics every oracle shares": sources, service, queues) and checked."""

from __future__ import annotations

from dataclasses import dataclass, replace

from tasksolve.simulate.errors import OracleError


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
    rate: float | None = None  # packets/s per instance
    service: str = "deterministic"
    cv: float | None = None
    queue_capacity: int | None = 16
    seed: int = 0
    precision: float = 0.01
    shared_queue: bool = False
    stop_on: tuple[str, ...] = ("throughput",)
    min_batches: int = 10
    max_batches: int = 30
    window_packets: float = 1.0  # target packets per window of the slowest instance
    max_windows: int = 400  # merge windows pairwise beyond this
    stall_windows: int = 400  # no departure for this many windows: a deadlock
    latency_warmup: bool = True  # also wait for the latency's warm-up (see `run_raw`)
    time_cap: float | None = 60.0  # wall-clock seconds per run (None: no cap), checked per window

    @classmethod
    def from_spec(cls, spec, **overrides) -> DesSettings:
        o = spec.oracle
        base = cls(
            packets=o.packets,
            warmup=2_000 if o.warmup is None else o.warmup,
            arrival=o.arrival.process,
            rate=o.arrival.rate,
            service=o.service.distribution,
            cv=o.service.cv,
            queue_capacity=o.queue_capacity,
            seed=o.seed,
            precision=o.precision,
            time_cap=o.time_cap,
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
