"""The rigorous side of a certificate: bounds on the optimum, each labelled with the oracle it
applies to.

EVT estimates the optimum; a bound proves something, and only about the oracle it was derived
for:

* `Rigorous` -- CP-SAT's (or the configuration LP's) bound on the **closed form**
  (`simulate.analytic`), and the closed form's proven optimum.  It applies when plans are measured
  with the ``analytic`` oracle.  On the simulation it is *not* a bound: the closed form is
  pessimistic there (idle threads load less than it assumes), so a plan's simulated value may
  exceed the closed form's optimum (t2-constrained: 4.435 Mpps simulated against the closed
  form's 4.087).  It is then kept, labelled "closed-form optimum (closed form only)".
* `SimulationBound` -- the fluid LP's bound on the **simulation** (``des``) over every plan the
  spec allows (`solver.certify.fluid_max`; docs/design.md, "A bound on the simulation"): a
  simulated plan whose value minus its half-width is within the target gap of it is proven.

Both implement `Bound`, the protocol every bound the verdict reads implements (also
`solver.certify.measured_bound.MeasuredBound`, `solver.pipeline.bound.PipelineBound` and
`GivenBound`).  `Rigorous` is built from a `solve_binding` run (`closed_form_bound`, used by ``certify``) or from
the solve report of the main job (`from_report`, used by ``run``).  `simulation_bound` builds a
`SimulationBound` from a spec.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from tasksolve.specs import display

#: a relative gap this small between CP-SAT's objective and bound is a proof of optimality
#: (CP-SAT's own tolerance on the scaled integer model, see `solver.binding.cpsat`)
PROVEN_GAP = 1e-6


@dataclass
class Rigorous:
    status: str  # CP-SAT's status: OPTIMAL, FEASIBLE, ...
    bound: float | None  # on the closed form's optimum (upper for throughput)
    bound_source: str | None  # "cpsat" or "configuration LP"
    objective: float | None  # the closed-form value of the solver's best plan
    contexts: list[int] | None  # that plan
    failed_steps: list[str] = field(default_factory=list)
    applies: bool = True  # False on the simulation: the bound is the model's, not the oracle's
    oracle: str = "analytic"  # the oracle the bound and the optimum are about: always the closed form

    #: the `Bound` protocol: CP-SAT's figures are exact, never measured; no per-plan bound
    noisy = False
    confidence = None
    plan_value = None
    plan_note = None

    @property
    def value(self) -> float | None:
        """The bound, under the protocol's name (`Bound`)."""
        return self.bound

    @property
    def source(self) -> str:
        return self.bound_source or "solver"

    @property
    def label(self) -> str:
        """What the figures are, for a row heading: never "rigorous bound" on the simulation."""
        if self.applies:
            return "rigorous bound (closed form)"
        return "closed-form optimum (closed form only, not a bound on the simulation)"

    @property
    def proven_optimum(self) -> float | None:
        if self.objective is None or self.bound is None:
            return None
        if self.status == "OPTIMAL" or abs(self.bound - self.objective) <= PROVEN_GAP * abs(self.objective):
            return self.objective
        return None

    def to_dict(self) -> dict[str, object]:
        return {
            "status": self.status,
            "bound": self.bound,
            "bound_source": self.bound_source,
            "objective": self.objective,
            "proven_optimum": self.proven_optimum,
            "failed_steps": self.failed_steps,
            "applies": self.applies,
            "oracle": self.oracle,
            "label": self.label,
            "note": (
                "a bound of the closed form, measured with the closed form: rigorous"
                if self.applies
                else "the closed form's bound and optimum, recorded for information: they bound the closed "
                "form only, and a plan's simulated value may exceed them (the closed form is pessimistic "
                "on the simulation); the simulation's own bound is `simulation_bound`"
            ),
        }


