"""The certificate: how far a plan is from the optimum estimated by EVT (ASPLOS'12), and a verdict.

Gaps are relative to the estimated optimum, in the direction of improvement:

* ``gap.point = |estimate - plan| / |estimate|`` -- against the point estimate;
* ``gap.worst = |far - plan| / |far|`` -- against the interval's far limit (the upper limit when
  maximising throughput, the lower one when minimising latency): what the plan may still lose at
  the stated confidence.

Verdicts:

* ``no_finite_optimum`` -- the tail has no finite endpoint (xi >= 0): nothing to compare with;
* ``exceeds_estimate`` -- the plan is better than the interval's far limit: the random sample
  did not reach the plan's region (the estimate is about random plans, the plan beats it);
* ``certified`` -- ``gap.worst <= target_gap``;
* ``not_certified`` -- otherwise (including an infinite far limit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

DEFAULT_TARGET_GAP = 0.05


def _gap(limit: float, value: float) -> float:
    if not math.isfinite(limit):
        return math.inf
    if limit == 0:
        return math.inf
    return abs(limit - value) / abs(limit)


def verdict(plan_value: float, estimate: float, far: float, minimize: bool, target_gap: float,
            heavy_tail: bool) -> tuple[str, float, float]:
    """(verdict, gap to the point estimate, gap to the far limit) -- see the module docstring."""
    if heavy_tail or not math.isfinite(estimate):
        return "no_finite_optimum", math.inf, math.inf
    better = (plan_value < far) if minimize else (plan_value > far)
    point, worst = _gap(estimate, plan_value), _gap(far, plan_value)
    if better and math.isfinite(far):
        return "exceeds_estimate", point, worst
    return ("certified" if worst <= target_gap else "not_certified"), point, worst


@dataclass
class Certificate:
    spec: str
    objective: str
    plan: dict[str, Any]
    plan_performance: dict[str, Any]
    samples: dict[str, Any]
    optimum: dict[str, Any]
    gap: dict[str, float]
    target_gap: float
    verdict: str
    flags: list[str]
    seed: int
    versions: dict[str, str]
    baselines: list[dict[str, Any]] = field(default_factory=list)
    evt: dict[str, Any] = field(default_factory=dict)
    sequential: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def summary(self) -> str:
        from specs import display

        def show(value) -> str:
            return display.objective_value(value if isinstance(value, (int, float)) else None, self.objective)

        opt = self.optimum
        perf = self.plan_performance
        lines = [
            f"plan: {display.with_half_width(perf['value'], perf.get('half_width'), self.objective)}",
            f"estimated optimum: {show(opt['estimate'])}, {opt['confidence']:.0%} interval "
            f"[{show(opt['lower'])}, {show(opt['upper'])}]",
            f"gap: {display.share(self.gap['point'])} to the estimate, {display.share(self.gap['worst'])} at worst "
            f"(target {display.share(self.target_gap)})",
            f"samples: {self.samples['n']} measured, {self.samples['failed']} failed",
            f"verdict: {self.verdict}" + (f"  (flags: {', '.join(self.flags)})" if self.flags else ""),
        ]
        return "\n".join(lines)


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for package in ("tasksolve", "ortools", "simpy", "numpy", "scipy", "statsmodels"):
        try:
            out[package] = version(package)
        except PackageNotFoundError:
            out[package] = "unknown"
    return out
