"""How the CP-SAT binding model's integers relate to the closed form (`solver.binding.model`,
module docstring, "Rounding"; docs/design.md, "CP-SAT binding").

Demands, capacities, cycles and message costs become integers: `resource_scales` gives each
resource its unit (thousandths, finer for values below a thousandth), `ratio_range` measures how
far rounded values are from the exact ones in each direction, and `Rounding` says how far a
thread's time per packet ``E_t`` in the model can be from the closed form's -- including NPIRE's
synchronisation, which the model leaves out (`sync_fields`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tasksolve.solver.binding.problem import BindingProblem

DEMAND_SCALE = 1000  # demands and capacities in thousandths


def resource_scales(problem: BindingProblem) -> dict[str, int]:
    """``s_r`` per resource: `DEMAND_SCALE` (thousandths), or the power of ten that gives the
    resource's smallest capacity or nonzero demand at least `DEMAND_SCALE` units where that is
    below a thousandth (a capacity of 1e-4 is 1000 units, not 1 rounded from 0.1)."""
    scales = {}
    for resource in problem.topology.resources:
        values = [float(resource.capacity)] + [d[resource.name] for d in problem.demands if resource.name in d]
        smallest = min(v for v in values if v > 0)
        if smallest >= 1.0 / DEMAND_SCALE:
            scales[resource.name] = DEMAND_SCALE
        else:
            scales[resource.name] = 10 ** math.ceil(math.log10(DEMAND_SCALE) - math.log10(smallest))
    return scales


def ratio_range(pairs) -> tuple[float, float]:
    """(largest model/true ratio, largest true/model ratio) over (model, true) pairs, both >= 1;
    a true value the model rounds to 0 makes the second infinite."""
    high = low = 1.0
    for model, true in pairs:
        if true <= 0:
            continue
        if model <= 0:
            low = math.inf
            continue
        high, low = max(high, model / true), max(low, true / model)
    # floating-point noise in the exact side (0.35 * 1e7 = 3500000.0000000005) is no rounding
    return (1.0 if high <= 1 + 1e-12 else high), (1.0 if low <= 1 + 1e-12 else low)


def sync_fields(problem: BindingProblem) -> tuple[bool, bool]:
    """(some thread runs a critical section, some thread signals early): NPIRE's synchronisation,
    which the model leaves out (module docstring, "Rounding")."""
    apps = problem.spec.applications
    tasks = [apps[t.app].tasks[t.task] for t in problem.spec.threads]
    return any(t.critical is not None for t in tasks), any(t.signal is not None for t in tasks)


@dataclass(frozen=True)
class Rounding:
    """How far the integer model's ``E_t`` can be from the closed form's (module docstring).

    `pessimism` >= 1 bounds model / exact, `optimism` >= 1 bounds exact / model (infinite where a
    demand or cost is rounded to 0); `exact` when both are 1."""

    pessimism: float = 1.0
    optimism: float = 1.0
    latency_pessimistic: bool = False  # early signals left out where a latency is bounded or minimised

    @property
    def exact(self) -> bool:
        return self.pessimism == 1.0 and self.optimism == 1.0 and not self.latency_pessimistic

    @classmethod
    def of(
        cls, slowdown: tuple[float, float], work: tuple[float, float], locks: bool = False, signals: bool = False
    ) -> Rounding:
        """Critical sections make the model optimistic by an unknown factor (lock waits and
        failed speculation left out); early signals make its latency pessimistic."""
        optimism = math.inf if locks else slowdown[1] * work[1]
        return cls(pessimism=slowdown[0] * work[0], optimism=optimism, latency_pessimistic=signals)

    def note(self) -> str | None:
        """What the model's rounding means for its figures, in one sentence (None when exact)."""
        if self.latency_pessimistic:
            return "the CP-SAT model leaves out early signals, which shorten latencies: it proves no bound here"
        if math.isinf(self.optimism):
            return (
                "the CP-SAT model leaves out critical sections (lock waits, failed speculation): its bound is a "
                "relaxation's and plan values are the closed form's"
            )
        if self.exact:
            return None
        below = (
            ""
            if self.optimism == 1.0
            else f" and at most {self.optimism - 1:.1e} below"
            if math.isfinite(self.optimism)
            else " and may be below it (a demand or cost rounds to 0)"
        )
        return (
            "the CP-SAT model rounds demands, capacities, cycles or message costs to integers: its times per "
            f"packet are at most {self.pessimism - 1:.1e} (relative) above the closed form's{below}; plan values "
            "are the closed form's, the bound is widened by the first factor"
        )
