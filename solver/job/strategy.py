"""What the main job asks of a problem kind (`Strategy`), and which strategy a spec gets.

`solver.job.job.Job` runs the same steps for every problem kind -- take the output directory,
solve, write the plan, certify, write the certificate and the report -- and asks its strategy
for what differs: the solve, the plan it chose, the solver's bound, the known plans that can
refute the estimate (the comparison's measured plans) and the probe, the sampler's identity (the
spec the samples are drawn for and, for pipelines, the problem whose plans they are) and the
report's sections.  One strategy per problem kind: `solver.job.binding.BindingStrategy`,
`solver.job.pipeline.PipelineStrategy` (`solver.job.job.strategy_for` picks it);
`solver.job.given.GivenPlan` certifies a plan given by the caller without solving
(``tasksolve certify``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from tasksolve.solver.certify.known import KnownPlan

if TYPE_CHECKING:
    from tasksolve.solver.certify.bounds import Bound
    from tasksolve.solver.pipeline.problem import PipelineProblem
from tasksolve.solver.job.settings import JobSettings
from tasksolve.specs import Plan, Spec
from tasksolve.specs.objective import Objective


class Sampler(NamedTuple):
    """What a strategy's samples are: drawn for `spec`; pipeline plans of `pipeline` (None:
    bindings); `probes` local-search restarts measured as a known plan (None: the certifier's
    setting, `solver.certify.settings.CertifySettings.probes`)."""

    spec: Spec
    pipeline: PipelineProblem | None = None
    probes: int | None = None


class Strategy:
    """The problem kind's part of the main job (module docstring); the base holds the spec and
    the settings, and `solve` stores the solve's report in ``self.report``."""

    #: the problem kind, as the result names it
    kind = ""
    #: what the certificate's samples are, in messages
    samples_name = "binding"
    #: the files the job writes besides samples.jsonl and certificate.json
    plan_files: tuple[str, ...] = ("plan.yaml", "pinning.txt", "report.html")
    #: balanced plans the certificate measures when the settings leave it open (0: the
    #: comparison measured them already; None: `solver.certify.run`'s default)
    balanced: int | None = 0
    #: the plan certified in the solve's answer's place (`adopt`), and the sentence that says so
    adopted: Plan | None = None
    adoption: str | None = None

    def __init__(self, spec: Spec, settings: JobSettings) -> None:
        self.spec = spec
        self.settings = settings
        self.report: Any = None

    def check(self) -> None:
        """Refuse a spec this strategy cannot certify, before anything is written."""

    def solve(self, say: Callable[[str], None] | None) -> Any:
        """Search the plan; returns (and keeps) the solve's report."""
        raise NotImplementedError

    @property
    def plan(self) -> Plan | None:
        """The plan to certify: the solve's answer, or the plan `adopt` took in its place (None:
        the certificate takes the best random plan)."""
        return self.adopted if self.adopted is not None else self.report.plan

    def adopt(self, better: KnownPlan) -> str | None:
        """Take `better` -- a known plan the certification found beating the plan beyond noise
        -- as the plan, and say so in one sentence; None where this strategy keeps its own plan
        (pipelines: their known plans are no bindings)."""
        return None

    def sampler(self) -> Sampler:
        """What the samples are (`Sampler`)."""
        return Sampler(self.spec)

    def bound(self) -> Bound | None:
        """The solver's bound for the verdict (`solver.certify.bounds.Rigorous`) or None."""
        return None

    def oracle_bounds(self) -> list[Bound]:
        """Bounds on the optimum of the oracle itself (`solver.certify.bounds.simulation_bound`
        on the simulation), beside the solver's `bound`; each says which oracle it bounds."""
        return []

    def known_plans(self) -> list[KnownPlan]:
        """Plans the solve measured on the same oracle that can refute the estimate (natural
        values)."""
        return []

    def probe(self) -> KnownPlan | None:
        """One more known plan the strategy measures itself (natural value), or None when
        the certificate measures its own (`solver.certify.designs.probe`, binding samples)."""
        return None

    def solve_dict(self) -> dict[str, Any] | None:
        """The solve's JSON (the certificate's ``"solve"``), None without a solve."""
        return None if self.report is None else self.report.to_dict()

    def report_sections(self) -> dict[str, Any] | None:
        """The solve's parts of report.html: keyword arguments of `solver.report.html.write_report`
        (``comparison`` and the optional sections); None writes no report."""
        return None


def simulation_bounds(spec: Spec, oracle_kind: str) -> list[Any]:
    """The fluid LP's bound on the simulated optimum (docs/design.md, "A bound on the
    simulation") when the plan is measured on the simulation of a binding spec with a throughput
    objective; none otherwise.  The plan's own fluid bound is left to the certification's end,
    where the budget affords it (`solver.certify.bounds.add_plan_bound`)."""
    if oracle_kind != "des" or spec.problem != "binding" or Objective.of(spec.objective).quantity != "throughput":
        return []
    from tasksolve.solver.certify.bounds import simulation_bound

    found = simulation_bound(spec)
    return [] if found is None else [found]