def closed_form_bound(
    spec,
    *,
    time_limit: float,
    workers: int = 1,
    seed: int = 0,
    oracle_kind: str = "analytic",
    deterministic: bool = False,
) -> Rigorous:
    """Solve the closed form with `solve_binding` (local search, CP-SAT, configuration LP);
    `deterministic`: CP-SAT in deterministic time, so the bound does not depend on the machine."""
    from tasksolve.solver.binding.cpsat import solve_binding
    from tasksolve.solver.binding.problem import BindingProblem

    result = solve_binding(
        BindingProblem(spec),
        objective=spec.objective,
        time_limit=time_limit,
        workers=workers,
        seed=seed,
        deterministic_time=time_limit if deterministic else None,
    )
    best = result.best
    failed = [step.step for step in result.failed_steps]
    if best is None:
        return Rigorous(result.status, None, None, None, None, failed, oracle_kind == "analytic")
    return Rigorous(
        result.status,
        best.bound,
        best.bound_source,
        best.objective,
        list(best.contexts),
        failed,
        oracle_kind == "analytic",
    )


def from_report(report, oracle_kind: str) -> Rigorous | None:
    """The rigorous part of the main job's `SolveReport` (None when CP-SAT did not run)."""
    if report.status in (None, "NOT_RUN") or report.bound is None:
        return None
    cpsat = report.details.cpsat
    return Rigorous(
        report.status,
        report.bound,
        "cpsat" if cpsat is None else cpsat.bound_source,
        report.model_objective,
        None,
        list(report.failed_steps),
        oracle_kind == "analytic",
    )


# ------------------------------------------------------------------------------ the protocol
@runtime_checkable
class Bound(Protocol):
    """What every bound on an optimum is, and all the verdict reads of one
    (`solver.certify.verdict`, `solver.certify.assemble.bound_summaries`).

    ``oracle`` is the oracle (or model) the bound is about (``analytic``, ``des``, ``pipeline
    model``...): it bounds measurements of that oracle only.  ``value`` bounds the optimum in the
    samples' orientation (an upper bound for a throughput; None: no bound was found);
    ``proven_optimum`` is the optimum itself where a plan reaching ``value`` is known, else None;
    ``objective`` is the value of the solver's own plan on that oracle (None where no plan comes
    with the bound); ``source`` says in words where the bound comes from; ``status`` is the
    solver's status ("" where no solver ran); ``failed_steps`` names the solver steps that failed
    (the bound may be weaker); ``noisy`` is True where the bound rests on measurements with a
    half-width, at simultaneous ``confidence``."""

    oracle: str
    value: float | None
    proven_optimum: float | None
    objective: float | None
    source: str
    status: str
    failed_steps: Sequence[str]
    noisy: bool
    confidence: float | None
    plan_value: float | None  # the bound of the plan itself, where one was computed (`add_plan_bound`)
    plan_note: str | None  # why `plan_value` is None, where it was asked for

    def to_dict(self) -> dict[str, object]: ...


@dataclass(frozen=True)
class GivenBound:
    """A bound given by its figures (a caller's own bound; the verdict's tests), with no solver
    step and no measurement behind it."""

    oracle: str
    value: float | None
    proven_optimum: float | None = None
    source: str = "given"
    objective: float | None = None
    status: str = ""
    failed_steps: tuple[str, ...] = ()
    noisy: bool = False
    confidence: float | None = None
    plan_value = None  # the `Bound` protocol: no per-plan bound
    plan_note = None

    def to_dict(self) -> dict[str, object]:
        return {
            "oracle": self.oracle,
            "value": self.value,
            "proven_optimum": self.proven_optimum,
            "source": self.source,
        }


