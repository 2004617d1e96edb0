"""The answer of `tasksolve solve` as typed objects: `SolveReport`, its comparison `Row`s and its
`SolveDetails` (the sample's size, each predictor's `PredictorDetails`, CP-SAT's `CpsatDetails`),
and the chosen plan's gain over the best pinning policy (`PolicyGain`, `solver.binding.policies`).

Every figure is in the objective's natural orientation (packets/s, or seconds for ``latency``;
`specs.objective`). Readers use the attributes; the JSON (``tasksolve solve --json``, the
certificate's ``"solve"``) is `SolveReport.to_dict`, and `SolveReport.summary` is the answer in
a few lines, its first the chosen plan's measured value.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from tasksolve.simulate.measurement import Measurement
from tasksolve.specs import Plan
from tasksolve.specs.files import finite_or_none
from tasksolve.specs.objective import Objective


def half_width(measurement: Measurement, objective: Objective) -> float:
    """The half-width of `measurement`'s value for `objective`: the latency's, the slowest
    instance's throughput's (``min_throughput``) or the total throughput's."""
    if objective.minimize:
        return measurement.latency_half_width
    if objective.name == "min_throughput" and measurement.per_instance_half_width:
        slowest = min(measurement.per_instance, key=measurement.per_instance.get)
        return measurement.per_instance_half_width.get(slowest, measurement.half_width)
    return measurement.half_width


@dataclass
class Row:
    """One line of the comparison: the closed form's value of the plan (`predicted`), its
    measured value and half-width, both natural (`specs.objective`)."""

    method: str
    predicted: float | None
    simulated: float | None
    half_width: float | None
    contexts: list[int] | None = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "predicted": self.predicted,
            "simulated": self.simulated,
            "half_width": None if self.half_width is None or not math.isfinite(self.half_width) else self.half_width,
            "note": self.note,
        }


@dataclass
class PredictorDetails:
    """TSBSched's or BlackBox's run: profiling, prediction and the selection curve (the best
    measured value among the first n predicted plans, n = 1..N, TPDS Figure 8)."""

    experiments: int
    table_size: int
    candidates: Any
    predicted_plans: int
    predict_seconds: float
    profiling_seconds: float
    selection_size: int
    selection_curve: list[float]

    def to_dict(self, objective: Objective, best: float | None) -> dict[str, Any]:
        data = asdict(self)
        losses = [objective.loss(v, best) for v in self.selection_curve]
        if self.selection_curve and all(loss is not None for loss in losses):
            data["selection_loss"] = losses
        return data


@dataclass
class CpsatDetails:
    """CP-SAT's steps, bound, local search and configuration LP (the JSON's ``details.cpsat``)."""

    status: str
    wall_time: float
    symmetry_constraints: int
    bound_source: str | None  # None: CP-SAT found no plan
    found_by: str | None
    local_search: dict[str, Any] | None
    configuration_bound: dict[str, Any] | None
    notes: list[str]
    steps: list[dict[str, Any]]
    failed_steps: list[str]
    top_k: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SolveDetails:
    """What each method adds beyond its rows."""

    samples: int = 0
    predictors: dict[str, PredictorDetails] = field(default_factory=dict)
    cpsat: CpsatDetails | None = None

    def to_dict(self, objective: Objective, best: float | None) -> dict[str, Any]:
        data: dict[str, Any] = {"samples": self.samples}
        data.update({name: p.to_dict(objective, best) for name, p in self.predictors.items()})
        if self.cpsat is not None:
            data["cpsat"] = self.cpsat.to_dict()
        return data


