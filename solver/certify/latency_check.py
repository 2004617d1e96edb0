"""``latency_max`` checked on the oracle the plan is measured on (docs/design.md, "Verdicts",
"The latency a verdict covers").

The solvers keep a plan's *closed-form* latency within ``constraints.latency_max``: the unloaded
critical path with the plan's sharing (`simulate.analytic`).  What the plan delivers depends on
the oracle:

* **closed form**: that same figure, the slowest instance's critical path, exact (a given plan,
  `tasksolve certify --plan`, may break it);
* **simulation**: with saturated sources every queue stays full and the latency grows with the
  queues, so the latency a bound covers is measured at an offered load -- packets arriving at
  ``oracle.load`` (default 90%) of the plan's maximum sustainable rate
  (`simulate.experiments.latency_at_load`): the slowest instance's mean latency there, with the
  95% half-width of the mean latency;
* **a real program** reports one figure and no latency: the check says it was not measured.

A plan whose latency exceeds the bound beyond its half-width gets no positive verdict, and the
sentence says which constraint failed and by how much (`apply`); one within noise of the bound
keeps its verdict with the figure among the reasons; one that meets it says so.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from tasksolve.solver.certify.verdict import Decision
from tasksolve.specs.display import rate, seconds

#: relative tolerance of "exceeds" on an exact oracle (float noise of the closed form's sums)
EXACT_TOLERANCE = 1e-9


@dataclass(frozen=True)
class LatencyCheck:
    """The plan's latency against ``latency_max``, on one oracle (seconds)."""

    bound: float
    latency: float | None  # the slowest instance's mean latency; None: the oracle reports none
    half_width: float
    oracle: str
    load: float | None = None  # the offered load, a share of the maximum rate (simulation)
    rate: float | None = None  # packets/s per instance offered at that load

    @property
    def exceeds(self) -> bool:
        return self.latency is not None and self.latency - self.half_width > self.bound * (1 + EXACT_TOLERANCE)

    @property
    def meets(self) -> bool:
        return self.latency is not None and self.latency + self.half_width <= self.bound * (1 + EXACT_TOLERANCE)

    @property
    def where(self) -> str:
        """Which latency, in words."""
        if self.oracle == "analytic":
            return "its latency on the closed form (the unloaded critical path with the plan's sharing)"
        if self.load is None:
            return f"its latency on the {self.oracle} oracle"  # the simulation's without a load: not measured
        offered = f", {rate(self.rate)} per instance" if self.rate else ""
        return f"its latency on the simulation at {self.load:.0%} of its maximum rate{offered}"

    def sentence(self) -> str:
        bound = f"constraints.latency_max {seconds(self.bound)}"
        if self.latency is None:
            return f"{bound} was not checked: the {self.oracle} oracle measures no latency"
        figure = seconds(self.latency) + (f" ± {seconds(self.half_width)}" if self.half_width > 0 else "")
        if self.exceeds:
            return f"{self.where}, {figure}, exceeds {bound} by {self.latency / self.bound - 1:.0%}"
        if self.meets:
            return f"{self.where}, {figure}, meets {bound}"
        return f"{self.where}, {figure}, is within noise of {bound}: whether it meets it is not decided"

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out.update(exceeds=self.exceeds, meets=self.meets, sentence=self.sentence())
        return out


def measure_latency(spec, plan, measured, oracle_kind: str) -> LatencyCheck | None:
    """The check of `plan` (measured as `measured` on `oracle_kind`); None without a bound or a plan."""
    bound = spec.latency_bound_seconds()
    if bound is None or plan is None or measured is None:
        return None
    if oracle_kind == "analytic":
        return LatencyCheck(bound, measured.natural("latency"), 0.0, oracle_kind)
    if oracle_kind != "des":
        return LatencyCheck(bound, None, 0.0, oracle_kind)
    from tasksolve.simulate.errors import OracleError
    from tasksolve.simulate.experiments import latency_at_load

    try:
        loaded = latency_at_load(spec, plan)
    except OracleError:  # the plan sustains no rate: no latency at a load exists
        return LatencyCheck(bound, None, 0.0, oracle_kind, float(spec.oracle.load))
    m = loaded.measurement
    return LatencyCheck(
        bound, m.natural("latency"), float(m.latency_half_width or 0.0), oracle_kind, loaded.load, loaded.rate
    )


def apply(decision: Decision, check: LatencyCheck | None) -> Decision:
    """The verdict with the latency check: a plan over the bound beyond noise is not certified."""
    if check is None:
        return decision
    code = "latency_exceeded" if check.exceeds else "latency_met" if check.meets else "latency_unchecked"
    reasons = [{"code": code, "sentence": check.sentence()}, *decision.reasons]
    if check.exceeds and decision.positive:
        sentence = f"not certified: {check.sentence()}"
        return replace(decision, verdict="not_certified", basis="latency", sentence=sentence, reasons=reasons)
    if check.exceeds:
        return replace(decision, reasons=reasons)
    return replace(decision, reasons=[*decision.reasons, {"code": code, "sentence": check.sentence()}])
