"""The certificate: the plan, the verdict's sentence, and the evidence, as typed objects.

`Certificate` holds typed parts -- `PlanPerformance`, `SamplesSummary`, `Optimum`, `Gaps`,
`BoundSummary`, `KnownPlanRow`, `Baseline`, `Reason` -- that the terminal summary (`summary`) and the
report (`solver.report.html`) read by attribute; its JSON is ``to_dict()`` (format
`FORMAT_VERSION`; README, "Certificate JSON", lists what changed for readers of format 1).

Numbers in the JSON are numbers or ``null``: a value that is infinite or missing is written
``null`` and its object's ``nulls`` maps the field to the reason (e.g. the optimum's ``upper``:
"open above: ..."), never the strings "inf"/"nan".  `certificate_schema` is the JSON Schema of
that JSON (``tasksolve schema --certificate``); `Certificate.from_dict` reads it back (the
report can be rendered from a certificate.json alone).

Gaps are signed, ``(plan - reference) / |reference|`` (negative: the plan's figure is below the
reference), against the point estimate, the interval's far limit (the upper limit when
maximising throughput, the lower one when minimising latency), the applicable rigorous bound and
the proven optimum (`solver.certify.verdict`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import ClassVar

from tasksolve.solver.certify.known import KnownPlan
from tasksolve.solver.certify.verdict import VERDICTS, exit_code
from tasksolve.specs.files import plain, why_not_finite

#: the certificate JSON's format (1: before typed parts, nulls and the six-verdict vocabulary)
FORMAT_VERSION = 2
DEFAULT_TARGET_GAP = 0.05


class _Typed:
    """`to_dict`: fields as JSON, a non-finite or missing number as null plus its reason in ``nulls``."""

    #: field -> why it may be null (used when no reason was recorded in `nulls`)
    WHY_NULL: ClassVar[dict[str, str]] = {}

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {}
        nulls = dict(getattr(self, "nulls", {}) or {})
        for f in fields(self):  # type: ignore[arg-type]
            if f.name == "nulls":
                continue
            value = getattr(self, f.name)
            if isinstance(value, float) and not math.isfinite(value):
                nulls.setdefault(f.name, self.WHY_NULL.get(f.name, why_not_finite(value)))
            elif value is None and f.name in self.WHY_NULL:
                nulls.setdefault(f.name, self.WHY_NULL[f.name])
            out[f.name] = plain(value)
        if any(f.name == "nulls" for f in fields(self)):  # type: ignore[arg-type]
            out["nulls"] = nulls
        return out


@dataclass
class Reason(_Typed):
    code: str
    sentence: str


@dataclass
class PlanPerformance(_Typed):
    """The plan as measured on the oracle (values in packets/s, or seconds for latency)."""

    value: float | None
    half_width: float | None
    throughput: float | None
    latency_mean: float | None
    oracle: str
    repeats: int = 1  # independent runs pooled where the verdict depended on its noise (`solver.certify.measure`)
    nulls: dict[str, str] = field(default_factory=dict)
    WHY_NULL: ClassVar[dict[str, str]] = {"half_width": "the oracle reports no half-width"}


@dataclass
class SamplesSummary(_Typed):
    """What was sampled, and what the draw bound covers (`covers`)."""

    n: int
    failed: int
    requested: int
    file: str
    best: float | None
    oracle: str
    sequential: bool
    design: str
    draws: str = "random plans"  # what one draw is, in words
    covers: str = ""  # what the draw bound is a statement about
    classes: int | None = None  # distinct placement classes among the samples (`solver.certify.measure`)
    #: why sampling ended: "decided" (the verdict could not change), "budget" (the certify phase's
    #: time budget ended first: more samples could change the verdict), "ceiling" (the most samples
    #: allowed), "fixed" (the sample size the caller asked for)
    stopped: str = "fixed"
    budget_s: float | None = None  # the certify phase's time budget, seconds (`solver.certify.run.Budget`)
    nulls: dict[str, str] = field(default_factory=dict)
    WHY_NULL: ClassVar[dict[str, str]] = {
        "best": "no sample was measured",
        "classes": "pipeline plans are not grouped in placement classes",
        "budget_s": "no time budget: the sample's size was fixed, or no time limit was given",
    }


@dataclass
class TopAtomSummary(_Typed):
    """The sample's best value hit `hits` >= 2 times (`evt.TopAtom`)."""

    n: int
    best: float
    hits: int
    singletons: int
    confidence: float
    beat_bound: float
    good_turing: float


@dataclass
class Optimum(_Typed):
    """The estimated optimum and its interval (EVT, or the atom's ``[best, open)``)."""

    estimate: float | None
    lower: float | None
    upper: float | None
    confidence: float
    source: str  # "GPD endpoint (profile likelihood)", "best value (atom)" or "none"
    top_atom: TopAtomSummary | None = None
    beat_bound: float | None = None
    nulls: dict[str, str] = field(default_factory=dict)
    WHY_NULL: ClassVar[dict[str, str]] = {
        "estimate": "EVT could not analyse the sample",
        "beat_bound": "no sample was measured",
    }


