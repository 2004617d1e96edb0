"""What an oracle reports about one plan (docs/design.md, "Semantics every oracle shares": Metrics)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from tasksolve.specs.objective import OBJECTIVES as OBJECTIVES  # re-exported by tasksolve.simulate
from tasksolve.specs.objective import Objective


@dataclass
class Measurement:
    """Throughput (packets/s), latency (s) and per-thread figures of one plan.

    `half_width` is the half-width of the 95% confidence interval of the total throughput (0 for
    the closed form, which is exact for its own model).  `threads` holds one dict per thread:
    ``thread``, ``context`` (name), ``utilization`` (fraction of time processing a packet),
    ``queue_wait`` (mean seconds a packet waits in the thread's input queue), ``blocked``
    (fraction of time blocked on a full output queue), ``queue_length`` (time-averaged packets
    waiting), ``rate`` (mean progress rate while processing, 1 = uncontended) and ``work``
    (mean cycles per packet, communication included).
    """

    throughput: float
    per_instance: dict[str, float]
    half_width: float
    min_throughput: float
    latency_mean: float
    latency_p50: float
    latency_p99: float
    threads: list[dict[str, Any]]
    bottleneck: str
    oracle: str = "analytic"
    per_instance_half_width: dict[str, float] = field(default_factory=dict)
    latency_half_width: float = 0.0
    per_instance_latency: dict[str, float] = field(default_factory=dict)
    bottlenecks: dict[str, str] = field(default_factory=dict)
    converged: bool = True
    packets: int = 0
    simulated_seconds: float = 0.0
    warmup_seconds: float = 0.0
    seed: int | None = None
    notes: list[str] = field(default_factory=list)

    def natural(self, objective: str) -> float:
        """The figure `objective` judges, in its natural orientation (`specs.objective`): total
        or minimum per-instance throughput (packets/s), or the latency of the slowest instance
        (s): ``max_i`` of the mean packet latency of instance ``i`` (the closed form's
        ``max_i L_i``, which the CP-SAT binding model minimises; for one instance, the mean)."""
        Objective.of(objective)  # an unknown name is an error
        if objective == "total_throughput":
            return self.throughput
        if objective == "min_throughput":
            return self.min_throughput
        return max(self.per_instance_latency.values()) if self.per_instance_latency else self.latency_mean

    def natural_half_width(self, objective: str) -> float:
        """The half-width that goes with `natural`'s figure: the latency's for a minimised
        objective, the total throughput's otherwise (`half_width`)."""
        return self.latency_half_width if Objective.of(objective).minimize else self.half_width

    def value(self, objective: str) -> float:
        """The number to maximise for `objective`: `natural`'s figure as `Objective.score`
        orients it (minus the latency)."""
        return Objective.of(objective).score(self.natural(objective))

    @property
    def relative_half_width(self) -> float:
        return self.half_width / self.throughput if self.throughput > 0 else math.inf

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (`tasksolve simulate --json`)."""
        return {
            "oracle": self.oracle,
            "throughput": {
                "total": self.throughput,
                "per_instance": dict(self.per_instance),
                "half_width": known_half_width(self.half_width),
                "min": self.min_throughput,
                "per_instance_half_width": {k: known_half_width(v) for k, v in self.per_instance_half_width.items()},
            },
            "latency": {
                "mean": self.latency_mean,
                "p50": self.latency_p50,
                "p99": self.latency_p99,
                "half_width": known_half_width(self.latency_half_width),
                "per_instance": dict(self.per_instance_latency),
            },
            "threads": [dict(t) for t in self.threads],
            "bottleneck": self.bottleneck,
            "bottlenecks": dict(self.bottlenecks),
            "converged": self.converged,
            "packets": self.packets,
            "simulated_seconds": self.simulated_seconds,
            "warmup_seconds": self.warmup_seconds,
            "seed": self.seed,
            "notes": list(self.notes),
        }


def known_half_width(half_width: float) -> float | None:
    """A half-width for JSON: None when unknown (``inf``: one run of a noisy oracle)."""
    return half_width if math.isfinite(half_width) else None