# ------------------------------------------------------------------------------ the simulation
@dataclass
class SimulationBound:
    """An upper bound on the simulation's optimum over every plan the spec allows (docs/design.md,
    "A bound on the simulation"): the fluid LP's maximum (`solver.certify.fluid_max`).

    ``value`` is in packets/s, for the objective ``metric`` (total or minimum throughput); it
    holds for the simulation with the settings it was computed under (``settings``: queue
    capacity, arrivals, shared queue -- the seed does not matter).  ``method`` says how the
    maximum over plans was taken: ``enumeration`` (every placement class, ``classes`` of them) or
    ``relaxation`` (one plan-independent LP, looser).  ``plan_value`` is the per-plan bound of
    the plan handed to `simulation_bound` or added by `add_plan_bound` (``plan_note``: why not)."""

    value: float
    metric: str
    method: str
    classes: int | None
    seconds: float
    settings: dict[str, object]
    plan_value: float | None = None
    oracle: str = "des"
    plan_note: str | None = None  # why `plan_value` is None, where it was asked for

    #: the rest of the `Bound` protocol: no solver plan's value, no proven optimum, no solver
    #: status or step, no measurement
    objective = None
    proven_optimum = None
    status = ""
    failed_steps = ()
    noisy = False
    confidence = None

    @property
    def source(self) -> str:
        over = (
            display.count(self.classes, "placement class")
            if self.method == "enumeration"
            else "a relaxation over every plan"
        )
        return f"fluid LP ({over})"

    def applies_to(self, oracle_kind: str) -> bool:
        return oracle_kind == self.oracle

    def gap(self, value: float, half_width: float = 0.0) -> float:
        """Relative gap ``(bound - (value - half_width)) / bound`` of a plan measured at `value`
        +- `half_width`: what the plan may lose to the optimum at most (95%: the half-width's)."""
        return (self.value - (value - half_width)) / self.value

    def proves(self, value: float, half_width: float, target_gap: float) -> bool:
        """The plan is within `target_gap` of the simulated optimum: ``gap <= target_gap``."""
        return self.gap(value, half_width) <= target_gap

    def to_dict(self) -> dict[str, object]:
        return {
            "oracle": self.oracle,
            "label": "upper bound on the simulation's optimum (fluid LP)",
            "value": self.value,
            "metric": self.metric,
            "method": self.method,
            "classes": self.classes,
            "plan_value": self.plan_value,
            "plan_note": self.plan_note,
            "seconds": self.seconds,
            "settings": self.settings,
        }


def simulation_bound(
    spec, *, plan=None, settings=None, objective: str | None = None, class_limit: int | None = None
) -> SimulationBound | None:
    """The fluid bound on the simulated optimum of a binding spec (`fluid_max.max_bound`), with
    the per-plan bound of `plan` when given; None where none is derived (a pipeline spec, a
    latency objective)."""
    from dataclasses import asdict

    from tasksolve.simulate.des import DesSettings
    from tasksolve.solver.certify.fluid_bound import plan_bound
    from tasksolve.solver.certify.fluid_max import CLASS_LIMIT, max_bound

    settings = settings or DesSettings.from_spec(spec)
    objective = objective or spec.objective
    found = max_bound(spec, settings, objective, CLASS_LIMIT if class_limit is None else class_limit)
    if found is None:
        return None
    identity = {k: v for k, v in asdict(settings).items() if k in ("queue_capacity", "arrival", "rate", "shared_queue")}
    per_plan = None if plan is None else plan_bound(spec, plan, settings=settings, objective=objective).value
    return SimulationBound(
        value=found.value,
        metric=objective,
        method=found.method,
        classes=found.classes,
        seconds=found.seconds,
        settings=identity,
        plan_value=per_plan,
    )


#: the per-plan fluid LP's cost as a multiple of the relaxation over every plan's (a plan of 384
#: threads on the 512-context server: 6.6 s against 2.6 s at load 8), for `add_plan_bound`
PLAN_BOUND_COST = 3.0


def add_plan_bound(bound: SimulationBound, spec, plan, left: float | None) -> SimulationBound:
    """The fluid bound of `plan` itself into ``bound.plan_value`` (how much of the gap between
    the plan and the bound over every plan the relaxation over plans makes), when the `left`
    seconds of the certify budget (None: no budget) afford its estimated cost: `PLAN_BOUND_COST`
    times the relaxation's seconds, the enumeration's seconds (more LPs than one) otherwise;
    else ``bound.plan_note`` says why there is none.  Returns `bound`."""
    if bound.plan_value is not None or plan is None:
        return bound
    from tasksolve.simulate.des import DesSettings
    from tasksolve.solver.certify.fluid_bound import plan_bound

    cost = bound.seconds * (PLAN_BOUND_COST if bound.method == "relaxation" else 1.0)
    if left is not None and left < cost:
        bound.plan_note = (
            f"not computed: the certify budget had {left:.1f} s left, the plan's fluid LP takes about {cost:.1f} s"
        )
        return bound
    settings = DesSettings.from_spec(spec)
    bound.plan_value = plan_bound(spec, plan, settings=settings, objective=bound.metric).value
    return bound