@dataclass
class Gaps(_Typed):
    """Signed gaps of the plan (null: no finite reference), and each in words."""

    estimate: float | None
    far_limit: float | None
    bound: float | None
    proven_optimum: float | None
    words: list[str] = field(default_factory=list)
    #: on a stochastic oracle: the gap to the re-measured best sampled plan and its interval
    measured_best: float | None = None
    measured_best_interval: list[float] | None = None
    nulls: dict[str, str] = field(default_factory=dict)
    WHY_NULL: ClassVar[dict[str, str]] = {
        "measured_best": "no plan was re-measured (a deterministic oracle, or none to re-measure)",
        "measured_best_interval": "no plan was re-measured (a deterministic oracle, or none to re-measure)",
        "estimate": "no finite estimate",
        "far_limit": "the interval is open on the side of improvement",
        "bound": "no rigorous bound applies to this oracle",
        "proven_optimum": "no proven optimum on this oracle",
    }


@dataclass
class BoundSummary(_Typed):
    """A solver's bound on the optimum of one oracle (`oracle`): `applies` when the plan was
    measured on that oracle; otherwise recorded as what it is (e.g. the closed form's optimum)."""

    label: str  # what it is, in words
    oracle: str
    value: float | None
    source: str
    status: str
    proven_optimum: float | None
    objective: float | None
    applies: bool
    failed_steps: list[str] = field(default_factory=list)
    #: the fluid LP's bound of the certified plan itself (the simulation's bound over every plan
    #: only): how far the plan is from its own relaxation, against ``value``'s distance
    plan_bound: float | None = None
    nulls: dict[str, str] = field(default_factory=dict)
    WHY_NULL: ClassVar[dict[str, str]] = {
        "value": "the solver gave no bound",
        "proven_optimum": "the solver did not prove optimality",
        "objective": "the solver found no plan",
        "plan_bound": "only the fluid LP over every plan has a per-plan bound",
    }


@dataclass
class KnownPlanRow(_Typed):
    """A `solver.certify.known.KnownPlan` as the certificate lists it (no half-width: exact)."""

    plan: str
    value: float | None
    half_width: float | None = None
    nulls: dict[str, str] = field(default_factory=dict)
    WHY_NULL: ClassVar[dict[str, str]] = {"half_width": "deterministic oracle, or not recorded"}

    @classmethod
    def of(cls, known: KnownPlan) -> KnownPlanRow:
        return cls(known.plan, float(known.value), float(known.half_width) if known.half_width else None)


@dataclass
class Baseline(_Typed):
    method: str
    value: float | None
    nulls: dict[str, str] = field(default_factory=dict)


@dataclass
class Certificate(_Typed):
    spec: str
    objective: str
    verdict: str
    sentence: str  # the verdict in one plain sentence: what a person reads first
    basis: str
    reasons: list[Reason]  # the evidence, one sentence each
    plan: dict[str, object]
    plan_performance: PlanPerformance
    samples: SamplesSummary
    optimum: Optimum
    gap: Gaps
    target_gap: float
    flags: list[str]
    seed: int
    versions: dict[str, str]
    design: str = "random"
    bounds: list[BoundSummary] = field(default_factory=list)
    known_plans: list[KnownPlanRow] = field(default_factory=list)
    baselines: list[Baseline] = field(default_factory=list)
    evt: dict[str, object] = field(default_factory=dict)
    sequential: list[dict[str, object]] | None = None
    designs: list[dict[str, object]] | None = None  # both designs' estimates (`solver.certify.compare`)
    noise: dict[str, object] | None = None  # a stochastic oracle's evidence (`solver.certify.noisy`)
    latency: dict[str, object] | None = None  # `latency_max` on the plan's oracle (`solver.certify.latency_check`)
    #: the certify phase's time budget (`solver.certify.budget.Budget.to_dict`): its seconds and the
    #: steps that ran short of it (None: no budget)
    budget: dict[str, object] | None = None
    format: int = FORMAT_VERSION

    @property
    def positive(self) -> bool:
        return exit_code(self.verdict) == 0

    @property
    def exit_code(self) -> int:
        return exit_code(self.verdict)

    @property
    def verdict_meaning(self) -> str:
        return VERDICTS.get(self.verdict, ("", 1))[0]

    @property
    def applicable_bound(self) -> BoundSummary | None:
        return next((b for b in self.bounds if b.applies), None)

    def to_dict(self) -> dict[str, object]:
        out = super().to_dict()
        out["verdict_meaning"] = self.verdict_meaning
        out["exit_code"] = self.exit_code
        return out

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Certificate:
        """Read a certificate JSON of format 2 back (nulls stay None; extra keys are ignored)."""
        from pydantic import TypeAdapter

        return TypeAdapter(cls).validate_python(data)

    def summary(self) -> str:
        from tasksolve.solver.certify.summary import summary_text

        return summary_text(self)


def certificate_schema() -> dict[str, object]:
    """The JSON Schema of `Certificate.to_dict()` (``tasksolve schema --certificate``)."""
    from pydantic import TypeAdapter

    schema = TypeAdapter(Certificate).json_schema(mode="serialization")
    props = schema.setdefault("properties", {})
    props["verdict_meaning"] = {"type": "string", "description": "the verdict's meaning in one sentence"}
    props["exit_code"] = {"type": "integer", "description": "0 for a positive verdict, 1 otherwise"}
    props["verdict"]["enum"] = sorted(VERDICTS)
    props["solve"] = {"type": "object", "description": "the main job's solve report (run and pipeline run only)"}
    schema["title"] = f"tasksolve certificate, format {FORMAT_VERSION}"
    schema["description"] = __doc__.split("\n\n")[2].replace("\n", " ")
    return schema


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for package in ("tasksolve", "ortools", "simpy", "numpy", "scipy", "statsmodels"):
        try:
            out[package] = version(package)
        except PackageNotFoundError:
            out[package] = "unknown"
    return out