@dataclass
class PolicyGain:
    """How much the chosen plan gains over the best measured pinning policy
    (`solver.binding.policies`): `gain` is ``(plan - best) / best`` in the objective's better
    direction (0.05: 5% better; negative: the policy's plan is better), `beyond_noise` whether the
    plan beats it beyond both half-widths (`solver.certify.verdict.beats`); `infeasible` the
    policies whose plan breaks the spec's constraints (not measured)."""

    best: str
    value: float
    half_width: float | None
    gain: float
    beyond_noise: bool
    infeasible: list[str] = field(default_factory=list)

    def sentence(self, objective: Objective) -> str:
        """One line: the gain, over which policy, and whether it is beyond the noise
        (``+11.9% over the best pinning policy, compact-cores (3.544 Mpps), beyond the noise``)."""
        word = "beyond the noise" if self.beyond_noise else "within the noise"
        return f"{self.gain:+.1%} over the best pinning policy, {self.best} ({objective.format(self.value)}), {word}"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["half_width"] = finite_or_none(self.half_width)
        return data


@dataclass
class SolveReport:
    """The chosen plan (`method`'s), CP-SAT's status, model value, bound and gap (its own
    orientation, `solver.binding.cpsat`), the measured answer and the comparison."""

    method: str
    objective: str
    status: str
    model_objective: float | None
    bound: float | None
    gap: float | None
    plan: Plan | None
    predicted: float | None
    measured: Measurement | None
    comparison: list[Row] = field(default_factory=list)
    details: SolveDetails = field(default_factory=SolveDetails)
    failed_steps: list[str] = field(default_factory=list)  # solver steps that failed: the answer may be weaker
    noise: Any = None  # `solver.binding.noisy.NoiseVerdict` on a stochastic oracle: the race, the OS baseline
    policy_gain: PolicyGain | None = None  # over the best pinning policy measured (None: no policy row)

    @property
    def kind(self) -> Objective:
        return Objective.of(self.objective)

    @property
    def value(self) -> float | None:
        """The chosen plan's measured value (natural orientation)."""
        return None if self.measured is None else self.kind.score(self.measured.value(self.objective))

    def best_measured(self) -> float | None:
        values = [r.simulated for r in self.comparison if r.simulated is not None]
        return self.kind.best(values) if values else None

    def summary(self) -> str:
        """The answer first (method, measured value), then CP-SAT's status and the comparison."""
        objective = self.kind
        shown = objective.format(self.value, self.measured_half_width)
        lines = [f"{self.method} plan: {self.objective} {shown} measured"]
        if self.noise is not None:
            lines.insert(0, self.noise.headline(objective))
        if self.status != "NOT_RUN":
            gap = "-" if self.gap is None else f"{self.gap:.2%}"
            lines.append(f"CP-SAT: {self.status}, gap {gap} on the closed form")
        for row in self.comparison:
            lines.append(f"  {row.method}: {objective.format(row.simulated)} measured")
        if self.policy_gain is not None:
            lines.append(self.policy_gain.sentence(objective))
        if self.failed_steps:
            lines.append(f"failed solver steps: {', '.join(self.failed_steps)}")
        return "\n".join(lines)

    @property
    def measured_half_width(self) -> float | None:
        return None if self.measured is None else half_width(self.measured, self.kind)

    def to_dict(self) -> dict[str, Any]:
        objective, best = self.kind, self.best_measured()
        rows = []
        for row in self.comparison:
            entry = row.to_dict()
            loss = objective.loss(row.simulated, best)
            if loss is not None:
                entry["loss"] = loss
            rows.append(entry)
        return {
            "method": self.method,
            "objective_kind": self.objective,
            "status": self.status,
            "objective": self.model_objective,
            "bound": self.bound,
            "gap": self.gap,
            "plan": self.plan.to_dict() if self.plan else None,
            "predicted": self.predicted,
            "simulated": self.measured.to_dict() if self.measured else None,
            "comparison": rows,
            "details": self.details.to_dict(objective, best),
            "failed_steps": self.failed_steps,
            "policy_gain": None if self.policy_gain is None else self.policy_gain.to_dict(),
            "noise": None
            if self.noise is None
            else {"headline": self.noise.headline(objective), **self.noise.to_dict()},
        }
